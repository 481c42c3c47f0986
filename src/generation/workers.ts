/** Runs candidate instantiation in piscina worker threads; results are identical to the main-thread path. */
import { Piscina } from 'piscina';
import { EnvHarnessError } from '../core/index.js';
import type { ErrorCode, RegisteredTemplate } from '../core/index.js';
import type { CandidateChunk, CandidatePlan } from './candidates.js';
import type { DeclarativeDefinition } from './declarative.js';
import { fastDigest } from './hashing.js';
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
  /** Starts instantiating [start, end); resolves with the chunk. */
  run(start: number, end: number): Promise<CandidateChunk>;
  close(): Promise<void>;
}

/** Starts `threads` workers for a plan. Under tsx or vitest the workers load TypeScript through tsx. */
export function startCandidateWorkers(plan: CandidatePlan, modules: readonly string[], threads: number): CandidateWorkers {
  const fromSource = import.meta.url.endsWith('.ts');
  // From sources, a plain-JS bootstrap registers tsx inside each worker before loading worker.ts.
  const filename = new URL(fromSource ? './worker-bootstrap.mjs' : './worker.js', import.meta.url).href;
  const pool = new Piscina({ filename, minThreads: threads, maxThreads: threads, idleTimeout: 1_000 });
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
  };
  const setupKey = fastDigest(setup);
  return {
    async run(start, end) {
      const job: WorkerJob = { setupKey, ...setup, start, end };
      const reply = (await pool.run(job)) as WorkerReply;
      if (!reply.ok) {
        throw new EnvHarnessError(reply.error.code as ErrorCode, reply.error.message, {
          details: reply.error.details as Record<string, unknown> | undefined,
        });
      }
      return reply.chunk;
    },
    close: () => pool.destroy(),
  };
}
