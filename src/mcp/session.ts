/** One episode at a time over a harness, driven by tool calls: the protocol-free core of the MCP server. */
import { EnvHarnessError, toEnvHarnessError } from '../core/index.js';
import type {
  Budget,
  Domain,
  EndReason,
  Feedback,
  JsonObject,
  JsonValue,
  Observation,
  Split,
  StepResult,
  StoredTask,
  Tool,
  Truncation,
} from '../core/index.js';
import type { Harness } from '../harness/harness.js';
import type { DynamicsOptions, Episode } from '../runtime/index.js';

/** Which task an episode is of, and its seed. Absent fields fall back to the session's defaults. */
export interface EpisodeSelector {
  /** A stored task id (sha256 hex). */
  taskId?: string;
  /** Sample a task of this type from the pool. */
  taskType?: string;
  /** Level (1-based) to sample at. */
  level?: number;
  /** Pool split to sample from (default `dynamic`). */
  split?: Split;
  /** Episode seed (default 0). */
  seed?: number;
}

export interface EpisodeSessionOptions {
  harness: Harness;
  /** What `reset` without arguments starts (and what the first step starts when no episode is running). */
  defaults?: EpisodeSelector;
  /**
   * The id of each new episode. Default: `mcp:<first 16 hex of the task id>:<seed>:<n>` with the first `n`
   * that the store does not hold yet (ids must be unique per store).
   */
  episodeId?: (ctx: { taskId: string; seed: number; index: number }) => string;
  /** Dynamics of every episode (shaping, budgets, faults...). */
  dynamics?: DynamicsOptions;
  /** Record transitions to the harness's store (default true). */
  record?: boolean;
  /** Agent name written into the episode records (default `mcp`). */
  agent?: string;
}

/** The task of the current episode as the agent may see it: no spec, no reference solution. */
export interface TaskInfo {
  id: string;
  domain: string;
  template: string;
  taskType: string;
  level: number;
}

/** What `reset` returns. */
export interface ResetSummary {
  episodeId: string;
  task: TaskInfo;
  seed: number;
  observation: Observation;
}

/** What a step (a domain tool call, `message` or `finish`) returns. */
export interface StepSummary {
  episodeId: string;
  /** 1-based number of this step. */
  step: number;
  observation: Observation;
  reward: number;
  terminated: boolean;
  truncated: boolean;
  truncation?: Truncation;
  feedback: Feedback[];
  info: StepResult['info'];
  /** The sum of the rewards so far. */
  totalReward: number;
}

/** What `status` returns. */
export interface StatusSummary {
  episodeId: string;
  task: TaskInfo;
  seed: number;
  status: Episode['status'];
  steps: number;
  /** The sum of the rewards so far. */
  reward: number;
  /** The task outcome, once the episode has ended. */
  outcome?: number;
  terminated: boolean;
  truncated: boolean;
  truncation?: Truncation;
  endReason?: EndReason;
  /** The latest observation (the reset observation before the first step). */
  observation: Observation;
  /** Feedback of the latest step. */
  feedback: Feedback[];
  budget?: Budget;
  tools: string[];
}

/** A step refused because no episode can take it (it ended): an answer, not an exception. */
export interface StepRefusal {
  refused: true;
  code: 'EPISODE_FINISHED';
  message: string;
  status: StatusSummary;
}

interface Current {
  episode: Episode;
  task: StoredTask;
  domain: Domain<any>;
  seed: number;
  reset: Observation;
  last: StepResult | undefined;
  totalReward: number;
  tools: Tool<any, any>[];
}

type ResetListener = (summary: ResetSummary) => void;

/**
 * An MCP-facing episode session: `reset` opens an episode of a stored task (recorded to the harness's
 * store), `step` runs one action through the runtime (feedback, budgets, faults and recording apply), and
 * `status` reports where the episode stands. Calls are serialised, so concurrent callers never interleave.
 * @example
 * const session = createEpisodeSession({ harness, defaults: { taskType: 'arithmetic', level: 1 } });
 * await session.reset();
 * const result = await session.step({ type: 'finish', answer: '7' });
 */
export class EpisodeSession {
  readonly harness: Harness;
  private readonly options: EpisodeSessionOptions;
  private current: Current | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly listeners = new Set<ResetListener>();
  private index = 0;
  private closed = false;

  constructor(options: EpisodeSessionOptions) {
    this.harness = options.harness;
    this.options = options;
  }

  /** Whether an episode has been started. */
  get isStarted(): boolean {
    return this.current !== undefined;
  }

  /** The domain and the allowed tools of the current episode (empty before the first reset). */
  tools(): { domain: Domain<any> | undefined; tools: readonly Tool<any, any>[] } {
    return { domain: this.current?.domain, tools: this.current?.tools ?? [] };
  }

  /** Calls `listener` after every reset; returns the unsubscribe function. */
  onReset(listener: ResetListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Starts a new episode (ending the current one as `closed`). Throws for unknown tasks or an empty pool. */
  reset(selector: EpisodeSelector = {}): Promise<ResetSummary> {
    return this.serial(() => this.resetNow(selector));
  }

  /** Starts an episode with the defaults unless one was started already. */
  ensureStarted(): Promise<void> {
    return this.serial(async () => {
      if (this.current === undefined) await this.resetNow({});
    });
  }

  /**
   * Runs one action. Agent mistakes (bad arguments, unknown tools, policy refusals) come back as
   * observations with `error` and feedback; a step after the end comes back as a refusal.
   */
  step(action: unknown): Promise<StepSummary | StepRefusal> {
    return this.serial(async () => {
      if (this.current === undefined) await this.resetNow({});
      const current = this.current!;
      const { episode } = current;
      if (episode.status !== 'running') {
        return {
          refused: true as const,
          code: 'EPISODE_FINISHED' as const,
          message: `episode ${episode.id} has ended (${episode.status}); call reset to start another`,
          status: this.statusOf(current),
        };
      }
      const result = episode.step(action);
      current.last = result;
      current.totalReward += result.reward;
      if (result.terminated || result.truncated) await episode.flush();
      const summary: StepSummary = {
        episodeId: episode.id!,
        step: episode.steps,
        observation: result.observation,
        reward: result.reward,
        terminated: result.terminated,
        truncated: result.truncated,
        feedback: result.feedback,
        info: result.info,
        totalReward: current.totalReward,
      };
      if (result.truncation !== undefined) summary.truncation = result.truncation;
      return summary;
    });
  }

  /** Where the current episode stands; starts one with the defaults if none was started. */
  status(): Promise<StatusSummary> {
    return this.serial(async () => {
      if (this.current === undefined) await this.resetNow({});
      return this.statusOf(this.current!);
    });
  }

  /** Ends a running episode as `closed` and waits until its records are durable. Idempotent. */
  close(): Promise<void> {
    return this.serial(async () => {
      if (this.closed) return;
      this.closed = true;
      await this.current?.episode.close();
    });
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(() => {
      if (this.closed) throw new EnvHarnessError('EPISODE_FINISHED', 'the MCP episode session is closed');
      return fn();
    });
    // Later calls wait for this one whether it succeeded or not.
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async resetNow(selector: EpisodeSelector): Promise<ResetSummary> {
    const harness = this.harness;
    const wanted = mergeSelector(this.options.defaults ?? {}, selector);
    const seed = wanted.seed ?? 0;
    if (!Number.isSafeInteger(seed)) {
      throw new EnvHarnessError('PARAMS_INVALID', `seed must be an integer, got ${String(seed)}`, { details: { pointer: '/seed' } });
    }
    const task = wanted.taskId !== undefined
      ? await harness.getTask(wanted.taskId)
      : await harness.generateTask({
          ...(wanted.taskType !== undefined ? { taskType: wanted.taskType } : {}),
          ...(wanted.level !== undefined ? { level: wanted.level } : {}),
          ...(wanted.split !== undefined ? { split: wanted.split } : {}),
        });
    const domain = harness.domains.get(task.domain);
    if (domain === undefined) {
      throw new EnvHarnessError('DOMAIN_NOT_FOUND', `task ${task.id} needs domain ${task.domain}, which is not registered`);
    }
    const episodeId = await this.nextEpisodeId(task.id, seed);
    const previous = this.current;
    const { episode } = await harness.openEpisode({
      taskId: task.id,
      episodeId,
      agent: this.options.agent ?? 'mcp',
      ...(this.options.record === false ? { record: false } : {}),
      ...(this.options.dynamics ? { dynamics: this.options.dynamics } : {}),
    });
    const observation = episode.reset({ seed });
    if (previous !== undefined) await previous.episode.close();
    const allowed = new Set((observation.tools ?? []).map((t) => t.name));
    this.current = {
      episode,
      task,
      domain,
      seed,
      reset: observation,
      last: undefined,
      totalReward: 0,
      tools: domain.tools.filter((t) => allowed.has(t.name)),
    };
    const summary: ResetSummary = { episodeId: episode.id!, task: taskInfo(task), seed, observation };
    for (const listener of this.listeners) listener(summary);
    return summary;
  }

  private async nextEpisodeId(taskId: string, seed: number): Promise<string> {
    const custom = this.options.episodeId;
    if (custom !== undefined) return custom({ taskId, seed, index: this.index++ });
    for (;;) {
      const id = `mcp:${taskId.slice(0, 16)}:${seed}:${this.index++}`;
      // A duplicate id would make the store's group commit fail for every later episode.
      if ((await this.harness.store.getEpisode(id)) === undefined) return id;
    }
  }

  private statusOf(current: Current): StatusSummary {
    const { episode, last } = current;
    const status: StatusSummary = {
      episodeId: episode.id!,
      task: taskInfo(current.task),
      seed: current.seed,
      status: episode.status,
      steps: episode.steps,
      reward: current.totalReward,
      terminated: last?.terminated ?? false,
      truncated: last?.truncated ?? false,
      observation: last?.observation ?? current.reset,
      feedback: last?.feedback ?? [],
      tools: current.tools.map((t) => t.name),
    };
    if (last?.truncation !== undefined) status.truncation = last.truncation;
    if (last !== undefined && (last.terminated || last.truncated)) {
      status.outcome = last.info.outcome;
      if (last.info.endReason !== undefined) status.endReason = last.info.endReason;
    }
    if (current.reset.budget !== undefined) status.budget = current.reset.budget;
    return status;
  }
}

/** Creates an episode session over a harness. */
export function createEpisodeSession(options: EpisodeSessionOptions): EpisodeSession {
  return new EpisodeSession(options);
}

/** Explicit fields win. A task id replaces any draw; a partial draw (type, level, split) drops the default task id. */
function mergeSelector(defaults: EpisodeSelector, given: EpisodeSelector): EpisodeSelector {
  const seed = given.seed ?? defaults.seed;
  let merged: EpisodeSelector;
  if (given.taskId !== undefined) merged = { taskId: given.taskId };
  else if (given.taskType !== undefined || given.level !== undefined || given.split !== undefined) {
    const { taskId: _id, seed: _seed, ...draw } = defaults;
    merged = { ...draw };
    if (given.taskType !== undefined) merged.taskType = given.taskType;
    if (given.level !== undefined) merged.level = given.level;
    if (given.split !== undefined) merged.split = given.split;
  } else {
    const { seed: _seed, ...rest } = defaults;
    merged = { ...rest };
  }
  if (seed !== undefined) merged.seed = seed;
  return merged;
}

function taskInfo(task: StoredTask): TaskInfo {
  return { id: task.id, domain: task.domain, template: task.template, taskType: task.taskType, level: task.level };
}

/** A readable one-screen rendering of an observation (what MCP clients show as text). */
export function renderObservation(observation: Observation): string {
  const lines: string[] = [];
  if (observation.error !== undefined) {
    const e = observation.error;
    let line = `error ${e.code}: ${e.message}`;
    if (e.pointer !== undefined) line += ` (at ${e.pointer === '' ? 'the root' : e.pointer})`;
    if (e.retryAfterMs !== undefined) line += ` — retry after ${e.retryAfterMs} ms`;
    lines.push(line);
  }
  if (observation.output !== undefined) lines.push(JSON.stringify(observation.output));
  if (observation.text !== undefined) lines.push(observation.kind === 'message' ? `user: ${observation.text}` : observation.text);
  if (lines.length === 0) lines.push(`(${observation.kind})`);
  return lines.join('\n');
}

/** The plain-JSON form of a value for `structuredContent` (drops undefined, copies frozen parts). */
export function toJsonObject(value: object): JsonObject {
  return JSON.parse(JSON.stringify(value)) as JsonObject;
}

/** Errors answered to the caller: the code and message of an EnvHarnessError, or INTERNAL. */
export function errorPayload(error: unknown): { code: string; message: string; details?: JsonValue } {
  const e = toEnvHarnessError(error);
  const payload: { code: string; message: string; details?: JsonValue } = { code: e.code, message: e.message };
  if (e.details !== undefined) payload.details = toJsonObject(e.details);
  return payload;
}

