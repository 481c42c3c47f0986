/** A step's reply text, with the tool output serialised once for both the transition and the reply. */
import { takeCanonical, type StepResult } from '../index.js';

/**
 * `JSON.stringify(result)`, except the observation when the step's recorder already wrote it for the
 * transition (a staged store recorder marks it, core's `shareCanonical`): then its canonical text is spliced in
 * (the same value; its keys, and the tool output's, in RFC 8785 order rather than insertion order). An
 * observation with no canonical form (a NaN, a lone surrogate) was not written, so it takes JSON.stringify as
 * before. Called right after the step, before anything else can step: the mark is one object at a time.
 */
export function stepResultText(result: StepResult): string {
  const observation = takeCanonical(result.observation);
  if (observation === undefined) return JSON.stringify(result);
  // StepResult's members in the order the runtime creates them (JSON.stringify's order), written by hand: one
  // JSON.stringify per member would cost more than the one it replaces on a small step.
  const { reward, feedback, truncation } = result;
  let text = `{"observation":${observation},"reward":${Number.isFinite(reward) ? '' + reward : 'null'},"terminated":${result.terminated},"truncated":${result.truncated},"feedback":${feedback.length === 0 ? '[]' : JSON.stringify(feedback)},"info":${JSON.stringify(result.info)}`;
  if (truncation !== undefined) text += `,"truncation":${JSON.stringify(truncation)}`;
  return text + '}';
}

// Every member of StepResult is written above: a member added to StepResult fails to compile here until it is.
type Written = 'observation' | 'reward' | 'terminated' | 'truncated' | 'feedback' | 'info' | 'truncation';
const everyMemberWritten: [Exclude<keyof StepResult, Written>] extends [never] ? true : false = true;
void everyMemberWritten;

/** An observation's JSON text: the canonical text the recorder wrote for the transition when there is one, else JSON.stringify. */
export function observationText(observation: StepResult['observation']): string {
  return takeCanonical(observation) ?? JSON.stringify(observation);
}
