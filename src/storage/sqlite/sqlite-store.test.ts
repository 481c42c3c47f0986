import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { canonicalize, digest } from '../../core/index.js';
import { describeStore, rejection } from '../../../test/conformance/store.js';
import { makeBatch, makeEpisode, makeRun, makeRunEvent, makeSnapshot, makeTask, makeTransition } from '../../../test/conformance/store-fixtures.js';
import { createSqliteStore, SCHEMA_VERSION } from './index.js';
import { CHECKPOINTER_AFTER_WRITES, INLINE_AUTOCHECKPOINT_BYTES } from './checkpointer.js';
import { APPLICATION_ID, migrate, MIGRATIONS, userVersion, type Migration } from './schema.js';
import { taskBody } from '../rows.js';
import { TRANSITION_SQL } from './transitions.js';
import { systemClock } from '../../cli/clock.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'envharness-sqlite-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describeStore('sqlite :memory:', async () => createSqliteStore(':memory:', { now: systemClock }));
describeStore('sqlite file', async () => createSqliteStore(join(tempDir(), 'envharness.db'), { now: systemClock }));
// Every list query must have its own ORDER BY: SQLite is told to return unordered rows backwards.
describeStore('sqlite file, reverse_unordered_selects', async () =>
  createSqliteStore(join(tempDir(), 'envharness.db'), { now: systemClock, reverseUnorderedSelects: true }),
);

describe('sqlite store: opening and pragmas', () => {
  it('runs in WAL mode with synchronous=NORMAL, foreign keys on and the current schema', async () => {
    const store = createSqliteStore(join(tempDir(), 'a.db'), { now: systemClock });
    expect(await store.getInfo()).toMatchObject({
      journalMode: 'wal',
      synchronous: 'NORMAL',
      foreignKeys: true,
      busyTimeoutMs: 5000,
      schemaVersion: SCHEMA_VERSION,
    });
    await store.close();
  });

  it('can run with synchronous=FULL', async () => {
    const store = createSqliteStore(join(tempDir(), 'a.db'), { now: systemClock, synchronous: 'FULL' });
    expect((await store.getInfo()).synchronous).toBe('FULL');
    await store.close();
  });

  it('creates missing parent folders and reports an absolute location', async () => {
    const file = join(tempDir(), 'deep', 'er', '.envharness', 'envharness.db');
    const store = createSqliteStore(file, { now: systemClock });
    expect(store.location).toBe(file);
    expect(store.kind).toBe('sqlite');
    await store.close();
  });

  it('refuses invalid options with CONFIG_INVALID', () => {
    expect(() => createSqliteStore(':memory:', { now: systemClock, busyTimeoutMs: -1 })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
    expect(() => createSqliteStore(':memory:', { now: systemClock, synchronous: 'OFF' as 'FULL' })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
  });

  it('fails to open an unusable location with STORE_FAILED naming it', () => {
    const dir = tempDir();
    expect(() => createSqliteStore(dir, { now: systemClock })).toThrow(expect.objectContaining({ code: 'STORE_FAILED', message: expect.stringContaining(dir) }));
  });

  it('refuses a SQLite file that belongs to something else', () => {
    const file = join(tempDir(), 'other.db');
    const other = new BetterSqlite3(file);
    other.exec('CREATE TABLE notes (body TEXT)');
    other.close();
    expect(() => createSqliteStore(file, { now: systemClock })).toThrow(expect.objectContaining({ code: 'STORE_FAILED', message: expect.stringContaining('not an EnvHarness database') }));
  });

  it('refuses a file that is not a database at all', () => {
    const file = join(tempDir(), 'garbage.db');
    writeFileSync(file, 'this is not a database, just text '.repeat(200));
    expect(() => createSqliteStore(file, { now: systemClock })).toThrow(expect.objectContaining({ code: 'STORE_FAILED' }));
  });

  it('reports a healthy file as having no integrity problems', async () => {
    const store = createSqliteStore(join(tempDir(), 'a.db'), { now: systemClock });
    await store.saveBatch(makeBatch([makeTask(1)]));
    expect(await store.checkIntegrity()).toEqual([]);
    await store.close();
  });
});

describe('sqlite store: migrations', () => {
  it('applies every migration once, and nothing on reopen', async () => {
    const file = join(tempDir(), 'm.db');
    const db = new BetterSqlite3(file);
    expect(migrate(db)).toEqual(MIGRATIONS.map((m) => m.version));
    expect(migrate(db)).toEqual([]);
    expect(userVersion(db)).toBe(SCHEMA_VERSION);
    expect(db.pragma('application_id', { simple: true })).toBe(APPLICATION_ID);
    db.close();
    const store = createSqliteStore(file, { now: systemClock });
    expect((await store.getInfo()).schemaVersion).toBe(SCHEMA_VERSION);
    await store.close();
  });

  it('applies a later migration to an existing database exactly once, keeping its data', async () => {
    const file = join(tempDir(), 'm.db');
    const store = createSqliteStore(file, { now: systemClock });
    await store.setMeta('kept', 'yes');
    await store.close();
    const next: Migration = {
      version: SCHEMA_VERSION + 1,
      description: 'test: a counter table',
      sql: `CREATE TABLE applied (n INTEGER) STRICT; INSERT INTO applied VALUES (1);`,
    };
    const db = new BetterSqlite3(file);
    expect(migrate(db, [...MIGRATIONS, next])).toEqual([next.version]);
    expect(migrate(db, [...MIGRATIONS, next])).toEqual([]);
    expect(db.prepare('SELECT count(*) FROM applied').pluck().get()).toBe(1);
    expect(db.prepare(`SELECT value FROM meta WHERE key = 'kept'`).pluck().get()).toBe('"yes"');
    db.close();
  });

  it('upgrades a version-1 store to clustered transitions, keeping every row, its order and its uniqueness', async () => {
    const file = join(tempDir(), 'v1.db');
    const db = new BetterSqlite3(file);
    db.pragma('journal_mode = WAL');
    expect(migrate(db, MIGRATIONS.slice(0, 1))).toEqual([1]);
    // Written as version 1 wrote them: (episode_id, step, canonical body), episodes interleaved and out of step order.
    const ids = ['ep_f3a1:1', 'ep_05c9:1', 'ep_9b7e:1', 'orphan-without-record'];
    const written: Array<[string, number]> = [];
    const insert = db.prepare('INSERT INTO transitions (episode_id, step, body) VALUES (?, ?, ?)');
    db.transaction(() => {
      for (let round = 0; round < 30; round++) {
        for (const [i, id] of ids.entries()) {
          if ((round + i) % 5 === 4) continue; // uneven lengths
          const step = round % 2 === 0 ? round + 1 : round - 1; // 1, 0, 3, 2, ...
          insert.run(id, step, canonicalize(makeTransition(id, step)));
          written.push([id, step]);
        }
      }
    })();
    const episode = makeEpisode(ids[0]!, 'task-1', { runId: 'run-1', steps: 3 });
    db.prepare('INSERT INTO episodes (id, task_id, run_id, status, steps, created_at, updated_at, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)').run(
      episode.id, episode.taskId, episode.runId, episode.status, episode.steps, episode.createdAt, episode.updatedAt, canonicalize(episode),
    );
    const oldRows = db.prepare('SELECT rowid, episode_id, step, body FROM transitions ORDER BY rowid').all();
    db.close();

    const store = createSqliteStore(file, { now: systemClock });
    expect((await store.getInfo()).schemaVersion).toBe(SCHEMA_VERSION);
    for (const id of ids) {
      const steps = written.filter(([e]) => e === id).map(([, step]) => step).sort((a, b) => a - b);
      expect(steps.length).toBeGreaterThan(20);
      expect(await store.listTransitions(id)).toEqual(steps.map((step) => makeTransition(id, step)));
    }
    expect(await store.getEpisode(episode.id)).toEqual(episode);
    expect(await store.checkIntegrity()).toEqual([]);
    // The unique key still refuses a step stored before the upgrade, naming it as before.
    const [, storedStep] = written.find(([e]) => e === ids[3])!;
    const error = await rejection(store.appendTransitions([makeTransition(ids[1]!, 100), makeTransition(ids[3]!, storedStep)]));
    expect(error.code).toBe('STORE_CONFLICT');
    expect(error.details).toMatchObject({ conflict: 'duplicate_step', episodeId: ids[3], step: storedStep });
    expect(await store.listTransitions(ids[1]!)).toHaveLength(written.filter(([e]) => e === ids[1]).length);
    // New writes continue after the old rows, for old and new episodes alike.
    await store.appendTransitions([makeTransition(ids[2]!, 100), makeTransition('ep-new', 0)]);
    expect((await store.listTransitions(ids[2]!)).at(-1)).toEqual(makeTransition(ids[2]!, 100));
    expect(await store.listTransitions('ep-new')).toEqual([makeTransition('ep-new', 0)]);
    await store.close();

    const check = new BetterSqlite3(file, { readonly: true });
    // Every old row, with its old rowid as its seq; each episode keyed in first-write order.
    const migrated = check
      .prepare('SELECT t.seq AS rowid, k.id AS episode_id, t.step, t.body FROM transitions t JOIN episode_keys k ON k.seq = t.episode_seq WHERE t.seq <= ? ORDER BY t.seq')
      .all(oldRows.length);
    expect(migrated).toEqual(oldRows);
    // One key per (episode, 64-step segment), in first-write order: step 100 of ids[2] opened its segment 1.
    expect(check.prepare('SELECT id, segment FROM episode_keys ORDER BY seq').raw().all()).toEqual([
      ...ids.map((id) => [id, 0]),
      [ids[2], 1],
      ['ep-new', 0],
    ]);
    check.close();
  });

  it('upgrades a version-5 store to segment keys: same transitions, same order, same duplicate refusal, same repair', async () => {
    const file = join(tempDir(), 'v5.db');
    const db = new BetterSqlite3(file);
    db.pragma('journal_mode = WAL');
    expect(migrate(db, MIGRATIONS.slice(0, 5))).toEqual([1, 2, 3, 4, 5]);
    // Written as version 5 wrote them: one key per episode at its first transition, rows in write order,
    // episodes interleaved, longer than a segment (64 steps), each round's steps out of order.
    const ids = ['ep_f3a1:1', 'ep_05c9:1', 'ep_9b7e:1', 'deleted-later'];
    const lengths = [200, 64, 130, 70];
    const written = new Map<string, number[]>(ids.map((id) => [id, []]));
    const newKey = db.prepare('INSERT INTO episode_keys (id) VALUES (?)');
    const keyOf = (id: string) => db.prepare('SELECT seq FROM episode_keys WHERE id = ?').pluck().get(id) as number | undefined;
    const insert = db.prepare('INSERT INTO transitions (episode_seq, step, body) VALUES (?, ?, ?)');
    db.transaction(() => {
      for (let round = 0; round < 200; round++) {
        for (const [i, id] of ids.entries()) {
          if (round >= lengths[i]!) continue;
          const step = round % 2 === 0 ? round + 1 : round - 1; // 1, 0, 3, 2, ...
          if (step >= lengths[i]!) continue;
          const key = keyOf(id) ?? Number(newKey.run(id).lastInsertRowid);
          insert.run(key, step, canonicalize(makeTransition(id, step)));
          written.get(id)!.push(step);
        }
      }
      // A deleted episode's key stays in version 5, with no transitions.
      db.prepare('DELETE FROM transitions WHERE episode_seq = ?').run(keyOf('deleted-later'));
      // The running record of ids[0] lags its transitions (a crash between the two writes).
      const lagging = makeEpisode(ids[0]!, 'task-1', { runId: 'run-1', steps: 10 });
      db.prepare('INSERT INTO episodes (id, task_id, run_id, status, steps, created_at, updated_at, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)').run(
        lagging.id, lagging.taskId, lagging.runId, lagging.status, lagging.steps, lagging.createdAt, lagging.updatedAt, canonicalize(lagging),
      );
    })();
    const read = (d: BetterSqlite3.Database, id: string) =>
      d.prepare('SELECT t.body FROM episode_keys k JOIN transitions t ON t.episode_seq = k.seq WHERE k.id = ? ORDER BY t.step').pluck().all(id) as string[];
    const before = new Map(ids.map((id) => [id, read(db, id)]));
    const seqsBefore = db.prepare('SELECT t.seq, k.id, t.step FROM transitions t JOIN episode_keys k ON k.seq = t.episode_seq ORDER BY t.seq').raw().all();
    db.close();

    const store = createSqliteStore(file, { now: systemClock });
    expect((await store.getInfo()).schemaVersion).toBe(SCHEMA_VERSION);
    for (const id of ids) {
      const steps = [...written.get(id)!].sort((a, b) => a - b);
      const expected = id === 'deleted-later' ? [] : steps.map((step) => makeTransition(id, step));
      expect(await store.listTransitions(id)).toEqual(expected);
      expect((await store.listTransitions(id)).map((t) => canonicalize(t))).toEqual(before.get(id));
    }
    expect(await store.checkIntegrity()).toEqual([]);
    // The repair of a lagging record counts every segment's transitions.
    const report = await store.recover({ isLive: () => true, now: '2026-01-02T00:00:00.000Z' });
    expect(report.episodes).toEqual([{ id: ids[0], steps: { from: 10, to: 200 }, status: { from: 'running', to: 'running' } }]);
    expect((await store.getEpisode(ids[0]!))?.steps).toBe(200);
    // A step stored before the upgrade, in any segment, is still refused with the same typed error.
    for (const step of [0, 63, 64, 150, 199]) {
      const error = await rejection(store.appendTransitions([makeTransition(ids[1]!, 64), makeTransition(ids[0]!, step)]));
      expect(error.code).toBe('STORE_CONFLICT');
      expect(error.details).toMatchObject({ conflict: 'duplicate_step', episodeId: ids[0], step });
    }
    expect(await store.listTransitions(ids[1]!)).toHaveLength(64);
    // New writes continue old episodes (in an old segment and a new one) and a deleted one starts over.
    await store.appendTransitions([makeTransition(ids[2]!, 130), makeTransition(ids[1]!, 64), makeTransition('deleted-later', 5)]);
    expect((await store.listTransitions(ids[2]!)).map((t) => t.step)).toEqual(Array.from({ length: 131 }, (_, i) => i));
    expect((await store.listTransitions(ids[1]!)).map((t) => t.step)).toEqual(Array.from({ length: 65 }, (_, i) => i));
    expect(await store.listTransitions('deleted-later')).toEqual([makeTransition('deleted-later', 5)]);
    await store.close();

    const check = new BetterSqlite3(file, { readonly: true });
    // Every old row keeps its seq; each key is one (episode, segment), given in first-write order.
    expect(check.prepare('SELECT t.seq, k.id, t.step FROM transitions t JOIN episode_keys k ON k.seq = t.episode_seq WHERE t.seq <= ? ORDER BY t.seq').raw().all((seqsBefore.at(-1) as unknown[])[0])).toEqual(seqsBefore);
    expect(check.prepare('SELECT count(*) FROM transitions t JOIN episode_keys k ON k.seq = t.episode_seq WHERE t.step / 64 <> k.segment').pluck().get()).toBe(0);
    expect(check.prepare('SELECT id, segment FROM episode_keys ORDER BY seq').raw().all()).toEqual([
      [ids[0], 0], [ids[1], 0], [ids[2], 0], [ids[0], 1], [ids[2], 1], [ids[0], 2], [ids[2], 2], [ids[0], 3],
      // After the upgrade: ids[1]'s second segment, and the deleted episode's new key.
      [ids[1], 1], ['deleted-later', 0],
    ]);
    check.close();
  });

  it('rolls a failing migration back whole, leaving the previous version', () => {
    const file = join(tempDir(), 'm.db');
    const db = new BetterSqlite3(file);
    migrate(db);
    const broken: Migration = {
      version: SCHEMA_VERSION + 1,
      description: 'test: fails half-way',
      sql: `CREATE TABLE half (n INTEGER); INSERT INTO no_such_table VALUES (1);`,
    };
    expect(() => migrate(db, [...MIGRATIONS, broken])).toThrow(
      expect.objectContaining({ code: 'STORE_FAILED', message: expect.stringContaining('rolled back') }),
    );
    expect(userVersion(db)).toBe(SCHEMA_VERSION);
    expect(db.prepare(`SELECT count(*) FROM sqlite_schema WHERE name = 'half'`).pluck().get()).toBe(0);
    db.close();
  });

  it('refuses a database from a newer EnvHarness, saying so', async () => {
    const file = join(tempDir(), 'future.db');
    await createSqliteStore(file, { now: systemClock }).close();
    const db = new BetterSqlite3(file);
    db.pragma(`user_version = ${SCHEMA_VERSION + 5}`);
    db.close();
    const open = () => createSqliteStore(file, { now: systemClock });
    expect(open).toThrow(expect.objectContaining({ code: 'STORE_FAILED', message: expect.stringContaining('newer than this EnvHarness supports') }));
    expect(open).toThrow(expect.objectContaining({ details: expect.objectContaining({ schemaVersion: SCHEMA_VERSION + 5, supported: SCHEMA_VERSION }) }));
  });
});

describe('sqlite store: batch keys (schema version 7)', () => {
  it('upgrades a version-6 store: every task keeps its batch, seq and review, and the watermark is unchanged', async () => {
    const file = join(tempDir(), 'v6.db');
    const db = new BetterSqlite3(file);
    db.pragma('journal_mode = WAL');
    expect(migrate(db, MIGRATIONS.slice(0, 6))).toEqual([1, 2, 3, 4, 5, 6]);
    // Written as version 6 wrote them: the batch id in each row, tasks of two batches interleaved (one of
    // them an import's, with no batches row), a task held for review.
    const stored = makeBatch([makeTask(1), makeTask(2), makeTask(3)]);
    const tasks = [makeTask(1), makeTask(4), makeTask(2), makeTask(3), makeTask(5)].map((task, i) => ({
      ...task,
      seq: 10 + i * 3,
      split: 'dynamic' as const,
      status: i === 2 ? ('pending_review' as const) : ('active' as const),
      batchId: [0, 2, 3].includes(i) ? stored.manifest.id : 'imported-batch',
    }));
    db.transaction(() => {
      db.prepare('INSERT INTO batches (id, split, manifest) VALUES (?, ?, ?)').run(stored.manifest.id, 'dynamic', canonicalize(stored.manifest));
      const insert = db.prepare('INSERT INTO tasks (seq, id, template, domain, task_type, level, split, status, batch_id, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
      for (const t of tasks) insert.run(t.seq, t.id, t.template, t.domain, t.taskType, t.level, t.split, t.status, t.batchId, taskBody(t));
      db.prepare("INSERT INTO reviews (task_id, batch_id, status) VALUES (?, ?, 'pending')").run(tasks[2]!.id, stored.manifest.id);
      db.prepare('UPDATE task_watermark SET rows = ? WHERE id = 0').run(tasks.length);
    })();
    db.close();

    const store = createSqliteStore(file, { now: systemClock });
    expect((await store.getInfo()).schemaVersion).toBe(SCHEMA_VERSION);
    expect(await store.taskWatermark()).toEqual({ rows: tasks.length, changes: 0 });
    expect(await store.listTasks()).toEqual(tasks);
    for (const batchId of [stored.manifest.id, 'imported-batch', 'no-such-batch']) {
      const mine = tasks.filter((t) => t.batchId === batchId);
      expect(await store.listTasks({ batchId }), batchId).toEqual(mine);
      expect(await store.countTasks({ batchId }), batchId).toBe(mine.length);
      expect(await store.listTasks({ batchId, status: 'active', afterSeq: 10, limit: 1 }), batchId).toEqual(mine.filter((t) => t.status === 'active' && t.seq > 10).slice(0, 1));
      expect((await store.listTaskIndex({ batchId })).map((t) => t.id), batchId).toEqual(mine.map((t) => t.id));
    }
    expect(await store.getTask(tasks[1]!.id)).toEqual(tasks[1]);
    // The watermark's update trigger is back: a review decision counts as a change.
    await store.decideReview({ taskId: tasks[2]!.id, decision: 'approved', reviewer: 'r', note: '', at: '2026-01-01T00:00:00.000Z' });
    expect(await store.taskWatermark()).toEqual({ rows: tasks.length, changes: 1 });
    // A later batch and an import of an existing batch's task get their keys.
    const later = makeBatch([makeTask(40), makeTask(41)], { seed: 4 });
    await store.saveBatch(later);
    expect((await store.listTasks({ batchId: later.manifest.id })).map((t) => t.id)).toEqual(later.tasks.map((t) => t.id));
    const imported = { ...makeTask(42), seq: 100, split: 'dynamic' as const, status: 'active' as const, batchId: 'imported-batch' };
    await store.putTasks([imported]);
    expect((await store.listTasks({ batchId: 'imported-batch' })).map((t) => t.id)).toEqual([tasks[1]!.id, tasks[4]!.id, imported.id]);
    await store.close();
    const check = new BetterSqlite3(file, { readonly: true });
    expect(check.prepare('SELECT id FROM batch_keys ORDER BY seq').pluck().all()).toEqual([stored.manifest.id, 'imported-batch', later.manifest.id]);
    check.close();
  });
});

describe('sqlite store: episodes by task through a short key (schema version 8)', () => {
  // Ids whose first 8 characters are the same hex (in either case), ids that are not hex, short and empty ones.
  const hex = 'deadbeef';
  const taskIds = [`${hex}${'0'.repeat(56)}`, `${hex}${'1'.repeat(56)}`, `${hex.toUpperCase()}${'0'.repeat(56)}`, 'task-a', 'task-b', 'ab', 'abc', ''];

  it('upgrades a version-7 store: every episode lists by its own task only, in order, through the new index', async () => {
    const file = join(tempDir(), 'v7.db');
    const db = new BetterSqlite3(file);
    db.pragma('journal_mode = WAL');
    expect(migrate(db, MIGRATIONS.slice(0, 7))).toEqual([1, 2, 3, 4, 5, 6, 7]);
    // Written as version 7 wrote them, interleaved over the tasks.
    const episodes = Array.from({ length: 24 }, (_, i) => makeEpisode(`e${i}`, taskIds[(i * 5) % taskIds.length]!, { runId: i % 2 === 0 ? 'even' : 'odd', steps: i }));
    db.transaction(() => {
      const insert = db.prepare('INSERT INTO episodes (id, task_id, run_id, status, steps, created_at, updated_at, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
      for (const e of episodes) insert.run(e.id, e.taskId, e.runId ?? null, e.status, e.steps, e.createdAt, e.updatedAt, canonicalize(e));
    })();
    db.close();

    const store = createSqliteStore(file, { now: systemClock });
    expect((await store.getInfo()).schemaVersion).toBe(SCHEMA_VERSION);
    // One written after the upgrade, for a task that has older ones.
    const later = makeEpisode('later', taskIds[1]!, { runId: 'odd' });
    await store.saveEpisode(later);
    const all = [...episodes, later];
    for (const taskId of [...taskIds, `${hex}${'2'.repeat(56)}`, 'no-such-task']) {
      expect(await store.listEpisodes({ taskId }), taskId).toEqual(all.filter((e) => e.taskId === taskId));
      expect(await store.listEpisodes({ taskId, runId: 'odd', limit: 2 }), taskId).toEqual(all.filter((e) => e.taskId === taskId && e.runId === 'odd').slice(0, 2));
    }
    await store.close();
    const check = new BetterSqlite3(file, { readonly: true });
    const plan = check
      .prepare(`EXPLAIN QUERY PLAN SELECT body FROM episodes WHERE ${TRANSITION_SQL.episodeTaskKey} = ${TRANSITION_SQL.episodeTaskKeyOf} AND task_id = ? ORDER BY seq`)
      .all(taskIds[0], taskIds[0], taskIds[0]) as Array<{ detail: string }>;
    expect(plan.map((p) => p.detail).join('; ')).toContain('USING INDEX episodes_by_task');
    // The index holds the short keys: 4 bytes for a hex id (fewer for a shorter one), the id itself otherwise.
    const keys = check.prepare('SELECT DISTINCT typeof(coalesce(unhex(substr(task_id, 1, 8)), task_id)) || length(coalesce(unhex(substr(task_id, 1, 8)), task_id)) FROM episodes INDEXED BY episodes_by_task ORDER BY 1').pluck().all();
    expect(keys).toEqual(['blob0', 'blob1', 'blob4', 'text3', 'text6']);
    check.close();
  });
});

describe('sqlite store: segment keys (a key per 64 steps of an episode)', () => {
  const stepsOf = (id: string, list: readonly number[]) => list.map((step) => makeTransition(id, step));
  const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

  for (const via of ['connection', 'writer thread'] as const) {
    it(`keeps long episodes written out of order and refuses a duplicate in any segment (${via})`, async () => {
      const file = join(tempDir(), 'segments.db');
      const store = createSqliteStore(file, { now: systemClock });
      const other = createSqliteStore(file, { now: systemClock });
      try {
        const append = via === 'connection'
          ? (t: readonly ReturnType<typeof makeTransition>[]) => store.appendTransitions(t)
          : (() => {
              let writer = store.openTransitionWriter();
              // A writer refuses every call after a failed one: a fresh writer per call keeps the test's calls independent.
              return async (t: readonly ReturnType<typeof makeTransition>[]) => {
                try {
                  await writer.appendTransitions(t);
                } finally {
                  writer = store.openTransitionWriter();
                }
              };
            })();
        // Segments reached in every order: the last first, a call spanning three, one step at a time.
        await append(stepsOf('long', range(150, 200)));
        await append(stepsOf('long', range(0, 140)));
        for (const step of range(140, 150)) await append([makeTransition('long', step), makeTransition(`short-${step}`, 0)]);
        expect(await store.listTransitions('long')).toEqual(stepsOf('long', range(0, 200)));
        // A duplicate is refused whichever segment it is in, and whichever connection wrote the original.
        await other.appendTransitions(stepsOf('long', [200, 256]));
        for (const step of [0, 63, 64, 127, 128, 199, 200, 256]) {
          const error = await rejection(append([makeTransition('fresh', 0), makeTransition('long', step)]));
          expect(error.code).toBe('STORE_CONFLICT');
          expect(error.details).toMatchObject({ conflict: 'duplicate_step', episodeId: 'long', step });
        }
        // Within one call, too, across a segment boundary, and nothing of the call is written.
        const within = await rejection(append(stepsOf('twice', [70, 5, 64, 70])));
        expect(within.details).toMatchObject({ conflict: 'duplicate_step', episodeId: 'twice', step: 70 });
        expect(await store.listTransitions('twice')).toEqual([]);
        expect(await store.listTransitions('fresh')).toEqual([]);
        expect(await other.listTransitions('long')).toEqual(stepsOf('long', [...range(0, 201), 256]));
      } finally {
        await other.close();
        await store.close();
      }
      const check = new BetterSqlite3(file, { readonly: true });
      // Each key is one (episode, step / 64) and holds only that segment's steps.
      expect(check.prepare("SELECT segment FROM episode_keys WHERE id = 'long' ORDER BY seq").pluck().all()).toEqual([2, 3, 0, 1, 4]);
      expect(check.prepare('SELECT count(*) FROM transitions t JOIN episode_keys k ON k.seq = t.episode_seq WHERE t.step / 64 <> k.segment').pluck().get()).toBe(0);
      check.close();
    });
  }

  it('repairs a lagging record of a long episode from all its segments, and deletes them all', async () => {
    const store = createSqliteStore(join(tempDir(), 'lag.db'), { now: systemClock });
    try {
      const episode = makeEpisode('long', 'task-1', { runId: 'run-1', steps: 100 });
      await store.appendTransitions(stepsOf('long', range(0, 100)), { episodes: [episode] });
      await store.appendTransitions(stepsOf('long', range(100, 150)));
      const report = await store.recover({ isLive: () => true, now: '2026-01-02T00:00:00.000Z' });
      expect(report.episodes).toEqual([{ id: 'long', steps: { from: 100, to: 150 }, status: { from: 'running', to: 'running' } }]);
      await store.applyWrites([{ op: 'discardEpisodes', ids: ['long'] }]);
      expect(await store.listTransitions('long')).toEqual([]);
      // Its keys stay; writing the episode again reuses them.
      await store.appendTransitions(stepsOf('long', [0, 149]));
      expect(await store.listTransitions('long')).toEqual(stepsOf('long', [0, 149]));
    } finally {
      await store.close();
    }
  });
});

describe('sqlite store: durability across reopen', () => {
  it('keeps every kind of record after close and reopen', async () => {
    const file = join(tempDir(), 'reopen.db');
    const tasks = [makeTask(1), makeTask(2)];
    const batch = makeBatch(tasks);
    const episode = makeEpisode('ep-1', tasks[0]!.id, { steps: 2 });
    const transitions = [makeTransition('ep-1', 0), makeTransition('ep-1', 1)];
    const snapshot = makeSnapshot('s');
    const run = makeRun('run-1');
    const events = [makeRunEvent('run-1', 0)];

    const writer = createSqliteStore(file, { now: systemClock });
    await writer.saveBatch(batch, { review: [tasks[1]!.id] });
    await writer.decideReview({ taskId: tasks[1]!.id, decision: 'approved', reviewer: 'ana', note: 'ok', at: '2026-01-03T00:00:00.000Z' });
    await writer.saveEpisode(episode);
    await writer.appendTransitions(transitions);
    await writer.saveSnapshot(snapshot);
    await writer.saveRun(run);
    await writer.appendRunEvents(events);
    await writer.setMeta('seed', 42);
    const before = {
      tasks: await writer.listTasks(),
      reviews: await writer.listReviews(),
      audit: await writer.listReviewAudit(),
    };
    await writer.close();

    const reader = createSqliteStore(file, { now: systemClock });
    expect(await reader.getBatch(batch.manifest.id)).toEqual(batch.manifest);
    expect(await reader.listGenerationLog()).toEqual(batch.log);
    expect(await reader.listTasks()).toEqual(before.tasks);
    expect(await reader.listReviews()).toEqual(before.reviews);
    expect(await reader.listReviewAudit()).toEqual(before.audit);
    expect(await reader.getEpisode('ep-1')).toEqual(episode);
    expect(await reader.listTransitions('ep-1')).toEqual(transitions);
    expect(await reader.getSnapshot(snapshot.id)).toEqual(snapshot);
    expect(await reader.getRun('run-1')).toEqual(run);
    expect(await reader.listRunEvents('run-1')).toEqual(events);
    expect(await reader.getMeta('seed')).toBe(42);
    expect(await reader.checkIntegrity()).toEqual([]);
    await reader.close();
  });

  it('shares one file between two open stores (as two processes would)', async () => {
    const file = join(tempDir(), 'shared.db');
    const a = createSqliteStore(file, { now: systemClock });
    const b = createSqliteStore(file, { now: systemClock });
    await a.appendTransitions([makeTransition('ep-1', 0)]);
    await b.appendTransitions([makeTransition('ep-1', 1)]);
    expect((await a.listTransitions('ep-1')).map((t) => t.step)).toEqual([0, 1]);
    expect((await rejection(b.appendTransitions([makeTransition('ep-1', 0)]))).details).toMatchObject({ episodeId: 'ep-1', step: 0 });
    await a.close();
    await b.close();
  });
});

describe('sqlite store: transitions with their episodes', () => {
  it('saves episode records in the same transaction as the transitions', async () => {
    const store = createSqliteStore(':memory:', { now: systemClock });
    const one = makeEpisode('ep-1', 'task-1');
    const two = makeEpisode('ep-2', 'task-2');
    await store.appendTransitions([makeTransition('ep-1', 0), makeTransition('ep-1', 1), makeTransition('ep-2', 0)], {
      episodes: [{ ...one, steps: 2 }, { ...two, steps: 1 }],
    });
    expect((await store.listEpisodes()).map((e) => [e.id, e.steps])).toEqual([['ep-1', 2], ['ep-2', 1]]);

    const error = await rejection(
      store.appendTransitions([makeTransition('ep-2', 1), makeTransition('ep-1', 2), makeTransition('ep-1', 1)], {
        episodes: [{ ...one, steps: 4 }, { ...two, steps: 2 }],
      }),
    );
    expect(error.details).toMatchObject({ episodeId: 'ep-1', step: 1 });
    expect((await store.listEpisodes()).map((e) => [e.id, e.steps])).toEqual([['ep-1', 2], ['ep-2', 1]]);
    expect(await store.listTransitions('ep-1')).toHaveLength(2);
    expect(await store.listTransitions('ep-2')).toHaveLength(1);

    await store.appendTransitions([], { episodes: [{ ...one, status: 'closed' }] });
    expect((await store.getEpisode('ep-1'))?.status).toBe('closed');
    await store.close();
  });
});

describe('sqlite store: pages per group commit', () => {
  it('writes the transitions of concurrent episodes onto shared pages (few WAL frames per commit)', async () => {
    // The server's pattern: each commit carries one step of each of 8 running episodes (hash-like ids,
    // staggered lengths, new episodes replacing finished ones) and saves their records.
    const file = join(tempDir(), 'pages.db');
    const store = createSqliteStore(file, { now: systemClock, checkpoints: { afterWrites: Infinity } });
    const slots = Array.from({ length: 8 }, (_, k) => ({ n: k, steps: 0, length: 24 + 5 * k }));
    const idOf = (n: number) => `ep_${digest(['episode', n]).slice(0, 32)}:1`;
    let next = slots.length;
    const commit = async () => {
      const transitions = [];
      const episodes = [];
      for (const slot of slots) {
        if (slot.steps === slot.length) Object.assign(slot, { n: next++, steps: 0 });
        transitions.push(makeTransition(idOf(slot.n), slot.steps));
        slot.steps += 1;
        episodes.push(makeEpisode(idOf(slot.n), `task-${slot.n % 3}`, { runId: 'run-1', steps: slot.steps }));
      }
      await store.appendTransitions(transitions, { episodes });
    };
    for (let i = 0; i < 400; i++) await commit();
    const other = new BetterSqlite3(file);
    other.pragma('wal_checkpoint(TRUNCATE)');
    expect(statSync(`${file}-wal`).size).toBe(0);
    const commits = 40;
    for (let i = 0; i < commits; i++) await commit();
    // A frame is one page and its 24-byte header: the pages a commit touched, whatever their size.
    const pageSize = other.pragma('page_size', { simple: true }) as number;
    const framesPerCommit = (statSync(`${file}-wal`).size - 32) / (pageSize + 24) / commits;
    other.close();
    // ~7.6 frames; keyed by episode id (schema version 1) the same commits wrote ~18.
    expect(framesPerCommit).toBeGreaterThan(2);
    expect(framesPerCommit).toBeLessThan(11);
    for (const slot of slots) expect(await store.listTransitions(idOf(slot.n))).toHaveLength(slot.steps);
    await store.close();
  });
});

describe('sqlite store: page size', () => {
  const pageSize = (file: string) => {
    const db = new BetterSqlite3(file, { readonly: true });
    try {
      return db.pragma('page_size', { simple: true }) as number;
    } finally {
      db.close();
    }
  };

  it.each([4096, 8192, 16384])('opens a store created with %i-byte pages as it is: keeps its page size, rows and writes', async (size) => {
    // A store written by a version that created its files with other pages: made here the same way, by
    // setting the page size before the store creates its tables.
    const file = join(tempDir(), `old-${size}.db`);
    const raw = new BetterSqlite3(file);
    raw.pragma(`page_size = ${size}`);
    raw.pragma('journal_mode = WAL');
    raw.close();
    const old = createSqliteStore(file, { now: systemClock });
    await old.saveBatch(makeBatch([makeTask(1), makeTask(2)]));
    await old.appendTransitions([makeTransition('ep-1', 0), makeTransition('ep-1', 1)]);
    await old.close();
    expect(pageSize(file)).toBe(size);

    const store = createSqliteStore(file, { now: systemClock, checkpoints: { afterWrites: 1, intervalMs: 10 } });
    for (let step = 2; step < 40; step++) await store.appendTransitions([makeTransition('ep-1', step)]);
    expect((await store.getInfo()).checkpoints).toBe('background');
    expect(await store.countTasks()).toBe(2);
    expect((await store.listTransitions('ep-1')).map((t) => t.step)).toEqual(Array.from({ length: 40 }, (_, i) => i));
    expect(await store.checkIntegrity()).toEqual([]);
    await store.close();
    expect(pageSize(file)).toBe(size);
  });
});

describe('sqlite store: errors', () => {
  it('maps driver failures to STORE_FAILED naming the operation, and writes nothing', async () => {
    const store = createSqliteStore(':memory:', { now: systemClock });
    const fractional = { ...makeTask(1), level: 1.5 };
    const error = await rejection(store.saveBatch(makeBatch([makeTask(2), fractional])));
    expect(error.code).toBe('STORE_FAILED');
    expect(error.message).toContain('saveBatch');
    expect(error.details).toMatchObject({ operation: 'saveBatch', sqliteCode: expect.stringMatching(/^SQLITE_/) });
    expect(error.cause).toBeInstanceOf(Error);
    expect(await store.countTasks()).toBe(0);
    expect(await store.listBatches()).toEqual([]);
    await store.close();
  });

  it('refuses values without a canonical JSON form, and writes nothing', async () => {
    const store = createSqliteStore(':memory:', { now: systemClock });
    const error = await rejection(store.appendTransitions([makeTransition('ep-1', 0), { ...makeTransition('ep-1', 1), reward: Number.NaN }]));
    expect(error.code).toBe('PARAMS_INVALID');
    expect(await store.listTransitions('ep-1')).toEqual([]);
    await store.close();
  });

  it('refuses an invalid limit with PARAMS_INVALID', async () => {
    const store = createSqliteStore(':memory:', { now: systemClock });
    expect((await rejection(store.listTasks({ limit: -1 }))).code).toBe('PARAMS_INVALID');
    expect((await rejection(store.listTaskIndex({ afterSeq: 1.5 }))).code).toBe('PARAMS_INVALID');
    await store.close();
  });
});

describe('sqlite store: checkpoints', () => {
  it('moves WAL checkpoints to a worker thread once busy; a close still leaves no WAL and every row', async () => {
    const file = join(tempDir(), 'busy.db');
    const store = createSqliteStore(file, { now: systemClock });
    expect((await store.getInfo()).checkpoints).toBe('inline');
    const before = statSync(file).size;
    const n = CHECKPOINTER_AFTER_WRITES + 64;
    for (let step = 1; step <= n; step++) await store.appendTransitions([makeTransition('ep-busy', step)]);
    expect((await store.getInfo()).checkpoints).toBe('background');
    // Far below the writer's own fallback threshold: only the worker can have copied pages into the file.
    for (let i = 0; i < 500 && statSync(file).size === before; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(statSync(file).size).toBeGreaterThan(before);
    await store.close();
    expect(existsSync(`${file}-wal`)).toBe(false);
    const again = createSqliteStore(file, { now: systemClock });
    expect((await again.listTransitions('ep-busy')).map((t) => t.step)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    expect(await again.checkIntegrity()).toEqual([]);
    await again.close();
  });

  it('moves them sooner for a bulk writer on the store connection (a mark of WAL after a second write), not for one big write or the writer thread', async () => {
    const file = join(tempDir(), 'bulk.db');
    const store = createSqliteStore(file, { now: systemClock });
    // ~5 MB in one write: past the inline mark (4,096,000 bytes) at once, as one big saveBatch.
    const bigCall = (episode: string) => Array.from({ length: 11_000 }, (_, step) => makeTransition(episode, step));
    await store.appendTransitions(bigCall('ep-big'));
    expect(statSync(`${file}-wal`).size).toBeGreaterThanOrEqual(INLINE_AUTOCHECKPOINT_BYTES);
    expect((await store.getInfo()).checkpoints).toBe('inline');
    // A second write finds the WAL at the mark again: far fewer than CHECKPOINTER_AFTER_WRITES writes.
    await store.appendTransitions([makeTransition('ep-small', 0)]);
    expect((await store.getInfo()).checkpoints).toBe('background');
    await store.close();

    // The writer thread's commits checkpoint off the event loop already: the same writes through it keep the count rule.
    const threadedFile = join(tempDir(), 'threaded.db');
    const threaded = createSqliteStore(threadedFile, { now: systemClock });
    const writer = threaded.openTransitionWriter();
    await writer.appendTransitions(bigCall('ep-big'));
    await writer.appendTransitions([makeTransition('ep-small', 0)]);
    expect(statSync(`${threadedFile}-wal`).size).toBeGreaterThanOrEqual(INLINE_AUTOCHECKPOINT_BYTES);
    expect((await threaded.getInfo()).checkpoints).toBe('inline');
    await threaded.close();

    // Small writes that stay under the mark keep the count rule.
    const quiet = createSqliteStore(join(tempDir(), 'quiet.db'), { now: systemClock });
    for (let step = 0; step < 20; step++) await quiet.appendTransitions([makeTransition('ep-quiet', step)]);
    expect((await quiet.getInfo()).checkpoints).toBe('inline');
    await quiet.close();
  });

  it('keeps checkpoints inline for an in-memory store', async () => {
    const store = createSqliteStore(':memory:', { now: systemClock });
    for (let step = 1; step <= CHECKPOINTER_AFTER_WRITES + 1; step++) await store.appendTransitions([makeTransition('ep-mem', step)]);
    expect((await store.getInfo()).checkpoints).toBe('inline');
    await store.close();
  });
});

describe('sqlite store: saveBatch task rows in groups', () => {
  // 70 tasks: two full groups of 32 rows per statement, then 6 rows one by one.
  const tasks = Array.from({ length: 70 }, (_, i) => makeTask(1_000 + i));

  it('stores every row in batch order with consecutive seqs, its review items and its log', async () => {
    const store = createSqliteStore(':memory:', { now: systemClock });
    await store.saveBatch(makeBatch([makeTask(1)], { seed: 1 }));
    const batch = makeBatch(tasks);
    const review = [tasks[3]!.id, tasks[31]!.id, tasks[32]!.id, tasks[66]!.id];
    await store.saveBatch(batch, { review });
    const stored = await store.listTasks({ batchId: batch.manifest.id });
    expect(stored.map((t) => t.id)).toEqual(tasks.map((t) => t.id));
    expect(stored.map((t) => t.seq)).toEqual(tasks.map((_, k) => stored[0]!.seq + k));
    expect(stored.filter((t) => t.status === 'pending_review').map((t) => t.id)).toEqual(review);
    expect((await store.listReviews('pending')).map((r) => r.taskId)).toEqual(review);
    expect(await store.listGenerationLog({ batchId: batch.manifest.id })).toEqual(batch.log);
    await store.close();
  });

  it('names a task already stored that falls in a group, and writes nothing of the batch', async () => {
    const store = createSqliteStore(':memory:', { now: systemClock });
    await store.saveBatch(makeBatch([tasks[40]!], { seed: 1 }));
    const clash = makeBatch(tasks);
    const error = await rejection(store.saveBatch(clash));
    expect(error.code).toBe('STORE_CONFLICT');
    expect(error.details).toMatchObject({ conflict: 'task_exists', taskId: tasks[40]!.id });
    expect(await store.getBatch(clash.manifest.id)).toBeUndefined();
    expect(await store.countTasks()).toBe(1);
    // The failed group rolled its transaction back whole: the connection writes on as before.
    expect(await store.taskWatermark()).toEqual({ rows: 1, changes: 0 });
    await store.saveBatch(makeBatch(tasks.slice(0, 40)));
    expect(await store.countTasks()).toBe(41);
    expect(await store.taskWatermark()).toEqual({ rows: 41, changes: 0 });
    await store.close();
  });

  it('names a task listed twice within one group', async () => {
    const store = createSqliteStore(':memory:', { now: systemClock });
    const twice = [...tasks.slice(0, 10), tasks[4]!, ...tasks.slice(10, 40)];
    const error = await rejection(store.saveBatch(makeBatch(twice)));
    expect(error.code).toBe('STORE_CONFLICT');
    expect(error.details).toMatchObject({ taskId: tasks[4]!.id });
    expect(await store.countTasks()).toBe(0);
    await store.close();
  });
});
