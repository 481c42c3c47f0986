/** What the HTML report shows, computed from Store reads only (no rendering, no clock). */
import {
  digest,
  FEEDBACK_CODES,
  type AgentInfo,
  type BatchManifest,
  type GateName,
  type JsonValue,
  type Snapshot,
  type Split,
  type Store,
} from '../core/index.js';
import { asList, asNumber, asRecord, asString, mean, round } from './json-read.js';
import { readRunTimeline, resolveRun, runSlices, type RunTimeline, type SummaryEvent } from './run-timeline.js';

export interface ReportOptions {
  /** Run id or unique prefix (default: the latest run). */
  runId?: string;
  /** A second run to show side by side. */
  compareId?: string;
  /** At most this many points per time series (evenly thinned; default 400). */
  maxPoints?: number;
}

/** Values over episodes: `x` is the episode count, one `values` list per series. */
export interface Series {
  x: number[];
  series: Array<{ name: string; values: Array<number | null> }>;
}

export interface HeatmapCell {
  slice: string;
  level: number;
  episodes: number;
  successes: number;
  /** Mean outcome over the counted (not excluded) episodes; null when none were counted. */
  success: number | null;
}

export interface PassKRowView {
  slice: string;
  tasks: number;
  trials: number;
  passK: number[];
  low: number | null;
  high: number | null;
}

/** The environment version a run started from: its snapshot's templates and pool. */
export interface EnvironmentVersion {
  snapshotStart: string;
  snapshotEnd: string | null;
  /** False when the start snapshot is not in this store (e.g. a run imported without it). */
  found: boolean;
  templates: Array<{ id: string; sourceDigest: string }>;
  /** Digest over the sorted (template id, source digest) pairs: equal digests mean equal template versions. */
  templatesDigest: string;
  pool: Partial<Record<Split, { count: number; digest: string }>>;
}

export interface RunReport {
  id: string;
  kind: string;
  status: string;
  strategy: string;
  seed: number;
  label: string | null;
  agent: AgentInfo;
  createdAt: string;
  updatedAt: string;
  episodes: number;
  excluded: number;
  /** Mean outcome over counted episodes. */
  success: number | null;
  slices: string[];
  environment: EnvironmentVersion;
  levels: Series;
  weights: Series;
  levelMoves: number;
  heatmap: HeatmapCell[];
  regression: {
    evals: Array<{ episode: number; score: number; dynamicSuccess: number | null }>;
    guard: Array<{ at: number; score: number; best: number; action: string }>;
  };
  feedback: Array<{ code: string; count: number }>;
  passK: PassKRowView[];
  /** What the evaluated domains added (`Domain.evaluation`; empty for runs without). */
  summaries: SummaryEvent[];
  final: { levels: Record<string, number>; weights: Record<string, number> };
}

export interface BatchView {
  id: string;
  split: Split;
  seed: number;
  templates: string[];
  levels: number[];
  requested: number;
  accepted: number;
  rejected: number;
  byGate: Partial<Record<GateName, number>>;
  duplicates: number;
  /** Gates that were switched off for this batch (and could have run). */
  gatesOff: GateName[];
}

export interface GenerationReport {
  batches: BatchView[];
  totals: { candidates: number; accepted: number; rejected: number; duplicates: number; byGate: Partial<Record<GateName, number>> };
  /** Rejection reasons with ids and numbers folded, most frequent first. */
  reasons: Array<{ gate: string; reason: string; count: number }>;
}

/** How two runs' environment versions differ (templates are what `--compare` warns loudly about). */
export interface EnvironmentComparison {
  sameTemplates: boolean;
  samePool: boolean;
  onlyInA: string[];
  onlyInB: string[];
  changed: string[];
  message: string;
}

export interface ReportData {
  format: 'envharness.report/1';
  store: string;
  runs: RunReport[];
  comparison: EnvironmentComparison | null;
  generation: GenerationReport;
}

const DEFAULT_MAX_POINTS = 400;
const DUPLICATE_GATES: readonly GateName[] = ['exact_duplicate', 'near_duplicate'];

/**
 * Reads a run (and optionally a second one) from the store and computes everything the report shows.
 * @example
 * const data = await buildReport(store, { runId: 'train-3f2a', compareId: 'train-9c1e' });
 * writeFileSync('report.html', renderReportHtml(data));
 */
export async function buildReport(store: Store, options: ReportOptions = {}): Promise<ReportData> {
  const maxPoints = Math.max(2, options.maxPoints ?? DEFAULT_MAX_POINTS);
  const first = await resolveRun(store, options.runId);
  const ids = [first.id];
  if (options.compareId !== undefined) ids.push((await resolveRun(store, options.compareId)).id);
  const runs: RunReport[] = [];
  for (const id of ids) {
    const run = (await store.getRun(id))!;
    const timeline = await readRunTimeline(store, run);
    const start = await store.getSnapshot(run.snapshotStart);
    runs.push(runReport(timeline, start, maxPoints));
  }
  return {
    format: 'envharness.report/1',
    store: store.location,
    runs,
    comparison: runs.length === 2 ? compareEnvironments(runs[0]!.environment, runs[1]!.environment) : null,
    generation: await generationReport(store),
  };
}

/** The report of one run from its timeline and start snapshot. Pure. */
export function runReport(timeline: RunTimeline, start: Snapshot | undefined, maxPoints = DEFAULT_MAX_POINTS): RunReport {
  const { run } = timeline;
  const slices = runSlices(timeline);
  const counted = timeline.episodes.filter((e) => !e.excluded);
  const points = thin(timeline.curriculum, maxPoints);
  const last = timeline.curriculum[timeline.curriculum.length - 1];
  const config = asRecord(run.config);
  return {
    id: run.id,
    kind: run.kind,
    status: run.status,
    strategy: run.strategy,
    seed: run.seed,
    label: asString(config?.label) ?? null,
    agent: run.agent,
    createdAt: run.createdAt,
    updatedAt: run.updatedAt,
    episodes: timeline.episodes.length,
    excluded: timeline.episodes.length - counted.length,
    success: mean(counted.map((e) => e.outcome)),
    slices,
    environment: environmentOf(run.snapshotStart, run.snapshotEnd ?? null, start),
    levels: {
      x: points.map((p) => p.episode),
      series: slices.map((name) => ({ name, values: points.map((p) => p.levels[name] ?? null) })),
    },
    weights: {
      x: points.map((p) => p.episode),
      series: slices.map((name) => ({ name, values: points.map((p) => (p.weights[name] === undefined ? null : round(p.weights[name]!))) })),
    },
    levelMoves: timeline.curriculum.reduce((n, c) => n + c.moves.length, 0),
    heatmap: heatmap(timeline),
    regression: {
      evals: timeline.evals.map((e) => ({ episode: e.episode, score: round(e.score), dynamicSuccess: e.dynamicSuccess === null ? null : round(e.dynamicSuccess) })),
      guard: timeline.guard.map((g) => ({ ...g })),
    },
    feedback: feedbackCounts(timeline),
    passK: passKRows(run.summary, timeline),
    summaries: timeline.summaries.map((s) => ({ ...s })),
    final: { levels: { ...(last?.levels ?? {}) }, weights: { ...(last?.weights ?? {}) } },
  };
}

function environmentOf(snapshotStart: string, snapshotEnd: string | null, snap: Snapshot | undefined): EnvironmentVersion {
  const templates = [...(snap?.templates ?? [])].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return {
    snapshotStart,
    snapshotEnd,
    found: snap !== undefined,
    templates: templates.map((t) => ({ id: t.id, sourceDigest: t.sourceDigest })),
    templatesDigest: digest(templates.map((t) => [t.id, t.sourceDigest])),
    pool: snap ? { ...snap.pool } : {},
  };
}

/** Compares two environment versions; the message is what the report's banner says. */
export function compareEnvironments(a: EnvironmentVersion, b: EnvironmentVersion): EnvironmentComparison {
  const ma = new Map(a.templates.map((t) => [t.id, t.sourceDigest]));
  const mb = new Map(b.templates.map((t) => [t.id, t.sourceDigest]));
  const onlyInA = [...ma.keys()].filter((id) => !mb.has(id));
  const onlyInB = [...mb.keys()].filter((id) => !ma.has(id));
  const changed = [...ma.keys()].filter((id) => mb.has(id) && mb.get(id) !== ma.get(id));
  const unknown = !a.found || !b.found;
  const sameTemplates = !unknown && a.templatesDigest === b.templatesDigest;
  const splits = new Set([...Object.keys(a.pool), ...Object.keys(b.pool)]) as Set<Split>;
  const samePool = !unknown && [...splits].every((s) => a.pool[s]?.digest === b.pool[s]?.digest);
  const parts: string[] = [];
  if (unknown) parts.push(`the start snapshot of ${!a.found ? 'the first' : 'the second'} run is not in this store, so its environment version is unknown`);
  if (changed.length) parts.push(`template source changed: ${changed.join(', ')}`);
  if (onlyInA.length) parts.push(`only in the first run: ${onlyInA.join(', ')}`);
  if (onlyInB.length) parts.push(`only in the second run: ${onlyInB.join(', ')}`);
  let message: string;
  if (!sameTemplates) message = `These runs used different environment versions (templates ${a.templatesDigest.slice(0, 12)} vs ${b.templatesDigest.slice(0, 12)}): ${parts.join('; ')}. Score differences may come from the environment, not the agent.`;
  else if (!samePool) message = 'Same template versions, but the task pools differ (different batches or review decisions); compare with care.';
  else message = 'Same environment version (templates and pools).';
  return { sameTemplates, samePool, onlyInA, onlyInB, changed, message };
}

function heatmap(timeline: RunTimeline): HeatmapCell[] {
  const cells = new Map<string, HeatmapCell & { sum: number; counted: number }>();
  for (const e of timeline.episodes) {
    const key = `${e.slice}\u0000${e.level}`;
    const cell = cells.get(key) ?? { slice: e.slice, level: e.level, episodes: 0, successes: 0, success: null, sum: 0, counted: 0 };
    cell.episodes++;
    if (!e.excluded) {
      cell.counted++;
      cell.sum += e.outcome;
      if (e.outcome >= 1) cell.successes++;
    }
    cells.set(key, cell);
  }
  return [...cells.values()]
    .map(({ sum, counted, ...cell }) => ({ ...cell, success: counted === 0 ? null : round(sum / counted) }))
    .sort((a, b) => (a.slice === b.slice ? a.level - b.level : a.slice < b.slice ? -1 : 1));
}

function feedbackCounts(timeline: RunTimeline): Array<{ code: string; count: number }> {
  const totals = new Map<string, number>();
  for (const e of timeline.episodes) for (const [code, n] of Object.entries(e.feedback)) totals.set(code, (totals.get(code) ?? 0) + n);
  const known = FEEDBACK_CODES.filter((c) => totals.has(c)).map((code) => ({ code: code as string, count: totals.get(code)! }));
  const other = [...totals.keys()].filter((c) => !(FEEDBACK_CODES as readonly string[]).includes(c)).sort().map((code) => ({ code, count: totals.get(code)! }));
  return [...known, ...other];
}

/** The run summary's pass^k rows; for a run without them, pass^1 per slice from its episodes. */
function passKRows(summary: JsonValue | undefined, timeline: RunTimeline): PassKRowView[] {
  const stored = asList(asRecord(summary)?.passK).flatMap((r): PassKRowView[] => {
    const row = asRecord(r);
    const slice = asString(row?.slice);
    if (row === undefined || slice === undefined) return [];
    return [{
      slice,
      tasks: asNumber(row.tasks) ?? 0,
      trials: asNumber(row.trials) ?? 0,
      passK: asList(row.passK).flatMap((v) => (typeof v === 'number' ? [round(v)] : [])),
      low: asNumber(row.low) ?? null,
      high: asNumber(row.high) ?? null,
    }];
  });
  if (stored.length > 0) return stored;
  const bySlice = new Map<string, Array<{ taskId: string; ok: boolean }>>();
  const counted = timeline.episodes.filter((e) => !e.excluded);
  for (const e of counted) bySlice.set(e.slice, [...(bySlice.get(e.slice) ?? []), { taskId: e.taskId, ok: e.outcome >= 1 }]);
  const row = (slice: string, list: Array<{ taskId: string; ok: boolean }>): PassKRowView => ({
    slice,
    tasks: new Set(list.map((t) => t.taskId)).size,
    trials: list.length,
    passK: list.length ? [round(list.filter((t) => t.ok).length / list.length)] : [],
    low: null,
    high: null,
  });
  if (counted.length === 0) return [];
  return [...[...bySlice.keys()].sort().map((s) => row(s, bySlice.get(s)!)), row('*', counted.map((e) => ({ taskId: e.taskId, ok: e.outcome >= 1 })))];
}

/** Every batch's gate totals and the folded rejection reasons of the whole store. */
export async function generationReport(store: Store): Promise<GenerationReport> {
  const manifests = await store.listBatches();
  const rejected = await store.listGenerationLog({ accepted: false });
  const reasons = new Map<string, { gate: string; reason: string; count: number }>();
  for (const entry of rejected) {
    const gate = entry.gate ?? 'unknown';
    const reason = foldReason(entry.reason ?? '');
    const key = `${gate}\u0000${reason}`;
    const row = reasons.get(key) ?? { gate, reason, count: 0 };
    row.count++;
    reasons.set(key, row);
  }
  const batches = manifests.map(batchView);
  const byGate: Partial<Record<GateName, number>> = {};
  for (const b of batches) for (const [g, n] of Object.entries(b.byGate) as Array<[GateName, number]>) byGate[g] = (byGate[g] ?? 0) + n;
  return {
    batches,
    totals: {
      candidates: batches.reduce((n, b) => n + b.requested, 0),
      accepted: batches.reduce((n, b) => n + b.accepted, 0),
      rejected: batches.reduce((n, b) => n + b.rejected, 0),
      duplicates: batches.reduce((n, b) => n + b.duplicates, 0),
      byGate,
    },
    reasons: [...reasons.values()].sort((a, b) => b.count - a.count || (a.gate + a.reason < b.gate + b.reason ? -1 : 1)).slice(0, 30),
  };
}

export function batchView(m: BatchManifest): BatchView {
  const byGate: Partial<Record<GateName, number>> = {};
  for (const g of m.gates) if (g.rejected > 0) byGate[g.gate] = g.rejected;
  return {
    id: m.id,
    split: m.split,
    seed: m.seed,
    templates: m.templates.map((t) => t.id),
    levels: [...m.levels],
    requested: m.requested,
    accepted: m.accepted,
    rejected: m.rejected,
    byGate,
    duplicates: DUPLICATE_GATES.reduce((n, g) => n + (byGate[g] ?? 0), 0),
    // Leakage has nothing to check against when generating the regression split itself.
    gatesOff: m.gates.filter((g) => !g.enabled && !(g.gate === 'leakage' && m.split === 'regression')).map((g) => g.gate),
  };
}

/** "same task id as candidate 41 of this batch" -> "same task id as candidate # of this batch". */
export function foldReason(reason: string): string {
  return reason
    .replace(/\b[0-9a-f]{12,64}\b/g, '…')
    .replace(/\d+(\.\d+)?/g, '#')
    .slice(0, 160);
}

/** Evenly thins a list to at most `max` items, always keeping the first and the last. */
export function thin<T>(items: readonly T[], max: number): T[] {
  if (items.length <= max) return [...items];
  const out: T[] = [];
  const step = (items.length - 1) / (max - 1);
  for (let i = 0; i < max; i++) out.push(items[Math.round(i * step)]!);
  return out;
}

