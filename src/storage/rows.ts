/**
 * What both SQL stores share about rows: the stored task body, row-to-record mappers, and the builders of
 * WHERE/LIMIT clauses from store filters, for either placeholder style (`?` for SQLite, `$n` for PostgreSQL).
 */
import { canonicalize, EnvHarnessError, type Batch, type BatchTaskRow, type ReviewItem, type ReviewStatus, type Split, type StoredTask, type Task, type TaskFilter, type TaskStatus } from '../core/index.js';

export interface TaskRow {
  seq: number;
  split: Split;
  status: TaskStatus;
  batch_id: string;
  body: string;
}

export interface ReviewRow {
  task_id: string;
  batch_id: string;
  status: ReviewStatus;
  reviewer: string | null;
  note: string | null;
  decided_at: string | null;
}

/** The stored body of a task: the task itself, without where it sits in the pool. */
export function taskBody(task: Task | StoredTask): string {
  const { id, template, domain, taskType, level, params, spec, origin } = task;
  return canonicalize({ id, template, domain, taskType, level, params, spec, origin });
}

/**
 * The stored body of a batch's k-th task: the body its generator wrote with the id (`Batch.taskBodies`)
 * when the batch carries one naming that task, else `taskBody` of the task.
 */
export function batchTaskBody(batch: Batch, k: number): string {
  const task = batch.tasks[k]!;
  const body = batch.taskBodies?.[k];
  // The id sits at a fixed place after the domain: a body of another task (a reordered batch) is not used.
  return body !== undefined && batch.taskBodies!.length === batch.tasks.length && body.startsWith(`"id":"${task.id}"`, body.indexOf(',"id":"') + 1) ? body : taskBody(task);
}

/** The rows a store writes for a batch's tasks: `Batch.taskRows` while the tasks were never read, else from the tasks. */
export function batchTaskRows(batch: Batch): readonly BatchTaskRow[] {
  const rows = Object.getOwnPropertyDescriptor(batch, 'taskRows')?.value as readonly BatchTaskRow[] | undefined;
  if (rows !== undefined) return rows;
  return batch.tasks.map((task, k) => ({ id: task.id, template: task.template, domain: task.domain, taskType: task.taskType, level: task.level, body: batchTaskBody(batch, k) }));
}

export function storedTaskFromRow(row: TaskRow): StoredTask {
  return { ...(JSON.parse(row.body) as Task), split: row.split, status: row.status, batchId: row.batch_id, seq: row.seq };
}

export function reviewFromRow(row: ReviewRow): ReviewItem {
  const item: ReviewItem = { taskId: row.task_id, batchId: row.batch_id, status: row.status };
  if (row.reviewer !== null) item.reviewer = row.reviewer;
  if (row.note !== null) item.note = row.note;
  if (row.decided_at !== null) item.decidedAt = row.decided_at;
  return item;
}

/** A placeholder for the parameter at a 1-based position: `?` (SQLite) or `$n` (PostgreSQL). */
export type Placeholder = (position: number) => string;
export const questionMark: Placeholder = () => '?';
export const dollar: Placeholder = (n) => `$${n}`;

/** A parameterised statement. */
export interface Query {
  text: string;
  values: unknown[];
}

/** SELECT over tasks honouring every TaskFilter field, in seq order. */
export function taskQuery(columns: string, filter: TaskFilter, placeholder: Placeholder): Query {
  if (filter.afterSeq !== undefined && !Number.isSafeInteger(filter.afterSeq)) {
    throw new EnvHarnessError('PARAMS_INVALID', `task filter: afterSeq must be an integer, got ${filter.afterSeq}`, {
      details: { pointer: '/afterSeq' },
    });
  }
  const { where, values } = whereOf(
    [
      ['split', filter.split],
      ['status', filter.status],
      ['template', filter.template],
      ['task_type', filter.taskType],
      ['level', filter.level],
      ['batch_id', filter.batchId],
      ['seq >', filter.afterSeq],
    ],
    placeholder,
  );
  const limit = limitClause(filter.limit, values, placeholder);
  return { text: `SELECT ${columns} FROM tasks${where} ORDER BY seq${limit}`, values };
}

/**
 * A WHERE clause of the conditions whose value is defined, and their parameters. A condition is a column
 * (compared with `=`) or a column and an operator (`'seq >'`).
 */
export function whereOf(conditions: ReadonlyArray<readonly [string, unknown]>, placeholder: Placeholder): { where: string; values: unknown[] } {
  const active = conditions.filter(([, value]) => value !== undefined);
  const parts = active.map(([condition], i) => `${condition.includes(' ') ? condition : `${condition} =`} ${placeholder(i + 1)}`);
  return {
    where: parts.length === 0 ? '' : ` WHERE ${parts.join(' AND ')}`,
    values: active.map(([, value]) => value),
  };
}

/** ` LIMIT <placeholder>` with the limit appended to `values`, or '' without a limit; refuses a bad limit. */
export function limitClause(limit: number | undefined, values: unknown[], placeholder: Placeholder): string {
  if (limit === undefined) return '';
  if (!Number.isSafeInteger(limit) || limit < 0) {
    throw new EnvHarnessError('PARAMS_INVALID', `filter: limit must be a non-negative integer, got ${limit}`, {
      details: { pointer: '/limit' },
    });
  }
  values.push(limit);
  return ` LIMIT ${placeholder(values.length)}`;
}
