/** Transition rows: multi-row INSERTs in chunks, one prepared statement per chunk size, duplicate steps named. */
import type { Database, Statement } from 'better-sqlite3';
import { canonicalize, type EpisodeRecord, type StagedTransitions } from '../../core/index.js';

/**
 * Rows per INSERT statement (3 parameters each). A commit of one transition of each of 64 running episodes
 * cost 1.13x raw single-row inserts with 16 rows per statement against 1.30x with 64 (8: 1.18, 32: 1.21;
 * same process, interleaved, CPU, median of 5, load ~6); calls of 100 transitions of one episode 1.08-1.11x
 * against 1.01-1.04x. The server's commits hold many episodes' steps, so 16.
 */
export const TRANSITION_CHUNK = 16;

/**
 * Steps per segment key (schema version 6): an episode's transitions are keyed by `episode_keys` rows of
 * `(id, segment)`, segment = step / SEGMENT_STEPS truncated, so running episodes' current keys are all
 * recent and their `(episode_seq, step)` index entries share the index's last pages (docs/storage.md).
 * Part of the stored layout: the migration re-keyed old rows with this value; never change it.
 */
export const SEGMENT_STEPS = 64;

/** The segment of a step: `step / SEGMENT_STEPS` truncated, as SQLite's integer division gives it in the migration. */
export function segmentOf(step: number): number {
  return Math.trunc(step / SEGMENT_STEPS);
}

/**
 * The statements of a transition write, shared by the store's own connection and the writer thread's
 * (transition-writer.ts), so both write exactly the same rows.
 */
export const TRANSITION_SQL = {
  /** The INSERT of `size` transition rows, 3 parameters each (segment key, step, body). */
  insertPrefix: 'INSERT INTO transitions (episode_seq, step, body) VALUES ',
  insertRow: '(?, ?, ?)',
  /** The same row with its body bound as UTF-8 bytes (the writer thread's): the CAST stores the TEXT they encode (the table is STRICT). */
  insertRowBytes: '(?, ?, CAST(? AS TEXT))',
  /** A segment's key (parameters: id, segment). */
  newEpisodeKey: 'INSERT INTO episode_keys (id, segment) VALUES (?, ?) ON CONFLICT (id, segment) DO NOTHING',
  episodeKey: 'SELECT seq FROM episode_keys WHERE id = ? AND segment = ?',
  /** The progress save of an episode whose indexed columns are unchanged (parameters: status, steps, created, updated, body, id, task, run). */
  episodeProgress: 'UPDATE episodes SET status = ?, steps = ?, created_at = ?, updated_at = ?, body = ? WHERE id = ? AND task_id = ? AND run_id IS ?',
  /** Any other save (parameters: id, task, run, status, steps, created, updated, body). */
  episodeUpsert:
    'INSERT INTO episodes (id, task_id, run_id, status, steps, created_at, updated_at, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ' +
    'ON CONFLICT (id) DO UPDATE SET task_id = excluded.task_id, run_id = excluded.run_id, status = excluded.status, ' +
    'steps = excluded.steps, created_at = excluded.created_at, updated_at = excluded.updated_at, body = excluded.body',
  /**
   * The key `episodes_by_task` indexes (schema version 8), as written in that migration: a query must use this same
   * expression for SQLite to use the index. `episodeTaskKeyOf` is the key of a bound task id.
   */
  episodeTaskKey: 'coalesce(unhex(substr(task_id, 1, 8)), task_id)',
  episodeTaskKeyOf: 'coalesce(unhex(substr(?, 1, 8)), ?)',
} as const;

/** The INSERT statement of `size` transition rows. */
export function transitionInsertSql(size: number): string {
  return TRANSITION_SQL.insertPrefix + Array(size).fill(TRANSITION_SQL.insertRow).join(', ');
}

/**
 * Writes row `index`'s three parameters (the key of the episode's segment, the step, the canonical JSON body) at
 * `params[at..at+2]`.
 */
export type TransitionFill = (index: number, params: unknown[], at: number) => void;

/**
 * Inserts transition rows with as few statement executions as possible: a full chunk of
 * `TRANSITION_CHUNK` rows per `INSERT ... VALUES (...), (...)`, the rest with one statement of the
 * remaining size. Rows are produced chunk by chunk (`fill`), so each body is bound while it is young: a
 * call of thousands of transitions never holds all their texts at once (measured: serialising the whole
 * call first cost 3 µs more per row at 1,000 rows, from promoting the texts to the old generation).
 * A chunk that hits the unique (episode_seq, step) index is rolled back by SQLite (statement-level) and
 * retried row by row, so the caller learns which row is the duplicate.
 * Must run inside the caller's write transaction.
 */
export class TransitionInserter {
  private readonly bySize = new Map<number, Statement>();
  private readonly params: unknown[] = [];

  constructor(private readonly db: Database) {}

  /** Inserts rows 0..n-1; on a duplicate step calls `onDuplicate(index of the row)` (which should throw) and otherwise rethrows. */
  insert(n: number, fill: TransitionFill, onDuplicate: (index: number) => never, isUniqueViolation: (error: unknown) => boolean): void {
    let start = 0;
    while (start < n) {
      const size = Math.min(TRANSITION_CHUNK, n - start);
      const params = this.params;
      params.length = size * 3;
      for (let i = 0; i < size; i++) fill(start + i, params, i * 3);
      try {
        this.statement(size).run(params);
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
        // Which row? One at a time; the failed chunk left nothing behind.
        const one = this.statement(1);
        const single: unknown[] = [0, 0, ''];
        for (let i = 0; i < size; i++) {
          fill(start + i, single, 0);
          try {
            one.run(single);
          } catch (inner) {
            if (isUniqueViolation(inner)) onDuplicate(start + i);
            throw inner;
          }
        }
        throw error;
      } finally {
        params.length = 0;
      }
      start += size;
    }
  }

  private statement(size: number): Statement {
    let statement = this.bySize.get(size);
    if (statement === undefined) {
      statement = this.db.prepare(transitionInsertSql(size));
      this.bySize.set(size, statement);
    }
    return statement;
  }
}

/** What a staged commit collected: per transition its episode, step and canonical text; a serialisation failure, if any. */
export interface StagedRows {
  ids: string[];
  steps: number[];
  texts: string[];
  failure: unknown;
}

/**
 * A commit filled transition by transition, shared by the store's own connection and the step journal: each
 * transition is serialised when it is added and kept flat (one string per transition until the commit, not
 * the canonical writer's tree of pieces), so a recorder holds text rather than objects. A transition that
 * cannot be serialised is kept as `failure` (nothing after it is taken), for `commit` to reject with.
 */
export function stageTexts(commit: (rows: StagedRows, episodes: readonly EpisodeRecord[]) => Promise<void>): StagedTransitions {
  const rows: StagedRows = { ids: [], steps: [], texts: [], failure: undefined };
  return {
    add: (transition) => {
      if (rows.failure !== undefined) return;
      let text: string;
      try {
        text = canonicalize(transition);
      } catch (error) {
        rows.failure = error;
        return;
      }
      text.charCodeAt(0);
      rows.texts.push(text);
      rows.ids.push(transition.episodeId);
      rows.steps.push(transition.step);
    },
    commit: (episodes) => commit(rows, episodes),
  };
}
