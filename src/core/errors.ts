/** The one error class of EnvHarness and its closed union of codes (documented in docs/errors.md). */

export const ERROR_CODES = [
  'TEMPLATE_NOT_FOUND',
  'VERSION_NOT_FOUND',
  'DOMAIN_NOT_FOUND',
  'PARAMS_INVALID',
  'TASK_INVALID',
  'TASK_NOT_FOUND',
  'BATCH_NOT_FOUND',
  'POOL_EMPTY',
  'REVIEW_NOT_FOUND',
  'SPLIT_FROZEN',
  'LOCKFILE_MISMATCH',
  'EPISODE_NOT_FOUND',
  'EPISODE_FINISHED',
  'EPISODE_BUSY',
  'RUN_NOT_FOUND',
  'RUN_NOT_RESUMABLE',
  'SNAPSHOT_NOT_FOUND',
  'SNAPSHOT_MISMATCH',
  'REPLAY_DIVERGED',
  'IMPORT_INVALID',
  'CONFIG_INVALID',
  'REGISTRATION_CONFLICT',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'IDEMPOTENCY_CONFLICT',
  'PAYLOAD_TOO_LARGE',
  'UPSTREAM_FAILED',
  'STORE_CONFLICT',
  'STORE_FAILED',
  'INTERNAL',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export interface ErrorDetails {
  /** JSON pointer (RFC 6901) of the offending field in the caller's input, when there is one. */
  pointer?: string;
  [key: string]: unknown;
}

/**
 * Thrown only for caller mistakes and infrastructure failures, never for agent mistakes
 * (those become observations with feedback).
 */
export class EnvHarnessError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails | undefined;

  constructor(code: ErrorCode, message: string, options: { details?: ErrorDetails; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'EnvHarnessError';
    this.code = code;
    this.details = options.details;
  }

  toJSON(): { code: ErrorCode; message: string; details?: ErrorDetails } {
    return this.details === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, details: this.details };
  }
}

export function isEnvHarnessError(value: unknown, code?: ErrorCode): value is EnvHarnessError {
  return value instanceof EnvHarnessError && (code === undefined || value.code === code);
}

/** Wraps any throwable once as INTERNAL, keeping the cause; EnvHarnessErrors pass through. */
export function toEnvHarnessError(value: unknown): EnvHarnessError {
  if (value instanceof EnvHarnessError) return value;
  const message = value instanceof Error ? value.message : String(value);
  return new EnvHarnessError('INTERNAL', `unexpected failure: ${message}`, { cause: value });
}
