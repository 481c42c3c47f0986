/** The CLI's one table from error codes to process exit codes (documented in docs/errors.md). */
import type { ErrorCode } from '../index.js';

export const EXIT_OK = 0;
/** A command ran and found problems (e.g. `doctor` errors, `split verify` mismatches). */
export const EXIT_FINDINGS = 8;

export const EXIT_CODES: Record<ErrorCode, number> = {
  TEMPLATE_NOT_FOUND: 3,
  VERSION_NOT_FOUND: 3,
  DOMAIN_NOT_FOUND: 3,
  PARAMS_INVALID: 2,
  TASK_INVALID: 2,
  TASK_NOT_FOUND: 3,
  BATCH_NOT_FOUND: 3,
  POOL_EMPTY: 4,
  REVIEW_NOT_FOUND: 3,
  SPLIT_FROZEN: 4,
  LOCKFILE_MISMATCH: 5,
  EPISODE_NOT_FOUND: 3,
  EPISODE_FINISHED: 4,
  EPISODE_BUSY: 4,
  RUN_NOT_FOUND: 3,
  RUN_NOT_RESUMABLE: 4,
  SNAPSHOT_NOT_FOUND: 3,
  SNAPSHOT_MISMATCH: 5,
  REPLAY_DIVERGED: 5,
  IMPORT_INVALID: 2,
  CONFIG_INVALID: 2,
  REGISTRATION_CONFLICT: 2,
  UNAUTHORIZED: 6,
  FORBIDDEN: 6,
  IDEMPOTENCY_CONFLICT: 2,
  PAYLOAD_TOO_LARGE: 2,
  UPSTREAM_FAILED: 7,
  STORE_CONFLICT: 4,
  STORE_FAILED: 7,
  INTERNAL: 1,
};
