/** Training checkpoints: the durable points `train --resume` continues an interrupted run from. */
import {
  EnvHarnessError,
  isRngState,
  type JsonValue,
  type RngState,
  type RunEvent,
  type RunRecord,
  type StoreWrite,
} from '../core/index.js';

/** Episodes between two checkpoints of a training run (at the end of the round that crosses a multiple). */
export const DEFAULT_CHECKPOINT_EVERY = 100;

const CHECKPOINT_FORMAT = 'envharness.train-checkpoint/1';

/** The meta key a run's checkpoint lives under (one row per run, replaced at every checkpoint, null when finished). */
export function checkpointKey(runId: string): string {
  return `train.checkpoint:${runId}`;
}

/**
 * Everything the loop holds between rounds, at a round boundary: the run continues from here exactly as
 * it would have without the interruption. Written in the same transaction as the round's events.
 */
export interface TrainCheckpoint {
  format: typeof CHECKPOINT_FORMAT;
  /** Episodes finished (the next episode is `<run>:<episodes>`). */
  episodes: number;
  /** The next event's seq. */
  eventSeq: number;
  /** Episode count of the next regression evaluation (null: never). */
  nextEval: number | null;
  rng: RngState;
  curriculum: JsonValue;
  guard: JsonValue;
  groups: JsonValue;
  evals: Array<{ episode: number; score: number }>;
  skippedGroups: number;
  /** `agent.getState()` (null: the agent keeps no state between episodes). */
  agent: JsonValue;
  /** Digest of `agent.config()`: a rebuilt agent must match it (its seed, settings and, for learners, its state). */
  agentConfig: string;
}

/** What a checkpoint says about the run's episodes, reconstructed from its `episode` events (for the summary). */
export interface CountedEpisode {
  taskId: string;
  slice: string;
  outcome: number;
  excluded: boolean;
}

/** A stored checkpoint, checked; IMPORT_INVALID naming the field when it is not one. */
export function parseCheckpoint(value: JsonValue | undefined, runId: string): TrainCheckpoint | undefined {
  if (value === undefined || value === null) return undefined;
  const bad = (field: string): never => {
    throw new EnvHarnessError('IMPORT_INVALID', `the checkpoint of run ${runId} (meta ${checkpointKey(runId)}) is not valid at /${field}; the run cannot be resumed, start a new one`, {
      details: { pointer: `/${field}`, runId },
    });
  };
  if (typeof value !== 'object' || Array.isArray(value)) return bad('');
  const c = value as Record<string, JsonValue>;
  if (c.format !== CHECKPOINT_FORMAT) bad('format');
  for (const field of ['episodes', 'eventSeq', 'skippedGroups'] as const) {
    if (!(Number.isInteger(c[field]) && (c[field] as number) >= 0)) bad(field);
  }
  if (c.nextEval !== null && !Number.isInteger(c.nextEval)) bad('nextEval');
  if (!isRngState(c.rng)) bad('rng');
  if (!Array.isArray(c.evals)) bad('evals');
  if (typeof c.agentConfig !== 'string') bad('agentConfig');
  return value as unknown as TrainCheckpoint;
}

/** The `episode` events' outcomes, in order (the loop's episode list as the summary needs it). */
export function countedFromEvents(events: readonly RunEvent[]): CountedEpisode[] {
  return events
    .filter((e) => e.kind === 'episode')
    .map((e) => {
      const d = e.data as { taskId: string; slice: string; outcome: number; excluded: boolean };
      return { taskId: d.taskId, slice: d.slice, outcome: d.outcome, excluded: d.excluded };
    });
}

/**
 * The writes that rewind a run to its checkpoint: episodes started after it (training and evaluation)
 * and events past it are discarded, so the rerun writes them again under the same ids.
 */
export function rewindWrites(run: RunRecord, checkpoint: TrainCheckpoint, episodeIds: readonly string[]): StoreWrite[] {
  const prefix = `${run.id}:`;
  const after = episodeIds.filter((id) => {
    if (!id.startsWith(prefix)) return false;
    const rest = id.slice(prefix.length);
    if (/^\d+$/.test(rest)) return Number(rest) >= checkpoint.episodes;
    const evalAt = /^eval(\d+):\d+$/.exec(rest);
    return evalAt !== null && Number(evalAt[1]) > checkpoint.episodes;
  });
  return [
    { op: 'discardEpisodes', ids: after },
    { op: 'discardRunEvents', runId: run.id, fromSeq: checkpoint.eventSeq },
  ];
}

/**
 * RUN_NOT_RESUMABLE unless `run` is a training run that stopped before it finished: `interrupted`
 * (its process died) or `failed` (it threw; it continues from its last checkpoint).
 */
export function checkResumable(run: RunRecord, live: boolean): void {
  const refuse = (why: string): never => {
    throw new EnvHarnessError('RUN_NOT_RESUMABLE', `run ${run.id} cannot be resumed: ${why}`, { details: { runId: run.id, status: run.status } });
  };
  if (run.kind !== 'train') refuse(`it is a ${run.kind} run; only training runs resume (start the ${run.kind} again)`);
  if (run.status === 'finished') refuse('it has finished; start a new run with `envharness train` (without --resume)');
  if (run.status === 'running' && live) {
    refuse(`it is still running${run.owner ? ` (pid ${run.owner.pid} on ${run.owner.host})` : ''}; wait for it, or stop that process first`);
  }
}

/** The options a run was started with, as its record keeps them (what a resume continues with). */
export interface RecordedTrainOptions {
  episodes: number;
  concurrency: number;
  evalEvery: number;
  evalTasks: number | null;
  group: { size: number; skipZeroVariance?: boolean } | null;
  domains: string[] | null;
  guard: { delta: number; rollback: boolean };
  checkpointEvery: number;
  record: boolean;
  dynamics: JsonValue;
}

/** The recorded options of a run, or RUN_NOT_RESUMABLE when the run predates resumable checkpoints. */
export function recordedOptions(run: RunRecord): RecordedTrainOptions {
  const config = run.config as { resume?: RecordedTrainOptions } | null;
  if (config === null || typeof config !== 'object' || config.resume === undefined) {
    throw new EnvHarnessError('RUN_NOT_RESUMABLE', `run ${run.id} cannot be resumed: it was started by a version without resumable checkpoints; start a new run`, {
      details: { runId: run.id, status: run.status },
    });
  }
  return config.resume;
}

/**
 * PARAMS_INVALID naming the first option given to a resume that differs from what the run was started
 * with (a resume continues the run as it started; it never changes it midway). `given` holds only the
 * options the caller set; `flag` names a field as the caller knows it (e.g. `--episodes` on the CLI).
 */
export function checkResumeOptions(
  run: RunRecord,
  recorded: Record<string, JsonValue>,
  given: Record<string, JsonValue | undefined>,
  flag: (field: string) => string = (field) => field,
): void {
  for (const field of Object.keys(given).sort()) {
    const value = given[field];
    if (value === undefined) continue;
    const was = recorded[field];
    if (JSON.stringify(value) === JSON.stringify(was ?? null)) continue;
    throw new EnvHarnessError(
      'PARAMS_INVALID',
      `${flag(field)} ${JSON.stringify(value)} differs from run ${run.id}'s ${JSON.stringify(was ?? null)}: a resume continues the run with the options it started with; drop ${flag(field)}, or start a new run without --resume`,
      { details: { pointer: `/${field}`, runId: run.id, given: value, recorded: was ?? null } },
    );
  }
}
