/**
 * The step journal's feed where no worker thread can start (here `new Worker` throws): sqlite-store.ts
 * `feedJournal` applies each feed on the store's own connection (`applyJournalNow`), with the thread's rules:
 * exactly the entries appended, once, recorded in `meta`; refused after close() and while a fault stands;
 * STORE_CONFLICT for a step SQLite already has, nothing of the feed written, retried with back-off
 * (docs/storage.md, "Step journal").
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { makeEpisode, makeTransition } from '../../../test/conformance/store-fixtures.js';
import { canonicalize, type Transition } from '../../core/index.js';
import { createSqliteStore, type SqliteStore } from './index.js';
import { journalPath, readJournal, type StepJournal } from './step-journal.js';
import { rejectionOf, storedRows } from './testing.js';

const workers = vi.hoisted(() => ({ attempts: 0 }));
// Only `Worker` is replaced (the rest of the module is real): the writer thread and the checkpointer cannot start.
vi.mock('node:worker_threads', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:worker_threads')>();
  return {
    ...real,
    Worker: class {
      constructor() {
        workers.attempts++;
        throw new Error('worker threads are not available here');
      }
    },
  };
});

const dir = mkdtempSync(join(tmpdir(), 'envharness-fallback-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});
let files = 0;

/** A clock the test moves (the store's fault probe reads it). */
let nowMs = Date.parse('2026-12-05T12:00:00.000Z');
const clock = (): string => new Date(nowMs).toISOString();
const open = (file: string): SqliteStore => createSqliteStore(file, { now: clock });
const steps = (id: string, from: number, count: number): Transition[] => Array.from({ length: count }, (_, i) => makeTransition(id, from + i));
const bodies = (transitions: readonly Transition[]) => transitions.map((t) => ({ id: t.episodeId, step: t.step, body: canonicalize(t) })).sort((a, b) => (a.id === b.id ? a.step - b.step : a.id < b.id ? -1 : 1));
const records = (episodes: ReturnType<typeof makeEpisode>[]) => episodes.map((e) => ({ id: e.id, body: canonicalize(e) })).sort((a, b) => (a.id < b.id ? -1 : 1));

function fresh(): { file: string; store: SqliteStore; journal: StepJournal } {
  const file = join(dir, `store-${files++}.db`);
  const store = open(file);
  const attempts = workers.attempts;
  const journal = store.openStepJournal();
  if (journal === undefined) throw new Error('no journal');
  // The store tried to start its writer thread for the feed, and could not.
  expect(workers.attempts).toBeGreaterThan(attempts);
  return { file, store, journal };
}

describe('step journal feed without a worker thread', () => {
  it('applies exactly the entries appended on the store’s own connection, records the last in meta, and a second feed of them applies nothing', async () => {
    const { file, store, journal } = fresh();
    const a = makeEpisode('ep-a', 'task-a', { steps: 3 });
    const b = makeEpisode('ep-b', 'task-b', { steps: 1, runId: 'run-1' });
    try {
      await journal.appendTransitions(steps('ep-a', 1, 2), { episodes: [{ ...a, steps: 2 }] });
      await journal.appendTransitions([...steps('ep-b', 1, 1), ...steps('ep-a', 3, 1)], { episodes: [b, a] });
      // 20 rows past one multi-row INSERT chunk, and no records.
      await journal.appendTransitions(steps('ep-c', 0, 20));
      expect(storedRows(file, journal.journalId)).toEqual({ transitions: [], episodes: [], fed: undefined });
      const before = join(dir, `before-${files++}-steps`);
      copyFileSync(journalPath(file), before);
      await journal.drain();
      const all = [...steps('ep-a', 1, 3), ...steps('ep-b', 1, 1), ...steps('ep-c', 0, 20)];
      const expected = { transitions: bodies(all), episodes: records([a, b]), fed: '3' };
      expect(storedRows(file, journal.journalId)).toEqual(expected);
      expect(journal.unfed).toBe(0);
      expect(readJournal(journalPath(file))!.entries).toEqual([]);
      // Reads through the store.
      expect(await store.listTransitions('ep-a')).toEqual(steps('ep-a', 1, 3));
      expect(await store.listTransitions('ep-c')).toHaveLength(20);
      expect(await store.getEpisode('ep-a')).toEqual(a);
      expect(await store.getEpisode('ep-b')).toEqual(b);

      // The same three entries fed again (the journal as it was before the feed, over the database after it):
      // skipped, not STORE_CONFLICT, nothing twice.
      copyFileSync(before, journalPath(file));
      expect(readJournal(journalPath(file))!.entries.map((e) => e.seq)).toEqual([1, 2, 3]);
      const again = open(file);
      await again.close();
      expect(storedRows(file, journal.journalId)).toEqual(expected);
    } finally {
      await journal.close();
      await store.close();
    }
  });

  it('skips, in its own feed, the entries another connection applied first, and applies those after them once', async () => {
    const { file, store, journal } = fresh();
    try {
      await journal.appendTransitions(steps('ep-d', 1, 4), { episodes: [makeEpisode('ep-d', 'task-d', { steps: 4 })] });
      // Another store opened now applies the entry (the journal is not its own: it stays).
      const other = open(file);
      expect((await other.listTransitions('ep-d')).length).toBe(4);
      await other.close();
      await journal.appendTransitions(steps('ep-d', 5, 1), { episodes: [makeEpisode('ep-d', 'task-d', { steps: 5 })] });
      expect(journal.unfed).toBe(2);
      await journal.drain();
      expect(storedRows(file, journal.journalId)).toEqual({ transitions: bodies(steps('ep-d', 1, 5)), episodes: records([makeEpisode('ep-d', 'task-d', { steps: 5 })]), fed: '2' });
    } finally {
      await journal.close();
      await store.close();
    }
  });

  it('is refused with STORE_FAILED after the store’s close(), and the entries stay in the file for the next open', async () => {
    const { file, store, journal } = fresh();
    await journal.appendTransitions(steps('ep-e', 1, 2), { episodes: [makeEpisode('ep-e', 'task-e', { steps: 2 })] });
    await store.close();
    const error = await rejectionOf(journal.drain());
    expect(error).toMatchObject({ code: 'STORE_FAILED', details: { operation: 'applyJournal' } });
    expect((error as Error).message).toContain('called after close()');
    await expect(journal.close()).rejects.toMatchObject({ code: 'STORE_FAILED' });
    expect(readJournal(journalPath(file))!.entries.map((e) => e.seq)).toEqual([1]);
    expect(storedRows(file, journal.journalId).transitions).toEqual([]);
    const reopened = open(file);
    await reopened.close();
    expect(storedRows(file, journal.journalId)).toEqual({ transitions: bodies(steps('ep-e', 1, 2)), episodes: records([makeEpisode('ep-e', 'task-e', { steps: 2 })]), fed: '1' });
  });

  it('sets the store’s fault on an I/O failure, is refused while it stands, and applies once the probe succeeds', async () => {
    const { file, store, journal } = fresh();
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    // The device fails once, at the feed's first transition INSERT (the store's own connection: no other here).
    const probe = new BetterSqlite3(':memory:');
    const statement = Object.getPrototypeOf(probe.prepare('SELECT 1')) as { run: (...params: unknown[]) => unknown };
    probe.close();
    const run = statement.run;
    let failures = 0;
    vi.spyOn(statement, 'run').mockImplementation(function (this: { source: string }, ...params: unknown[]) {
      if (failures === 0 && this.source.startsWith('INSERT INTO transitions')) {
        failures++;
        throw new BetterSqlite3.SqliteError('database or disk is full', 'SQLITE_FULL');
      }
      return run.apply(this, params);
    });
    try {
      await journal.appendTransitions(steps('ep-f', 1, 2), { episodes: [makeEpisode('ep-f', 'task-f', { steps: 2 })] });
      expect(await rejectionOf(journal.drain())).toMatchObject({ code: 'STORE_FAILED', details: { operation: 'applyJournal', sqliteCode: 'SQLITE_FULL' } });
      expect(failures).toBe(1);
      expect(store.fault()).toMatchObject({ operation: 'write', code: 'SQLITE_FULL', since: clock() });
      // Before the probe interval (1 s of the store's clock) the feed is refused without a write.
      nowMs += 999;
      expect(await rejectionOf(journal.drain())).toMatchObject({ code: 'STORE_FAILED', details: { fault: true, sqliteCode: 'SQLITE_FULL' } });
      expect(storedRows(file, journal.journalId)).toEqual({ transitions: [], episodes: [], fed: undefined });
      expect(journal.unfed).toBe(1);
      // The probe's write succeeds: the fault clears and the feed applies, once.
      nowMs += 1;
      await journal.drain();
      expect(store.fault()).toBeUndefined();
      expect(storedRows(file, journal.journalId)).toEqual({ transitions: bodies(steps('ep-f', 1, 2)), episodes: records([makeEpisode('ep-f', 'task-f', { steps: 2 })]), fed: '1' });
      expect(stderr.mock.calls.map(([line]) => String(line))).toEqual([expect.stringContaining('storage fault on'), expect.stringContaining('cleared')]);
    } finally {
      await journal.close();
      await store.close();
    }
  });

  it('fails a feed holding a step SQLite already has with STORE_CONFLICT, writes nothing of it, and retries it at 50 ms doubling up to 2 s until it applies', async () => {
    const { file, store, journal } = fresh();
    const prior: Transition = { ...makeTransition('ep-x', 2), reward: 1 };
    const x = makeEpisode('ep-x', 'task-x', { steps: 2 });
    const y = makeEpisode('ep-y', 'task-y', { steps: 2 });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      await store.appendTransitions([prior]);
      await journal.appendTransitions(steps('ep-y', 1, 2), { episodes: [y] });
      await journal.appendTransitions(steps('ep-x', 1, 2), { episodes: [x] });
      const drained = rejectionOf(journal.drain());
      await vi.advanceTimersByTimeAsync(0);
      const error = await drained;
      // Worded as the writer thread's feed words it: the whole feed rolled back, not one call.
      expect(error).toMatchObject({ code: 'STORE_CONFLICT', details: { operation: 'applyJournal', conflict: 'duplicate_step', episodeId: 'ep-x', step: 2 } });
      expect((error as Error).message).toContain('nothing of the feed was written');
      expect(storedRows(file, journal.journalId)).toEqual({ transitions: bodies([prior]), episodes: [], fed: undefined });
      expect(journal.unfed).toBe(2);
      expect(readJournal(journalPath(file))!.entries.map((e) => e.seq)).toEqual([1, 2]);

      // Each retry comes exactly when due, and fails the same way while the row stands.
      for (const wait of [50, 100, 200, 400, 800, 1600, 2000, 2000]) {
        const feeds = journal.stats.feeds;
        await vi.advanceTimersByTimeAsync(wait - 1);
        expect(journal.stats.feeds, `${wait} ms`).toBe(feeds);
        await vi.advanceTimersByTimeAsync(1);
        expect(journal.stats.feeds, `${wait} ms`).toBe(feeds + 1);
      }
      expect(storedRows(file, journal.journalId).fed).toBeUndefined();

      // Without the conflicting row, the next retry applies both entries, once.
      const db = new BetterSqlite3(file);
      db.prepare('DELETE FROM transitions WHERE step = 2 AND episode_seq IN (SELECT seq FROM episode_keys WHERE id = ?)').run('ep-x');
      db.close();
      await vi.advanceTimersByTimeAsync(2000);
      expect(journal.unfed).toBe(0);
      expect(storedRows(file, journal.journalId)).toEqual({ transitions: bodies([...steps('ep-x', 1, 2), ...steps('ep-y', 1, 2)]), episodes: records([x, y]), fed: '2' });
    } finally {
      vi.useRealTimers();
      await journal.close();
      await store.close();
    }
  });
});
