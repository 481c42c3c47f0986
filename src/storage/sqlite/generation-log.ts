/**
 * The generation log in its compact form (schema 3; schema 4 adds each rejection's Problem code and pointer): one summary row per batch (candidate count, per-gate
 * rejection counts, the accepted entries as runs over the batch's task rows) plus one row per rejection.
 */
import type { Statement } from 'better-sqlite3';
import { canonicalize, EnvHarnessError } from '../../core/index.js';
import type { GateName, GateProblemCode, GenerationLogEntry, JsonValue, LogFilter } from '../../core/index.js';

/** Prepares (once per connection) a statement, as the store's `sql` helper does. */
export type Prepare = (source: string) => Statement;

/**
 * A run of accepted entries held by the summary: `length` consecutive log entries starting at candidate
 * index `index` and log position `ordinal`, whose tasks are the task rows `taskSeq`, `taskSeq + 1`, ...
 */
type AcceptedRun = [index: number, ordinal: number, taskSeq: number, length: number];

/**
 * Writes a batch's log, inside the caller's transaction. `taskSeqs[k]` is the task row of the batch's k-th
 * task. An accepted entry is held by the summary when it is exactly what the task row says (same id,
 * template and level, no gate/reason/details) and follows the batch's task order; any other entry gets a
 * full row, so that reading gives back every entry unchanged.
 */
export function writeGenerationLog(
  prepare: Prepare,
  batch: { seq: number; id: string },
  log: readonly GenerationLogEntry[],
  tasks: ReadonlyArray<{ id: string; template: string; level: number }>,
  taskSeqs: readonly number[],
): void {
  const insert = prepare(
    'INSERT INTO generation_entries (batch_seq, ordinal, idx, task_id, template, level, accepted, gate, reason, details, code, pointer) ' +
      'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const runs: AcceptedRun[] = [];
  const rejected: Record<string, number> = {};
  let accepted = 0;
  let next = 0; // the next batch task an accepted entry may stand for
  const seqOf = prepare('SELECT seq FROM batches WHERE id = ?').pluck();
  const batchSeqs = new Map<string, number>([[batch.id, batch.seq]]);
  const batchSeqOf = (id: string): number => {
    let seq = batchSeqs.get(id);
    if (seq === undefined) {
      seq = seqOf.get(id) as number | undefined;
      // As the old REFERENCES batches (id) did: an entry must name a stored batch.
      if (seq === undefined) throw new EnvHarnessError('STORE_FAILED', `generation log entry names batch ${id}, which is not stored`, { details: { batchId: id } });
      batchSeqs.set(id, seq);
    }
    return seq;
  };
  for (let ordinal = 0; ordinal < log.length; ordinal++) {
    const entry = log[ordinal]!;
    if (entry.accepted) {
      accepted++;
      const task = tasks[next];
      // The k-th accepted entry normally stands for the batch's k-th task.
      const seq = task !== undefined && entry.taskId === task.id ? taskSeqs[next++]! : undefined;
      const compact =
        seq !== undefined &&
        entry.batchId === batch.id &&
        entry.template === task!.template &&
        entry.level === task!.level &&
        entry.gate === undefined &&
        entry.reason === undefined &&
        entry.details === undefined &&
        entry.problem === undefined;
      if (compact) {
        const last = runs[runs.length - 1];
        if (last !== undefined && last[0] + last[3] === entry.index && last[1] + last[3] === ordinal && last[2] + last[3] === seq) last[3]++;
        else runs.push([entry.index, ordinal, seq, 1]);
        continue;
      }
    } else {
      const gate = entry.gate ?? '';
      rejected[gate] = (rejected[gate] ?? 0) + 1;
    }
    insert.run(
      batchSeqOf(entry.batchId),
      ordinal,
      entry.index,
      entry.taskId,
      entry.template,
      entry.level,
      entry.accepted ? 1 : 0,
      entry.gate ?? null,
      entry.reason ?? null,
      entry.details === undefined ? null : canonicalize(entry.details),
      entry.problem?.code ?? null,
      entry.problem?.pointer ?? null,
    );
  }
  prepare('INSERT INTO generation_summary (batch_seq, candidates, accepted, rejected, accepted_runs) VALUES (?, ?, ?, ?, ?)').run(
    batch.seq,
    log.length,
    accepted,
    canonicalize(rejected),
    canonicalize(runs),
  );
}

interface EntryRow {
  batch_seq: number;
  batch_id: string;
  ordinal: number;
  idx: number;
  task_id: string;
  template: string;
  level: number;
  accepted: number;
  gate: GateName | null;
  reason: string | null;
  details: string | null;
  code: GateProblemCode | null;
  pointer: string | null;
}

/** A log entry with where it sorts: (batch seq, candidate index, log position), the order entries were logged in. */
type Placed = [batchSeq: number, index: number, ordinal: number, entry: GenerationLogEntry];

/** Reads log entries in (batch, candidate index, log position) order, honouring every LogFilter field. */
export function readGenerationLog(prepare: Prepare, filter: LogFilter): GenerationLogEntry[] {
  const conditions: string[] = [];
  const params: unknown[] = [];
  if (filter.batchId !== undefined) {
    conditions.push('b.id = ?');
    params.push(filter.batchId);
  }
  const entryConditions = [...conditions];
  const entryParams = [...params];
  if (filter.accepted !== undefined) {
    entryConditions.push('e.accepted = ?');
    entryParams.push(Number(filter.accepted));
  }
  if (filter.gate !== undefined) {
    entryConditions.push('e.gate = ?');
    entryParams.push(filter.gate);
  }
  const where = (list: string[]): string => (list.length === 0 ? '' : ` WHERE ${list.join(' AND ')}`);
  const placed: Placed[] = [];
  const rows = prepare(
    'SELECT e.batch_seq, b.id AS batch_id, e.ordinal, e.idx, e.task_id, e.template, e.level, e.accepted, e.gate, e.reason, e.details, e.code, e.pointer ' +
      `FROM generation_entries e JOIN batches b ON b.seq = e.batch_seq${where(entryConditions)}`,
  ).all(...entryParams) as EntryRow[];
  for (const row of rows) placed.push([row.batch_seq, row.idx, row.ordinal, entryOf(row)]);
  // Entries held by summaries are accepted and have no gate.
  if (filter.accepted !== false && filter.gate === undefined) {
    const summaries = prepare(
      `SELECT s.batch_seq, b.id, s.accepted_runs FROM generation_summary s JOIN batches b ON b.seq = s.batch_seq${where(conditions)}`,
    ).raw().all(...params) as Array<[number, string, string]>;
    const tasks = prepare('SELECT seq, id, template, level FROM tasks WHERE seq >= ? AND seq < ? ORDER BY seq').raw();
    for (const [batchSeq, batchId, text] of summaries) {
      for (const [index, ordinal, taskSeq, length] of JSON.parse(text) as AcceptedRun[]) {
        const found = tasks.all(taskSeq, taskSeq + length) as Array<[number, string, string, number]>;
        for (const [seq, id, template, level] of found) {
          const k = seq - taskSeq;
          placed.push([batchSeq, index + k, ordinal + k, { batchId, index: index + k, taskId: id, template, level, accepted: true }]);
        }
      }
    }
  }
  placed.sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]);
  const limit = filter.limit ?? placed.length;
  const out: GenerationLogEntry[] = new Array(Math.min(limit, placed.length));
  for (let i = 0; i < out.length; i++) out[i] = placed[i]![3];
  return out;
}

function entryOf(row: EntryRow): GenerationLogEntry {
  const entry: GenerationLogEntry = {
    batchId: row.batch_id,
    index: row.idx,
    taskId: row.task_id,
    template: row.template,
    level: row.level,
    accepted: row.accepted === 1,
  };
  if (row.gate !== null) entry.gate = row.gate;
  if (row.reason !== null) entry.reason = row.reason;
  if (row.details !== null) entry.details = JSON.parse(row.details) as JsonValue;
  // The Problem's message is the reason column (one copy of the text).
  if (row.code !== null) entry.problem = row.pointer === null ? { code: row.code, message: row.reason ?? '' } : { code: row.code, message: row.reason ?? '', pointer: row.pointer };
  return entry;
}
