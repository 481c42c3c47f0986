/** A step's reply text, with the tool output serialised once for both the transition and the reply. */
import { takeCanonical, type StepResult } from '../index.js';

/**
 * `JSON.stringify(result)`, except the observation when the step's recorder already wrote it for the
 * transition (a staged store recorder marks it, core's `shareCanonical`): then its canonical text is spliced in
 * (the same value; its keys, and the tool output's, in RFC 8785 order rather than insertion order). An
 * observation with no canonical form (a NaN, a lone surrogate) was not written, so it takes JSON.stringify as
 * before. Called right after the step, before anything else can step: the mark is one object at a time.
 * Plain feedback repeated from an earlier step (the same code, message and ref) reuses that step's text.
 */
export function stepResultText(result: StepResult): string {
  const canonical = takeCanonical(result.observation);
  // StepResult's members in the order the runtime creates them (JSON.stringify's order), written by hand: one
  // JSON.stringify per member would cost more than the one it replaces on a small step.
  const { reward, feedback, truncation } = result;
  let text = `{"observation":${canonical ?? JSON.stringify(result.observation)},"reward":${numberText(reward)},"terminated":${result.terminated},"truncated":${result.truncated},"feedback":${feedbackText(feedback)},"info":${infoText(result.info)}`;
  if (truncation !== undefined) text += `,"truncation":${JSON.stringify(truncation)}`;
  return text + '}';
}

/** A step's info as the runtime makes it for a step that does not end its attempt: these members, in this order. */
const PLAIN_INFO = ['step', 'outcome', 'shaping', 'stateHash'];

/** `JSON.stringify(info)`, written by hand for the plain info of a step that does not end its attempt (about half its cost). */
function infoText(info: StepResult['info']): string {
  let at = 0;
  for (const key in info) if (key !== PLAIN_INFO[at++]) return JSON.stringify(info);
  const { step, outcome, shaping, stateHash } = info;
  if (at !== 4 || typeof step !== 'number' || typeof outcome !== 'number' || typeof shaping !== 'number' || typeof stateHash !== 'string') return JSON.stringify(info);
  return `{"step":${numberText(step)},"outcome":${numberText(outcome)},"shaping":${numberText(shaping)},"stateHash":${JSON.stringify(stateHash)}}`;
}

/** A number as JSON.stringify writes it. */
function numberText(n: number): string {
  return Number.isFinite(n) ? '' + n : 'null';
}

/** The members of the feedback whose text is remembered (`{ code, message, ref }`, in this order, all strings). */
const PLAIN_FEEDBACK = ['code', 'message', 'ref'];
/** Texts of plain feedback by message (a runtime's REDUNDANT_CALL or OFF_PATH repeats the same one step after step); bounded. */
const FEEDBACK_TEXTS = new Map<string, { code: string; ref: string; text: string }>();
const MAX_FEEDBACK_TEXTS = 256;

/** `JSON.stringify(feedback)`, with the text of a plain feedback taken from the last step that gave the same one. */
function feedbackText(feedback: StepResult['feedback']): string {
  if (feedback.length === 0) return '[]';
  let text = '[';
  for (let i = 0; i < feedback.length; i++) {
    if (i > 0) text += ',';
    text += feedbackItemText(feedback[i]!);
  }
  return text + ']';
}

function feedbackItemText(item: StepResult['feedback'][number]): string {
  // Exactly these own members in this order (what JSON.stringify would write them in), else JSON.stringify.
  let at = 0;
  for (const key in item) if (key !== PLAIN_FEEDBACK[at++]) return JSON.stringify(item);
  const { code, message, ref } = item as { code: unknown; message: unknown; ref: unknown };
  if (at !== 3 || typeof code !== 'string' || typeof message !== 'string' || typeof ref !== 'string') return JSON.stringify(item);
  const known = FEEDBACK_TEXTS.get(message);
  if (known !== undefined && known.code === code && known.ref === ref) return known.text;
  const text = JSON.stringify(item);
  if (FEEDBACK_TEXTS.size >= MAX_FEEDBACK_TEXTS) FEEDBACK_TEXTS.clear();
  FEEDBACK_TEXTS.set(message, { code, ref, text });
  return text;
}

// Every member of StepResult is written above: a member added to StepResult fails to compile here until it is.
type Written = 'observation' | 'reward' | 'terminated' | 'truncated' | 'feedback' | 'info' | 'truncation';
const everyMemberWritten: [Exclude<keyof StepResult, Written>] extends [never] ? true : false = true;
void everyMemberWritten;

/** An observation's JSON text: the canonical text the recorder wrote for the transition when there is one, else JSON.stringify. */
export function observationText(observation: StepResult['observation']): string {
  return takeCanonical(observation) ?? JSON.stringify(observation);
}
