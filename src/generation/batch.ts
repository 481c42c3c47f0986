/** generateBatch: candidates from weighted templates, through the gates, into a versioned batch with its manifest. */
import { availableParallelism } from 'node:os';
import { z } from 'zod';
import {
  DEFAULT_NEAR_DUPLICATE_THRESHOLD,
  DEFAULT_REVIEW_SHARE,
  EnvHarnessError,
  GATE_NAMES,
  GENERATOR_VERSION,
  issuePointer,
  MINHASH_PERMUTATIONS,
  SPLITS,
  WORKER_THRESHOLD,
} from '../core/index.js';
import type { Batch, BatchManifest, BatchRequest, BatchTaskRow, GenerationLogEntry, LevelSpec, RegisteredTemplate, Task } from '../core/index.js';
import { createCandidatePlan, instantiateCandidates, levelsDeclared, openChunk } from './candidates.js';
import type { CandidateChunk, CandidatePlan, CandidateResult, PackedChunk } from './candidates.js';
import { createGateRunner } from './gates.js';
import type { GateCandidate, GateHooks } from './gates.js';
import { fastDigest } from '../core/index.js';
import type { MinHashIndex } from './minhash.js';
import type { TemplateRegistry } from './registry.js';
import { startCandidateWorkers, workersCanLoad } from './workers.js';
import type { CandidateWorkers, GenerationWorkers } from './workers.js';

/** What `generateBatch` needs besides the request. */
export interface GenerateBatchDeps {
  registry: TemplateRegistry;
  /** Simulator-backed gates (oracle replay, non-triviality); absent hooks are recorded as off. */
  hooks?: GateHooks;
  /** Ids already stored: a set, or a lookup called with each chunk's candidate ids (e.g. `store.findExistingTaskIds`). */
  existingIds?: ReadonlySet<string> | ((ids: readonly string[]) => ReadonlySet<string> | Promise<ReadonlySet<string>>);
  /** Signatures of the existing pool, for near duplicates across batches. */
  poolIndex?: MinHashIndex;
  /** Ids and signatures of the regression set, for the leakage gate of dynamic and heldout batches. */
  regressionIndex?: MinHashIndex;
  /**
   * Worker threads (1: none, the calling thread instantiates); default: none below WORKER_THRESHOLD
   * candidates, else one fewer than the available cores (at most 8), and none on one core.
   */
  workers?: number;
  /**
   * Threads kept across batches (`createGenerationWorkers`): used instead of starting `workers` new
   * ones, and left open. Results are the same; later batches skip the threads' start-up and warm-up.
   */
  workerPool?: GenerationWorkers;
  /** Modules (absolute paths or package specifiers) exporting `templates`, loaded by workers. */
  templateModules?: string[];
  /**
   * A module (absolute path or package specifier) exporting `createGateHooks()`, which returns the same
   * checks as `hooks`: with worker threads, each worker calls it once and runs the oracle and
   * non-triviality gates itself, so gated generation scales with the workers. Without it, hooks run
   * on the calling thread.
   */
  hookModule?: string;
  onProgress?: (done: number, total: number) => void;
}

/** A generated batch plus the ids of the accepted tasks sent to human review. */
export type GeneratedBatch = Batch & {
  review: string[];
  /**
   * The near-duplicate gate's signatures of the accepted tasks (`MinHashIndex#signatureOf` by id). Non-enumerable,
   * absent with that gate off, and dropped with `taskRows` once `tasks` is read (the caller may then change them).
   */
  signatures?: MinHashIndex;
};

const requestSchema = z.strictObject({
  templates: z
    .array(z.strictObject({ id: z.string(), weight: z.number().positive().finite().optional() }))
    .min(1, { error: 'name at least one template' }),
  levels: z.array(z.number().int().min(1)).min(1, { error: 'name at least one level' }),
  count: z.number().int().min(0),
  seed: z.number().int().refine(Number.isSafeInteger, { error: 'seed must be a safe integer' }),
  split: z.enum(SPLITS as [string, ...string[]]),
  gates: z.partialRecord(z.enum(GATE_NAMES), z.boolean()).optional(),
  nearDuplicateThreshold: z.number().gt(0).max(1).optional(),
  reviewShare: z.number().min(0).max(1).optional(),
  labels: z.record(z.string(), z.string()).optional(),
});

const MAIN_THREAD_CHUNK = 2_048;
/**
 * The largest range a worker instantiates at once. What a chunk holds lives until it is gated (its bodies
 * until saved), so larger chunks mostly add collector work on both sides: chain-sum at 45k candidates took
 * ~4% less whole-process CPU with chunks of 1,024 than of 2,813 (the earlier cap of 4,096), 512 about the same.
 */
const MAX_WORKER_CHUNK = 1_024;
/** Chunks per worker thread sent ahead of the one being gated. */
const WORKER_CHUNKS_AHEAD = 3;

/**
 * Generates a batch: candidate i picks its template by weight and then its level uniformly among the
 * requested levels that template declares, both with `createRng([seed, 'template', i])`; it is
 * instantiated (in workers for large batches) and passes the gates in index order. The result is
 * byte-identical for any worker count, timezone or locale.
 * @example
 * const batch = await generateBatch({ templates: [{ id: 'math/add' }], levels: [1, 2], count: 1000,
 *   seed: 42, split: 'dynamic' }, { registry });
 */
export async function generateBatch(request: BatchRequest, deps: GenerateBatchDeps): Promise<GeneratedBatch> {
  const checked = requestSchema.safeParse(request);
  if (!checked.success) {
    const issue = checked.error.issues[0]!;
    const pointer = issuePointer(issue);
    throw new EnvHarnessError('PARAMS_INVALID', `invalid batch request at ${pointer || '/'}: ${issue.message.replace(/^Invalid input: /, '')}`, {
      details: { pointer },
    });
  }
  const templates = resolveTemplates(request, deps.registry);
  const weights = request.templates.map((t) => t.weight ?? 1);
  const threshold = request.nearDuplicateThreshold ?? DEFAULT_NEAR_DUPLICATE_THRESHOLD;
  const reviewShare = request.reviewShare ?? DEFAULT_REVIEW_SHARE;
  const runner = createGateRunner({
    gates: request.gates,
    split: request.split,
    nearDuplicateThreshold: threshold,
    hooks: deps.hooks,
    poolIndex: deps.poolIndex,
    regressionIndex: deps.regressionIndex,
    template: (id) => templates.find((t) => t.id === id),
    candidates: request.count,
  });
  const plan: CandidatePlan = createCandidatePlan({
    seed: request.seed,
    templates,
    weights,
    levels: [...request.levels],
    signatures: runner.enabled.near_duplicate || runner.enabled.leakage,
  });

  const count = request.count;
  const modules = deps.templateModules ?? [];
  const threads = deps.workerPool !== undefined ? poolThreads(deps.workerPool, count, templates, modules) : chooseWorkers(deps.workers, count, templates, modules);
  // A given pool is used even with one thread (work off the calling thread); otherwise 0 workers means the calling thread.
  const inWorkers = deps.workerPool !== undefined ? count > 0 : threads > 0;
  const chunkSize = inWorkers ? Math.min(MAX_WORKER_CHUNK, Math.max(256, Math.ceil(count / (threads * 8)))) : MAIN_THREAD_CHUNK;
  const ranges: Array<[number, number]> = [];
  for (let start = 0; start < count; start += chunkSize) ranges.push([start, Math.min(count, start + chunkSize)]);

  const accepted = new AcceptedTasks(templates);
  const log: GenerationLogEntry[] = [];
  let workers: CandidateWorkers | undefined;
  try {
    const pending: Array<Promise<PackedChunk>> = [];
    let sent = 0;
    // Ranges go to the threads WORKER_CHUNKS_AHEAD per thread ahead of the one being gated: enough to keep
    // them busy, and a main thread that falls behind (a loaded machine) holds a few chunks, not the batch.
    const sendUpTo = (k: number): void => {
      for (; sent < ranges.length && sent <= k; sent++) {
        const [start, end] = ranges[sent]!;
        const p = workers!.run(start, end);
        // Failures are rethrown in order below; this only stops "unhandled rejection" noise meanwhile.
        p.catch(() => undefined);
        pending.push(p);
      }
    };
    if (inWorkers) {
      const hooked = deps.hookModule !== undefined && (runner.enabled.oracle || runner.enabled.non_trivial);
      workers = startCandidateWorkers(plan, modules, threads, {
        // The schema check and the hooks depend on the task alone: workers compute them, the main thread keeps the order-dependent gates.
        gates: { schema: runner.enabled.schema, oracle: hooked && runner.enabled.oracle, nonTrivial: hooked && runner.enabled.non_trivial },
        ...(hooked ? { hookModule: deps.hookModule } : {}),
      }, deps.workerPool);
    }
    for (let k = 0; k < ranges.length; k++) {
      const [start, end] = ranges[k]!;
      let chunk: CandidateChunk;
      if (inWorkers) {
        sendUpTo(k + threads * WORKER_CHUNKS_AHEAD);
        chunk = openChunk(await pending[k]!);
        delete pending[k]; // gated once: nothing keeps its bodies but the accepted rows
      } else chunk = instantiateCandidates(plan, start, end);
      const ids = chunkIds(chunk);
      const stored = await lookupStored(deps.existingIds, ids);
      gateChunk(chunk, ids, stored, runner, accepted, log);
      deps.onProgress?.(end, count);
    }
  } finally {
    await workers?.close();
  }

  const manifest = buildManifest(request, templates, weights, threshold, reviewShare, accepted, runner.results());
  for (const entry of log) entry.batchId = manifest.id;
  const review = reviewShare > 0 ? accepted.ids.filter((id) => isSelectedForReview(id, reviewShare)) : [];
  return accepted.batch(manifest, log, review, runner.accepted);
}

/**
 * The accepted tasks of a batch, in order, kept as their canonical bodies and parsed only when the batch's
 * `tasks` are first read: `Harness.generate` (the CLI) stores the batch from its rows and never reads them,
 * and a parsed task would only be copied around by the collector.
 */
class AcceptedTasks {
  readonly ids: string[] = [];
  readonly rows: BatchTaskRow[] = [];
  readonly byType: Record<string, number> = {};
  readonly byLevel: Record<string, number> = {};
  private readonly templates: Map<string, RegisteredTemplate<any>>;

  constructor(templates: readonly RegisteredTemplate<any>[]) {
    this.templates = new Map(templates.map((t) => [t.id, t]));
  }

  add(id: string, task: Task | undefined, body: string | undefined, template: string, level: number): void {
    const { domain, taskType } = task ?? this.templates.get(template)!;
    this.ids.push(id);
    // A body always comes with the task here (instantiateCandidates writes both).
    this.rows.push({ id, template, domain, taskType, level, body: body! });
    this.byType[taskType] = (this.byType[taskType] ?? 0) + 1;
    this.byLevel[String(level)] = (this.byLevel[String(level)] ?? 0) + 1;
  }

  batch(manifest: BatchManifest, log: GenerationLogEntry[], review: string[], signatures: MinHashIndex | undefined): GeneratedBatch {
    const { rows } = this;
    const hidden = (value: unknown) => ({ value, enumerable: false, writable: true, configurable: true });
    const batch = { manifest } as GeneratedBatch;
    let parsed: Task[] | undefined;
    // Every task is read back from its canonical body, also one built on this thread: the batch's tasks are
    // then the same objects, key order included, whatever the worker count (the determinism must-show
    // compares JSON.stringify of batches made with 1 and 2 threads).
    const materialise = (): Task[] => {
      if (parsed === undefined) {
        parsed = rows.map((row) => JSON.parse(row.body) as Task);
        // From now on the caller may change the tasks: the store reads them (and checks the bodies by id).
        delete batch.taskRows;
        delete batch.signatures;
      }
      return parsed;
    };
    Object.defineProperty(batch, 'tasks', {
      get: materialise,
      set: (value: Task[]) => {
        materialise();
        parsed = value;
      },
      enumerable: true,
      configurable: true,
    });
    batch.log = log;
    batch.review = review;
    Object.defineProperty(batch, 'taskBodies', hidden(rows.map((r) => r.body)));
    Object.defineProperty(batch, 'taskRows', hidden(rows));
    if (signatures !== undefined) Object.defineProperty(batch, 'signatures', hidden(signatures));
    return batch;
  }
}

/** Whether a task id falls in the review share: its first 32 bits, read as a fraction, are below the share. */
export function isSelectedForReview(taskId: string, share: number): boolean {
  return parseInt(taskId.slice(0, 8), 16) / 4294967296 < share;
}

/** The manifest: everything that made the batch, and nothing about when or where it ran. */
function buildManifest(
  request: BatchRequest,
  templates: readonly RegisteredTemplate<any>[],
  weights: readonly number[],
  threshold: number,
  reviewShare: number,
  accepted: AcceptedTasks,
  gates: BatchManifest['gates'],
): BatchManifest {
  const { byType, byLevel } = accepted;
  const parameterRanges: Record<string, Record<string, LevelSpec>> = {};
  const distinctLevels = [...new Set(request.levels)].sort((a, b) => a - b);
  for (const template of templates) {
    parameterRanges[template.id] = Object.fromEntries(
      levelsDeclared(template, distinctLevels).map((level) => [String(level), template.levels[level - 1]!]),
    );
  }
  const body: Omit<BatchManifest, 'id'> = {
    generatorVersion: GENERATOR_VERSION,
    templates: templates.map((t, i) => ({ id: t.id, version: t.version, sourceDigest: t.sourceDigest, weight: weights[i]!, taskType: t.taskType })),
    seed: request.seed,
    split: request.split,
    levels: [...request.levels],
    parameterRanges,
    requested: request.count,
    accepted: accepted.ids.length,
    rejected: request.count - accepted.ids.length,
    gates,
    nearDuplicateThreshold: threshold,
    reviewShare,
    digest: fastDigest(accepted.ids),
    labels: { ...(request.labels ?? {}) },
    counts: { byType: sortKeys(byType), byLevel: sortKeys(byLevel, (a, b) => Number(a) - Number(b)) },
  };
  return { id: fastDigest(body), ...body };
}

function resolveTemplates(request: BatchRequest, registry: TemplateRegistry): RegisteredTemplate<any>[] {
  const seen = new Map<string, number>();
  return request.templates.map((ref, i) => {
    const template = registry.get(ref.id);
    const other = seen.get(template.id);
    if (other !== undefined) {
      throw new EnvHarnessError('PARAMS_INVALID', `template ${template.id} is listed twice (entries ${other} and ${i}); list it once and use its weight`, {
        details: { pointer: `/templates/${i}/id` },
      });
    }
    seen.set(template.id, i);
    if (levelsDeclared(template, request.levels).length === 0) {
      throw new EnvHarnessError(
        'PARAMS_INVALID',
        `template ${template.id} declares levels 1..${template.levels.length}, none of the requested levels [${request.levels.join(', ')}]; drop it from this batch or request a level it has`,
        { details: { pointer: `/templates/${i}/id`, template: template.id } },
      );
    }
    return template;
  });
}

/** @internal Worker threads to start for a batch (`GenerateBatchDeps.workers`); 0: instantiate on the calling thread. */
export function chooseWorkers(
  requested: number | undefined,
  count: number,
  templates: readonly RegisteredTemplate<any>[],
  modules: readonly string[],
  cores = availableParallelism(),
): number {
  if (requested !== undefined) {
    if (!Number.isInteger(requested) || requested < 1) {
      throw new EnvHarnessError('PARAMS_INVALID', `workers must be an integer >= 1, got ${requested}`, { details: { pointer: '/workers' } });
    }
    if (requested > 1 && !workersCanLoad(templates, modules)) {
      throw new EnvHarnessError(
        'CONFIG_INVALID',
        `workers: ${requested} needs templateModules: workers import the modules that export the templates (${templates.map((t) => t.id).join(', ')}); pass them, or use workers: 1`,
        { details: { pointer: '/templateModules' } },
      );
    }
    const threads = Math.min(requested, Math.max(1, Math.ceil(count / 256)));
    return threads > 1 ? threads : 0;
  }
  if (count < WORKER_THRESHOLD || cores < 2 || !workersCanLoad(templates, modules)) return 0;
  // The calling thread gates and stores every candidate in order (for chain-sum about as much CPU as
  // instantiating them): it keeps a core. A thread more than the cores only adds its start-up, its warm-up
  // and its heap (docs/generation.md, "Worker threads").
  return Math.min(cores - 1, 8);
}

function poolThreads(pool: GenerationWorkers, count: number, templates: readonly RegisteredTemplate<any>[], modules: readonly string[]): number {
  if (count > 0 && !workersCanLoad(templates, modules)) {
    throw new EnvHarnessError(
      'CONFIG_INVALID',
      `a worker pool needs templateModules: workers import the modules that export the templates (${templates.map((t) => t.id).join(', ')}); pass them, or drop the pool`,
      { details: { pointer: '/templateModules' } },
    );
  }
  return pool.threads;
}

/** Each result's task id (undefined for a candidate that could not be instantiated), read once per chunk. */
function chunkIds(chunk: CandidateChunk): Array<string | undefined> {
  const { results } = chunk;
  const ids = new Array<string | undefined>(results.length);
  for (let i = 0; i < results.length; i++) ids[i] = idOf(results[i]!);
  return ids;
}

async function lookupStored(existing: GenerateBatchDeps['existingIds'], chunkIds: ReadonlyArray<string | undefined>): Promise<ReadonlySet<string> | undefined> {
  if (existing === undefined) return undefined;
  if (typeof existing !== 'function') return existing;
  const ids: string[] = [];
  for (const id of chunkIds) if (id !== undefined) ids.push(id);
  return ids.length === 0 ? undefined : await existing(ids);
}

/** A candidate's task id, read from its body when the task is not parsed (the id sits right after the domain). */
function idOf(result: CandidateResult): string | undefined {
  if (result.task !== undefined) return result.task.id;
  if (result.body === undefined) return undefined;
  const at = result.body.indexOf(',"id":"') + 7;
  return result.body.slice(at, at + 64);
}

function gateChunk(
  chunk: CandidateChunk,
  ids: ReadonlyArray<string | undefined>,
  stored: ReadonlySet<string> | undefined,
  runner: ReturnType<typeof createGateRunner>,
  accepted: AcceptedTasks,
  log: GenerationLogEntry[],
): void {
  const { results, signatures, verdicts, passed } = chunk;
  for (let i = 0; i < results.length; i++) {
    const result = results[i]!;
    const candidate: GateCandidate = { index: result.index };
    const id = ids[i];
    if (id !== undefined) {
      if (result.task !== undefined) candidate.task = result.task;
      else {
        const body = result.body!;
        candidate.pending = { id, parse: () => (result.task = JSON.parse(body) as Task) };
      }
      candidate.stored = stored?.has(id) === true;
      if (signatures !== undefined) candidate.signature = signatures.subarray(i * MINHASH_PERMUTATIONS, (i + 1) * MINHASH_PERMUTATIONS);
    }
    if (result.error !== undefined) candidate.error = result.error;
    // A worker sends the verdicts of a task that passed every per-task gate once, as `passed`.
    const precomputed = verdicts?.[i] ?? (id !== undefined ? passed : undefined);
    if (precomputed !== undefined) candidate.verdicts = precomputed;
    const outcome = runner.check(candidate);
    const entry: GenerationLogEntry = {
      batchId: '',
      index: result.index,
      taskId: id ?? '',
      template: result.template,
      level: result.level,
      accepted: outcome.accepted,
    };
    if (outcome.accepted) accepted.add(id!, result.task, result.body, result.template, result.level);
    else {
      entry.gate = outcome.gate;
      entry.reason = outcome.reason;
      if (outcome.details !== undefined) entry.details = outcome.details;
      entry.problem = outcome.problem;
    }
    log.push(entry);
  }
}

function sortKeys(record: Record<string, number>, compare?: (a: string, b: string) => number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const key of Object.keys(record).sort(compare)) out[key] = record[key]!;
  return out;
}
