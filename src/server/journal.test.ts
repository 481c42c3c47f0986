/**
 * The server over the step journal (episodes.ts with `SqliteStore.openStepJournal`): a step is answered after
 * its journal write and reaches SQLite within the feed window; concurrent steps of one turn share one write;
 * resets and steps that end an attempt are in SQLite when answered; a failed journal write is 503
 * STORE_FAILED and breaks the episode; closing the server feeds SQLite and removes the journal.
 */
import { closeSync, existsSync, rmSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { systemClock } from '../cli/clock.js';
import { createSqliteStore } from '../storage/sqlite/index.js';
import { journalPath, type StepJournal } from '../storage/sqlite/step-journal.js';
import { startTestServer, type TestServer } from './testing/fixture.js';
import type { ServerEpisode } from './episodes.js';

const ACTION = JSON.stringify({ action: { type: 'tool', tool: 'get_stock', args: { item: 'widget-1' } } });
let t: TestServer;
let journal: StepJournal;

beforeAll(async () => {
  t = await startTestServer();
  journal = t.server.episodes.journal!;
});
afterAll(async () => {
  await t.close();
});

async function newEpisode(taskId = t.tasks.endless): Promise<{ ep: ServerEpisode; attemptId: string }> {
  const created = await t.server.episodes.create({ taskId, seed: 0 } as Parameters<TestServer['server']['episodes']['create']>[0]);
  return { ep: created.ep, attemptId: created.ep.episode!.id! };
}

const stored = async (attemptId: string) => (await t.harness.store.listTransitions(attemptId)).length;

describe('server over the step journal', () => {
  it('is on by default for a SQLite file store, and answers a lone client’s step after one journal write', async () => {
    expect(journal).toBeDefined();
    const { ep, attemptId } = await newEpisode();
    // The reset waited for SQLite.
    expect((await t.harness.store.getEpisode(attemptId))?.status).toBe('running');
    for (let i = 1; i <= 10; i++) {
      const writes = journal.stats.writes;
      expect((await t.server.episodes.step(ep, ACTION, undefined)).status).toBe(200);
      expect(journal.stats.writes).toBe(writes + 1);
      await new Promise((resolve) => setImmediate(resolve));
    }
    // In SQLite once the feed ran (at most `FEED_MS`, 20 ms, later); the journal is then cut back to its header.
    await t.server.episodes.settled();
    expect(await stored(attemptId)).toBe(10);
    expect(journal.unfed).toBe(0);
  });

  it('writes concurrent steps of one turn in one journal write', async () => {
    const eps = await Promise.all(Array.from({ length: 8 }, () => newEpisode()));
    await t.server.episodes.step(eps[0]!.ep, ACTION, undefined);
    await t.server.episodes.step(eps[1]!.ep, ACTION, undefined);
    const writes = journal.stats.writes;
    const replies = await Promise.all(eps.map(({ ep }) => t.server.episodes.step(ep, ACTION, undefined)));
    for (const r of replies) expect(r.status).toBe(200);
    expect(journal.stats.writes - writes).toBeLessThanOrEqual(2);
    await t.server.episodes.settled();
    expect(await Promise.all(eps.map(({ attemptId }) => stored(attemptId)))).toEqual(eps.map((_, i) => (i < 2 ? 2 : 1)));
  });

  it('answers a step that ends its attempt only once SQLite holds it', async () => {
    const { ep, attemptId } = await newEpisode(t.tasks.short);
    for (let i = 0; i < 3; i++) await t.server.episodes.step(ep, ACTION, undefined);
    const feeds = journal.stats.feeds;
    const reply = await t.server.episodes.step(ep, JSON.stringify({ action: { type: 'finish' } }), undefined);
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body).terminated).toBe(true);
    // No settled(): the answer itself waited for the feed.
    expect(journal.stats.feeds).toBeGreaterThan(feeds);
    expect(await stored(attemptId)).toBe(4);
    expect((await t.harness.store.getEpisode(attemptId))?.status).toBe('terminated');
  });

  it('a journal write that fails is 503 STORE_FAILED, and the episode refuses further steps', async () => {
    const other = await startTestServer();
    try {
      const j = other.server.episodes.journal!;
      const { ep } = await other.server.episodes.create({ taskId: other.tasks.endless, seed: 0 } as Parameters<TestServer['server']['episodes']['create']>[0]);
      expect((await other.server.episodes.step(ep, ACTION, undefined)).status).toBe(200);
      // The journal's file descriptor goes away: its next write fails (EBADF).
      closeSync((j as unknown as { fd: number }).fd);
      const failed = await other.server.episodes.step(ep, ACTION, undefined);
      expect(failed.status).toBe(503);
      expect(JSON.parse(failed.body).code).toBe('STORE_FAILED');
      expect((await other.server.episodes.step(ep, ACTION, undefined)).status).toBe(503);
      (j as unknown as { fd: number | undefined }).fd = undefined;
    } finally {
      await other.server.close().catch(() => undefined);
      await other.harness.close().catch(() => undefined);
      rmSync(other.dir, { recursive: true, force: true });
    }
  });

  it('closing the server feeds SQLite, removes the journal and releases its lock', async () => {
    const other = await startTestServer();
    const { ep, attemptId } = await other.server.episodes.create({ taskId: other.tasks.endless, seed: 0 } as Parameters<TestServer['server']['episodes']['create']>[0]).then((c) => ({ ep: c.ep, attemptId: c.ep.episode!.id! }));
    for (let i = 0; i < 5; i++) await other.server.episodes.step(ep, ACTION, undefined);
    const path = journalPath(other.storePath);
    expect(existsSync(path)).toBe(true);
    await other.server.close();
    expect(existsSync(path)).toBe(false);
    expect((await other.harness.store.listTransitions(attemptId)).length).toBe(5);
    const next = createSqliteStore(other.storePath, { now: systemClock });
    const journal = next.openStepJournal();
    expect(journal).toBeDefined();
    await journal!.close();
    await next.close();
    await other.harness.close();
    rmSync(other.dir, { recursive: true, force: true });
  });

  it('a shutdown whose feed SQLite refuses says so on stderr and keeps the journal, which the next open of the store applies', async () => {
    const other = await startTestServer();
    const { ep, attemptId } = await other.server.episodes.create({ taskId: other.tasks.endless, seed: 0 } as Parameters<TestServer['server']['episodes']['create']>[0]).then((c) => ({ ep: c.ep, attemptId: c.ep.episode!.id! }));
    await other.server.episodes.step(ep, ACTION, undefined);
    await other.server.episodes.settled();
    // From now on SQLite refuses every transition row (the writer thread's feed fails).
    const db = new BetterSqlite3(other.storePath);
    db.exec("CREATE TRIGGER refuse BEFORE INSERT ON transitions BEGIN SELECT RAISE(ABORT, 'refused by the test'); END");
    for (let i = 0; i < 3; i++) await other.server.episodes.step(ep, ACTION, undefined);
    const said: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (said.push(String(chunk)), true));
    try {
      await other.server.close();
    } finally {
      spy.mockRestore();
    }
    const path = journalPath(other.storePath);
    expect(said.join('')).toMatch(/step journal .*-steps: SQLite did not take \d+ entries on shutdown \(.*refused by the test\)/);
    expect(existsSync(path)).toBe(true);
    await other.harness.close();
    db.exec('DROP TRIGGER refuse');
    db.close();
    const reopened = createSqliteStore(other.storePath, { now: systemClock });
    try {
      expect((await reopened.listTransitions(attemptId)).map((t) => t.step)).toEqual([1, 2, 3, 4]);
    } finally {
      await reopened.close();
    }
    rmSync(other.dir, { recursive: true, force: true });
  });
});
