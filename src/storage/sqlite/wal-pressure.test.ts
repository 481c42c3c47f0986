import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { computeTaskId, type JsonValue, type Transition } from '../../core/index.js';
import { makeBatch, makeTask, makeTransition } from '../../../test/conformance/store-fixtures.js';
import { createSqliteStore } from './sqlite-store.js';
import { systemClock } from '../../cli/clock.js';

const dir = mkdtempSync(join(tmpdir(), 'envharness-wal-pressure-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const LIMIT = 4 * 1024 * 1024;
const walBytes = (file: string) => {
  try {
    return statSync(`${file}-wal`).size;
  } catch {
    return 0;
  }
};

/** 20 tasks a batch, each with a body of about 4 KiB: every batch adds about 190 KiB of WAL frames at 4 KiB pages. */
function batch(i: number) {
  const tasks = Array.from({ length: 20 }, (_, k) => {
    const { id: _id, origin, ...content } = makeTask(i * 100 + k);
    const padded = { ...content, params: { ...(content.params as Record<string, JsonValue>), padding: 'x'.repeat(4000) } };
    return { id: computeTaskId(padded), ...padded, origin };
  });
  return makeBatch(tasks, { seed: i, split: 'dynamic' });
}

/** 20 transitions of one episode, each with about 4 KiB of output: about 100 KiB of WAL frames a call. */
function paddedSteps(i: number): Transition[] {
  return Array.from({ length: 20 }, (_, k) => {
    const t = makeTransition('padded', i * 20 + k);
    return { ...t, observation: { kind: 'tool', output: { padding: 'x'.repeat(4000) } } };
  });
}

/**
 * Saves batches (or appends transitions through the writer thread) as fast as it can while a reader holds one read transaction for `pinMs` (nothing can be
 * checkpointed past its snapshot) or until all `writes` are saved, whichever comes first. Returns the largest
 * `-wal` file seen, how many batches were saved while the reader held, and whether the rest went through.
 * The file is created with `pageSize` pages (a store opens a file as it finds it).
 */
async function pinnedWrites(name: string, pageSize: number, walLimitBytes: number, pinMs: number, writes: number, through: 'store' | 'writer' = 'store') {
  const file = join(dir, `${name}-${pageSize}.db`);
  const created = new BetterSqlite3(file);
  created.pragma(`page_size = ${pageSize}`);
  created.pragma('journal_mode = WAL');
  created.close();
  const store = createSqliteStore(file, { now: systemClock, checkpoints: { afterWrites: 1, intervalMs: 10 }, walLimitBytes });
  await store.saveBatch(batch(0));
  // The checkpointer thread starts after the first write; wait for its first report.
  for (let i = 0; i < 500 && (await store.getInfo()).wal === undefined; i++) await new Promise((r) => setTimeout(r, 10));
  expect((await store.getInfo()).wal).toBeDefined();
  const reader = new BetterSqlite3(file, { readonly: true });
  expect(reader.pragma('page_size', { simple: true })).toBe(pageSize);
  reader.exec('BEGIN');
  reader.prepare('SELECT count(*) FROM tasks').get();
  let max = 0;
  let saved = 0;
  let released = false;
  const transitions = store.openTransitionWriter();
  const writer = (async () => {
    for (let i = 1; i <= writes; i++) {
      if (through === 'store') await store.saveBatch(batch(i));
      else await transitions.appendTransitions(paddedSteps(i));
      if (!released) saved = i;
      max = Math.max(max, walBytes(file));
    }
  })();
  // The reader lets go after `pinMs`, or once every write is in (as it does without backpressure).
  await Promise.race([new Promise((r) => setTimeout(r, pinMs)), writer]);
  released = true;
  reader.exec('COMMIT');
  reader.close();
  await writer;
  max = Math.max(max, walBytes(file));
  const total = through === 'store' ? await store.countTasks() : (await store.listTransitions('padded')).length;
  await store.close();
  return { max, savedWhilePinned: saved, total };
}

// The marks are bytes, whatever the page size: a write adds more WAL with bigger pages (each page it touches is
// a whole frame), and the bound holds the same (with 16 KiB pages a batch here adds ~320 KiB, at 4 KiB ~190 KiB).
describe.each([4096, 16384])('WAL backpressure, %i-byte pages', (pageSize) => {
  it('keeps the -wal file under its limit while a reader pins it, and lets writes through once it lets go', { timeout: 60_000 }, async () => {
    const bounded = await pinnedWrites('bounded', pageSize, LIMIT, 1500, 120);
    // Without backpressure the same writes grow the WAL past the limit: the bound is the mechanism's doing.
    const unbounded = await pinnedWrites('unbounded', pageSize, Infinity, 60_000, 120);
    expect(unbounded.max).toBeGreaterThan(LIMIT);
    expect(bounded.max).toBeLessThanOrEqual(LIMIT);
    // Parked, not failed: every batch is stored once the reader is gone.
    expect(bounded.savedWhilePinned).toBeLessThan(120);
    expect(bounded.total).toBe(121 * 20);
  });

  it('holds back appends through the writer thread the same way', { timeout: 60_000 }, async () => {
    const bounded = await pinnedWrites('writer-bounded', pageSize, LIMIT, 1500, 120, 'writer');
    const unbounded = await pinnedWrites('writer-unbounded', pageSize, Infinity, 60_000, 120, 'writer');
    expect(unbounded.max).toBeGreaterThan(LIMIT);
    expect(bounded.max).toBeLessThanOrEqual(LIMIT);
    expect(bounded.savedWhilePinned).toBeLessThan(120);
    expect(bounded.total).toBe(120 * 20);
  });
});

describe('WAL backpressure from the first writes', () => {
  it('starts the checkpointer before its write count once the -wal file passes the TRUNCATE mark', { timeout: 60_000 }, async () => {
    // A quarter of the 4 MiB limit is 1 MiB: about six of these batches, far fewer than the 256 writes that start it otherwise.
    const file = join(dir, 'early.db');
    const store = createSqliteStore(file, { now: systemClock, walLimitBytes: LIMIT });
    await store.saveBatch(batch(0));
    const reader = new BetterSqlite3(file, { readonly: true });
    reader.exec('BEGIN');
    reader.prepare('SELECT count(*) FROM tasks').get();
    let writes = 1;
    while ((await store.getInfo()).checkpoints === 'inline' && writes < 40) await store.saveBatch(batch(writes++));
    reader.exec('COMMIT');
    reader.close();
    expect((await store.getInfo()).checkpoints).toBe('background');
    expect(walBytes(file)).toBeGreaterThanOrEqual(LIMIT / 4);
    expect(writes).toBeLessThan(20);
    await store.close();
  });
});

describe('WAL checkpoints between ticks', () => {
  it('checkpoints as soon as a fast writer takes the file past the TRUNCATE mark, without waiting for the interval', { timeout: 60_000 }, async () => {
    // The interval never comes: only the checkpointer's looks at the file can keep it bounded. 60 batches are about
    // 11 MB of WAL frames, almost three times the limit; with nothing checkpointing, writes would park at 3/4 of it.
    const file = join(dir, 'looks.db');
    const store = createSqliteStore(file, { now: systemClock, checkpoints: { afterWrites: 1, intervalMs: 1e9 }, walLimitBytes: LIMIT });
    let max = 0;
    let shrank = 0;
    let last = 0;
    for (let i = 0; i < 60; i++) {
      await store.saveBatch(batch(i));
      const bytes = walBytes(file);
      if (bytes < last) shrank += 1;
      last = bytes;
      max = Math.max(max, bytes);
    }
    expect(shrank).toBeGreaterThan(0);
    expect(max).toBeLessThanOrEqual(LIMIT);
    expect(await store.countTasks()).toBe(60 * 20);
    await store.close();
  });
});

describe('WAL backpressure: options', () => {
  it('refuses a limit below 1 MiB, naming the option', () => {
    expect(() => createSqliteStore(join(dir, 'small.db'), { now: systemClock, walLimitBytes: 1000 })).toThrow(/walLimitBytes/);
  });
});
