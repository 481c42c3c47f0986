import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { canonicalize, isEnvHarnessError, type Transition } from '../../core/index.js';
import { makeEpisode, makeTransition } from '../../../test/conformance/store-fixtures.js';
import { createSqliteStore } from './index.js';
import { CallBuffers, WRITER_MAX_IN_FLIGHT } from './transition-writer.js';
import { systemClock } from '../../cli/clock.js';
import { rejectionOf } from './testing.js';

const dirs: string[] = [];
function tempFile(name = 'writer.db'): string {
  const dir = mkdtempSync(join(tmpdir(), 'envharness-writer-'));
  dirs.push(dir);
  return join(dir, name);
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function steps(episodeId: string, from: number, count: number): Transition[] {
  return Array.from({ length: count }, (_, i) => makeTransition(episodeId, from + i));
}

/** Every transition row as stored: episode id, step and the body's bytes. */
function rows(file: string): Array<{ id: string; step: number; body: string }> {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    return db.prepare('SELECT k.id, t.step, t.body FROM transitions t JOIN episode_keys k ON k.seq = t.episode_seq ORDER BY k.id, t.step').all() as Array<{ id: string; step: number; body: string }>;
  } finally {
    db.close();
  }
}

describe('sqlite store: transition writer thread', () => {
  it('commits the same rows and records as appendTransitions, and a resolved call is readable', async () => {
    const [direct, threaded] = [tempFile('direct.db'), tempFile('threaded.db')];
    const a = createSqliteStore(direct, { now: systemClock });
    const b = createSqliteStore(threaded, { now: systemClock });
    const writer = b.openTransitionWriter();
    expect(writer.ordered).toBe(true);
    const calls = [
      { transitions: steps('e1', 0, 3), episodes: [makeEpisode('e1', 't1', { steps: 3 })] },
      { transitions: [...steps('e2', 0, 2), ...steps('e1', 3, 2)], episodes: [makeEpisode('e2', 't1', { steps: 2, runId: 'r1' }), makeEpisode('e1', 't1', { steps: 5, status: 'terminated' })] },
      { transitions: steps('e3', 0, 130), episodes: [] },
    ];
    for (const call of calls) await a.appendTransitions(call.transitions, { episodes: call.episodes });
    for (const call of calls) await writer.appendTransitions(call.transitions, { episodes: call.episodes });
    expect(await b.listTransitions('e1')).toEqual(await a.listTransitions('e1'));
    expect(await b.getEpisode('e1')).toEqual(await a.getEpisode('e1'));
    expect(await b.listEpisodes()).toEqual(await a.listEpisodes());
    await a.close();
    await b.close();
    expect(rows(threaded)).toEqual(rows(direct));
    expect(rows(threaded)).toHaveLength(137);
  });

  it('stores each body as TEXT holding exactly its canonical JSON, whatever its characters, from the writer and from the journal feed', async () => {
    const file = tempFile();
    const store = createSqliteStore(file, { now: systemClock });
    // Two-, three- and four-byte UTF-8, escapes, and a body past one 16-row INSERT chunk.
    const wide = (id: string, step: number): Transition => {
      const t = makeTransition(id, step);
      return { ...t, observation: { kind: 'message', text: `café ☕ 𝄞 "quoted" \\ \u0001 ${'ü'.repeat(step * 40)}` } };
    };
    const written = Array.from({ length: 20 }, (_, i) => wide('writer', i));
    const fed = Array.from({ length: 20 }, (_, i) => wide('journal', i));
    try {
      await store.openTransitionWriter().appendTransitions(written);
      const journal = store.openStepJournal();
      expect(journal).toBeDefined();
      await journal!.appendTransitions(fed);
      await journal!.drain();
    } finally {
      await store.close();
    }
    const db = new BetterSqlite3(file, { readonly: true });
    try {
      const stored = db
        .prepare('SELECT k.id, t.step, t.body, typeof(t.body) AS type FROM transitions t JOIN episode_keys k ON k.seq = t.episode_seq ORDER BY k.id, t.step')
        .all() as Array<{ id: string; step: number; body: string; type: string }>;
      const expected = [...fed, ...written].map((t) => ({ id: t.episodeId, step: t.step, body: canonicalize(t), type: 'text' }));
      expect(stored).toEqual(expected);
    } finally {
      db.close();
    }
  });

  it('reuses a call buffer only once the thread has answered its call', () => {
    const buffers = new CallBuffers();
    const done = new Int32Array(new SharedArrayBuffer(4));
    const first = buffers.take(1000);
    expect(first.buffer).toBeInstanceOf(SharedArrayBuffer);
    buffers.lend(first.subarray(0, 10), done, 0);
    // Call 0 not answered: a new buffer.
    const second = buffers.take(1000);
    expect(second.buffer).not.toBe(first.buffer);
    buffers.lend(second.subarray(0, 10), done, 1);
    Atomics.store(done, 0, 1);
    // Call 0 answered (call 1 not yet): its whole buffer comes back, not the view the call held.
    const third = buffers.take(1000);
    expect(third.buffer).toBe(first.buffer);
    expect(third.length).toBe(first.length);
    // Too small for what is asked: a new one.
    Atomics.store(done, 0, 2);
    expect(buffers.take(1 << 20).buffer).not.toBe(second.buffer);
    expect(buffers.take(1000).buffer).toBe(second.buffer);
    // A call of a thread since replaced, never answered: dropped, and it holds up no later call's buffer.
    const dead = new Int32Array(new SharedArrayBuffer(4));
    const orphan = buffers.take(1000);
    buffers.lend(orphan, dead, 5);
    const fresh = new Int32Array(new SharedArrayBuffer(4));
    const next = buffers.take(1000);
    buffers.lend(next, fresh, 0);
    Atomics.store(fresh, 0, 1);
    expect(buffers.take(1000).buffer).toBe(next.buffer);
    expect(buffers.take(1000).buffer).not.toBe(orphan.buffer);
  });

  it('refuses a duplicate step with STORE_CONFLICT, writes nothing of that call, and refuses every later call of the writer', async () => {
    const store = createSqliteStore(tempFile(), { now: systemClock });
    try {
      const writer = store.openTransitionWriter();
      await writer.appendTransitions(steps('e1', 0, 2));
      const error = await rejectionOf(writer.appendTransitions([makeTransition('e2', 0), makeTransition('e1', 1)], { episodes: [makeEpisode('e2', 't')] }));
      expect(isEnvHarnessError(error) && error.code).toBe('STORE_CONFLICT');
      expect(isEnvHarnessError(error) && error.details).toMatchObject({ conflict: 'duplicate_step', episodeId: 'e1', step: 1 });
      expect(await store.listTransitions('e2')).toEqual([]);
      expect(await store.getEpisode('e2')).toBeUndefined();
      // Nothing after a failed call: the next one is refused and not committed.
      const later = await rejectionOf(writer.appendTransitions(steps('e3', 0, 1)));
      expect(isEnvHarnessError(later) && later.code).toBe('STORE_FAILED');
      expect(await store.listTransitions('e3')).toEqual([]);
      // Another writer of the same store is unaffected.
      await store.openTransitionWriter().appendTransitions(steps('e3', 0, 1));
      expect(await store.listTransitions('e3')).toHaveLength(1);
    } finally {
      await store.close();
    }
  });

  it('rejects with STORE_FAILED when its commit fails (the database is locked past the busy timeout)', async () => {
    const file = tempFile();
    const store = createSqliteStore(file, { now: systemClock, busyTimeoutMs: 0 });
    const other = new BetterSqlite3(file);
    try {
      const writer = store.openTransitionWriter();
      other.prepare('BEGIN IMMEDIATE').run();
      const error = await rejectionOf(writer.appendTransitions(steps('e1', 0, 1)));
      expect(isEnvHarnessError(error) && error.code).toBe('STORE_FAILED');
      expect(isEnvHarnessError(error) && error.details).toMatchObject({ operation: 'appendTransitions', sqliteCode: 'SQLITE_BUSY' });
      other.prepare('ROLLBACK').run();
      expect(await store.listTransitions('e1')).toEqual([]);
    } finally {
      other.close();
      await store.close();
    }
  });

  it('commits every call handed over before close(), without being awaited', async () => {
    const file = tempFile();
    const store = createSqliteStore(file, { now: systemClock });
    const writer = store.openTransitionWriter();
    const pending = Array.from({ length: 40 }, (_, i) => writer.appendTransitions(steps(`e${i}`, 0, 4), { episodes: [makeEpisode(`e${i}`, 't', { steps: 4 })] }));
    await store.close();
    await Promise.all(pending);
    const reopened = createSqliteStore(file, { now: systemClock });
    try {
      expect(await reopened.listEpisodes()).toHaveLength(40);
      expect(await reopened.listTransitions('e39')).toHaveLength(4);
      const after = await rejectionOf(writer.appendTransitions(steps('late', 0, 1)));
      expect(isEnvHarnessError(after) && after.code).toBe('STORE_FAILED');
    } finally {
      await reopened.close();
    }
  });

  it('bounds the calls waiting for the thread: past the bound a caller waits, and every call still commits', async () => {
    const store = createSqliteStore(tempFile(), { now: systemClock });
    try {
      const writer = store.openTransitionWriter();
      // Made in one synchronous burst: more calls than the thread may have waiting.
      const calls = Array.from({ length: WRITER_MAX_IN_FLIGHT * 3 }, (_, i) => writer.appendTransitions(steps('e1', i * 2, 2)));
      await Promise.all(calls);
      expect((await store.listTransitions('e1')).map((t) => t.step)).toEqual(Array.from({ length: WRITER_MAX_IN_FLIGHT * 6 }, (_, i) => i));
    } finally {
      await store.close();
    }
  });

  it("leaves checkpoints to the store's checkpointer thread once it runs: the writer thread's commits copy no WAL back", async () => {
    // Started after the first write, the checkpointer then never ticks here: only an inline (automatic) checkpoint
    // could copy pages into the database file. ~6 MB of transitions cross the inline mark (4,096,000 bytes) once.
    const file = tempFile();
    const store = createSqliteStore(file, { now: systemClock, checkpoints: { afterWrites: 1, intervalMs: 1e9 } });
    const writer = store.openTransitionWriter();
    await writer.appendTransitions(steps('first', 0, 1));
    expect((await store.getInfo()).checkpoints).toBe('background');
    const before = statSync(file).size;
    const wide = (id: string, from: number) => steps(id, from, 100).map((t) => ({ ...t, observation: { kind: 'tool' as const, output: 'x'.repeat(2000) } }));
    for (let i = 0; i < 30; i++) await writer.appendTransitions(wide(`e${i}`, 0));
    expect(statSync(`${file}-wal`).size).toBeGreaterThan(5_000_000);
    expect(statSync(file).size).toBe(before);
    await store.close();
    expect(await createSqliteStore(file, { now: systemClock }).listTransitions('e29').then((t) => t.length)).toBe(100);
  });

  it('on a :memory: store commits during the call, with the same conflict rules', async () => {
    const store = createSqliteStore(':memory:', { now: systemClock });
    try {
      const writer = store.openTransitionWriter();
      const first = writer.appendTransitions(steps('e1', 0, 2));
      expect(await store.listTransitions('e1')).toHaveLength(2);
      await first;
      const error = await rejectionOf(writer.appendTransitions(steps('e1', 1, 1)));
      expect(isEnvHarnessError(error) && error.code).toBe('STORE_CONFLICT');
      expect(isEnvHarnessError(await rejectionOf(writer.appendTransitions(steps('e2', 0, 1))))).toBe(true);
    } finally {
      await store.close();
    }
  });
});
