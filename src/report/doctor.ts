/**
 * The doctor: walks the troubleshooting chain in its fixed order (generation log → sampling weights →
 * difficulty curve → fixed regression set) and reports findings with their evidence in numbers.
 * "Rule out the environment before you blame the model."
 */
import { EnvHarnessError, type GateName, type JsonValue, type Snapshot, type Store } from '../core/index.js';
import { asNumber, asRecord, mean, median, round } from './json-read.js';
import { batchView, type BatchView } from './report-data.js';
import { readRunTimeline, resolveRun, runSlices, type EpisodeEvent, type RunTimeline } from './run-timeline.js';

export type FindingSeverity = 'info' | 'warning' | 'error';
export type DoctorStepName = 'generation-log' | 'sampling-weights' | 'difficulty-curve' | 'regression-set' | 'store-recovery';
export type DoctorCheck =
  | 'duplicates'
  | 'missing-fields'
  | 'wrong-answers'
  | 'rejection-spike'
  | 'gate-off'
  | 'dominant-slice'
  | 'starved-slice'
  | 'runaway-difficulty'
  | 'held-beyond-ability'
  | 'regression-changed'
  | 'regression-unstable'
  | 'regression-nondeterministic'
  | 'distribution-shift'
  | 'no-regression-set'
  | 'no-regression-evals'
  | 'run-interrupted'
  | 'episodes-repaired';

/** One thing the doctor found, with the numbers behind it. */
export interface Finding {
  step: DoctorStepName;
  check: DoctorCheck;
  severity: FindingSeverity;
  message: string;
  evidence: { [key: string]: JsonValue };
}

/** One link of the chain: what was looked at and what was found there. */
export interface DoctorStep {
  step: DoctorStepName;
  title: string;
  /** What was examined, in numbers. */
  checked: { [key: string]: JsonValue };
  findings: Finding[];
}

export interface DoctorReport {
  format: 'envharness.doctor/1';
  runId: string;
  steps: DoctorStep[];
  /** Every finding, in chain order. */
  findings: Finding[];
  counts: Record<FindingSeverity, number>;
  hasErrors: boolean;
  thresholds: DoctorThresholds;
}

/** Where each check draws its line. Shares are in [0, 1]. */
export interface DoctorThresholds {
  /** Share of a batch's (or the store's) candidates rejected as exact or near duplicates: warning. */
  duplicateWarning: number;
  /** ... and error. */
  duplicateError: number;
  /** Share of candidates rejected by the schema gate (missing fields) or the oracle (wrong answers) above which it is an error (any is a warning). */
  templateBugError: number;
  /** A batch's rejection rate this far above the median of the other batches is a spike ... */
  spikeMargin: number;
  /** ... if it is also at least this many times that median. */
  spikeRatio: number;
  /** Batches with fewer candidates are not judged for shares and spikes. */
  minBatch: number;
  /** A slice drawing this share of episodes (or with this mean weight) dominates. */
  dominantShare: number;
  /** A slice is starved below this fraction of the curriculum's weight floor (mean weight or draw share). */
  starvedFraction: number;
  /** Level rises in a row (no fall between) that make a runaway when the agent cannot keep up. */
  runawayRises: number;
  /** Success band [lower, upper]; default from the run's threshold config, else [0.3, 0.7]. */
  band?: [number, number];
  /** Slice episodes in a row below the band, with the level never falling, that count as "held beyond ability". */
  heldEpisodes: number;
  /** Rolling window (slice episodes) for success in the held check. */
  heldWindow: number;
  /** Episodes needed at a level before its success rate is evidence. */
  minEvidence: number;
  /** Least regression evaluations to judge stability. */
  minEvals: number;
  /** Swing (mean movement against the trend between evaluations) always tolerated. */
  swingTolerance: number;
  /** Swing tolerated as a multiple of the sampling noise of the set's size. */
  noiseFactor: number;
}

export const DOCTOR_DEFAULTS: DoctorThresholds = {
  duplicateWarning: 0.25,
  duplicateError: 0.5,
  templateBugError: 0.05,
  spikeMargin: 0.3,
  spikeRatio: 3,
  minBatch: 10,
  dominantShare: 0.75,
  starvedFraction: 0.25,
  runawayRises: 4,
  heldEpisodes: 100,
  heldWindow: 25,
  minEvidence: 10,
  minEvals: 3,
  swingTolerance: 0.1,
  noiseFactor: 2,
};

export interface DoctorOptions {
  /** Run id or unique prefix (default: the latest run). */
  runId?: string;
  thresholds?: Partial<DoctorThresholds>;
  /**
   * Scores of the regression set evaluated several times with one frozen agent (e.g. `harness.evaluate`
   * repeated). With the agent unchanged they must be equal; any spread is the environment.
   */
  regressionProbe?: { scores: number[] };
}

const STEP_TITLES: Record<DoctorStepName, string> = {
  'generation-log': 'generation log',
  'sampling-weights': 'sampling weights',
  'difficulty-curve': 'difficulty curve',
  'regression-set': 'fixed regression set',
  'store-recovery': 'crash recovery',
};

/**
 * Walks the chain for a run and returns every finding; `hasErrors` means the environment, not the agent,
 * is the likely problem.
 * @example
 * const report = await diagnose(store, { runId });
 * for (const f of report.findings) console.log(f.severity, f.message);
 */
export async function diagnose(store: Store, options: DoctorOptions = {}): Promise<DoctorReport> {
  const run = await resolveRun(store, options.runId);
  const timeline = await readRunTimeline(store, run);
  const batches = (await store.listBatches()).map(batchView);
  const schemaLog = await store.listGenerationLog({ gate: 'schema', accepted: false });
  const start = await store.getSnapshot(run.snapshotStart);
  const end = run.snapshotEnd ? await store.getSnapshot(run.snapshotEnd) : undefined;
  const thresholds = resolveThresholds(timeline, options.thresholds);
  const steps: DoctorStep[] = [
    checkGeneration(batches, schemaLog.map((e) => ({ template: e.template, reason: e.reason ?? '' })), thresholds),
    checkWeights(timeline, thresholds),
    checkDifficulty(timeline, thresholds),
    checkRegression(timeline, start, end, thresholds, options.regressionProbe),
    await checkRecovery(store, run.id),
  ];
  const findings = steps.flatMap((s) => s.findings);
  const counts: Record<FindingSeverity, number> = { info: 0, warning: 0, error: 0 };
  for (const f of findings) counts[f.severity]++;
  return { format: 'envharness.doctor/1', runId: run.id, steps, findings, counts, hasErrors: counts.error > 0, thresholds };
}

/**
 * What crashes left behind and opening the store repaired (`Store.recover`): runs whose process died
 * (`interrupted`) and episode records brought in line with their transitions.
 */
async function checkRecovery(store: Store, runId: string): Promise<DoctorStep> {
  const interrupted = (await store.listRuns()).filter((r) => r.status === 'interrupted');
  const repaired = asRecord((await store.getMeta('store.recovery')) ?? null);
  const findings: Finding[] = [];
  for (const r of interrupted) {
    const last = r.interrupted;
    findings.push({
      step: 'store-recovery',
      check: 'run-interrupted',
      severity: r.id === runId ? 'error' : 'warning',
      message: `run ${r.id} was interrupted (its process died${last ? ` after event ${last.lastEventSeq}${last.lastEventKind ? ` (${last.lastEventKind})` : ''}` : ''}); its results are partial; run it again`,
      evidence: { runId: r.id, kind: r.kind, lastEventSeq: last?.lastEventSeq ?? -1, ...(last?.lastEventKind ? { lastEventKind: last.lastEventKind } : {}), at: last?.at ?? r.updatedAt },
    });
  }
  const episodes = asNumber(repaired?.episodes) ?? 0;
  if (episodes > 0) {
    findings.push({
      step: 'store-recovery',
      check: 'episodes-repaired',
      severity: 'warning',
      message: `${episodes} episode record(s) lagged behind their stored transitions after a crash and were repaired on open (at ${String(repaired?.at)})`,
      evidence: { episodes, at: (repaired?.at ?? null) as JsonValue, episodeIds: (repaired?.episodeIds ?? []) as JsonValue },
    });
  }
  return { step: 'store-recovery', title: STEP_TITLES['store-recovery'], checked: { interruptedRuns: interrupted.length, repairedEpisodes: episodes }, findings };
}

function resolveThresholds(timeline: RunTimeline, overrides: Partial<DoctorThresholds> = {}): DoctorThresholds {
  for (const [key, value] of Object.entries(overrides)) {
    if (key === 'band') continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      throw new EnvHarnessError('PARAMS_INVALID', `doctor threshold ${key} must be a finite number >= 0, got ${String(value)}`, { details: { pointer: `/thresholds/${key}` } });
    }
  }
  const band = overrides.band;
  if (band !== undefined && !(Array.isArray(band) && band.length === 2 && band[0] >= 0 && band[0] < band[1] && band[1] <= 1)) {
    throw new EnvHarnessError('PARAMS_INVALID', `doctor band must be [lower, upper] with 0 <= lower < upper <= 1, got ${JSON.stringify(band)}`, { details: { pointer: '/thresholds/band' } });
  }
  const threshold = asRecord(asRecord(asRecord(timeline.run.config)?.curriculum)?.threshold);
  const lower = asNumber(threshold?.lower);
  const upper = asNumber(threshold?.upper);
  return { ...DOCTOR_DEFAULTS, ...overrides, band: band ?? (lower !== undefined && upper !== undefined ? [lower, upper] : [0.3, 0.7]) };
}

function finding(step: DoctorStepName, check: DoctorCheck, severity: FindingSeverity, message: string, evidence: { [key: string]: JsonValue }): Finding {
  return { step, check, severity, message, evidence };
}

const pct = (x: number) => `${Math.round(x * 1000) / 10}%`;

// ---- 1. generation log ------------------------------------------------------------------------

export function checkGeneration(batches: readonly BatchView[], schemaRejections: ReadonlyArray<{ template: string; reason: string }>, t: DoctorThresholds): DoctorStep {
  const step: DoctorStepName = 'generation-log';
  const findings: Finding[] = [];
  const candidates = batches.reduce((n, b) => n + b.requested, 0);
  const rejected = batches.reduce((n, b) => n + b.rejected, 0);
  const gate = (g: GateName) => batches.reduce((n, b) => n + (b.byGate[g] ?? 0), 0);
  const duplicates = gate('exact_duplicate') + gate('near_duplicate');
  const checked = { batches: batches.length, candidates, rejected, duplicates, schemaRejections: gate('schema'), oracleRejections: gate('oracle') };
  if (candidates === 0) return { step, title: STEP_TITLES[step], checked, findings };

  // Duplicates: the store as a whole, else the worst batches.
  const share = duplicates / candidates;
  const dupBatches = batches
    .filter((b) => b.requested >= t.minBatch && b.duplicates / b.requested >= t.duplicateWarning)
    .sort((a, b) => b.duplicates / b.requested - a.duplicates / a.requested);
  if (share >= t.duplicateWarning || dupBatches.length > 0) {
    const worst = dupBatches[0];
    const worstShare = worst ? worst.duplicates / worst.requested : share;
    const severity: FindingSeverity = Math.max(share, worstShare) >= t.duplicateError ? 'error' : 'warning';
    const overall = `${pct(share)} of all ${candidates} candidates`;
    const inWorst = worst ? `${pct(worstShare)} of batch ${worst.id.slice(0, 12)} (seed ${worst.seed}, ${worst.templates.join(', ')}, levels ${worst.levels.join(',')})` : '';
    const where = worst ? `${inWorst} were exact or near duplicates (${overall}${dupBatches.length > 1 ? `; ${dupBatches.length - 1} more batch(es) over ${pct(t.duplicateWarning)}` : ''})` : `${overall} were exact or near duplicates`;
    findings.push(finding(step, 'duplicates', severity,
      `duplicate-heavy generation: ${where}; the templates' parameter space at these levels is too small (or a seed was reused), so the pool repeats itself and the agent can memorise it`,
      {
        duplicates, candidates, share: round(share), exact: gate('exact_duplicate'), near: gate('near_duplicate'),
        batches: dupBatches.slice(0, 5).map((b) => ({ id: b.id, split: b.split, seed: b.seed, templates: b.templates, levels: b.levels, duplicates: b.duplicates, candidates: b.requested, share: round(b.duplicates / b.requested) })),
        threshold: t.duplicateWarning,
      }));
  }

  // Missing fields and other schema failures: templates that produce incomplete tasks.
  const schema = gate('schema');
  if (schema > 0) {
    const missing = schemaRejections.filter((r) => r.reason.includes('missing required field'));
    const byTemplate = countBy(schemaRejections.map((r) => r.template));
    findings.push(finding(step, 'missing-fields', schema / candidates > t.templateBugError ? 'error' : 'warning',
      `${schema} candidates (${pct(schema / candidates)}) failed the schema gate, ${missing.length} of them for missing fields${missing[0] ? ` (e.g. "${missing[0].reason}")` : schemaRejections[0] ? ` (e.g. "${schemaRejections[0].reason}")` : ''}; fix the templates: ${Object.keys(byTemplate).join(', ')}`,
      { rejected: schema, missingFields: missing.length, candidates, share: round(schema / candidates), byTemplate, examples: schemaRejections.slice(0, 3).map((r) => r.reason) }));
  }

  // Wrong answers: the reference solution does not reach the goal in the simulator.
  const oracle = gate('oracle');
  if (oracle > 0) {
    const byBatch = batches.filter((b) => (b.byGate.oracle ?? 0) > 0);
    findings.push(finding(step, 'wrong-answers', oracle / candidates > t.templateBugError ? 'error' : 'warning',
      `${oracle} candidates (${pct(oracle / candidates)}) had wrong answers: their reference solution failed in the simulator (oracle gate); the templates' solve() disagrees with their build()`,
      { rejected: oracle, candidates, share: round(oracle / candidates), batches: byBatch.slice(0, 5).map((b) => ({ id: b.id, templates: b.templates, rejected: b.byGate.oracle ?? 0, candidates: b.requested })) }));
  }

  // Rejection spikes: one batch far worse than the others.
  const judged = batches.filter((b) => b.requested >= t.minBatch);
  if (judged.length >= 2) {
    for (const b of judged) {
      const rate = b.rejected / b.requested;
      const others = median(judged.filter((o) => o !== b).map((o) => o.rejected / o.requested))!;
      if (rate >= others + t.spikeMargin && rate >= t.spikeRatio * others) {
        const top = Object.entries(b.byGate).sort((x, y) => y[1] - x[1])[0];
        findings.push(finding(step, 'rejection-spike', 'warning',
          `rejection spike: batch ${b.id.slice(0, 12)} (${b.split}, seed ${b.seed}) rejected ${pct(rate)} of its candidates against a median of ${pct(others)} in the other batches${top ? `, mostly at the ${top[0]} gate (${top[1]})` : ''}`,
          { batch: b.id, rate: round(rate), medianOthers: round(others), rejected: b.rejected, candidates: b.requested, byGate: b.byGate as { [k: string]: number } }));
      }
    }
  }

  // Gates switched off: their class of error cannot have been caught.
  for (const b of batches) {
    const off = b.gatesOff.filter((g) => g === 'schema' || g === 'oracle' || g === 'exact_duplicate' || g === 'near_duplicate');
    if (off.length > 0) {
      findings.push(finding(step, 'gate-off', 'warning',
        `batch ${b.id.slice(0, 12)} was generated with the ${off.join(', ')} gate${off.length > 1 ? 's' : ''} off: ${off.includes('oracle') ? 'wrong answers' : off.includes('schema') ? 'missing fields' : 'duplicates'} may be in the pool unchecked (${b.accepted} tasks accepted)`,
        { batch: b.id, gatesOff: off, accepted: b.accepted }));
    }
  }
  return { step, title: STEP_TITLES[step], checked, findings };
}

// ---- 2. sampling weights ----------------------------------------------------------------------

export function checkWeights(timeline: RunTimeline, t: DoctorThresholds): DoctorStep {
  const step: DoctorStepName = 'sampling-weights';
  const findings: Finding[] = [];
  const slices = runSlices(timeline);
  const total = timeline.episodes.length;
  const floor = asNumber(asRecord(asRecord(timeline.run.config)?.curriculum)?.floor) ?? 0.02;
  const draws = countBy(timeline.episodes.map((e) => e.slice));
  const meanWeights = timeWeightedWeights(timeline);
  const checked = { slices: slices.length, episodes: total, curriculumUpdates: Math.max(0, timeline.curriculum.length - 1), floor, drawShare: Object.fromEntries(slices.map((s) => [s, total ? round((draws[s] ?? 0) / total) : 0])) };
  if (slices.length < 2 || timeline.curriculum.length === 0) return { step, title: STEP_TITLES[step], checked, findings };

  for (const slice of slices) {
    const n = draws[slice] ?? 0;
    const drawShare = total ? n / total : 0;
    const weight = meanWeights[slice] ?? 0;
    const evidence = { slice, draws: n, episodes: total, drawShare: round(drawShare), meanWeight: round(weight), uniformShare: round(1 / slices.length), floor };
    if (total > 0 && (drawShare >= t.dominantShare || weight >= t.dominantShare)) {
      findings.push(finding(step, 'dominant-slice', 'warning',
        `slice ${slice} dominates sampling: it drew ${pct(drawShare)} of ${total} episodes (mean weight ${pct(weight)}; threshold ${pct(t.dominantShare)}, uniform ${pct(1 / slices.length)}), so training is shifted towards it`,
        { ...evidence, threshold: t.dominantShare }));
    }
    const starvedLine = floor * t.starvedFraction;
    // Judged on draws only when the floor alone should have given at least 10 of them.
    const enoughDraws = total * floor >= 10;
    if (n === 0 && total >= 10 * slices.length) {
      findings.push(finding(step, 'starved-slice', 'warning', `slice ${slice} is starved: it was never drawn in ${total} episodes (mean weight ${pct(weight)}, floor ${pct(floor)})`, { ...evidence, threshold: starvedLine }));
    } else if (weight < starvedLine || (enoughDraws && drawShare < starvedLine)) {
      findings.push(finding(step, 'starved-slice', 'warning',
        `slice ${slice} is starved: mean weight ${pct(weight)} and ${n} of ${total} draws (${pct(drawShare)}), below ${pct(starvedLine)} (a quarter of the ${pct(floor)} floor)`,
        { ...evidence, threshold: starvedLine }));
    }
  }
  return { step, title: STEP_TITLES[step], checked, findings };
}

/** Each slice's weight averaged over episodes (a weight holds from its update to the next). */
function timeWeightedWeights(timeline: RunTimeline): Record<string, number> {
  const points = timeline.curriculum;
  const end = Math.max(timeline.episodes.length, points[points.length - 1]?.episode ?? 0);
  const sums: Record<string, number> = {};
  let span = 0;
  for (let i = 0; i < points.length; i++) {
    const from = points[i]!.episode;
    const to = i + 1 < points.length ? points[i + 1]!.episode : end;
    const len = Math.max(0, to - from);
    if (len === 0) continue;
    span += len;
    for (const [s, w] of Object.entries(points[i]!.weights)) sums[s] = (sums[s] ?? 0) + w * len;
  }
  if (span === 0) return points[points.length - 1]?.weights ?? {};
  return Object.fromEntries(Object.entries(sums).map(([s, v]) => [s, v / span]));
}

// ---- 3. difficulty curve ----------------------------------------------------------------------

export function checkDifficulty(timeline: RunTimeline, t: DoctorThresholds): DoctorStep {
  const step: DoctorStepName = 'difficulty-curve';
  const findings: Finding[] = [];
  const [lower] = t.band!;
  const slices = runSlices(timeline);
  const changes: Record<string, number> = {};
  // Evaluation runs freeze the curriculum: there is no difficulty curve to judge.
  if (timeline.curriculum.length === 0) return { step, title: STEP_TITLES[step], checked: { slices: slices.length, curriculum: false }, findings };
  for (const slice of slices) {
    // The slice's level changes, in order.
    const path: Array<{ episode: number; from: number; to: number }> = [];
    let level: number | undefined;
    for (const p of timeline.curriculum) {
      const l = p.levels[slice];
      if (l === undefined) continue;
      if (level !== undefined && l !== level) path.push({ episode: p.episode, from: level, to: l });
      level = l;
    }
    changes[slice] = path.length;
    const episodes = timeline.episodes.filter((e) => e.slice === slice);

    // Runaway: K or more rises in a row, and the agent cannot keep up at the level reached.
    let streak: typeof path = [];
    let worst: typeof path = [];
    for (const c of path) {
      streak = c.to > c.from ? [...streak, c] : [];
      if (streak.length > worst.length) worst = streak;
    }
    if (worst.length >= t.runawayRises) {
      const top = worst[worst.length - 1]!;
      const after = episodes.filter((e) => e.n > top.episode && e.level >= top.to && !e.excluded);
      const success = mean(after.map((e) => e.outcome));
      const cannotKeepUp = success === null || after.length < t.minEvidence ? lastSuccess(episodes, t.heldWindow) < lower : success < lower;
      if (cannotKeepUp) {
        findings.push(finding(step, 'runaway-difficulty', 'warning',
          `runaway difficulty: ${slice} rose ${worst.length} times in a row (level ${worst[0]!.from} → ${top.to} between episodes ${worst[0]!.episode} and ${top.episode}) and success at level ≥ ${top.to} is ${success === null ? 'unmeasured' : pct(success)} over ${after.length} episodes, below the band's ${pct(lower)}: difficulty outran the agent`,
          { slice, rises: worst.length, levels: [worst[0]!.from, ...worst.map((c) => c.to)], episodes: worst.map((c) => c.episode), successAfter: success === null ? null : round(success), episodesAfter: after.length, band: t.band!, threshold: t.runawayRises }));
      }
    }

    // Held beyond ability: a long stretch below the band while the slice's level never falls.
    // The slice's curriculum level when episode n was drawn (called with increasing n: a cursor).
    let cursor = 0;
    let current: number | undefined;
    const levelAt = (n: number, fallback: number) => {
      while (cursor < timeline.curriculum.length && timeline.curriculum[cursor]!.episode < n) {
        current = timeline.curriculum[cursor]!.levels[slice] ?? current;
        cursor++;
      }
      return current ?? fallback;
    };
    const held = longestHeld(episodes, levelAt, t.heldWindow, lower);
    if (held && held.length >= t.heldEpisodes) {
      const levels = timeline.curriculum.flatMap((p) => (p.levels[slice] === undefined ? [] : [p.levels[slice]!]));
      const lowest = levels.length ? Math.min(...levels) : Math.min(...episodes.map((e) => e.level));
      findings.push(finding(step, 'held-beyond-ability', 'warning',
        held.level <= lowest
          ? `${slice} stayed below the band for ${held.length} of its episodes even at its lowest level ${held.level} (rolling success ${pct(held.success)}, band ${pct(lower)}–${pct(t.band![1])}): the slice is beyond the agent, or its tasks are broken`
          : `${slice} was held at level ${held.level} beyond the agent's ability: ${held.length} of its episodes in a row with rolling success ${pct(held.success)}, below the band's ${pct(lower)}, and the level never came down`,
        { slice, level: held.level, lowestLevel: lowest, episodes: held.length, fromEpisode: held.from, toEpisode: held.to, rollingSuccess: round(held.success), band: t.band!, threshold: t.heldEpisodes }));
    }
  }
  return { step, title: STEP_TITLES[step], checked: { slices: slices.length, levelChanges: changes, band: t.band! }, findings };
}

function lastSuccess(episodes: readonly EpisodeEvent[], window: number): number {
  const counted = episodes.filter((e) => !e.excluded).slice(-window);
  return mean(counted.map((e) => e.outcome)) ?? 1;
}

/** The longest run of a slice's episodes with a full rolling window below `lower` while its level never falls. */
function longestHeld(
  episodes: readonly EpisodeEvent[],
  levelAt: (n: number, fallback: number) => number,
  window: number,
  lower: number,
): { length: number; level: number; success: number; from: number; to: number } | undefined {
  const counted = episodes.filter((e) => !e.excluded);
  let best: { length: number; level: number; success: number; from: number; to: number } | undefined;
  let start = -1;
  let sum = 0;
  let successSum = 0;
  let previous = 0;
  for (let i = 0; i < counted.length; i++) {
    sum += counted[i]!.outcome;
    if (i >= window) sum -= counted[i - window]!.outcome;
    const level = levelAt(counted[i]!.n, counted[i]!.level);
    const fell = start >= 0 && level < previous;
    previous = level;
    if (i >= window - 1 && sum / window < lower && !fell) {
      if (start < 0) {
        start = i;
        successSum = 0;
      }
      successSum += sum / window;
      const length = i - start + 1;
      if (!best || length > best.length) best = { length, level, success: successSum / length, from: counted[start]!.n, to: counted[i]!.n };
    } else {
      start = -1;
    }
  }
  return best;
}

// ---- 4. fixed regression set ------------------------------------------------------------------

export function checkRegression(
  timeline: RunTimeline,
  start: Snapshot | undefined,
  end: Snapshot | undefined,
  t: DoctorThresholds,
  probe?: { scores: number[] },
): DoctorStep {
  const step: DoctorStepName = 'regression-set';
  const findings: Finding[] = [];
  const evals = timeline.evals;
  const size = start?.pool.regression.count ?? null;
  const scores = evals.map((e) => e.score);
  const dynamic = evals.flatMap((e) => (e.dynamicSuccess === null ? [] : [e.dynamicSuccess]));
  const checked: { [key: string]: JsonValue } = { evaluations: evals.length, regressionTasks: size, guardEvents: timeline.guard.length };

  if (start && end && start.pool.regression.digest !== end.pool.regression.digest) {
    findings.push(finding(step, 'regression-changed', 'error',
      `the regression set changed during the run (${start.pool.regression.count} tasks at the start, ${end.pool.regression.count} at the end; membership digests differ): scores before and after are not comparable — freeze it (envharness split freeze)`,
      { startCount: start.pool.regression.count, endCount: end.pool.regression.count, startDigest: start.pool.regression.digest, endDigest: end.pool.regression.digest }));
  }

  if (probe && probe.scores.length >= 2) {
    const spread = Math.max(...probe.scores) - Math.min(...probe.scores);
    checked.probeScores = probe.scores.map((s) => round(s));
    if (spread > 1e-9) {
      findings.push(finding(step, 'regression-nondeterministic', 'error',
        `the regression set gave different scores to one frozen agent (${probe.scores.map((s) => pct(s)).join(', ')}; spread ${pct(spread)}): the environment is not deterministic — check fault injection, unseeded randomness and the regression lock`,
        { scores: probe.scores.map((s) => round(s)), spread: round(spread) }));
    }
  }

  // Evaluation runs are themselves the measurement; stability over time is a training-run question.
  if (timeline.run.kind !== 'train') return { step, title: STEP_TITLES[step], checked: { ...checked, kind: timeline.run.kind }, findings };
  if (size === 0) {
    findings.push(finding(step, 'no-regression-set', 'warning',
      'this environment has no regression split (0 tasks in the run\'s start snapshot): nothing fixed to compare against, so environment faults and agent regressions look alike — generate one (envharness generate --split regression), freeze it, and train with --eval-every',
      { regressionTasks: 0 }));
    return { step, title: STEP_TITLES[step], checked, findings };
  }
  if (evals.length < t.minEvals) {
    findings.push(finding(step, 'no-regression-evals', 'info',
      `only ${evals.length} regression-set evaluation${evals.length === 1 ? '' : 's'} in this run (need ${t.minEvals}) — stability cannot be judged; train with evalEvery (--eval-every) or run \`envharness eval --split regression\` several times`,
      { evaluations: evals.length, needed: t.minEvals }));
    return { step, title: STEP_TITLES[step], checked, findings };
  }

  const reg = swing(scores);
  const regNoise = size ? noise(mean(scores)!, size) : 0;
  const regLimit = Math.max(t.swingTolerance, t.noiseFactor * regNoise);
  const windowSize = Math.max(50, asNumber(asRecord(timeline.run.config)?.evalEvery) ?? 50);
  const dyn = dynamic.length >= t.minEvals ? swing(dynamic) : null;
  const dynLimit = dynamic.length ? Math.max(t.swingTolerance, t.noiseFactor * noise(mean(dynamic)!, windowSize)) : 0;
  Object.assign(checked, { regressionSwing: round(reg.swing), regressionLimit: round(regLimit), dynamicSwing: dyn ? round(dyn.swing) : null, dynamicLimit: round(dynLimit) });

  if (reg.swing > regLimit) {
    findings.push(finding(step, 'regression-unstable', 'error',
      `the fixed regression set is unstable: its score swung by ${pct(reg.swing)} per evaluation against its trend (limit ${pct(regLimit)}), with ${reg.reversals} reversals in ${scores.length} evaluations (${scores.map((s) => pct(s)).join(' → ')}). A fixed set should only move with the agent: the environment is the problem (check the regression lock, evaluation seeds, fault injection) — don't tune the model yet`,
      { scores: scores.map((s) => round(s)), episodes: evals.map((e) => e.episode), swing: round(reg.swing), limit: round(regLimit), reversals: reg.reversals, regressionTasks: size, guardEvents: timeline.guard.length }));
  } else if (dyn && dyn.swing > dynLimit) {
    findings.push(finding(step, 'distribution-shift', 'info',
      `the regression set is stable (swing ${pct(reg.swing)}) while dynamic-set success moves (swing ${pct(dyn.swing)} > ${pct(dynLimit)}): a normal distribution shift as the curriculum changes the task mix, not an environment fault`,
      { regressionSwing: round(reg.swing), dynamicSwing: round(dyn.swing), limit: round(dynLimit), dynamic: dynamic.map((d) => round(d)) }));
  }
  return { step, title: STEP_TITLES[step], checked, findings };
}

/**
 * How much a series moves against its own trend: (Σ|Δ| − |last − first|) / (m − 1). A steadily improving
 * score swings 0; one that zig-zags by 0.3 swings about 0.3.
 */
export function swing(values: readonly number[]): { swing: number; reversals: number } {
  if (values.length < 2) return { swing: 0, reversals: 0 };
  let total = 0;
  let reversals = 0;
  let lastSign = 0;
  for (let i = 1; i < values.length; i++) {
    const d = values[i]! - values[i - 1]!;
    total += Math.abs(d);
    const sign = Math.sign(d);
    if (sign !== 0) {
      if (lastSign !== 0 && sign !== lastSign) reversals++;
      lastSign = sign;
    }
  }
  return { swing: Math.max(0, total - Math.abs(values[values.length - 1]! - values[0]!)) / (values.length - 1), reversals };
}

/** Expected |difference| of two independent success rates over n tasks at rate p: sqrt(2p(1−p)/n)·sqrt(2/π). */
function noise(p: number, n: number): number {
  return Math.sqrt((2 * p * (1 - p)) / n) * Math.sqrt(2 / Math.PI);
}

function countBy(values: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}
