/** The episode: Gymnasium-style reset/step over a domain, with feedback, constraints, faults and recording. */
import { EnvHarnessError, toEnvHarnessError } from '../core/index.js';
import type {
  RejectedAction,
  Action,
  Budget,
  BudgetKind,
  Domain,
  DomainFeedback,
  EndReason,
  EpisodeRecord,
  EpisodeStatus,
  FaultKind,
  FaultRule,
  Feedback,
  FeedbackCode,
  JsonObject,
  JsonValue,
  Observation,
  SimulatedUser,
  StepInfo,
  StepResult,
  Task,
  Tool,
  ToolOutcome,
  TraceEntry,
  Transition,
  Truncation,
  UserTurn,
} from '../core/index.js';
import { LONE_SURROGATE, describe as describeValue, isPlainObject, validateAction } from './action.js';
import { DEFAULT_BUDGET_WARNING_RATIO, DEFAULT_FAULT_RETRIES, DEFAULT_NO_PROGRESS_STEPS } from './defaults.js';
import { DEFAULT_RETRY_AFTER_MS, FAULT_ERROR_CODES, faultMessage, isBlockingFault, partialOutput } from './faults.js';
import { closestPointer, fastRng, parsePointer } from '../core/index.js';
import { callKey, matchesPattern } from './patterns.js';
import type { Recorder } from './recorder.js';
import { lazyToolContext, runtimeCacheFor } from './runtime-cache.js';
import type { PreparedTask, RuntimeCache } from './runtime-cache.js';
import { deepFreeze } from './tool-specs.js';

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
  /** What policy rules and acceptance checks see: the valid actions of the current episode with their results. */
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

type Kind = Observation['kind'];

interface ActiveFault {
  rule: FaultRule;
  ruleIndex: number;
  persistent: boolean;
}

/** What the action part of a step produced, before budgets and end-of-episode checks. */
interface Outcome {
  observation: Observation;
  ok: boolean | undefined;
  userReply: UserTurn | undefined;
  /** The action with parsed arguments, when valid. */
  action: Action | undefined;
  agentError: boolean;
  faulted: boolean;
  progress: boolean;
  terminated: boolean;
  endReason: EndReason | undefined;
  truncation: Truncation | undefined;
  faults: Transition['faults'] | undefined;
}

/**
 * Creates an episode for a task. Prepares the task once per task id (builds or reuses its initial
 * state, replays its reference solution); throws TASK_INVALID if the task does not fit the domain.
 * @example
 * const episode = createEpisode(domain, task, { recorder: createMemoryRecorder() });
 * let obs = episode.reset({ seed: 1 });
 * const result = episode.step({ type: 'tool', tool: 'get_stock', args: { item: 'widget-1' } });
 */
export function createEpisode<S>(domain: Domain<S>, task: Task, options: EpisodeOptions = {}): Episode {
  const cache = (options.cache as RuntimeCache<S> | undefined) ?? runtimeCacheFor(domain);
  if (cache.domain !== domain) {
    throw new EnvHarnessError('CONFIG_INVALID', `the cache given to createEpisode belongs to domain ${cache.domain.name}, not ${domain.name}`);
  }
  return new EpisodeRun(domain, cache.prepare(task), options);
}

const NO_FEEDBACK: readonly Feedback[] = Object.freeze([]);
const REDUNDANT_MESSAGE = 'the same call (tool and arguments) was already made and nothing has changed since';
const OFF_PATH_MESSAGE = 'this call (tool and arguments) is not on the reference path';

class EpisodeRun<S> implements Episode {
  readonly task: Task;
  private readonly budget: Readonly<Budget>;
  private readonly weights: Partial<Record<FeedbackCode, number>> | undefined;
  private readonly noProgressSteps: number;
  private readonly warnRatio: number;
  private readonly faultRules: readonly FaultRule[];
  private readonly faultRetries: number;
  private readonly keepPrevious: boolean;
  private readonly rules: NonNullable<Domain<S>['policy']>['rules'];
  private readonly normalize: (text: string) => string;

  id: string | undefined;
  seed: number | undefined;
  status: EpisodeStatus | 'idle' = 'idle';
  steps = 0;
  trace: TraceEntry[] = [];

  private resets = 0;
  private busy = false;
  private state!: S;
  /** The state before the last write, kept only for tasks with stale-read faults. */
  private previous: S | undefined;
  private hash = '';
  private hashDirty = false;
  private user: SimulatedUser | undefined;
  private startedAt = 0;
  private createdAt = '';
  private tokens = 0;
  private toolCalls = 0;
  private perTool = new Map<string, number>();
  private errorStreak = 0;
  private sinceProgress = 0;
  private warned = new Set<string>();
  private seen = new Set<string>();
  private faulted = new Set<string>();
  private fired: number[] = [];
  private persistent = new Map<string, { fault: ActiveFault; left: number }>();
  /** A persistent fault fired: a failed end of this episode is blamed on it. */
  private hitPersistent = false;
  /** A persistent fault used up its retries: the episode ends now. */
  private lostToFault = false;
  private confirmed = false;
  private subgoals = new Set<string>();
  private before: boolean[] = [];
  private violated = new Set<string>();
  private messages: string[] = [];
  private answer: string | undefined;
  private totalReward = 0;
  private lastFlush: Promise<void> = Promise.resolve();

  constructor(
    private readonly domain: Domain<S>,
    private readonly prepared: PreparedTask<S>,
    private readonly options: EpisodeOptions,
  ) {
    this.task = prepared.task;
    this.budget = options.budget === undefined ? prepared.budget : deepFreeze({ ...prepared.budget, ...options.budget });
    this.weights = options.shaping !== undefined && Object.keys(options.shaping).length > 0 ? options.shaping : undefined;
    this.noProgressSteps = positive(options.noProgressSteps ?? DEFAULT_NO_PROGRESS_STEPS, 'noProgressSteps');
    this.warnRatio = options.budgetWarningRatio ?? DEFAULT_BUDGET_WARNING_RATIO;
    this.faultRules = options.faults === false ? [] : prepared.faultRules;
    this.faultRetries = options.faultRetries ?? DEFAULT_FAULT_RETRIES;
    this.keepPrevious = options.faults !== false && prepared.hasStaleRule;
    this.rules = domain.policy?.rules ?? [];
    this.normalize = domain.normalizeOutput ?? normalizeOutput;
  }

  reset(options: { seed: number }): Observation {
    const seed = options?.seed;
    if (!Number.isSafeInteger(seed)) {
      throw new EnvHarnessError('PARAMS_INVALID', `reset needs an integer seed, got ${describeValue(seed)}`, { details: { pointer: '/seed' } });
    }
    if (this.busy) throw new EnvHarnessError('EPISODE_BUSY', `episode ${this.id} is in the middle of a step`);
    if (this.status === 'running') this.finishRecord('closed');
    const task = this.task;
    const index = this.resets++;
    this.id = this.options.episodeId?.({ taskId: task.id, seed, index }) ?? `${task.id.slice(0, 16)}:${seed}:${index}`;
    this.seed = seed;
    this.state = this.domain.fork(this.prepared.base);
    this.previous = undefined;
    this.hash = this.prepared.baseHash;
    this.hashDirty = false;
    this.steps = 0;
    this.trace = [];
    this.tokens = 0;
    this.toolCalls = 0;
    this.perTool = new Map();
    this.errorStreak = 0;
    this.sinceProgress = 0;
    this.warned = new Set();
    this.seen = new Set();
    this.faulted = new Set();
    this.fired = this.faultRules.map(() => 0);
    this.persistent = new Map();
    this.hitPersistent = false;
    this.lostToFault = false;
    this.confirmed = false;
    this.subgoals = new Set();
    this.before = (task.spec.acceptance.ordering ?? []).map(() => false);
    this.violated = new Set();
    this.messages = [];
    this.answer = undefined;
    this.totalReward = 0;
    let text: string;
    try {
      this.user = this.domain.createUser?.(task, fastRng([task.id, seed, 'user']));
      text = this.user === undefined ? task.spec.instructions : this.user.opening();
    } catch (error) {
      this.status = 'idle';
      throw new EnvHarnessError('INTERNAL', `domain ${this.domain.name}: the simulated user failed to start for task ${task.id}: ${toEnvHarnessError(error).message}`, { cause: error });
    }
    const clock = this.options.clock;
    this.startedAt = clock === undefined ? 0 : clock();
    this.createdAt = isoTime(this.startedAt);
    this.status = 'running';
    this.options.recorder?.begin(this.record('running'));
    const observation: Observation = { kind: 'reset', text, tools: this.prepared.toolSpecs as Observation['tools'] };
    if (this.domain.policy !== undefined) observation.policy = this.domain.policy.text;
    observation.budget = this.budget as Budget;
    return observation;
  }

  step(input: unknown): StepResult {
    if (this.status === 'idle') {
      throw new EnvHarnessError('EPISODE_NOT_FOUND', `no episode of task ${this.task.id} is running: call reset({ seed }) before step()`);
    }
    if (this.status !== 'running') {
      throw new EnvHarnessError('EPISODE_FINISHED', `episode ${this.id} has ended (${this.status}); call reset({ seed }) to start a new one`, {
        details: { episodeId: this.id },
      });
    }
    if (this.busy) throw new EnvHarnessError('EPISODE_BUSY', `episode ${this.id} is already running a step`);
    this.busy = true;
    try {
      return this.advance(input);
    } finally {
      this.busy = false;
    }
  }

  private advance(input: unknown): StepResult {
    const step = ++this.steps;
    const feedback: Feedback[] = [];
    const budget = this.budget;
    const clock = this.options.clock;
    const issue = validateAction(input);
    const action = issue === undefined ? (input as Action) : undefined;
    if (action?.usage !== undefined) this.tokens += (action.usage.inputTokens ?? 0) + (action.usage.outputTokens ?? 0);

    let out: Outcome;
    if (budget.timeMs !== undefined && clock !== undefined && clock() - this.startedAt >= budget.timeMs) {
      out = blank({ kind: kindOf(input), error: { code: 'BUDGET_EXHAUSTED', message: `the wall-time budget of ${budget.timeMs} ms was spent before this action; it was not run` } });
      out.truncation = 'time';
    } else if (issue !== undefined) {
      out = blank({ kind: kindOf(input), error: { code: 'INVALID_ACTION', message: issue.message, pointer: issue.pointer } });
      out.agentError = true;
      feedback.push({ code: 'INVALID_ACTION', message: issue.message, pointer: issue.pointer });
    } else if (action!.type === 'tool') {
      out = this.callTool(action as Action & { type: 'tool' }, feedback);
    } else if (action!.type === 'message') {
      out = this.message(action as Action & { type: 'message' });
    } else {
      this.answer = (action as Action & { type: 'finish' }).answer;
      out = blank({ kind: 'finish' });
      out.ok = true;
      out.action = action;
      out.terminated = true;
      out.endReason = 'finished';
    }

    if (out.action !== undefined) {
      const entry: TraceEntry = { step, action: out.action, observation: out.observation };
      if (out.ok !== undefined) entry.ok = out.ok;
      if (out.userReply !== undefined) entry.userReply = out.userReply;
      this.trace.push(entry);
      if (out.ok === true) this.track(out, feedback);
    }

    if (out.agentError) this.errorStreak++;
    else if (!out.faulted) this.errorStreak = 0;

    // End of episode: a task end state first, then the hard limits.
    let terminated = out.terminated;
    let truncation = out.truncation;
    let endReason = out.endReason;
    if (truncation === undefined && !terminated) {
      if (this.lostToFault) {
        truncation = 'errors';
        endReason = 'unrecoverable_fault';
      } else {
        const limit = this.spentBudget(step);
        if (limit !== undefined) {
          truncation = limit;
          endReason = limit === 'errors' ? 'too_many_errors' : 'budget';
        }
      }
    }
    if (truncation !== undefined && endReason === undefined) endReason = 'budget';
    if (endReason === 'budget' || endReason === 'too_many_errors') {
      feedback.push({
        code: 'BUDGET_EXHAUSTED',
        message: `the ${budgetName(truncation!)} budget is spent: the episode is truncated`,
        ref: truncation!,
        details: { limit: this.limitOf(truncation!) ?? null },
      });
    }
    const ended = terminated || truncation !== undefined;

    if (!ended) {
      this.warnings(step, feedback);
      if (out.progress) this.sinceProgress = 0;
      else if (++this.sinceProgress >= this.noProgressSteps) {
        this.sinceProgress = 0;
        feedback.push({ code: 'NO_PROGRESS', message: `${this.noProgressSteps} steps without progress towards the goal`, details: { steps: this.noProgressSteps } });
      }
    }
    const producers = this.options.feedback;
    if (producers !== undefined && out.action !== undefined) {
      for (const produce of producers) feedback.push(...produce({ action: out.action, trace: this.trace }));
    }
    if (this.domain.feedback !== undefined && out.action !== undefined) {
      feedback.push(...this.domain.feedback({ action: out.action, trace: this.trace, state: this.state, task: this.task }));
    }

    if (this.hashDirty) this.rehash();
    const info: StepInfo = { step, outcome: 0, shaping: 0, stateHash: this.hash };
    if (ended) {
      if (terminated) {
        const verdict = this.evaluate();
        info.outcome = verdict.outcome;
        info.acceptance = verdict.checks;
      }
      let exclude = endReason === 'simulator_error';
      if ((this.hitPersistent || endReason === 'unrecoverable_fault') && info.outcome < 1) {
        endReason = 'unrecoverable_fault';
        exclude = true;
      }
      info.endReason = endReason!;
      info.excludeFromStats = exclude;
      if (this.domain.report !== undefined) {
        info.report = this.domain.report({ state: this.state, trace: this.trace, task: this.task, referenceState: this.prepared.referenceState });
      }
      const userRecord = this.user?.record?.();
      if (userRecord !== undefined) info.user = userRecord;
    }
    if (this.weights !== undefined) info.shaping = shapingOf(feedback, this.weights);
    const reward = info.outcome + info.shaping;
    this.totalReward += reward;

    const truncated = truncation !== undefined;
    const result: StepResult = { observation: out.observation, reward, terminated, truncated, feedback: feedback.length === 0 ? (NO_FEEDBACK as Feedback[]) : feedback, info };
    if (truncated) result.truncation = truncation;
    if (ended) this.status = terminated ? 'terminated' : 'truncated';

    const recorder = this.options.recorder;
    if (recorder !== undefined) {
      const transition: Transition = {
        episodeId: this.id!,
        step,
        action: action ?? recordable(input),
        observation: out.observation,
        reward,
        terminated,
        truncated,
        feedback: result.feedback,
        info,
      };
      if (truncated) transition.truncation = truncation;
      if (out.faults !== undefined) transition.faults = out.faults;
      recorder.record(transition);
      if (ended) {
        recorder.end(this.record(this.status as EpisodeStatus, info));
        this.lastFlush = recorder.flush();
        // Surfaces on the next flush(); never an unhandled rejection.
        this.lastFlush.catch(() => undefined);
      }
    }
    return result;
  }

  // ---- tools ----

  private callTool(action: Action & { type: 'tool' }, feedback: Feedback[]): Outcome {
    const prepared = this.prepared;
    const tool = prepared.tools.get(action.tool);
    if (tool === undefined) {
      const exists = this.domain.tools.some((t) => t.name === action.tool);
      const message = `${exists ? `tool "${action.tool}" is not available in this task` : `unknown tool "${action.tool}"`}; available: ${[...prepared.tools.keys()].join(', ')}`;
      return this.refuse('INVALID_ACTION', message, feedback, { code: 'INVALID_ACTION', message, pointer: '/tool' });
    }
    const parsed = tool.args.safeParse(action.args);
    if (!parsed.success) {
      const first = parsed.error.issues[0];
      const path = ['args', ...(first?.path ?? [])];
      const pointer = closestPointer(action, path);
      const field = first !== undefined && first.path.length > 0 ? `argument "${first.path.join('.')}"` : 'arguments';
      const message = `${action.tool}: invalid ${field}: ${first?.message ?? 'invalid input'}`;
      return this.refuse('INVALID_ACTION', message, feedback, { code: 'INVALID_ACTION', message, pointer });
    }
    const args = parsed.data as JsonObject;
    // What rules, patterns and the trace see: the call with parsed arguments.
    const call: Action & { type: 'tool' } = args === action.args ? action : { type: 'tool', tool: action.tool, args };
    if (call !== action && action.usage !== undefined) call.usage = action.usage;

    for (let i = 0; i < prepared.forbidden.length; i++) {
      const rule = prepared.forbidden[i]!;
      if (rule.tool === tool.name && (rule.args === undefined || matchesPattern({ args: rule.args }, call))) {
        const message = `${tool.name} is forbidden here${rule.reason !== undefined ? `: ${rule.reason}` : ''}; the call was refused`;
        return this.refuse('FORBIDDEN', message, feedback, { code: 'POLICY_VIOLATION', message, severity: 'high', ref: 'forbidden' }, call);
      }
    }
    const quota = this.budget.perTool?.[tool.name];
    const used = this.perTool.get(tool.name) ?? 0;
    if (quota !== undefined && used >= quota) {
      const message = `${tool.name} may be called at most ${quota} times in this task; the call was refused`;
      return this.refuse('QUOTA_EXCEEDED', message, feedback, { code: 'BUDGET_EXHAUSTED', message, ref: `perTool:${tool.name}`, details: { limit: quota } }, call);
    }
    if (prepared.confirm.has(tool.name) && !this.confirmed) {
      const message = `${tool.name} needs the user's explicit confirmation first (ask the user and get a yes since the last change); the call was refused`;
      return this.refuse('CONFIRMATION_REQUIRED', message, feedback, { code: 'POLICY_VIOLATION', message, severity: 'medium', ref: 'confirmation_required' }, call);
    }
    let blocked: string | undefined;
    for (let i = 0; i < this.rules.length; i++) {
      const rule = this.rules[i]!;
      let message: string | undefined;
      try {
        message = rule.check(call, { state: this.state, trace: this.trace, task: this.task });
      } catch (error) {
        return this.simulatorError(`policy rule ${rule.id} failed: ${toEnvHarnessError(error).message}`, call);
      }
      if (message === undefined) continue;
      feedback.push({ code: 'POLICY_VIOLATION', message, severity: rule.severity, ref: rule.id });
      if (rule.block === true && blocked === undefined) blocked = message;
    }
    if (blocked !== undefined) {
      const out = blank({ kind: 'tool', error: { code: 'POLICY_VIOLATION', message: `refused: ${blocked}` } });
      out.action = call;
      out.ok = false;
      out.agentError = true;
      return out;
    }

    // The call is dispatched: it counts against tool budgets and draws its faults.
    const key = callKey(tool.name, args);
    const retry = this.faulted.has(key);
    if (this.seen.has(key) && !retry) {
      feedback.push({ code: 'REDUNDANT_CALL', message: REDUNDANT_MESSAGE, ref: tool.name });
    }
    if (!prepared.solutionKeys.has(key)) {
      feedback.push({ code: 'OFF_PATH', message: OFF_PATH_MESSAGE, ref: tool.name });
    }
    const callIndex = this.toolCalls++;
    this.perTool.set(tool.name, used + 1);
    if (quota !== undefined) this.warn(`perTool:${tool.name}`, used + 1, quota, feedback);
    const fault = this.faultRules.length === 0 ? undefined : this.drawFault(tool, callIndex);

    if (fault !== undefined && isBlockingFault(fault.rule.kind)) {
      this.faulted.add(key);
      const error: NonNullable<Observation['error']> = { code: FAULT_ERROR_CODES[fault.rule.kind], message: faultMessage(fault.rule, tool.name) };
      if (fault.rule.kind === 'rate_limit') error.retryAfterMs = fault.rule.retryAfterMs ?? DEFAULT_RETRY_AFTER_MS;
      feedback.push(faultFeedback(fault, tool.name, callIndex));
      const out = blank({ kind: 'tool', error });
      out.action = call;
      out.ok = false;
      out.faulted = true;
      out.faults = [{ kind: fault.rule.kind, tool: tool.name, call: callIndex }];
      return out;
    }

    const write = tool.effect === 'write';
    const target = write && this.keepPrevious ? this.domain.fork(this.state) : fault?.rule.kind === 'stale' ? this.previous! : this.state;
    let result: ToolOutcome;
    try {
      result = tool.run(target, args, lazyToolContext(this.task, this.seed!, callIndex));
    } catch (error) {
      return this.simulatorError(`tool ${tool.name} threw: ${toEnvHarnessError(error).message}`, call);
    }
    const out = blank({ kind: 'tool' });
    out.action = call;
    if (!result.ok) {
      this.seen.add(key);
      const e = result.error;
      out.ok = false;
      out.observation.error = { code: e.code, message: e.message };
      if (e.code === 'FAULT') {
        out.faulted = true;
        feedback.push({ code: 'FAULT_INJECTED', message: e.message, ref: 'domain' });
        return out;
      }
      out.agentError = true;
      if (e.code === 'INVALID_ACTION') {
        const pointer = closestPointer(call, ['args', ...parsePointer(e.pointer ?? '')]);
        out.observation.error.pointer = pointer;
        feedback.push({ code: 'INVALID_ACTION', message: e.message, pointer });
      } else {
        feedback.push({ code: 'PRECONDITION_FAILED', message: e.message, ref: tool.name, details: { code: e.code } });
      }
      return out;
    }

    out.ok = true;
    let output = result.output;
    if (write) {
      if (target !== this.state) {
        this.previous = this.state;
        this.state = target;
      }
      this.hashDirty = true;
      this.seen = new Set();
      this.confirmed = false;
      out.progress = (this.task.spec.acceptance.subgoals?.length ?? 0) === 0;
    }
    if (fault !== undefined) {
      // partial or stale: the call ran, the agent gets degraded data.
      if (fault.rule.kind === 'partial') output = partialOutput(output, fastRng([this.task.id, this.seed, 'partial', callIndex]));
      this.faulted.add(key);
      out.faulted = true;
      out.faults = [{ kind: fault.rule.kind, tool: tool.name, call: callIndex }];
      feedback.push(faultFeedback(fault, tool.name, callIndex));
    } else {
      if (retry) {
        this.faulted.delete(key);
        feedback.push({ code: 'RECOVERED', message: `${tool.name} succeeded on retry after an injected fault`, ref: tool.name });
      }
      if (!write) this.seen.add(key);
    }
    out.observation.output = output;
    return out;
  }

  private refuse(code: string, message: string, feedback: Feedback[], event: Feedback, action?: Action & { type: 'tool' }): Outcome {
    feedback.push(event);
    const error: NonNullable<Observation['error']> = { code, message };
    if (event.pointer !== undefined) error.pointer = event.pointer;
    const out = blank({ kind: 'tool', error });
    out.agentError = true;
    if (action !== undefined) {
      out.action = action;
      out.ok = false;
    }
    return out;
  }

  private simulatorError(message: string, action: Action): Outcome {
    const out = blank({ kind: action.type, error: { code: 'SIMULATOR_ERROR', message } });
    out.action = action;
    out.ok = false;
    out.truncation = 'errors';
    out.endReason = 'simulator_error';
    // A tool that threw may have changed the state half-way: hash whatever is there.
    this.hashDirty = true;
    return out;
  }

  /** Which fault, if any, hits call `callIndex` of `tool`: deterministic in (task id, seed, call index). */
  private drawFault(tool: Tool<S, any>, callIndex: number): ActiveFault | undefined {
    const stuck = this.persistent.get(tool.name);
    if (stuck !== undefined) {
      if (--stuck.left <= 0) this.lostToFault = true;
      return stuck.fault;
    }
    let rng: ReturnType<typeof fastRng> | undefined;
    for (let i = 0; i < this.faultRules.length; i++) {
      const rule = this.faultRules[i]!;
      if (rule.tool !== '*' && rule.tool !== tool.name) continue;
      if ((rule.kind === 'partial' || rule.kind === 'stale') && tool.effect === 'write') continue;
      if (rule.kind === 'stale' && this.previous === undefined) continue;
      if (rule.maxPerEpisode !== undefined && this.fired[i]! >= rule.maxPerEpisode) continue;
      rng ??= fastRng([this.task.id, this.seed, 'fault', callIndex]);
      if (rng.next() >= rule.rate) continue;
      this.fired[i]!++;
      const fault: ActiveFault = { rule, ruleIndex: i, persistent: rule.persistent === true };
      if (fault.persistent) {
        this.hitPersistent = true;
        this.persistent.set(tool.name, { fault, left: this.faultRetries });
        if (this.faultRetries <= 0) this.lostToFault = true;
      }
      return fault;
    }
    return undefined;
  }

  // ---- messages ----

  private message(action: Action & { type: 'message' }): Outcome {
    this.messages.push(action.text);
    const out = blank({ kind: 'message' });
    out.action = action;
    out.ok = true;
    if (this.user === undefined) return out;
    let reply: UserTurn;
    try {
      reply = this.user.respond(action.text, { trace: this.trace });
    } catch (error) {
      return this.simulatorError(`the simulated user failed: ${toEnvHarnessError(error).message}`, action);
    }
    out.observation.text = reply.text;
    out.userReply = reply;
    if (reply.confirms === true) this.confirmed = true;
    if (reply.done === true) {
      out.terminated = true;
      out.endReason = 'user_done';
    }
    return out;
  }

  // ---- feedback that follows successful actions ----

  private track(out: Outcome, feedback: Feedback[]): void {
    const action = out.action!;
    const acceptance = this.task.spec.acceptance;
    const ordering = acceptance.ordering;
    if (ordering !== undefined) {
      for (let i = 0; i < ordering.length; i++) {
        const rule = ordering[i]!;
        if (this.before[i]) continue;
        if (matchesPattern(rule.before, action)) {
          this.before[i] = true;
        } else if (matchesPattern(rule.after, action) && !this.violated.has(rule.id)) {
          this.violated.add(rule.id);
          feedback.push({ code: 'ORDER_VIOLATION', message: rule.message ?? `an action that must come after another came first (rule ${rule.id})`, severity: 'medium', ref: rule.id });
        }
      }
    }
    const subgoals = acceptance.subgoals;
    if (subgoals !== undefined) {
      for (const subgoal of subgoals) {
        if (this.subgoals.has(subgoal.id) || !matchesPattern(subgoal.pattern, action)) continue;
        this.subgoals.add(subgoal.id);
        out.progress = true;
        feedback.push({ code: 'SUBGOAL_REACHED', message: `subgoal ${subgoal.id} reached`, ref: subgoal.id });
      }
    }
  }

  // ---- budgets ----

  private spentBudget(step: number): Truncation | undefined {
    const b = this.budget;
    if (b.consecutiveErrors !== undefined && this.errorStreak > 0 && this.errorStreak >= b.consecutiveErrors) return 'errors';
    if (b.timeMs !== undefined && this.options.clock !== undefined && this.options.clock() - this.startedAt >= b.timeMs) return 'time';
    if (b.tokens !== undefined && this.tokens >= b.tokens) return 'tokens';
    if (b.toolCalls !== undefined && this.toolCalls >= b.toolCalls) return 'tool_calls';
    if (b.steps !== undefined && step >= b.steps) return 'steps';
    return undefined;
  }

  private limitOf(kind: BudgetKind): number | undefined {
    const b = this.budget;
    switch (kind) {
      case 'steps':
        return b.steps;
      case 'tokens':
        return b.tokens;
      case 'time':
        return b.timeMs;
      case 'tool_calls':
        return b.toolCalls;
      case 'errors':
        return b.consecutiveErrors;
    }
  }

  private warnings(step: number, feedback: Feedback[]): void {
    const b = this.budget;
    if (b.steps !== undefined) this.warn('steps', step, b.steps, feedback);
    if (b.tokens !== undefined) this.warn('tokens', this.tokens, b.tokens, feedback);
    if (b.toolCalls !== undefined) this.warn('tool_calls', this.toolCalls, b.toolCalls, feedback);
    if (b.timeMs !== undefined && this.options.clock !== undefined) this.warn('time', this.options.clock() - this.startedAt, b.timeMs, feedback);
    if (b.consecutiveErrors !== undefined) {
      // Once per streak of errors.
      if (this.errorStreak === 0) this.warned.delete('errors');
      else this.warn('errors', this.errorStreak, b.consecutiveErrors, feedback);
    }
  }

  private warn(ref: string, used: number, limit: number, feedback: Feedback[]): void {
    if (used < this.warnRatio * limit || used >= limit || this.warned.has(ref)) return;
    this.warned.add(ref);
    feedback.push({ code: 'BUDGET_WARNING', message: `${Math.round((used / limit) * 100)}% of the ${budgetName(ref)} budget is used (${used} of ${limit})`, ref, details: { used, limit } });
  }

  // ---- grading ----

  /** The outcome: 1 iff every acceptance criterion of the task holds. */
  private evaluate(): { outcome: number; checks: JsonObject } {
    const acceptance = this.task.spec.acceptance;
    const checks: JsonObject = {};
    let pass = true;
    if (acceptance.finalState) {
      const same = this.stateHash() === this.prepared.referenceHash;
      checks.finalState = same;
      pass &&= same;
    }
    if (acceptance.outputs !== undefined && acceptance.outputs.length > 0) {
      const said = this.messages.map(this.normalize);
      const missing = acceptance.outputs.filter((o) => {
        const want = this.normalize(o);
        return !said.some((m) => m.includes(want));
      });
      checks.missingOutputs = missing;
      pass &&= missing.length === 0;
    }
    if (acceptance.answer !== undefined) {
      const same = this.answer !== undefined && this.normalize(this.answer).trim() === this.normalize(acceptance.answer).trim();
      checks.answer = same;
      pass &&= same;
    }
    if (acceptance.ordering !== undefined && acceptance.ordering.length > 0) {
      checks.orderViolations = [...this.violated].sort();
      pass &&= this.violated.size === 0;
    }
    const domainChecks = this.domain.acceptance;
    if (domainChecks !== undefined && domainChecks.length > 0) {
      const failed: JsonObject[] = [];
      for (const check of domainChecks) {
        let message: string | undefined;
        try {
          message = check.check({ state: this.state, trace: this.trace, task: this.task, referenceState: this.prepared.referenceState });
        } catch (error) {
          message = `check failed to run: ${toEnvHarnessError(error).message}`;
        }
        if (message !== undefined) failed.push({ id: check.id, message });
      }
      checks.failedChecks = failed;
      pass &&= failed.length === 0;
    }
    return { outcome: pass ? 1 : 0, checks };
  }

  // ---- records ----

  private record(status: EpisodeStatus, info?: StepInfo): EpisodeRecord {
    const record: EpisodeRecord = {
      id: this.id!,
      taskId: this.task.id,
      seed: this.seed!,
      status,
      steps: this.steps,
      reward: this.totalReward,
      outcome: info?.outcome ?? 0,
      excludeFromStats: info?.excludeFromStats ?? false,
      createdAt: this.createdAt,
      updatedAt: status === 'running' ? this.createdAt : isoTime(this.options.clock?.() ?? 0),
    };
    if (info?.endReason !== undefined) record.endReason = info.endReason;
    if (this.options.runId !== undefined) record.runId = this.options.runId;
    if (this.options.agent !== undefined) record.agent = this.options.agent;
    return record;
  }

  private finishRecord(status: EpisodeStatus): void {
    this.status = status;
    const recorder = this.options.recorder;
    if (recorder === undefined) return;
    recorder.end(this.record(status));
    this.lastFlush = recorder.flush();
    this.lastFlush.catch(() => undefined);
  }

  stateHash(): string {
    if (this.status === 'idle') return this.prepared.baseHash;
    if (this.hashDirty) this.rehash();
    return this.hash;
  }

  private rehash(): void {
    try {
      this.hash = this.domain.hashState(this.state);
    } catch (error) {
      throw new EnvHarnessError('INTERNAL', `domain ${this.domain.name}: hashState failed in episode ${this.id}: ${toEnvHarnessError(error).message}`, { cause: error });
    }
    this.hashDirty = false;
  }

  exportState(): JsonValue {
    return this.domain.exportState(this.status === 'idle' ? this.prepared.base : this.state);
  }

  async flush(): Promise<void> {
    await this.lastFlush;
    await this.options.recorder?.flush();
  }

  async close(): Promise<void> {
    if (this.status === 'running') this.finishRecord('closed');
    await this.flush();
  }
}

function blank(observation: Observation): Outcome {
  // Every field present from the start: one hidden class for all outcomes keeps `advance` monomorphic.
  return {
    observation,
    ok: undefined,
    userReply: undefined,
    action: undefined,
    agentError: false,
    faulted: false,
    progress: false,
    terminated: false,
    endReason: undefined,
    truncation: undefined,
    faults: undefined,
  };
}

function kindOf(input: unknown): Kind {
  const type = isPlainObject(input) ? input['type'] : undefined;
  return type === 'message' || type === 'finish' ? type : 'tool';
}

function faultFeedback(fault: ActiveFault, tool: string, call: number): Feedback {
  const kind: FaultKind = fault.rule.kind;
  const details: JsonObject = { tool, call, persistent: fault.persistent };
  if (kind === 'rate_limit') details.retryAfterMs = fault.rule.retryAfterMs ?? DEFAULT_RETRY_AFTER_MS;
  return { code: 'FAULT_INJECTED', message: `injected ${kind.replace('_', ' ')} fault on ${tool}`, ref: kind, details };
}

function shapingOf(feedback: readonly Feedback[], weights: Partial<Record<FeedbackCode, number>>): number {
  let sum = 0;
  for (const event of feedback) {
    const w = weights[event.code];
    if (w !== undefined && Number.isFinite(w)) sum += w;
  }
  return sum;
}

function budgetName(ref: string): string {
  if (ref.startsWith('perTool:')) return `${ref.slice(8)} call`;
  return ref === 'tool_calls' ? 'tool-call' : ref === 'errors' ? 'consecutive-error' : ref === 'time' ? 'wall-time' : ref === 'steps' ? 'step' : 'token';
}

function positive(value: number, name: string): number {
  if (!(Number.isInteger(value) && value >= 1)) {
    throw new EnvHarnessError('CONFIG_INVALID', `${name} must be an integer >= 1, got ${value}`, { details: { pointer: `/${name}` } });
  }
  return value;
}

/** Default normalisation of required outputs (tau-bench's): lower-case, commas removed. */
export function normalizeOutput(text: string): string {
  return text.toLowerCase().replace(/,/g, '');
}

// A rejected input is recorded as core's RejectedAction: the input itself when it is plain JSON (replay
// feeds it back as it was), a short description otherwise (in-process only: HTTP input is always JSON).
function recordable(input: unknown): RejectedAction {
  let kept: JsonValue;
  try {
    kept = isJsonish(input, 0) ? (input as JsonValue) : describeValue(input);
  } catch {
    kept = 'an unreadable value';
  }
  return { type: 'invalid', input: kept };
}

/** The input an agent sent at a recorded step: the action, or the rejected input it wrapped. */
export function sentInput(action: Action | RejectedAction): unknown {
  return (action as { type: string }).type === 'invalid' ? (action as RejectedAction).input : action;
}

function isJsonish(value: unknown, depth: number): boolean {
  if (value === null || typeof value === 'boolean') return true;
  if (typeof value === 'string') return !LONE_SURROGATE.test(value);
  if (typeof value === 'number') return Number.isFinite(value);
  if (typeof value !== 'object' || depth > 64) return false;
  if (Array.isArray(value)) return value.every((v) => isJsonish(v, depth + 1));
  if (!isPlainObject(value)) return false;
  return Object.keys(value).every((k) => !LONE_SURROGATE.test(k) && isJsonish(value[k], depth + 1));
}

const EPOCH = '1970-01-01T00:00:00.000Z';

/** ISO-8601 text of a clock reading in milliseconds (the epoch when no clock is given). */
function isoTime(ms: number): string {
  return ms === 0 || !Number.isFinite(ms) ? EPOCH : new Date(ms).toISOString();
}
