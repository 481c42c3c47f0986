/** The episode contract: actions, observations, feedback, budgets, faults, transitions. */
import type { Problem } from './problem.js';
import type { JsonObject, JsonValue } from './json.js';

/** Token usage an agent reports with an action; counted against the token budget. */
export interface Usage {
  inputTokens?: number;
  outputTokens?: number;
}

/** What an agent can do in one step. */
export type Action =
  | { type: 'tool'; tool: string; args: JsonObject; usage?: Usage }
  | { type: 'message'; text: string; usage?: Usage }
  | { type: 'finish'; answer?: string; usage?: Usage };

export type ActionType = Action['type'];

/** Stable feedback codes (public API: never renamed, only added to). */
export const FEEDBACK_CODES = [
  'INVALID_ACTION',
  'PRECONDITION_FAILED',
  'REDUNDANT_CALL',
  'NO_PROGRESS',
  'OFF_PATH',
  'POLICY_VIOLATION',
  'ORDER_VIOLATION',
  'SUBGOAL_REACHED',
  'FAULT_INJECTED',
  'RECOVERED',
  'BUDGET_WARNING',
  'BUDGET_EXHAUSTED',
] as const;
export type FeedbackCode = (typeof FEEDBACK_CODES)[number];

export type Severity = 'low' | 'medium' | 'high';

/** A typed event emitted during a step. */
export interface Feedback extends Problem<FeedbackCode> {
  severity?: Severity;
  /** JSON pointer into the action, for INVALID_ACTION. */
  pointer?: string;
  /** Policy rule id, fault kind, budget kind, subgoal id... */
  ref?: string;
  details?: JsonObject;
}

export type BudgetKind = 'steps' | 'tokens' | 'time' | 'tool_calls' | 'errors';

/** Limits that truncate an episode. Absent fields are unlimited. */
export interface Budget {
  steps?: number;
  tokens?: number;
  timeMs?: number;
  toolCalls?: number;
  /** Per-tool call quotas: calls beyond the quota are refused with feedback. */
  perTool?: Record<string, number>;
  /** Consecutive agent errors that end the episode. */
  consecutiveErrors?: number;
}

export type FaultKind = 'timeout' | 'transient' | 'rate_limit' | 'partial' | 'stale';

/** One seeded fault rule: applies to calls of `tool` ('*' = any) with probability `rate`. */
export interface FaultRule {
  tool: string;
  kind: FaultKind;
  rate: number;
  /** For rate_limit: milliseconds the agent should wait before retrying. */
  retryAfterMs?: number;
  /** At most this many injections of this rule per episode. */
  maxPerEpisode?: number;
  /** A fault that cannot be recovered from by retrying (the tool keeps failing). */
  persistent?: boolean;
}

export interface FaultProfile {
  rules: FaultRule[];
}

/** Per-task constraints beyond budgets. */
export interface Constraints {
  /** Only these tools may be called (absent = all of the domain's tools). */
  allowedTools?: string[];
  /** Tools that need the user's explicit confirmation in the conversation before they run. */
  confirmTools?: string[];
  /** Forbidden calls: a tool, optionally only with these argument values. */
  forbidden?: Array<{ tool: string; args?: JsonObject; reason?: string }>;
}

/** A tool's answer to the agent: an output or an error; never a thrown exception. */
export type ToolOutcome =
  | { ok: true; output: JsonValue }
  | { ok: false; error: Problem<'INVALID_ACTION' | 'PRECONDITION_FAILED' | 'FAULT' | 'NOT_FOUND'> };

/** The tool schema an agent sees (JSON Schema from zod). */
export interface ToolSpec {
  name: string;
  description: string;
  effect: 'read' | 'write';
  parameters: JsonObject;
}

/** What the agent observes after reset or a step. */
export interface Observation {
  /** The user's message, the tool's output, or the task instructions on reset. */
  kind: 'reset' | 'tool' | 'message' | 'finish';
  text?: string;
  output?: JsonValue;
  error?: Problem & { retryAfterMs?: number };
  /** Only on reset. */
  tools?: ToolSpec[];
  policy?: string;
  budget?: Budget;
}

export type Truncation = BudgetKind;

/** How an episode ended. */
export type EndReason = 'finished' | 'user_done' | 'too_many_errors' | 'unrecoverable_fault' | 'budget' | 'simulator_error';

export interface StepInfo {
  step: number;
  /** Outcome part of the reward (task success), separate from shaping. */
  outcome: number;
  /** Shaping part of the reward from feedback weights (0 when shaping is off). */
  shaping: number;
  /** Digest of the world state after this step. */
  stateHash: string;
  endReason?: EndReason;
  /** True when the episode was lost to an injected unrecoverable fault or a simulator error. */
  excludeFromStats?: boolean;
  [key: string]: JsonValue | undefined;
}

/** Gymnasium-style step result: terminated and truncated are separate, never one `done`. */
export interface StepResult {
  observation: Observation;
  reward: number;
  terminated: boolean;
  truncated: boolean;
  truncation?: Truncation;
  feedback: Feedback[];
  info: StepInfo;
}

/** How a transition records an input that was not a valid Action (kept verbatim for replay and audit). */
export interface RejectedAction {
  type: 'invalid';
  input: JsonValue;
}

/** One recorded step. */
export interface Transition {
  episodeId: string;
  step: number;
  action: Action | RejectedAction;
  observation: Observation;
  reward: number;
  terminated: boolean;
  truncated: boolean;
  truncation?: Truncation;
  feedback: Feedback[];
  info: StepInfo;
  /** Faults injected during this step, recorded so replay is exact. */
  faults?: Array<{ kind: FaultKind; tool: string; call: number }>;
}

export type EpisodeStatus = 'running' | 'terminated' | 'truncated' | 'closed';

/** The stored record of an episode (transitions are stored separately). */
export interface EpisodeRecord {
  id: string;
  taskId: string;
  seed: number;
  status: EpisodeStatus;
  steps: number;
  reward: number;
  outcome: number;
  endReason?: EndReason;
  excludeFromStats: boolean;
  runId?: string;
  agent?: string;
  createdAt: string;
  updatedAt: string;
  /**
   * Present when the episode was recorded as its inputs (`EpisodeOptions.recordAs: 'inputs'`) instead of its
   * transitions: on an ended or closed episode's record only. Its transitions are rebuilt by replaying these on
   * the stored task (a harness's `store.listTransitions` does it).
   */
  inputs?: EpisodeInputs;
}

/**
 * What an episode recorded as its inputs needs to be replayed: every other input is in its task and seed. An
 * episode qualifies when nothing outside them changes what it does: no feedback producers (code) and no clock
 * with a time budget.
 */
export interface EpisodeInputs {
  /** Each step's recorded action (a transition's `action`: a rejected input as `{ type: 'invalid', input }`), in step order. */
  actions: Array<Action | RejectedAction>;
  /** The state hash after the last step (the reset state's when there was none): a replay that ends elsewhere is refused. */
  stateHash: string;
  /** The dynamics options the episode ran with (`DynamicsOptions` without feedback producers), when any were given. */
  dynamics?: JsonObject;
  /**
   * The transitions of steps whose input cannot be sent again as it was (an in-process input that is not JSON, such
   * as a function, is recorded as its description): kept whole, and put in place of their replayed step.
   */
  kept?: Transition[];
}
