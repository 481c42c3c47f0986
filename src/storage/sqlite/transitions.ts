/** Transition rows: multi-row INSERTs in chunks, one prepared statement per chunk size, duplicate steps named. */
import type { Database, Statement } from 'better-sqlite3';

/** Rows per INSERT statement: 3 parameters each, far below SQLite's 32,766-parameter limit. */
export const TRANSITION_CHUNK = 64;

/** One transition row: the episode's integer key, the step, the canonical JSON body. */
export interface TransitionRow {
  key: number;
  step: number;
  body: string;
}

/**
 * Inserts transition rows with as few statement executions as possible: a full chunk of
 * `TRANSITION_CHUNK` rows per `INSERT ... VALUES (...), (...)`, the rest with one statement of the
 * remaining size. A chunk that hits the unique (episode_seq, step) index is rolled back by SQLite
 * (statement-level) and retried row by row, so the caller learns which row is the duplicate.
 * Must run inside the caller's write transaction.
 */
export class TransitionInserter {
  private readonly bySize = new Map<number, Statement>();
  private readonly params: unknown[] = [];

  constructor(private readonly db: Database) {}

  /** Inserts `rows`; on a duplicate step calls `onDuplicate(index of the row)` (which should throw) and otherwise rethrows. */
  insert(rows: readonly TransitionRow[], onDuplicate: (index: number) => never, isUniqueViolation: (error: unknown) => boolean): void {
    const n = rows.length;
    let start = 0;
    while (start < n) {
      const size = Math.min(TRANSITION_CHUNK, n - start);
      const params = this.params;
      params.length = size * 3;
      for (let i = 0; i < size; i++) {
        const row = rows[start + i]!;
        params[i * 3] = row.key;
        params[i * 3 + 1] = row.step;
        params[i * 3 + 2] = row.body;
      }
      try {
        this.statement(size).run(params);
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
        // Which row? One at a time; the failed chunk left nothing behind.
        const one = this.statement(1);
        for (let i = 0; i < size; i++) {
          const row = rows[start + i]!;
          try {
            one.run(row.key, row.step, row.body);
          } catch (inner) {
            if (isUniqueViolation(inner)) onDuplicate(start + i);
            throw inner;
          }
        }
        throw error;
      }
      start += size;
    }
    this.params.length = 0;
  }

  private statement(size: number): Statement {
    let statement = this.bySize.get(size);
    if (statement === undefined) {
      statement = this.db.prepare('INSERT INTO transitions (episode_seq, step, body) VALUES ' + Array(size).fill('(?, ?, ?)').join(', '));
      this.bySize.set(size, statement);
    }
    return statement;
  }
}
