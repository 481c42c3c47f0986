/** A step's outcome: what the action part of a step produced, before budgets and the end-of-episode checks. */
import type { Action, EndReason, Feedback, Observation, Problem, Transition, Truncation, UserTurn } from '../core/index.js';
import { isPlainObject } from './action.js';

export type Kind = Observation['kind'];

/** What the action part of a step produced, before budgets and end-of-episode checks. */
export interface Outcome {
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
  /** A tool call that ran without a fault, outside gate episodes: its call key (`callKey`), under which the trace shares equal entries' objects. */
  callKey: string | undefined;
}

/** An outcome with every field at its default, around an observation. */
export function blank(observation: Observation): Outcome {
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
    callKey: undefined,
  };
}

/** The observation kind of an input: its type when it names one, else `tool` (what a malformed action most likely was). */
export function kindOf(input: unknown): Kind {
  const type = isPlainObject(input) ? input['type'] : undefined;
  return type === 'message' || type === 'finish' ? type : 'tool';
}

/** A refused action: the error observation, its feedback event, and (for a well-formed call) the call in the trace. */
export function refusal(code: string, message: string, feedback: Feedback[], event: Feedback, action?: Action & { type: 'tool' }): Outcome {
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

/** The simulator (a tool, a policy rule, the user) failed: the episode ends, excluded from statistics. */
export function simulatorFailure(message: string, action: Action): Outcome {
  const out = blank({ kind: action.type, error: { code: 'SIMULATOR_ERROR', message } });
  out.action = action;
  out.ok = false;
  out.truncation = 'errors';
  out.endReason = 'simulator_error';
  return out;
}

export /** POLICY_VIOLATION feedback of a rule that returned a Problem: its code goes into the details, its pointer along. */
function violation(problem: Problem, severity: Feedback['severity'], ref: string): Feedback {
  const event: Feedback = { code: 'POLICY_VIOLATION', message: problem.message, severity, ref, details: { code: problem.code } };
  if (problem.pointer !== undefined) event.pointer = problem.pointer;
  return event;
}
