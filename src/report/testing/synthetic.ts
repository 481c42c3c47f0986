/**
 * Test support: synthetic runs, events, snapshots and batches written straight into a store, to plant
 * faults for the doctor (and shapes for the report) without training anything.
 */
import {
  computeTaskId,
  createRng,
  digest,
  GATE_NAMES,
  type Batch,
  type BatchManifest,
  type GateName,
  type GenerationLogEntry,
  type JsonValue,
  type RunEvent,
  type RunRecord,
  type Snapshot,
  type Store,
  type Task,
} from '../../core/index.js';

export interface SyntheticRunSpec {
  id: string;
  slices?: string[];
  episodes?: number;
  /** Episodes between curriculum updates (default 8). */
  updateEvery?: number;
  /** The level of a slice after update `u` (u = 0 is the start). Default: healthy, one level per 120 episodes up to 3. */
  level?: (slice: string, u: number, episode: number) => number;
  /** Unnormalised weight of a slice after update `u` (default: equal). */
  weight?: (slice: string, u: number, episode: number) => number;
  /** Success probability of an episode (default 0.65). */
  success?: (slice: string, level: number, n: number) => number;
  /** Regression evaluations (default: every 50 episodes, rising smoothly from 0.4 to 0.7, dynamic ≈ 0.65). */
  evals?: Array<{ episode: number; score: number; dynamicSuccess: number | null }>;
  guard?: Array<{ at: number; score: number; best: number; action: string }>;
  /** Regression tasks in the start snapshot (default 40); `regressionAtEnd` differs to plant a changed set. */
  regressionTasks?: number;
  regressionAtEnd?: number;
  seed?: number;
  config?: JsonValue;
}

const DEFAULT_SLICES = ['toy/alpha', 'toy/beta'];

function snapshotOf(label: string, regressionCount: number, templates: string[]): Snapshot {
  const body = {
    format: 'envharness.snapshot/1' as const,
    templates: templates.map((id) => ({ id, sourceDigest: digest(['source', id]) })),
    pool: {
      regression: { digest: digest(['regression', regressionCount]), count: regressionCount },
      dynamic: { digest: digest(['dynamic', 500]), count: 500 },
      heldout: { digest: digest([]), count: 0 },
    },
    curriculum: null,
    rng: {},
    config: { label },
  };
  return { ...body, id: digest(body), createdAt: '2026-01-01T00:00:00.000Z', label };
}

/** Writes a finished synthetic training run (record, snapshots, events) and returns it. */
export async function plantRun(store: Store, spec: SyntheticRunSpec): Promise<RunRecord> {
  const slices = spec.slices ?? DEFAULT_SLICES;
  const total = spec.episodes ?? 400;
  const every = spec.updateEvery ?? 8;
  const level = spec.level ?? ((_s, _u, episode) => Math.min(3, 1 + Math.floor(episode / 120)));
  const weight = spec.weight ?? (() => 1);
  const success = spec.success ?? (() => 0.65);
  const rng = createRng([spec.seed ?? 1, spec.id]);
  const templates = slices.map((s) => `${s.replace('/', '/t-')}@1`);
  const start = snapshotOf(`${spec.id} start`, spec.regressionTasks ?? 40, templates);
  const end = snapshotOf(`${spec.id} end`, spec.regressionAtEnd ?? spec.regressionTasks ?? 40, templates);
  await store.saveSnapshot(start);
  if (end.id !== start.id) await store.saveSnapshot(end);

  const events: RunEvent[] = [];
  let seq = 0;
  const emit = (kind: string, data: JsonValue) => events.push({ runId: spec.id, seq: seq++, kind, data });
  const state = (u: number, episode: number) => {
    const raw = slices.map((s) => Math.max(0, weight(s, u, episode)));
    const sum = raw.reduce((a, b) => a + b, 0) || 1;
    return {
      levels: Object.fromEntries(slices.map((s) => [s, level(s, u, episode)])),
      weights: Object.fromEntries(slices.map((s, i) => [s, raw[i]! / sum])),
    };
  };
  let current = state(0, 0);
  emit('curriculum', { episode: 0, ...current });
  const evals = spec.evals ?? Array.from({ length: Math.floor(total / 50) }, (_, i) => ({ episode: 50 * (i + 1), score: 0.4 + (0.3 * i) / Math.max(1, Math.floor(total / 50) - 1), dynamicSuccess: 0.65 + (i % 2 === 0 ? 0.02 : -0.02) }));
  let n = 0;
  let u = 0;
  while (n < total) {
    for (let k = 0; k < every && n < total; k++) {
      n++;
      const w = slices.map((s) => current.weights[s]!);
      const slice = slices[rng.weightedIndex(w)]!;
      const l = current.levels[slice]!;
      const outcome = rng.next() < success(slice, l, n) ? 1 : 0;
      emit('episode', { n, episodeId: `${spec.id}:${n - 1}`, taskId: digest([spec.id, slice, l, n % 37]), slice, level: l, outcome, reward: outcome, steps: 2, excluded: false, feedback: outcome ? {} : { INVALID_ACTION: 1 } });
    }
    u++;
    const next = state(u, n);
    const moves = slices.filter((s) => next.levels[s] !== current.levels[s]).map((s) => ({ slice: s, from: current.levels[s]!, to: next.levels[s]!, reason: next.levels[s]! > current.levels[s]! ? 'above-band' : 'below-band', successRate: 0.5, n: 25 }));
    current = next;
    emit('curriculum', { episode: n, ...current, moves, blocked: [] });
    for (const e of evals.filter((x) => x.episode > n - every && x.episode <= n)) emit('eval', e);
    for (const g of (spec.guard ?? []).filter((x) => x.at > n - every && x.at <= n)) emit('guard', g);
  }
  const run: RunRecord = {
    id: spec.id,
    kind: 'train',
    agent: { name: 'synthetic', version: '1', configDigest: digest(spec.id) },
    strategy: 'threshold',
    seed: spec.seed ?? 1,
    config: spec.config ?? { episodes: total, evalEvery: 50, curriculum: { floor: 0.02, threshold: { lower: 0.3, upper: 0.7 } } },
    snapshotStart: start.id,
    snapshotEnd: end.id,
    status: 'finished',
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:10:00.000Z',
  };
  await store.saveRun(run);
  await store.appendRunEvents(events);
  return run;
}

export interface SyntheticBatchSpec {
  seed: number;
  template?: string;
  /** Candidates in total (default 100). */
  candidates?: number;
  /** Rejections per gate. */
  rejected?: Partial<Record<GateName, number>>;
  /** Reason text per gate (defaults mimic the real gates). */
  reasons?: Partial<Record<GateName, string>>;
  gatesOff?: GateName[];
}

const REASONS: Record<GateName, string> = {
  schema: 'spec.instructions: missing required field (string)',
  exact_duplicate: 'same task id as candidate 3 of this batch',
  near_duplicate: 'near duplicate of candidate 1: estimated Jaccard 0.94 >= 0.9',
  leakage: 'leaks regression task: identical content',
  oracle: 'reference solution answers "41", expected "42"',
  non_trivial: 'the empty trajectory passes',
};

/** Writes a batch whose gate totals and log have the given rejections; the rest are accepted toy tasks. */
export async function plantBatch(store: Store, spec: SyntheticBatchSpec): Promise<BatchManifest> {
  const template = spec.template ?? 'toy/t-alpha@1';
  const candidates = spec.candidates ?? 100;
  const rejected = spec.rejected ?? {};
  const rejections = GATE_NAMES.flatMap((g) => Array.from({ length: rejected[g] ?? 0 }, () => g));
  const acceptedCount = candidates - rejections.length;
  const tasks: Task[] = Array.from({ length: acceptedCount }, (_, i) => {
    const content = {
      template,
      domain: template.split('/')[0]!,
      taskType: template.split('/')[1]!.replace(/^t-/, '').replace(/@.*/, ''),
      level: 1 + (i % 3),
      params: { seed: spec.seed, i },
      spec: { instructions: `toy task ${spec.seed}/${i}`, initialState: null, budget: { steps: 3 }, acceptance: { finalState: false, answer: String(i) }, solution: [{ type: 'finish' as const, answer: String(i) }] },
    };
    return { id: computeTaskId(content), ...content, origin: { seed: spec.seed, index: i, templateDigest: digest(['source', template]) } };
  });
  const off = new Set(spec.gatesOff ?? []);
  const body: Omit<BatchManifest, 'id'> = {
    generatorVersion: 'envharness-generator/1',
    templates: [{ id: template, version: 1, sourceDigest: digest(['source', template]), weight: 1, taskType: tasks[0]?.taskType ?? 'alpha' }],
    seed: spec.seed,
    split: 'dynamic',
    levels: [1, 2, 3],
    parameterRanges: {},
    requested: candidates,
    accepted: acceptedCount,
    rejected: rejections.length,
    gates: GATE_NAMES.map((g) => ({ gate: g, enabled: !off.has(g), checked: off.has(g) ? 0 : candidates, passed: off.has(g) ? 0 : candidates - (rejected[g] ?? 0), rejected: rejected[g] ?? 0 })),
    nearDuplicateThreshold: 0.9,
    reviewShare: 0,
    digest: digest(tasks.map((t) => t.id)),
    labels: {},
    counts: { byType: {}, byLevel: {} },
  };
  const id = digest(body);
  const log: GenerationLogEntry[] = [
    ...tasks.map((t, index) => ({ batchId: id, index, taskId: t.id, template, level: t.level, accepted: true })),
    ...rejections.map((gate, k) => ({
      batchId: id,
      index: acceptedCount + k,
      taskId: digest(['rejected', id, k]),
      template,
      level: 1,
      accepted: false,
      gate,
      reason: spec.reasons?.[gate] ?? REASONS[gate],
    })),
  ];
  const batch: Batch = { manifest: { id, ...body }, tasks, log };
  await store.saveBatch(batch);
  return batch.manifest;
}
