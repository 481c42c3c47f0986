/** A run and its events read back from a store as typed timelines (episodes, curriculum updates, evaluations, guard). */
import { EnvHarnessError, type RunEvent, type RunRecord, type Store } from '../core/index.js';
import { asList, asNumber, asNumberMap, asRecord, asString, type JsonRecord } from './json-read.js';

/** One training (or evaluation) episode as the run recorded it. */
export interface EpisodeEvent {
  /** 1-based position in the run. */
  n: number;
  episodeId: string;
  taskId: string;
  slice: string;
  level: number;
  outcome: number;
  reward: number;
  steps: number;
  excluded: boolean;
  /** Feedback counts by code. */
  feedback: Record<string, number>;
}

/** The curriculum's levels and weights after an update (the first is the start, at episode 0). */
export interface CurriculumPoint {
  episode: number;
  levels: Record<string, number>;
  weights: Record<string, number>;
  moves: Array<{ slice: string; from: number; to: number; reason: string }>;
  blocked: string[];
}

/** A regression-set evaluation during training. */
export interface EvalPoint {
  episode: number;
  score: number;
  /** Success over the recent dynamic episodes when the regression set ran. */
  dynamicSuccess: number | null;
}

/** A regression-guard trigger or release. */
export interface GuardPoint {
  at: number;
  score: number;
  best: number;
  action: string;
}

/** A rate with its 95% Wilson interval, as a run's `safety` event stores it. */
export interface RateView {
  rate: number;
  low: number;
  high: number;
  n: number;
}

/** One row of a run's `safety` event (written by `envharness eval` for wrapped domains). */
export interface SafetyRowView {
  base: string;
  kind: string;
  level: number;
  strength: string;
  defense: string;
  /** An out-of-bounds kind (the user's own request, no attacker): its levels are how hard the user pushes. */
  outOfBounds: boolean;
  utilityClean: RateView;
  utilityAttacked: RateView;
  attackSuccess: RateView;
  leaks: number;
}

export interface RunTimeline {
  run: RunRecord;
  episodes: EpisodeEvent[];
  /** Safety rows per (base, kind, level, defense), from the run's `safety` events (empty without). */
  safety: SafetyRowView[];
  curriculum: CurriculumPoint[];
  evals: EvalPoint[];
  guard: GuardPoint[];
  skippedGroups: number;
}

/** A run by id or unique id prefix; without one, the latest run. */
export async function resolveRun(store: Store, idOrPrefix?: string): Promise<RunRecord> {
  const runs = await store.listRuns();
  if (idOrPrefix === undefined) {
    const latest = runs[runs.length - 1];
    if (latest === undefined) {
      throw new EnvHarnessError('RUN_NOT_FOUND', `no runs in ${store.location}; train or evaluate first (\`envharness train\`)`);
    }
    return latest;
  }
  const exact = runs.find((r) => r.id === idOrPrefix);
  if (exact !== undefined) return exact;
  const matches = runs.filter((r) => r.id.startsWith(idOrPrefix));
  if (matches.length === 1) return matches[0]!;
  throw new EnvHarnessError(
    'RUN_NOT_FOUND',
    matches.length === 0
      ? `no run ${idOrPrefix} in ${store.location}; known runs: ${runs.slice(-5).map((r) => r.id).join(', ') || '(none)'}`
      : `run prefix ${idOrPrefix} is ambiguous (${matches.length} runs match); give more characters`,
    { details: { id: idOrPrefix } },
  );
}

/** Reads a run's events into timelines. Unknown event kinds are ignored; malformed events are skipped. */
export async function readRunTimeline(store: Store, run: RunRecord): Promise<RunTimeline> {
  const events = await store.listRunEvents(run.id);
  return timelineFromEvents(run, events);
}

/** The pure part of `readRunTimeline`. */
export function timelineFromEvents(run: RunRecord, events: readonly RunEvent[]): RunTimeline {
  const timeline: RunTimeline = { run, episodes: [], safety: [], curriculum: [], evals: [], guard: [], skippedGroups: 0 };
  for (const event of events) {
    const data = asRecord(event.data);
    if (data === undefined) continue;
    if (event.kind === 'episode') {
      const e = episodeFrom(data, timeline.episodes.length + 1);
      if (e) timeline.episodes.push(e);
    } else if (event.kind === 'curriculum') {
      timeline.curriculum.push({
        episode: asNumber(data.episode) ?? 0,
        levels: asNumberMap(data.levels),
        weights: asNumberMap(data.weights),
        moves: asList(data.moves).flatMap((m) => {
          const move = asRecord(m);
          const slice = asString(move?.slice);
          const from = asNumber(move?.from);
          const to = asNumber(move?.to);
          return slice !== undefined && from !== undefined && to !== undefined ? [{ slice, from, to, reason: asString(move?.reason) ?? '' }] : [];
        }),
        blocked: asList(data.blocked).flatMap((b) => (typeof b === 'string' ? [b] : [])),
      });
    } else if (event.kind === 'eval') {
      const episode = asNumber(data.episode);
      const score = asNumber(data.score);
      if (episode !== undefined && score !== undefined) timeline.evals.push({ episode, score, dynamicSuccess: asNumber(data.dynamicSuccess) ?? null });
    } else if (event.kind === 'guard') {
      const at = asNumber(data.at);
      const score = asNumber(data.score);
      if (at !== undefined && score !== undefined) timeline.guard.push({ at, score, best: asNumber(data.best) ?? score, action: asString(data.action) ?? 'hold' });
    } else if (event.kind === 'safety') {
      timeline.safety.push(...asList(data.rows).flatMap((r) => safetyRowFrom(asRecord(r))));
    } else if (event.kind === 'group-skipped') {
      timeline.skippedGroups++;
    }
  }
  return timeline;
}

function rateFrom(value: JsonRecord | undefined): RateView | undefined {
  const [rate, low, high, n] = [value?.rate, value?.low, value?.high, value?.n].map(asNumber);
  return rate === undefined || low === undefined || high === undefined || n === undefined ? undefined : { rate, low, high, n };
}

function safetyRowFrom(row: JsonRecord | undefined): SafetyRowView[] {
  const [base, kind, strength, defense] = [row?.base, row?.kind, row?.strength, row?.defense].map(asString);
  const level = asNumber(row?.level);
  const [utilityClean, utilityAttacked, attackSuccess] = [row?.utilityClean, row?.utilityAttacked, row?.attackSuccess].map((v) => rateFrom(asRecord(v)));
  if (base === undefined || kind === undefined || strength === undefined || defense === undefined || level === undefined) return [];
  if (utilityClean === undefined || utilityAttacked === undefined || attackSuccess === undefined) return [];
  return [{ base, kind, level, strength, defense, outOfBounds: row?.outOfBounds === true, utilityClean, utilityAttacked, attackSuccess, leaks: asNumber(row?.leaks) ?? 0 }];
}

function episodeFrom(data: JsonRecord, position: number): EpisodeEvent | undefined {
  const taskId = asString(data.taskId);
  const slice = asString(data.slice);
  const level = asNumber(data.level);
  const outcome = asNumber(data.outcome);
  if (taskId === undefined || slice === undefined || level === undefined || outcome === undefined) return undefined;
  return {
    n: asNumber(data.n) ?? position,
    episodeId: asString(data.episodeId) ?? '',
    taskId,
    slice,
    level,
    outcome,
    reward: asNumber(data.reward) ?? outcome,
    steps: asNumber(data.steps) ?? 0,
    excluded: data.excluded === true,
    feedback: asNumberMap(data.feedback),
  };
}

/** Every slice a run mentions, sorted. */
export function runSlices(timeline: RunTimeline): string[] {
  const slices = new Set<string>();
  for (const c of timeline.curriculum) for (const s of [...Object.keys(c.levels), ...Object.keys(c.weights)]) slices.add(s);
  for (const e of timeline.episodes) slices.add(e.slice);
  return [...slices].sort();
}
