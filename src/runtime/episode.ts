/** The episode: Gymnasium-style reset/step over a domain, with feedback, constraints, faults and recording. */
import { canonicalize, EnvHarnessError, toEnvHarnessError } from '../core/index.js';
import type {
  Action,
  Budget,
  Domain,
  EpisodeInputs,
  EpisodeRecord,
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
  UserTurn,
} from '../core/index.js';
import { describe as describeValue, parseArgs, validateAction } from './action.js';
import { DEFAULT_BUDGET_WARNING_RATIO, DEFAULT_FAULT_RETRIES, DEFAULT_NO_PROGRESS_STEPS } from './defaults.js';
import { DEFAULT_RETRY_AFTER_MS, FAULT_ERROR_CODES, faultMessage, isBlockingFault, partialOutput } from './faults.js';
import { closestPointer, fastRng, parsePointer, Rng } from '../core/index.js';
import { callKeyIndexOf, callKeyOf, callText, type CallKeyIndex } from './patterns.js';
import { BudgetMeter, budgetName } from './budget-meter.js';
import { CallPolicy } from './call-policy.js';
import type { DynamicsOptions, Episode, EpisodeOptions } from './episode-options.js';
import { episodeRecord, isoTime, recordable } from './episode-record.js';
import { FaultInjector, faultFeedback } from './fault-injector.js';
import { Grader, type GradeInput } from './grader.js';
import { OrderingTracker } from './ordering-tracker.js';
import { blank, kindOf, refusal, simulatorFailure } from './outcome.js';
import type { Outcome } from './outcome.js';
import { ProgressTracker } from './progress-tracker.js';
import { lazyToolContext, runtimeCacheFor } from './runtime-cache.js';
import { userRng } from './task-rng.js';
import type { PreparedTask, ReplayedCall, RuntimeCache } from './runtime-cache.js';
import { deepFreeze } from './tool-specs.js';

export type { DynamicsOptions, Episode, EpisodeOptions } from './episode-options.js';
export { sentInput } from './episode-record.js';

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
  return new EpisodeRun(domain, cache.prepare(task), options, false);
}

/**
 * @internal An episode for the simulator gates: faults off, nothing recorded, and only what a verdict
 * reads. Outcomes, observations, the trace and every feedback code that can fail a gate (INVALID_ACTION,
 * PRECONDITION_FAILED, POLICY_VIOLATION, ORDER_VIOLATION, BUDGET_EXHAUSTED) are those of `createEpisode`;
 * it skips the runtime's informational feedback (SUBGOAL_REACHED from the task's subgoals, NO_PROGRESS,
 * BUDGET_WARNING, REDUNDANT_CALL, OFF_PATH) and the call keys behind it, and hashes the state only when the
 * episode ends (`info.stateHash` of earlier steps is the last hash taken). A domain's own feedback is kept
 * as it is (the web domain's SUBGOAL_REACHED for a dismissed modal, say).
 */
export function createGateEpisode<S>(domain: Domain<S>, task: Task, cache: RuntimeCache<S> | undefined): Episode {
  const used = cache ?? runtimeCacheFor(domain);
  if (used.domain !== domain) {
    throw new EnvHarnessError('CONFIG_INVALID', `the cache given to createEpisode belongs to domain ${used.domain.name}, not ${domain.name}`);
  }
  return new EpisodeRun(domain, used.prepare(task), { faults: false }, true);
}

const NO_FEEDBACK: readonly Feedback[] = Object.freeze([]);
/** A flush with nothing to wait for. */
const SETTLED: Promise<void> = Promise.resolve();

/** An end's flush and whether it has succeeded: what the flush's callback holds instead of the episode. */
interface PendingFlush {
  readonly promise: Promise<void>;
  settled: boolean;
}
const REDUNDANT_MESSAGE = 'the same call (tool and arguments) was already made and nothing has changed since';
const OFF_PATH_MESSAGE = 'this call (tool and arguments) is not on the reference path';
/**
 * REDUNDANT_CALL and OFF_PATH feedback by tool name, frozen: the same objects step after step, so that a transition's
 * canonical writer takes their text from core's deep-frozen texts instead of writing it again (a repeated call's
 * transition carries both). Bounded: cleared past `CALL_FEEDBACK_MAX` tool names.
 */
const callFeedback = new Map<string, { redundant: Feedback; offPath: Feedback }>();
const CALL_FEEDBACK_MAX = 1024;

function callFeedbackOf(tool: string): { redundant: Feedback; offPath: Feedback } {
  let known = callFeedback.get(tool);
  if (known === undefined) {
    if (callFeedback.size >= CALL_FEEDBACK_MAX) callFeedback.clear();
    known = {
      redundant: Object.freeze({ code: 'REDUNDANT_CALL', message: REDUNDANT_MESSAGE, ref: tool }) as Feedback,
      offPath: Object.freeze({ code: 'OFF_PATH', message: OFF_PATH_MESSAGE, ref: tool }) as Feedback,
    };
    callFeedback.set(tool, known);
  }
  return known;
}

/** Distinct call keys per attempt whose first trace entry is kept for sharing (an attempt of many distinct calls shares only the first ones'). */
const SHARED_CALLS_MAX = 256;
/**
 * Trace entries an attempt holds before repeated calls share objects (`sharedEntry`). What sharing saves is the
 * collector's work on a trace that outlives young-generation collections, which only a long attempt has; the
 * comparison costs every step (~125 ns of a ~230 ns null step, measured in one process), so an attempt within
 * its budget (30 steps by default) never pays it.
 */
export const TRACE_SHARING_FROM = 1024;
/**
 * Member names of one side of a comparison (`sameMembers`), in a fixed array with a count of the places in use:
 * comparing allocates nothing (pushing onto an array cut back with `length =` regrew its backing store every step).
 */
const MEMBER_NAMES_MAX = 64;
const memberNames: string[] = new Array<string>(MEMBER_NAMES_MAX).fill('');
let memberNamesUsed = 0;

/**
 * Whether `a` and `b` have the same own enumerable members in the same order with strictly equal values, where the
 * member named `nested` (an action's `args`, an observation's `output`) may instead be two plain objects (not arrays)
 * that compare so themselves, one level down. Objects of more members than the names array holds are not compared (false).
 */
function sameMembers(a: object, b: object, nested: string | undefined): boolean {
  if (a === b) return true;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const start = memberNamesUsed;
  let n = 0;
  try {
    for (const name in x) {
      if (start + n >= MEMBER_NAMES_MAX || !Object.prototype.hasOwnProperty.call(x, name)) return false;
      memberNames[start + n] = name;
      n++;
    }
    memberNamesUsed = start + n;
    let i = 0;
    for (const name in y) {
      if (i >= n || memberNames[start + i] !== name || !Object.prototype.hasOwnProperty.call(y, name)) return false;
      i++;
      const u = x[name];
      const v = y[name];
      if (u === v) continue;
      if (name !== nested || typeof u !== 'object' || typeof v !== 'object' || u === null || v === null || Array.isArray(u) || Array.isArray(v)) return false;
      if (!sameMembers(u, v, undefined)) return false;
    }
    return i === n;
  } finally {
    memberNamesUsed = start;
  }
}

/**
 * The orchestration of reset and step. Each concern keeps its own state and resets it: the budget
 * meter, the fault injector, the grader, and the progress and ordering trackers.
 */
class EpisodeRun<S> implements Episode {
  readonly task: Task;
  private readonly budget: Readonly<Budget>;
  private readonly weights: Partial<Record<FeedbackCode, number>> | undefined;
  private readonly keepPrevious: boolean;
  private readonly policy: CallPolicy<S>;
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
  /**
   * The first trace entry of each call key this attempt once the trace holds `TRACE_SHARING_FROM` entries (at most
   * `SHARED_CALLS_MAX` keys): a later call equal to it, with an equal observation, has the trace hold that entry's
   * objects rather than its own (`sharedEntry`).
   */
  private sharedCalls = new Map<string, TraceEntry>();
  /** The reference solution's call keys by tool (OFF_PATH), taken on the first call that needs them (gate episodes never do). */
  private solutionIndex: CallKeyIndex | undefined = undefined;
  private confirmed = false;
  private totalReward = 0;
  /** Gate episodes: the reference solution's calls served so far (`PreparedTask.replay`), -1 once the episode left it. */
  private replayed = 0;
  /** The last end's flush, until it has succeeded (see setLastFlush). */
  private lastFlush: PendingFlush | undefined = undefined;
  /**
   * What an episode recorded as its inputs keeps of its options (`EpisodeInputs.dynamics`): undefined when it has
   * none, `null` when the episode is recorded as transitions (`recordAs` is not `inputs`, or it cannot replay alone).
   */
  private readonly inputDynamics: JsonObject | null | undefined;
  /** This attempt's recorded actions, when it is recorded as its inputs. */
  private inputs: Transition['action'][] | undefined;
  /** The transitions of this attempt's steps that cannot replay (`EpisodeInputs.kept`). */
  private kept: Transition[] | undefined;

  constructor(
    private readonly domain: Domain<S>,
    private readonly prepared: PreparedTask<S>,
    private readonly options: EpisodeOptions,
    /** A gate episode (`createGateEpisode`): no informational feedback, no call keys, hashed at the end. */
    private readonly lean: boolean,
  ) {
    this.task = prepared.task;
    this.budget = options.budget === undefined ? prepared.budget : deepFreeze({ ...prepared.budget, ...options.budget });
    this.weights = options.shaping !== undefined && Object.keys(options.shaping).length > 0 ? options.shaping : undefined;
    const noProgressSteps = positive(options.noProgressSteps ?? DEFAULT_NO_PROGRESS_STEPS, 'noProgressSteps');
    this.keepPrevious = options.faults !== false && prepared.hasStaleRule;
    this.meter = new BudgetMeter(this.budget, options.budgetWarningRatio ?? DEFAULT_BUDGET_WARNING_RATIO, options.clock);
    this.policy = new CallPolicy(domain, prepared, this.budget, this.meter);
    this.faults = new FaultInjector(options.faults === false ? [] : prepared.faultRules, options.faultRetries ?? DEFAULT_FAULT_RETRIES);
    this.grader = new Grader(domain, prepared.task, prepared.referenceHash, prepared.referenceState);
    const acceptance = prepared.task.spec.acceptance;
    this.progress = new ProgressTracker(acceptance.subgoals, noProgressSteps);
    this.ordering = new OrderingTracker(acceptance.ordering);
    this.inputDynamics = options.recordAs === 'inputs' && options.recorder !== undefined ? replayableDynamics(options, this.budget) : null;
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
    if (this.seen.size > 0) this.seen = new Set();
    if (this.sharedCalls.size > 0) this.sharedCalls = new Map();
    this.confirmed = false;
    this.totalReward = 0;
    this.replayed = 0;
    this.inputs = this.inputDynamics === null ? undefined : [];
    this.kept = undefined;
    this.faults.reset();
    this.grader.reset();
    this.progress.reset();
    this.ordering.reset();
    let text: string;
    try {
      this.user = this.domain.createUser?.(task, this.userRng(seed));
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

  /** `fastRng([task.id, seed, 'user'])`, its state remembered on the prepared task for the next reset with that seed. */
  private userRng(seed: number): Rng {
    const prepared = this.prepared;
    const known = prepared.userRng;
    if (known !== undefined && known.seed === seed) return new Rng(known.state);
    const rng = userRng(prepared.task.id, seed);
    prepared.userRng = { seed, state: rng.getState() };
    return rng;
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
      // `ok` in the literal, not added after: an added member took the entry a second object (its out-of-object members).
      const entry: TraceEntry =
        out.callKey !== undefined && this.trace.length >= TRACE_SHARING_FROM
          ? this.sharedEntry(step, out.callKey, out.action, out.observation)
          : out.ok === undefined
            ? { step, action: out.action, observation: out.observation }
            : { step, action: out.action, observation: out.observation, ok: out.ok };
      if (out.userReply !== undefined) entry.userReply = out.userReply;
      this.trace.push(entry);
      if (out.ok === true) {
        if (this.lean) this.ordering.observe(out.action, feedback);
        else this.track(out, feedback);
      }
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

    if (!ended && !this.lean) {
      meter.warnings(step, feedback);
      this.progress.afterStep(out.progress, feedback);
    }
    const producers = this.options.feedback;
    if (producers !== undefined && out.action !== undefined) {
      for (const produce of producers) feedback.push(...produce({ action: out.action, trace: this.trace }));
    }
    if (this.domain.feedback !== undefined && out.action !== undefined) {
      const given = this.domain.feedback({ action: out.action, trace: this.trace, state: this.state, task: this.task });
      // Most steps' domain feedback is empty: no spread call then.
      if (given.length > 0) feedback.push(...given);
    }

    if (this.hashDirty && (ended || !this.lean)) this.rehash();
    const info: StepInfo = { step, outcome: 0, shaping: 0, stateHash: this.hash };
    if (ended) {
      if (terminated) {
        const verdict = this.grader.grade(new GradeView(this, this.state, this.trace, this.ordering));
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
      if (this.inputs === undefined) recorder.record(this.transition(step, action ?? recordable(input), out, result, truncation));
      else if (action !== undefined) this.inputs.push(action);
      else {
        const rejected = recordable(input);
        this.inputs.push(rejected);
        // Recorded as its description: a replay would send that instead, so the step's transition is kept as it is.
        if (rejected.input !== input) (this.kept ??= []).push(this.transition(step, rejected, out, result, truncation));
      }
      if (ended) {
        recorder.end(this.record(this.status as EpisodeStatus, info));
        if (this.options.flushOnEnd !== false) this.setLastFlush(recorder.flush());
      }
    }
    return result;
  }

  /**
   * The trace entry of a call that ran (`ok`, with a call key), whose action and observation are those of the attempt's first entry with the same call key when
   * they are equal member for member (`sameMembers`: same members in the same order, the same values, the arguments
   * and the output compared one level down), so that what the trace keeps of a repeated call is one small object:
   * measured, the trace's objects outliving young-generation collections cost a long episode ~1 µs per null step
   * and ~2 µs per retail step. Readers of the trace see the same JSON either way.
   */
  private sharedEntry(step: number, key: string, action: Action, observation: Observation): TraceEntry {
    const first = this.sharedCalls.get(key);
    if (first === undefined) {
      const entry: TraceEntry = { step, action, observation, ok: true };
      if (this.sharedCalls.size < SHARED_CALLS_MAX) this.sharedCalls.set(key, entry);
      return entry;
    }
    return {
      step,
      action: sameMembers(first.action, action, 'args') ? first.action : action,
      observation: sameMembers(first.observation, observation, 'output') ? first.observation : observation,
      ok: true,
    };
  }

  // ---- tools ----

  private callTool(action: Action & { type: 'tool' }, feedback: Feedback[]): Outcome {
    const prepared = this.prepared;
    // A gate episode playing the reference solution gets each call's result from the solution's own
    // replay while every call so far was one of its calls, in order, and ran (same state, same result).
    let served: ReplayedCall<S> | undefined;
    if (this.lean && this.replayed >= 0) {
      const next = prepared.replay[this.replayed];
      if (next !== undefined && next.action === action) served = next;
      this.replayed = -1;
    }
    const tool = prepared.tools.get(action.tool);
    if (tool === undefined) {
      const exists = this.domain.tools.some((t) => t.name === action.tool);
      const message = `${exists ? `tool "${action.tool}" is not available in this task` : `unknown tool "${action.tool}"`}; available: ${[...prepared.tools.keys()].join(', ')}`;
      return refusal('INVALID_ACTION', message, feedback, { code: 'INVALID_ACTION', message, pointer: '/tool' });
    }
    // A served call's arguments were parsed when the reference solution was replayed (same object, same result).
    const parsed = served !== undefined ? { success: true as const, data: served.args } : parseArgs(tool.args, action.args);
    if (!parsed.success) {
      const first = parsed.issue;
      const path = ['args', ...(first?.path ?? [])];
      const pointer = closestPointer(action, path);
      const field = first !== undefined && first.path.length > 0 ? `argument "${first.path.join('.')}"` : 'arguments';
      const message = `${action.tool}: invalid ${field}: ${first?.message ?? 'invalid input'}`;
      return refusal('INVALID_ACTION', message, feedback, { code: 'INVALID_ACTION', message, pointer });
    }
    const args = parsed.data as JsonObject;
    // What rules, patterns and the trace see: the call with parsed arguments.
    const call: Action & { type: 'tool' } = args === action.args ? action : { type: 'tool', tool: action.tool, args };
    if (call !== action && action.usage !== undefined) call.usage = action.usage;

    const refused = this.policy.refusal(tool, call, this.confirmed, this.state, this.trace, feedback);
    if (refused !== undefined) {
      // A policy rule that threw may have changed the state half-way: hash whatever is there.
      if (refused.endReason === 'simulator_error') this.hashDirty = true;
      return refused;
    }

    // The call is dispatched: it counts against tool budgets and draws its faults. A gate episode
    // (no faults, no informational feedback) needs no call key.
    const lean = this.lean;
    const text = lean ? '' : callText(args);
    const key = lean ? '' : callKeyOf(tool.name, text);
    const faults = this.faults;
    const retry = !lean && faults.isRetry(key);
    if (!lean) {
      // After a write nothing is seen yet (the web domain's clicks are writes): no lookup then.
      const hashed = this.seen.size > 0;
      const redundant = hashed && this.seen.has(key) && !retry;
      // A key a look-up above hashed is looked up in the set; a key not hashed yet is compared with the tool's texts.
      const offPath = hashed ? !prepared.solutionKeys.has(key) : !(this.solutionIndex ??= callKeyIndexOf(prepared.solutionKeys)).has(tool.name, text);
      if (redundant || offPath) {
        const given = callFeedbackOf(tool.name);
        if (redundant) feedback.push(given.redundant);
        if (offPath) feedback.push(given.offPath);
      }
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
    let target = write && this.keepPrevious ? this.domain.fork(this.state) : fault?.rule.kind === 'stale' ? this.previous! : this.state;
    let result: ToolOutcome;
    if (served !== undefined) {
      // Only gate episodes serve calls, and they have no faults: `target` is the state.
      if (served.after !== undefined) target = this.domain.fork(served.after);
      result = { ok: true, output: served.output };
      this.replayed = prepared.replay.indexOf(served) + 1;
    } else {
      try {
        result = tool.run(target, args, lazyToolContext(this.task, this.seed!, callIndex));
      } catch (error) {
        return this.simulatorError(`tool ${tool.name} threw: ${toEnvHarnessError(error).message}`, call);
      }
    }
    const out = blank({ kind: 'tool' });
    out.action = call;
    if (!result.ok) {
      if (!lean) this.seen.add(key);
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
      if (!lean && this.seen.size > 0) this.seen = new Set();
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
      if (!write && !lean) this.seen.add(key);
    }
    out.observation.output = output;
    if (!lean && fault === undefined) out.callKey = key;
    return out;
  }

  private simulatorError(message: string, action: Action): Outcome {
    // A tool that threw may have changed the state half-way: hash whatever is there.
    this.hashDirty = true;
    return simulatorFailure(message, action);
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

  private transition(step: number, action: Transition['action'], out: Outcome, result: StepResult, truncation: StepResult['truncation']): Transition {
    const transition: Transition = {
      episodeId: this.id!,
      step,
      action,
      observation: out.observation,
      reward: result.reward,
      terminated: result.terminated,
      truncated: result.truncated,
      feedback: result.feedback,
      info: result.info,
    };
    if (result.truncated) transition.truncation = truncation;
    if (out.faults !== undefined) transition.faults = out.faults;
    return transition;
  }

  private record(status: EpisodeStatus, info?: StepInfo): EpisodeRecord {
    const updatedAt = status === 'running' ? this.createdAt : isoTime(this.options.clock?.() ?? 0);
    const record = episodeRecord(this.id!, this.task.id, this.seed!, status, this.steps, this.totalReward, this.createdAt, updatedAt, info, this.options);
    if (status !== 'running' && this.inputs !== undefined) {
      if (this.hashDirty) this.rehash();
      const inputs: EpisodeInputs = { actions: this.inputs, stateHash: this.hash };
      if (this.inputDynamics != null) inputs.dynamics = this.inputDynamics;
      if (this.kept !== undefined) inputs.kept = this.kept;
      record.inputs = inputs;
    }
    return record;
  }

  private finishRecord(status: EpisodeStatus): void {
    this.status = status;
    const recorder = this.options.recorder;
    if (recorder === undefined) return;
    recorder.end(this.record(status));
    if (this.options.flushOnEnd !== false) this.setLastFlush(recorder.flush());
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

  flush(): Promise<void> {
    const recorder = this.options.recorder;
    // Nothing of an earlier end pending (every step of a running episode): the recorder's flush itself, with
    // no extra turns (a server awaits this once per step).
    const last = this.lastFlush;
    if (last === undefined || last.settled) return recorder === undefined ? SETTLED : recorder.flush();
    return last.promise.then(() => recorder?.flush());
  }

  /**
   * Remembers an end's flush; once it has succeeded, later flushes need not wait on it. Its callback holds a
   * small record, not the episode: a loop that runs episodes without yielding queues one callback per episode,
   * and each holding its episode (world, trace) kept them all alive until the loop yielded (retail: ~10 kB an
   * episode, 2,000-episode rounds 20 µs an episode slower, in the collector).
   */
  private setLastFlush(flush: Promise<void>): void {
    const pending: PendingFlush = { promise: flush, settled: false };
    this.lastFlush = pending;
    flush.then(
      () => {
        pending.settled = true;
      },
      // Surfaces on the next flush(); never an unhandled rejection.
      () => undefined,
    );
  }

  async close(): Promise<void> {
    if (this.status === 'running') this.finishRecord('closed');
    await this.flush();
  }
}

/**
 * The options an episode recorded as its inputs replays with (a copy: the caller's objects may change later), undefined
 * when none were given; `null` when something outside the task, seed and actions steers it (feedback producers, or a
 * clock with a time budget) or the options are not plain JSON, so that the episode is recorded as transitions.
 */
function replayableDynamics(options: EpisodeOptions, budget: Readonly<Budget>): JsonObject | null | undefined {
  if ((options.feedback !== undefined && options.feedback.length > 0) || (options.clock !== undefined && budget.timeMs !== undefined)) return null;
  const picked: JsonObject = {};
  let any = false;
  for (const name of DYNAMICS_DATA) {
    const value = options[name];
    if (value === undefined) continue;
    picked[name] = value as JsonValue;
    any = true;
  }
  if (!any) return undefined;
  try {
    return JSON.parse(canonicalize(picked)) as JsonObject;
  } catch {
    return null;
  }
}

/** The members of `DynamicsOptions` that are data (every one but the feedback producers). */
const DYNAMICS_DATA = ['shaping', 'noProgressSteps', 'budgetWarningRatio', 'faults', 'faultRetries', 'budget'] as const satisfies ReadonlyArray<Exclude<keyof DynamicsOptions, 'feedback'>>;

/**
 * What the grader reads at an episode's end. A class rather than an object literal of arrow functions: under
 * tsx (esbuild's keepNames) each such arrow costs a defineProperty per episode.
 */
class GradeView<S> implements GradeInput<S> {
  constructor(
    private readonly episode: { stateHash(): string },
    readonly state: S,
    readonly trace: readonly TraceEntry[],
    private readonly ordering: OrderingTracker,
  ) {}

  stateHash(): string {
    return this.episode.stateHash();
  }

  orderViolations(): string[] {
    return this.ordering.violations();
  }
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

