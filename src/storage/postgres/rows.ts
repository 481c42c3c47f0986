/** Row shapes of the PostgreSQL store that SQLite does not share, their mapping, and `$n` query builders. */
import { EnvHarnessError, type GateName, type GateProblemCode, type GenerationLogEntry, type JsonValue, type TaskFilter } from '../../core/index.js';
import * as shared from '../rows.js';

export { batchTaskRows, reviewFromRow, storedTaskFromRow, taskBody, type Query, type ReviewRow, type TaskRow } from '../rows.js';

/** SELECT over tasks honouring every TaskFilter field, in seq order (`$n` parameters). */
export const taskQuery = (columns: string, filter: TaskFilter): shared.Query => shared.taskQuery(columns, filter, shared.dollar);
/** A WHERE clause of the defined conditions (`$n` parameters); see `../rows.js`. */
export const whereOf = (conditions: ReadonlyArray<readonly [string, unknown]>) => shared.whereOf(conditions, shared.dollar);
/** ` LIMIT $n`, or '' (see `../rows.js`). */
export const limitClause = (limit: number | undefined, values: unknown[]): string => shared.limitClause(limit, values, shared.dollar);

export interface LogRow {
  batch_id: string;
  idx: number;
  task_id: string;
  template: string;
  level: number;
  accepted: boolean;
  gate: GateName | null;
  reason: string | null;
  details: string | null;
  code: GateProblemCode | null;
  pointer: string | null;
}

export function logEntryFromRow(row: LogRow): GenerationLogEntry {
  const entry: GenerationLogEntry = {
    batchId: row.batch_id,
    index: row.idx,
    taskId: row.task_id,
    template: row.template,
    level: row.level,
    accepted: row.accepted,
  };
  if (row.gate !== null) entry.gate = row.gate;
  if (row.reason !== null) entry.reason = row.reason;
  if (row.details !== null) entry.details = JSON.parse(row.details) as JsonValue;
  // The Problem's message is the reason column (one copy of the text).
  if (row.code !== null) entry.problem = row.pointer === null ? { code: row.code, message: row.reason ?? '' } : { code: row.code, message: row.reason ?? '', pointer: row.pointer };
  return entry;
}

/** A write refused by a uniqueness rule (duplicate step, event or task). */
export function conflict(operation: string, message: string, details: Record<string, unknown>): EnvHarnessError {
  return new EnvHarnessError('STORE_CONFLICT', `${operation}: ${message}`, { details: { operation, ...details } });
}

/** SQLSTATE 23505: a unique or primary key refused the row. */
export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '23505';
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
