/** A run and its events read back from a store as typed timelines (episodes, curriculum updates, evaluations, guard). */
import { EnvHarnessError, type EvaluationSummary, type RunEvent, type RunRecord, type Store, type SummaryCell, type SummaryTable } from '../core/index.js';
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

/** A domain's evaluation summary (`Domain.evaluation`), as a run's `summary` event keeps it. */
export interface SummaryEvent {
  domain: string;
  summary: EvaluationSummary;
}

export interface RunTimeline {
  run: RunRecord;
  episodes: EpisodeEvent[];
  /** The evaluated domains' summaries (`Domain.evaluation`), from the run's `summary` events. */
  summaries: SummaryEvent[];
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
  const timeline: RunTimeline = { run, episodes: [], summaries: [], curriculum: [], evals: [], guard: [], skippedGroups: 0 };
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
    } else if (event.kind === 'summary') {
      const s = summaryFrom(data);
      if (s !== undefined) timeline.summaries.push(s);
    } else if (event.kind === 'group-skipped') {
      timeline.skippedGroups++;
    }
  }
  return timeline;
}

/** A stored summary, with every table row and cell checked (bad shapes read as absent). */
function summaryFrom(data: JsonRecord): SummaryEvent | undefined {
  const domain = asString(data.domain);
  const summary = asRecord(data.summary);
  const title = asString(summary?.title);
  if (domain === undefined || summary === undefined || title === undefined) return undefined;
  const tables: SummaryTable[] = asList(summary.tables).flatMap((t) => {
    const table = asRecord(t);
    const tableTitle = asString(table?.title);
    if (table === undefined || tableTitle === undefined) return [];
    const columns = asList(table.columns).flatMap((c) => (typeof c === 'string' ? [c] : []));
    const rows = asList(table.rows).flatMap((r) => {
      const row = asRecord(r);
      const label = asString(row?.label);
      if (row === undefined || label === undefined) return [];
      const cells: SummaryCell[] = asList(row.cells).flatMap((c) => {
        const cell = asRecord(c);
        const text = asString(cell?.text);
        if (cell === undefined || text === undefined) return [];
        const title = asString(cell.title);
        return [{ text, score: asNumber(cell.score) ?? null, ...(title === undefined ? {} : { title }) }];
      });
      return [{ label, cells }];
    });
    return [{ title: tableTitle, columns, rows }];
  });
  return { domain, summary: { title, note: asString(summary.note) ?? '', tables, data: summary.data ?? null } };
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
