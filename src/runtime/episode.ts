/** The episode: Gymnasium-style reset/step over a domain, with feedback, constraints, faults and recording. */
import { EnvHarnessError, toEnvHarnessError } from '../core/index.js';
import type {
  RejectedAction,
  Action,
  Budget,
  Domain,
  DomainFeedback,
  EndReason,
  EpisodeRecord,
  Finding,
  Problem,
  EpisodeStatus,
  Feedback,
  FeedbackCode,
  JsonObject,
  JsonValue,
  Observation,
  SimulatedUser,
  StepInfo,
  StepResult,
  Task,
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
import { BudgetMeter, budgetName } from './budget-meter.js';
import { FaultInjector, faultFeedback } from './fault-injector.js';
import { Grader } from './grader.js';
import { OrderingTracker } from './ordering-tracker.js';
import { ProgressTracker } from './progress-tracker.js';
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

/**
 * The orchestration of reset and step. Each concern keeps its own state and resets it: the budget
 * meter, the fault injector, the grader, and the progress and ordering trackers.
 */
class EpisodeRun<S> implements Episode {
  readonly task: Task;
  private readonly budget: Readonly<Budget>;
  private readonly weights: Partial<Record<FeedbackCode, number>> | undefined;
  private readonly keepPrevious: boolean;
  private readonly rules: NonNullable<Domain<S>['policy']>['rules'];
  private readonly meter: BudgetMeter;
  private readonly faults: FaultInjector;
  private readonly grader: Grader<S>;
  private readonly progress: ProgressTracker;
  private readonly ordering: OrderingTracker;

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
  private createdAt = '';
  /** Call keys made since the last write (REDUNDANT_CALL). */
  private seen = new Set<string>();
  private confirmed = false;
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
    const noProgressSteps = positive(options.noProgressSteps ?? DEFAULT_NO_PROGRESS_STEPS, 'noProgressSteps');
    this.keepPrevious = options.faults !== false && prepared.hasStaleRule;
    this.rules = domain.policy?.rules ?? [];
    this.meter = new BudgetMeter(this.budget, options.budgetWarningRatio ?? DEFAULT_BUDGET_WARNING_RATIO, options.clock);
    this.faults = new FaultInjector(options.faults === false ? [] : prepared.faultRules, options.faultRetries ?? DEFAULT_FAULT_RETRIES);
    this.grader = new Grader(domain, prepared.task, prepared.referenceHash, prepared.referenceState);
    const acceptance = prepared.task.spec.acceptance;
    this.progress = new ProgressTracker(acceptance.subgoals, noProgressSteps);
    this.ordering = new OrderingTracker(acceptance.ordering);
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
    this.seen = new Set();
    this.confirmed = false;
    this.totalReward = 0;
    this.faults.reset();
    this.grader.reset();
    this.progress.reset();
    this.ordering.reset();
    let text: string;
    try {
      this.user = this.domain.createUser?.(task, fastRng([task.id, seed, 'user']));
      text = this.user === undefined ? task.spec.instructions : this.user.opening();
    } catch (error) {
      this.status = 'idle';
      throw new EnvHarnessError('INTERNAL', `domain ${this.domain.name}: the simulated user failed to start for task ${task.id}: ${toEnvHarnessError(error).message}`, { cause: error });
    }
    const clock = this.options.clock;
    const startedAt = clock === undefined ? 0 : clock();
    this.meter.reset(startedAt);
    this.createdAt = isoTime(startedAt);
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
    const meter = this.meter;
    const issue = validateAction(input);
    const action = issue === undefined ? (input as Action) : undefined;
    if (action?.usage !== undefined) meter.tokens += (action.usage.inputTokens ?? 0) + (action.usage.outputTokens ?? 0);

    let out: Outcome;
    if (meter.isOutOfTime()) {
      out = blank({ kind: kindOf(input), error: { code: 'BUDGET_EXHAUSTED', message: `the wall-time budget of ${this.budget.timeMs} ms was spent before this action; it was not run` } });
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
      this.grader.answered((action as Action & { type: 'finish' }).answer);
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

    if (out.agentError) meter.errorStreak++;
    else if (!out.faulted) meter.errorStreak = 0;

    // End of episode: a task end state first, then the hard limits.
    let terminated = out.terminated;
    let truncation = out.truncation;
    let endReason = out.endReason;
    if (truncation === undefined && !terminated) {
      if (this.faults.lostToFault) {
        truncation = 'errors';
        endReason = 'unrecoverable_fault';
      } else {
        const limit = meter.spent(step);
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
        details: { limit: meter.limitOf(truncation!) ?? null },
      });
    }
    const ended = terminated || truncation !== undefined;

    if (!ended) {
      meter.warnings(step, feedback);
      this.progress.afterStep(out.progress, feedback);
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
        const verdict = this.grader.grade({ stateHash: () => this.stateHash(), state: this.state, trace: this.trace, orderViolations: () => this.ordering.violations() });
        info.outcome = verdict.outcome;
        info.acceptance = verdict.checks;
      }
      let exclude = endReason === 'simulator_error';
      if ((this.faults.hitPersistent || endReason === 'unrecoverable_fault') && info.outcome < 1) {
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
    if (quota !== undefined && this.meter.callsOf(tool.name) >= quota) {
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
      let found: Finding | undefined;
      try {
        found = rule.check(call, { state: this.state, trace: this.trace, task: this.task });
      } catch (error) {
        return this.simulatorError(`policy rule ${rule.id} failed: ${toEnvHarnessError(error).message}`, call);
      }
      if (found === undefined) continue;
      const message = typeof found === 'string' ? found : found.message;
      feedback.push(typeof found === 'string' ? { code: 'POLICY_VIOLATION', message, severity: rule.severity, ref: rule.id } : violation(found, rule.severity, rule.id));
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
    const faults = this.faults;
    const retry = faults.isRetry(key);
    if (this.seen.has(key) && !retry) {
      feedback.push({ code: 'REDUNDANT_CALL', message: REDUNDANT_MESSAGE, ref: tool.name });
    }
    if (!prepared.solutionKeys.has(key)) {
      feedback.push({ code: 'OFF_PATH', message: OFF_PATH_MESSAGE, ref: tool.name });
    }
    const callIndex = this.meter.countCall(tool.name, feedback);
    const fault = faults.draw(tool, callIndex, this.task.id, this.seed!, this.previous !== undefined);

    if (fault !== undefined && isBlockingFault(fault.rule.kind)) {
      faults.hit(key);
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
      faults.hit(key);
      out.faulted = true;
      out.faults = [{ kind: fault.rule.kind, tool: tool.name, call: callIndex }];
      feedback.push(faultFeedback(fault, tool.name, callIndex));
    } else {
      if (retry) {
        faults.recovered(key);
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

  // ---- messages ----

  private message(action: Action & { type: 'message' }): Outcome {
    this.grader.said(action.text);
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
    this.ordering.observe(action, feedback);
    if (this.progress.observe(action, feedback)) out.progress = true;
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

/** POLICY_VIOLATION feedback of a rule that returned a Problem: its code goes into the details, its pointer along. */
function violation(problem: Problem, severity: Feedback['severity'], ref: string): Feedback {
  const event: Feedback = { code: 'POLICY_VIOLATION', message: problem.message, severity, ref, details: { code: problem.code } };
  if (problem.pointer !== undefined) event.pointer = problem.pointer;
  return event;
}

function shapingOf(feedback: readonly Feedback[], weights: Partial<Record<FeedbackCode, number>>): number {
  let sum = 0;
  for (const event of feedback) {
    const w = weights[event.code];
    if (w !== undefined && Number.isFinite(w)) sum += w;
  }
  return sum;
}

function positive(value: number, name: string): number {
  if (!(Number.isInteger(value) && value >= 1)) {
    throw new EnvHarnessError('CONFIG_INVALID', `${name} must be an integer >= 1, got ${value}`, { details: { pointer: `/${name}` } });
  }
  return value;
}

export { normalizeOutput } from './grader.js';

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
