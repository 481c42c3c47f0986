/** Small builders of store records for the Store conformance suite, the crash test and the storage bench. */
import {
  computeTaskId,
  digest,
  type Batch,
  type BatchManifest,
  type EpisodeRecord,
  type GenerationLogEntry,
  type JsonValue,
  type RunEvent,
  type RunRecord,
  type Snapshot,
  type Split,
  type Task,
  type Transition,
} from '../../src/core/index.js';

/** Strings and numbers that a careless storage layer would mangle. */
export const AWKWARD: { text: string; numbers: number[] } = {
  text: 'naïve café — 客户 «ünïcödé» 🚚👩🏽‍💻 עברית \u0000 tab\t newline\n quote" backslash\\ \u2028 \uFFFF',
  numbers: [Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 1e21, 1.5e-7, 0.1, 1e308, 5e-324, -42],
};

export interface TaskOptions {
  template?: string;
  taskType?: string;
  level?: number;
  domain?: string;
}

/** A task with a content-derived id; `n` makes it unique. */
export function makeTask(n: number, options: TaskOptions = {}): Task {
  const content = {
    template: options.template ?? 'test/lookup@1',
    domain: options.domain ?? 'test',
    taskType: options.taskType ?? 'lookup',
    level: options.level ?? 1,
    params: { n, customer: `客户 ${n} 🚚`, amounts: AWKWARD.numbers },
    spec: {
      instructions: `Find order #${n}. ${AWKWARD.text}`,
      initialState: { orders: [{ id: `o${n}`, total: 9_007_199_254_740_991, lines: [1, 2.5, -3] }] },
      budget: { steps: 10, perTool: { get_order: 2 } },
      constraints: { allowedTools: ['get_order'], forbidden: [{ tool: 'refund', args: { all: true } }] },
      acceptance: { finalState: true, answer: String(n) },
      solution: [
        { type: 'tool' as const, tool: 'get_order', args: { id: `o${n}` } },
        { type: 'finish' as const, answer: String(n) },
      ],
      tags: ['conformance'],
    },
  };
  return { id: computeTaskId(content), ...content, origin: { seed: 7, index: n, templateDigest: 'ab'.repeat(32) } };
}

export interface BatchOptions {
  split?: Split;
  /** Adds one rejected candidate to the log (default true). */
  withRejection?: boolean;
  seed?: number;
}

/** A batch whose manifest and log describe exactly `tasks`, plus one rejected candidate. */
export function makeBatch(tasks: readonly Task[], options: BatchOptions = {}): Batch {
  const split = options.split ?? 'dynamic';
  const withRejection = options.withRejection ?? true;
  const templates = [...new Set(tasks.map((t) => t.template))].sort();
  const byType: Record<string, number> = {};
  const byLevel: Record<string, number> = {};
  for (const t of tasks) {
    byType[t.taskType] = (byType[t.taskType] ?? 0) + 1;
    byLevel[String(t.level)] = (byLevel[String(t.level)] ?? 0) + 1;
  }
  const body: Omit<BatchManifest, 'id'> = {
    generatorVersion: 'envharness-generator/1',
    templates: templates.map((id) => ({ id, version: 1, sourceDigest: digest(id), weight: 1, taskType: 'lookup' })),
    seed: options.seed ?? 7,
    split,
    levels: [...new Set(tasks.map((t) => t.level))].sort((a, b) => a - b),
    parameterRanges: Object.fromEntries(templates.map((id) => [id, { '1': { orders: [1, 3], note: AWKWARD.text } }])),
    requested: tasks.length + (withRejection ? 1 : 0),
    accepted: tasks.length,
    rejected: withRejection ? 1 : 0,
    gates: [{ gate: 'near_duplicate', enabled: true, checked: tasks.length + 1, passed: tasks.length, rejected: withRejection ? 1 : 0 }],
    nearDuplicateThreshold: 0.9,
    reviewShare: 0,
    digest: digest(tasks.map((t) => t.id)),
    labels: { purpose: 'conformance', note: '客户' },
    counts: { byType, byLevel },
  };
  const id = digest(body);
  const log: GenerationLogEntry[] = tasks.map((t, index) => ({
    batchId: id,
    index,
    taskId: t.id,
    template: t.template,
    level: t.level,
    accepted: true,
  }));
  if (withRejection) {
    log.push({
      batchId: id,
      index: tasks.length,
      taskId: digest(['rejected', id]),
      template: templates[0] ?? 'test/lookup@1',
      level: 1,
      accepted: false,
      gate: 'near_duplicate',
      reason: 'jaccard 0.93 ≥ 0.9 with an earlier task',
      details: { similarity: 0.93, other: tasks[0]?.id ?? null },
    });
  }
  return { manifest: { id, ...body }, tasks: [...tasks], log };
}

export function makeEpisode(id: string, taskId: string, overrides: Partial<EpisodeRecord> = {}): EpisodeRecord {
  return {
    id,
    taskId,
    seed: 4_294_967_295,
    status: 'running',
    steps: 0,
    reward: 0,
    outcome: 0,
    excludeFromStats: false,
    agent: 'rule-based@1',
    createdAt: '2026-01-02T03:04:05.000Z',
    updatedAt: '2026-01-02T03:04:05.000Z',
    ...overrides,
  };
}

/** A transition of about 450 bytes of canonical JSON (the size the perf references use). */
export function makeTransition(episodeId: string, step: number): Transition {
  return {
    episodeId,
    step,
    action: { type: 'tool', tool: 'get_order_details', args: { order_id: `#W${1_000_000 + step}` } },
    observation: { kind: 'tool', output: { order_id: `#W${1_000_000 + step}`, status: 'pending', total: 154.27 } },
    reward: 0,
    terminated: false,
    truncated: false,
    feedback: [{ code: 'SUBGOAL_REACHED', message: 'found the order', ref: 'lookup' }],
    info: { step, outcome: 0, shaping: 0.05, stateHash: digest(['state', episodeId, step]).slice(0, 24) },
  };
}

export function makeSnapshot(label: string, createdAt = '2026-01-02T03:04:05.000Z'): Snapshot {
  const body = {
    format: 'envharness.snapshot/1' as const,
    templates: [{ id: 'test/lookup@1', sourceDigest: 'cd'.repeat(32) }],
    pool: {
      regression: { digest: digest([]), count: 0 },
      dynamic: { digest: digest([label]), count: 3 },
      heldout: { digest: digest([]), count: 0 },
    },
    curriculum: { slices: [{ domain: 'test', taskType: 'lookup', level: 2, weight: 0.5 }], note: AWKWARD.text },
    rng: { sampler: [1, 2, 3, 4294967295] as const },
    config: { seed: 42, big: Number.MAX_SAFE_INTEGER },
  };
  return { id: digest(body), label, createdAt, ...body };
}

export function makeRun(id: string, overrides: Partial<RunRecord> = {}): RunRecord {
  return {
    id,
    kind: 'train',
    agent: { name: 'learner', version: '1.0.0', configDigest: 'ef'.repeat(32) },
    strategy: 'threshold',
    seed: 42,
    config: { episodes: 100, note: AWKWARD.text },
    snapshotStart: 'aa'.repeat(32),
    status: 'running',
    createdAt: '2026-01-02T03:04:05.000Z',
    updatedAt: '2026-01-02T03:04:05.000Z',
    ...overrides,
  };
}

export function makeRunEvent(runId: string, seq: number, kind = 'metrics', data: JsonValue = { success: 0.5, n: seq }): RunEvent {
  return { runId, seq, kind, data };
}
