/** Row shapes of the PostgreSQL store, their mapping to records, and the filter-to-SQL builders. */
import {
  canonicalize,
  EnvHarnessError,
  type GateName,
  type GenerationLogEntry,
  type JsonValue,
  type ReviewItem,
  type ReviewStatus,
  type Split,
  type StoredTask,
  type Task,
  type TaskFilter,
  type TaskStatus,
} from '../../core/index.js';

export interface TaskRow {
  seq: number;
  split: Split;
  status: TaskStatus;
  batch_id: string;
  body: string;
}

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
}

export interface ReviewRow {
  task_id: string;
  batch_id: string;
  status: ReviewStatus;
  reviewer: string | null;
  note: string | null;
  decided_at: string | null;
}

/** The stored body of a task: the task itself, without where it sits in the pool (as in SQLite). */
export function taskBody(task: Task | StoredTask): string {
  const { id, template, domain, taskType, level, params, spec, origin } = task;
  return canonicalize({ id, template, domain, taskType, level, params, spec, origin });
}

export function storedTaskFromRow(row: TaskRow): StoredTask {
  return { ...(JSON.parse(row.body) as Task), split: row.split, status: row.status, batchId: row.batch_id, seq: row.seq };
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
  return entry;
}

export function reviewFromRow(row: ReviewRow): ReviewItem {
  const item: ReviewItem = { taskId: row.task_id, batchId: row.batch_id, status: row.status };
  if (row.reviewer !== null) item.reviewer = row.reviewer;
  if (row.note !== null) item.note = row.note;
  if (row.decided_at !== null) item.decidedAt = row.decided_at;
  return item;
}

/** A parameterised statement. */
export interface Query {
  text: string;
  values: unknown[];
}

/** SELECT over tasks honouring every TaskFilter field, in seq order. */
export function taskQuery(columns: string, filter: TaskFilter): Query {
  if (filter.afterSeq !== undefined && !Number.isSafeInteger(filter.afterSeq)) {
    throw new EnvHarnessError('PARAMS_INVALID', `task filter: afterSeq must be an integer, got ${filter.afterSeq}`, {
      details: { pointer: '/afterSeq' },
    });
  }
  const { where, values } = whereOf([
    ['split', filter.split],
    ['status', filter.status],
    ['template', filter.template],
    ['task_type', filter.taskType],
    ['level', filter.level],
    ['batch_id', filter.batchId],
    ['seq >', filter.afterSeq],
  ]);
  const limit = limitClause(filter.limit, values);
  return { text: `SELECT ${columns} FROM tasks${where} ORDER BY seq${limit}`, values };
}

/**
 * A WHERE clause of the conditions whose value is defined, and their parameters. A condition is a column
 * (compared with `=`) or a column and an operator (`'seq >'`).
 */
export function whereOf(conditions: ReadonlyArray<readonly [string, unknown]>): { where: string; values: unknown[] } {
  const active = conditions.filter(([, value]) => value !== undefined);
  const parts = active.map(([condition], i) => `${condition.includes(' ') ? condition : `${condition} =`} $${i + 1}`);
  return {
    where: parts.length === 0 ? '' : ` WHERE ${parts.join(' AND ')}`,
    values: active.map(([, value]) => value),
  };
}

export function limitClause(limit: number | undefined, values: unknown[]): string {
  if (limit === undefined) return '';
  if (!Number.isSafeInteger(limit) || limit < 0) {
    throw new EnvHarnessError('PARAMS_INVALID', `filter: limit must be a non-negative integer, got ${limit}`, {
      details: { pointer: '/limit' },
    });
  }
  values.push(limit);
  return ` LIMIT $${values.length}`;
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
