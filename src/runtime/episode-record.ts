/** What an episode records: its episode record, the rejected input as recorded, and clock readings as ISO-8601 text. */
import type { Action, EpisodeRecord, EpisodeStatus, JsonValue, RejectedAction, StepInfo } from '../core/index.js';
import { LONE_SURROGATE, describe as describeValue, isPlainObject } from './action.js';

/** An episode's record at a status: `info` is the last step's (outcome, end reason) once it has ended. */
export function episodeRecord(
  id: string,
  taskId: string,
  seed: number,
  status: EpisodeStatus,
  steps: number,
  reward: number,
  createdAt: string,
  updatedAt: string,
  info: StepInfo | undefined,
  ids: { runId?: string; agent?: string },
): EpisodeRecord {
  const record: EpisodeRecord = {
    id,
    taskId,
    seed,
    status,
    steps,
    reward,
    outcome: info?.outcome ?? 0,
    excludeFromStats: info?.excludeFromStats ?? false,
    createdAt,
    updatedAt,
  };
  if (info?.endReason !== undefined) record.endReason = info.endReason;
  if (ids.runId !== undefined) record.runId = ids.runId;
  if (ids.agent !== undefined) record.agent = ids.agent;
  return record;
}

// A rejected input is recorded as core's RejectedAction: the input itself when it is plain JSON (replay
// feeds it back as it was), a short description otherwise (in-process only: HTTP input is always JSON).
export function recordable(input: unknown): RejectedAction {
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
export function isoTime(ms: number): string {
  return ms === 0 || !Number.isFinite(ms) ? EPOCH : new Date(ms).toISOString();
}
