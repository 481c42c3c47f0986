/** The episode's public contract: the options of `createEpisode` and the Gymnasium-shaped `Episode` it returns. */
import type { Action, Budget, DomainFeedback, EpisodeStatus, FeedbackCode, JsonValue, Observation, StepResult, Task, TraceEntry } from '../core/index.js';
import type { Recorder } from './recorder.js';
import type { RuntimeCache } from './runtime-cache.js';

/** Options that change what an episode does; replay needs the same ones to reproduce it. */
export interface DynamicsOptions {
  /** Shaping weight per feedback code; a step's shaping is the sum over its feedback. Default: none (shaping 0). */
  shaping?: Partial<Record<FeedbackCode, number>>;
  /** Steps without progress before NO_PROGRESS fires (and again every so many steps). */
  noProgressSteps?: number;
  /** Share of a budget at which BUDGET_WARNING fires once. */
  budgetWarningRatio?: number;
  /** Inject the task's fault profile (default true). The oracle gate turns faults off. */
  faults?: boolean;
  /** Further calls of a tool hit by a persistent fault before the episode is given up as unrecoverable. */
  faultRetries?: number;
  /** Overrides of the task's budget (merged over the task's budget and the defaults). */
  budget?: Partial<Budget>;
  /** Extra feedback producers, run after each step. */
  feedback?: readonly DomainFeedback[];
}

/** Options of `createEpisode`: dynamics plus recording, clock, ids and caches (which do not change what happens). */
export interface EpisodeOptions extends DynamicsOptions {
  /** Where transitions go. Default: not recorded. */
  recorder?: Recorder;
  /**
   * What the recorder is given. `transitions` (the default): every step's transition, as it happens. `inputs`: no
   * transitions; the record of the ended (or closed) episode carries its actions and final state hash
   * (`EpisodeRecord.inputs`), from which a replay rebuilds every transition byte for byte (`rebuildTransitions`), at a
   * fraction of the recording cost. Only for an episode nothing else steers: with feedback producers, or a clock and a
   * time budget, the episode is recorded as `transitions` anyway. The episode keeps each action it is given until the
   * record is written: do not change an action object after stepping it.
   */
  recordAs?: 'transitions' | 'inputs';
  /**
   * Whether the episode asks its recorder for a flush when it ends (default true: its record is committed right after,
   * in a commit shared with whatever else asked before the program yields). False leaves the ended episode to the
   * recorder's group commit (its `maxBatch` or `maxDelayMs`) or to the caller's `flush()`: a runner that flushes once
   * for many episodes (an evaluation, a training round) then commits them together instead of one by one.
   */
  flushOnEnd?: boolean;
  /** Wall clock in milliseconds for the time budget and record timestamps. Without it, time stands still. */
  clock?: () => number;
  /** Id of each new episode. Default: `<first 16 hex of the task id>:<seed>:<reset count of this object>`. */
  episodeId?: (ctx: { taskId: string; seed: number; index: number }) => string;
  /** State and task caches. Default: one shared cache per domain object. */
  cache?: RuntimeCache<any>;
  /** Copied into the episode record. */
  runId?: string;
  agent?: string;
}

/** One attempt at a task, reset and stepped like a Gymnasium environment. */
export interface Episode {
  readonly task: Task;
  /** Id of the current episode (undefined before the first reset). */
  readonly id: string | undefined;
  readonly seed: number | undefined;
  readonly status: EpisodeStatus | 'idle';
  /** Steps taken in the current episode. */
  readonly steps: number;
  /**
   * What policy rules and acceptance checks see: the valid actions of the current episode with their results. Read
   * only: past its first 1,024 entries, the entries of a repeated call that ran share the action and observation
   * objects of the first equal one (equal member for member), so that a long episode keeps one small object per step.
   */
  readonly trace: readonly TraceEntry[];
  /** Starts a new episode from the task's initial state (ending the current one, if running, as `closed`). */
  reset(options: { seed: number }): Observation;
  /**
   * Applies one action. Untrusted input is validated: an invalid action is an observation with an error,
   * never an exception. Throws only EPISODE_NOT_FOUND (before reset), EPISODE_FINISHED, EPISODE_BUSY.
   */
  step(action: Action): StepResult;
  step(action: unknown): StepResult;
  /** Hash of the current state (the domain's `hashState`). */
  stateHash(): string;
  /** JSON export of the current state. */
  exportState(): JsonValue;
  /** Resolves when everything recorded so far is durable (the recorder's flush). */
  flush(): Promise<void>;
  /** Ends a running episode as `closed`, then flushes. */
  close(): Promise<void>;
}
