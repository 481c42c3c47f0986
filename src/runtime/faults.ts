/** Seeded fault injection: which call gets which fault, and what a partial result looks like. */
import type { FaultKind, FaultRule, JsonValue } from '../core/index.js';
import type { Rng } from '../core/index.js';

/** Observation error codes of the faults that stop a call from running. */
export const FAULT_ERROR_CODES: Readonly<Record<'timeout' | 'transient' | 'rate_limit', string>> = {
  timeout: 'TIMEOUT',
  transient: 'TRANSIENT_ERROR',
  rate_limit: 'RATE_LIMITED',
};

/** Faults that stop the call (the tool does not run, a write does not apply). */
export function isBlockingFault(kind: FaultKind): kind is 'timeout' | 'transient' | 'rate_limit' {
  return kind === 'timeout' || kind === 'transient' || kind === 'rate_limit';
}

/** Default retry-after of a rate-limit rule that does not set one. */
export const DEFAULT_RETRY_AFTER_MS = 1000;

/** The message an agent sees for a blocking fault. */
export function faultMessage(rule: FaultRule, tool: string): string {
  switch (rule.kind) {
    case 'timeout':
      return `the call to ${tool} timed out; it had no effect and may be retried`;
    case 'transient':
      return `${tool} is temporarily unavailable (transient error); it had no effect and may be retried`;
    case 'rate_limit':
      return `${tool} is rate limited; retry after ${rule.retryAfterMs ?? DEFAULT_RETRY_AFTER_MS} ms`;
    default:
      return `${tool} returned incomplete data`;
  }
}

/**
 * A partial result, chosen by `rng`: an array loses its second half; an object has its largest array
 * field halved, or (without one) loses one field; anything else is returned as it is.
 */
export function partialOutput(output: JsonValue, rng: Rng): JsonValue {
  if (Array.isArray(output)) return output.slice(0, Math.floor(output.length / 2));
  if (output === null || typeof output !== 'object') return output;
  const keys = Object.keys(output).sort();
  let longest: string | undefined;
  for (const key of keys) {
    const value = output[key];
    if (Array.isArray(value) && value.length > 0 && (longest === undefined || value.length > (output[longest] as JsonValue[]).length)) longest = key;
  }
  const copy: { [key: string]: JsonValue } = {};
  if (longest !== undefined) {
    for (const key of keys) copy[key] = output[key]!;
    const arr = output[longest] as JsonValue[];
    copy[longest] = arr.slice(0, Math.floor(arr.length / 2));
    return copy;
  }
  if (keys.length === 0) return output;
  const drop = keys[rng.int(0, keys.length - 1)];
  for (const key of keys) if (key !== drop) copy[key] = output[key]!;
  return copy;
}
