/** Helpers for the SQLite store's tests: what a file holds, read on a connection of its own. */
import BetterSqlite3 from 'better-sqlite3';
import { JOURNAL_META_PREFIX } from './step-journal.js';

/** What SQLite holds, read on a connection of its own (no journal replay): transition rows, episode bodies, the journal's meta value. */
export function storedRows(file: string, journalId: string): { transitions: Array<{ id: string; step: number; body: string }>; episodes: Array<{ id: string; body: string }>; fed: string | undefined } {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    return {
      transitions: db.prepare('SELECT k.id, t.step, t.body FROM transitions t JOIN episode_keys k ON k.seq = t.episode_seq ORDER BY k.id, t.step').all() as Array<{ id: string; step: number; body: string }>,
      episodes: db.prepare('SELECT id, body FROM episodes ORDER BY id').all() as Array<{ id: string; body: string }>,
      fed: db.prepare('SELECT value FROM meta WHERE key = ?').pluck().get(`${JOURNAL_META_PREFIX}${journalId}`) as string | undefined,
    };
  } finally {
    db.close();
  }
}

/** The error `promise` rejects with; fails if it resolves. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}
