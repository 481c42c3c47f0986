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
  const record = result as unknown as Record<string, unknown>;
  let text = '';
  for (const key of Object.keys(record)) {
    const value = key === 'observation' ? observation : JSON.stringify(record[key]);
    if (value === undefined) continue;
    text += (text === '' ? '{' : ',') + JSON.stringify(key) + ':' + value;
  }
  return text === '' ? '{}' : text + '}';
}

/** An observation's JSON text: the canonical text the recorder wrote for the transition when there is one, else JSON.stringify. */
export function observationText(observation: StepResult['observation']): string {
  return takeCanonical(observation) ?? JSON.stringify(observation);
}
