/** Evaluation of an agent on a split with the curriculum frozen: the episodes, pass^k and the run record. */
import { digest, EnvHarnessError, type Agent, type JsonValue, type Snapshot, type Split, type Store, type StoredTask } from '../core/index.js';
import { passKTable, type PassKRow } from '../report/metrics.js';
import type { EpisodeOutcome } from '../runtime/rollout.js';

/** What to evaluate (see `Harness.evaluate`). */
export interface EvaluateOptions {
  agent: Agent;
  split?: Split;
  template?: string;
  k?: number;
  limit?: number;
  domains?: string[];
  onProgress?: (done: number, total: number) => void;
}

/** An evaluation's run id, pass^k rows and every episode outcome. */
export interface EvaluationResult {
  runId: string;
  rows: PassKRow[];
  outcomes: EpisodeOutcome[];
}

/** What an evaluation reads and writes: all of it passed in, none of it cached. */
export interface EvaluationDeps {
  store: Store;
  clock: () => string;
  newRunId: () => Promise<string>;
  snapshot: (label: string) => Promise<Snapshot>;
  /** Runs one episode; with `flush: false` it is made durable by `flush` (the evaluation's, after its last episode). */
  runEpisode: (task: StoredTask, options: { seed: number; runId: string; episodeId: string; flush: false }) => Promise<EpisodeOutcome>;
  /** Waits until every recorded step is in the store. */
  flush: () => Promise<void>;
  owner: { host: string; pid: number };
}

/**
 * Every task of the split k times (seeds 0..k-1), pass^1..pass^k per slice exactly as tau-bench
 * computes it; the events and the finished run record commit together.
 */
export async function evaluateAgent(deps: EvaluationDeps, options: EvaluateOptions): Promise<EvaluationResult> {
  const split = options.split ?? 'regression';
  const k = options.k ?? 1;
  let tasks = await deps.store.listTasks({ split, status: 'active', ...(options.template ? { template: options.template } : {}) });
  if (options.domains) tasks = tasks.filter((t) => options.domains!.includes(t.domain));
  if (options.limit) tasks = tasks.slice(0, options.limit);
  if (tasks.length === 0) throw new EnvHarnessError('POOL_EMPTY', `no active ${split} tasks to evaluate on`);
  const runId = await deps.newRunId();
  const createdAt = deps.clock();
  const start = await deps.snapshot(`eval ${split}`);
  const config = options.agent.config();
  const base = {
    id: runId,
    kind: 'eval' as const,
    agent: { name: options.agent.name, version: options.agent.version, configDigest: digest(config) },
    strategy: 'frozen',
    seed: 0,
    config: { split, k, tasks: tasks.length, agentConfig: config },
    snapshotStart: start.id,
    createdAt,
  };
  await deps.store.saveRun({ ...base, status: 'running', owner: deps.owner, updatedAt: createdAt });
  options.agent.setTraining?.(false);
  const outcomes: EpisodeOutcome[] = [];
  const total = tasks.length * k;
  for (const task of tasks) {
    for (let trial = 0; trial < k; trial++) {
      // Committed in groups (the recorder's) and made durable by the flush below: the run is `finished`, with its events, only after it.
      outcomes.push(await deps.runEpisode(task, { seed: trial, runId, episodeId: `${runId}:${outcomes.length}`, flush: false }));
      options.onProgress?.(outcomes.length, total);
    }
  }
  await deps.flush();
  const rows = passKTable(outcomes.filter((o) => !o.excluded).map((o) => ({ taskId: o.taskId, slice: o.slice, success: o.outcome >= 1 })), k);
  // The events and the finished record commit together: a run is never `finished` without its events.
  await deps.store.applyWrites([
    { op: 'appendRunEvents', events: outcomes.map((o, i) => ({ runId, seq: i, kind: 'episode', data: o as unknown as JsonValue })) },
    { op: 'saveRun', run: { ...base, status: 'finished', snapshotEnd: start.id, summary: { passK: rows as unknown as JsonValue }, updatedAt: deps.clock() } },
  ]);
  return { runId, rows, outcomes };
}
