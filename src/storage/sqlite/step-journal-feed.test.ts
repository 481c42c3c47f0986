/**
 * The step journal's feed on the writer thread (sqlite-store.ts `feedJournal`, transition-writer.ts
 * `applyJournal`) when an entry holds a step SQLite already has: STORE_CONFLICT naming it, nothing of the feed
 * written, the entries kept in the journal and tried again (docs/storage.md, "Step journal"). The same without a
 * worker thread: step-journal-fallback.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { makeEpisode, makeTransition } from '../../../test/conformance/store-fixtures.js';
import { systemClock } from '../../cli/clock.js';
import { canonicalize, type Transition } from '../../core/index.js';
import { createSqliteStore, type SqliteStore } from './index.js';
import { journalPath, readJournal } from './step-journal.js';
import { rejectionOf, storedRows } from './testing.js';

const dir = mkdtempSync(join(tmpdir(), 'envharness-feed-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

const open = (file: string): SqliteStore => createSqliteStore(file, { now: systemClock });
const steps = (id: string, from: number, count: number): Transition[] => Array.from({ length: count }, (_, i) => makeTransition(id, from + i));
const bodies = (transitions: readonly Transition[]) => transitions.map((t) => ({ id: t.episodeId, step: t.step, body: canonicalize(t) }));

/** Removes a transition row by hand (what an operator would do to resolve the conflict). */
function deleteStep(file: string, episodeId: string, step: number): void {
  const db = new BetterSqlite3(file);
  try {
    const { changes } = db.prepare('DELETE FROM transitions WHERE step = ? AND episode_seq IN (SELECT seq FROM episode_keys WHERE id = ?)').run(step, episodeId);
    expect(changes).toBe(1);
  } finally {
    db.close();
  }
}

/** Step 2 of ep-x, committed by the store's appendTransitions (not the journal): another body than the journal's. */
const prior: Transition = { ...makeTransition('ep-x', 2), reward: 1 };
const episodes = {
  y: makeEpisode('ep-y', 'task-y', { steps: 2 }),
  x: makeEpisode('ep-x', 'task-x', { steps: 2 }),
  z: makeEpisode('ep-z', 'task-z', { steps: 1 }),
};

describe('step journal feed on the writer thread: a step SQLite already has', () => {
  it('fails with STORE_CONFLICT naming the step, writes nothing of the feed, and retries it on its own until it applies, once', async () => {
    const file = join(dir, `conflict-${files++}.db`);
    const store = open(file);
    const journal = store.openStepJournal()!;
    try {
      await store.appendTransitions([prior]);
      // Three entries, one feed: the conflicting one between two that are fine.
      await Promise.all([
        journal.appendTransitions(steps('ep-y', 1, 2), { episodes: [episodes.y] }),
        journal.appendTransitions(steps('ep-x', 1, 2), { episodes: [episodes.x] }),
        journal.appendTransitions(steps('ep-z', 1, 1), { episodes: [episodes.z] }),
      ]);
      const error = await rejectionOf(journal.drain());
      expect(error).toMatchObject({ code: 'STORE_CONFLICT', details: { operation: 'applyJournal', conflict: 'duplicate_step', episodeId: 'ep-x', step: 2 } });
      expect((error as Error).message).toContain('nothing of the feed was written');
      // Rolled back whole: not the other entries, not step 1 of ep-x, not the records, not the meta row.
      expect(storedRows(file, journal.journalId)).toEqual({ transitions: bodies([prior]), episodes: [], fed: undefined });
      expect(journal.unfed).toBe(3);
      expect(readJournal(journalPath(file))!.entries.map((e) => e.seq)).toEqual([1, 2, 3]);

      // Tried again without anyone asking (the back-off timer), failing the same way while the row stands.
      const feeds = journal.stats.feeds;
      await vi.waitFor(() => expect(journal.stats.feeds).toBeGreaterThan(feeds), { timeout: 10_000, interval: 5 });
      expect(storedRows(file, journal.journalId).fed).toBeUndefined();
      // Later appends are still acknowledged, and wait behind it; a read through the store sees what SQLite has.
      await journal.appendTransitions(steps('ep-z', 2, 1), { episodes: [{ ...episodes.z, steps: 2 }] });
      expect(await store.listTransitions('ep-z')).toEqual([]);
      expect(journal.unfed).toBe(4);
      expect(readJournal(journalPath(file))!.entries.map((e) => e.seq)).toEqual([1, 2, 3, 4]);

      // The conflicting row removed: a retry (again on its own) applies every entry kept, once.
      deleteStep(file, 'ep-x', 2);
      await vi.waitFor(() => expect(journal.unfed).toBe(0), { timeout: 10_000, interval: 5 });
      const all = [...steps('ep-x', 1, 2), ...steps('ep-y', 1, 2), ...steps('ep-z', 1, 2)];
      expect(storedRows(file, journal.journalId)).toEqual({
        transitions: bodies(all),
        episodes: [episodes.x, episodes.y, { ...episodes.z, steps: 2 }].map((e) => ({ id: e.id, body: canonicalize(e) })),
        fed: '4',
      });
      await journal.drain();
      expect((await store.listTransitions('ep-x')).map((t) => t.step)).toEqual([1, 2]);
    } finally {
      await journal.close();
      await store.close();
    }
  });

  it('while the conflict stands, takes no step once SQLite lacks FEED_MAX_BYTES: refused with STORE_FAILED, not written; taken again once the feed commits', async () => {
    const file = join(dir, `bounded-${files++}.db`);
    const store = open(file);
    const journal = store.openStepJournal()!;
    const mib = (step: number): Transition => ({ ...makeTransition('ep-w', step), observation: { kind: 'tool', output: 'x'.repeat(1 << 20) } });
    try {
      await store.appendTransitions([prior]);
      await journal.appendTransitions(steps('ep-x', 1, 2), { episodes: [episodes.x] });
      await expect(journal.drain()).rejects.toMatchObject({ code: 'STORE_CONFLICT' });
      // Acknowledged up to FEED_MAX_BYTES behind the failing feed (8 MiB)...
      let step = 1;
      for (; step <= 8; step++) await journal.appendTransitions([mib(step)]);
      const entries = readJournal(journalPath(file))!.entries.length;
      expect(entries).toBe(9);
      // ...then refused, the feed's error as the cause, and nothing written to the file.
      const refused = await rejectionOf(journal.appendTransitions([mib(step)]));
      expect(refused).toMatchObject({ code: 'STORE_FAILED', details: { operation: 'appendTransitions', journal: journalPath(file), unfed: 9 } });
      expect((refused as Error).cause).toMatchObject({ code: 'STORE_CONFLICT', details: { episodeId: 'ep-x', step: 2 } });
      expect(readJournal(journalPath(file))!.entries).toHaveLength(entries);
      expect(journal.unfed).toBe(9);

      // The conflicting row removed: the retry commits everything kept, and steps are taken again.
      deleteStep(file, 'ep-x', 2);
      await vi.waitFor(() => expect(journal.unfed).toBe(0), { timeout: 10_000, interval: 5 });
      await journal.appendTransitions([mib(step)]);
      await journal.drain();
      expect((await store.listTransitions('ep-w')).map((t) => t.step)).toEqual(Array.from({ length: 9 }, (_, i) => i + 1));
      expect((await store.listTransitions('ep-x')).map((t) => t.step)).toEqual([1, 2]);
    } finally {
      await journal.close();
      await store.close();
    }
  });

  it('a close while the conflict stands rejects with it and keeps the file; opens fail with STORE_FAILED naming the journal until the row is gone, then apply it once', async () => {
    const file = join(dir, `closed-${files++}.db`);
    const store = open(file);
    const journal = store.openStepJournal()!;
    await store.appendTransitions([prior]);
    await journal.appendTransitions(steps('ep-y', 1, 2), { episodes: [episodes.y] });
    await journal.appendTransitions(steps('ep-x', 1, 2), { episodes: [episodes.x] });
    const id = journal.journalId;
    await expect(journal.close()).rejects.toMatchObject({ code: 'STORE_CONFLICT', details: { conflict: 'duplicate_step', episodeId: 'ep-x', step: 2 } });
    await store.close();
    expect(readJournal(journalPath(file))!.entries.map((e) => e.seq)).toEqual([1, 2]);
    // Its lock released: another connection takes it at once.
    const lock = new BetterSqlite3(`${journalPath(file)}.lock`, { timeout: 0 });
    lock.exec('BEGIN EXCLUSIVE');
    lock.close();
    expect(storedRows(file, id)).toEqual({ transitions: bodies([prior]), episodes: [], fed: undefined });

    const refused = (() => {
      try {
        open(file);
      } catch (error) {
        return error;
      }
      throw new Error('expected the open to fail');
    })();
    expect(refused).toMatchObject({ code: 'STORE_FAILED', details: { operation: 'open', journal: journalPath(file) } });
    expect(storedRows(file, id).fed).toBeUndefined();

    deleteStep(file, 'ep-x', 2);
    for (let i = 0; i < 2; i++) {
      const reopened = open(file);
      await reopened.close();
      expect(storedRows(file, id)).toEqual({
        transitions: bodies([...steps('ep-x', 1, 2), ...steps('ep-y', 1, 2)]),
        episodes: [episodes.x, episodes.y].map((e) => ({ id: e.id, body: canonicalize(e) })),
        fed: '2',
      });
    }
  });
});
