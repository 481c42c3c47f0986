/** Runs candidate instantiation in piscina worker threads; results are identical to the main-thread path. */
import { Piscina } from 'piscina';
import { EnvHarnessError, WORKER_HEAP_LIMITS } from '../core/index.js';
import type { ErrorCode, RegisteredTemplate } from '../core/index.js';
import type { CandidatePlan, PackedChunk } from './candidates.js';
import type { TaskGates } from './gates.js';
import type { DeclarativeDefinition } from './declarative.js';
import { fastDigest } from '../core/index.js';
import type { WorkerJob, WorkerReply } from './worker.js';

/** Whether workers can rebuild every template: declarative ones from data, the rest from modules. */
export function workersCanLoad(templates: readonly RegisteredTemplate<any>[], modules: readonly string[]): boolean {
  return modules.length > 0 || templates.every((t) => definitionOf(t) !== undefined);
}

function definitionOf(template: RegisteredTemplate<any>): DeclarativeDefinition | undefined {
  const definition = (template as { definition?: DeclarativeDefinition }).definition;
  return definition !== undefined && typeof definition === 'object' ? definition : undefined;
}

/** A worker pool running one batch's candidate ranges. */
export interface CandidateWorkers {
  /**
   * Starts instantiating [start, end); resolves with the chunk as the worker packed it (`openChunk` gives
   * its results). It stays packed until its turn: a chunk that arrives early is a few flat values for the
   * collector, not an object per candidate.
   */
  run(start: number, end: number): Promise<PackedChunk>;
  close(): Promise<void>;
}

/**
 * Worker threads kept across batches (`GenerateBatchDeps.workerPool`). A thread keeps what it loaded
 * (template modules, their worlds and caches, the hook module's hooks, the JIT's work), so only the
 * first batch pays for it; a pool made per batch pays every time.
 * @example
 * const workerPool = createGenerationWorkers({ threads: 2 });
 * await generateBatch(request, { registry, hooks, templateModules, hookModule, workerPool });
 * await workerPool.close();
 */
export interface GenerationWorkers {
  readonly threads: number;
  /** Stops the threads; the pool cannot be used afterwards. */
  close(): Promise<void>;
}

interface PoolHandle extends GenerationWorkers {
  run(job: WorkerJob): Promise<WorkerReply>;
}

/** Starts `threads` worker threads for generation. Under tsx or vitest the workers load TypeScript through tsx. */
export function createGenerationWorkers(options: { threads: number }): GenerationWorkers {
  const threads = options.threads;
  if (!Number.isInteger(threads) || threads < 1) {
    throw new EnvHarnessError('PARAMS_INVALID', `threads must be an integer >= 1, got ${threads}`, { details: { pointer: '/threads' } });
  }
  const fromSource = import.meta.url.endsWith('.ts');
  // From sources, a plain-JS bootstrap registers tsx inside each worker before loading worker.ts.
  const filename = new URL(fromSource ? './worker-bootstrap.mjs' : './worker.js', import.meta.url).href;
  // The young generation EnvHarness's processes run with, also in a host process started without NODE_HEAP_FLAGS
  // (a --max-semi-space-size the host was started with applies to every thread instead).
  const pool = new Piscina({ filename, name: 'transferring', minThreads: threads, maxThreads: threads, idleTimeout: 1_000, resourceLimits: WORKER_HEAP_LIMITS });
  let closed = false;
  const handle: PoolHandle = {
    threads,
    run(job) {
      if (closed) return Promise.reject(new EnvHarnessError('CONFIG_INVALID', 'this generation worker pool is closed; create another with createGenerationWorkers'));
      return pool.run(job) as Promise<WorkerReply>;
    },
    async close() {
      if (closed) return;
      closed = true;
      await pool.destroy();
    },
  };
  return handle;
}

/** What workers check besides instantiating: per-task gates, with hooks from `hookModule`. */
export interface WorkerGates {
  gates: TaskGates;
  hookModule?: string;
}

const NO_GATES: WorkerGates = { gates: { schema: false, oracle: false, nonTrivial: false } };

/**
 * Runs a plan's candidate ranges on worker threads: on `shared` (left open), or on `threads` new
 * ones that `close()` stops.
 */
export function startCandidateWorkers(
  plan: CandidatePlan,
  modules: readonly string[],
  threads: number,
  gates: WorkerGates = NO_GATES,
  shared?: GenerationWorkers,
): CandidateWorkers {
  const pool = (shared ?? createGenerationWorkers({ threads })) as PoolHandle;
  const templates = plan.templates.map((t) => {
    const definition = definitionOf(t);
    return definition === undefined ? { id: t.id, sourceDigest: t.sourceDigest } : { id: t.id, sourceDigest: t.sourceDigest, definition };
  });
  const setup = {
    modules: [...modules],
    templates,
    seed: plan.seed,
    weights: [...plan.weights],
    levels: [...plan.levels],
    signatures: plan.signatures,
    gates: gates.gates,
    ...(gates.hookModule === undefined ? {} : { hookModule: gates.hookModule }),
  };
  const setupKey = fastDigest(setup);
  return {
    async run(start, end) {
      const job: WorkerJob = { setupKey, ...setup, start, end };
      const reply = await pool.run(job);
      if (!reply.ok) {
        throw new EnvHarnessError(reply.error.code as ErrorCode, reply.error.message, {
          details: reply.error.details as Record<string, unknown> | undefined,
        });
      }
      // Tasks stay bodies: the gates parse one only if they need it (generateBatch).
      return reply.chunk;
    },
    close: () => (shared === undefined ? pool.close() : Promise.resolve()),
  };
}
