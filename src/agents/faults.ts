/** Recognising injected faults in observations: calls that are worth retrying unchanged. */
import type { Observation } from '../core/index.js';

/** Observation error codes of injected faults (timeout, transient error, rate limit, domain fault). */
export const FAULT_ERROR_CODES: ReadonlySet<string> = new Set(['TIMEOUT', 'TRANSIENT_ERROR', 'RATE_LIMITED', 'FAULT']);

/** True when the observation reports an injected fault: the same call may succeed if retried. */
export function isFaultError(observation: Observation): boolean {
  return observation.error !== undefined && FAULT_ERROR_CODES.has(observation.error.code);
}
