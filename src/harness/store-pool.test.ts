/** The draw pool's sync: one watermark read per draw, and never a missed batch, decision or late task of another harness. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { BatchRequest, Store } from '../core/index.js';
import { math } from '../domains/math/index.js';
import { createHarness, openStore, type Harness } from './harness.js';
import { StorePool } from './store-pool.js';
import { createRng } from '../core/index.js';
import { createTestDatabase, PG_TEST_URL } from '../../test/support/postgres.js';

const dir = mkdtempSync(join(tmpdir(), 'envharness-pool-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const clock = () => '2026-01-01T00:00:00.000Z';
let files = 0;

/** The store with a count of the calls made to each of its methods. */
function counted(store: Store): { store: Store; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const proxy = new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.set(String(key), (calls.get(String(key)) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: proxy, calls };
}

async function open(location: string | Store): Promise<Harness> {
  const h = await createHarness({ store: location, domains: [math], clock, prebuilt: false });
  await h.initialize({ seed: 5 });
  return h;
}

const small: BatchRequest = { templates: [{ id: 'math/chain-sum@1' }], levels: [1], count: 4, seed: 1, split: 'dynamic' };
const large: BatchRequest = { templates: [{ id: 'math/chain-sum@1' }], levels: [1], count: 40, seed: 2, split: 'dynamic', reviewShare: 0.25 };

async function draws(h: Harness): Promise<string[]> {
  const ids: string[] = [];
  for (let seed = 0; seed < 16; seed++) ids.push((await h.generateTask({ seed })).id);
  return ids;
}

/** A harness that has drawn before another wrote draws, after each write, what a harness opened afresh draws. */
async function seesOtherWrites(location: () => string): Promise<void> {
  const url = location();
  const reader = await open(url);
  const writer = await open(url);
  await reader.generate(small);
  const before = await draws(reader);

  // A batch of another harness: 10x the tasks, so most seeded draws land in it.
  const batch = await writer.generate(large);
  const afterBatch = await draws(reader);
  const fresh = await open(url);
  expect(afterBatch).toEqual(await draws(fresh));
  expect(afterBatch).not.toEqual(before);
  expect(afterBatch.filter((id) => batch.tasks.some((t) => t.id === id)).length).toBeGreaterThan(0);

  // A decision of another harness moves a task into the pool.
  await writer.decideReview(batch.review[0]!, 'approved', 'ann');
  const afterReview = await draws(reader);
  expect(afterReview).toEqual(await draws(fresh));
  expect(afterReview).not.toEqual(afterBatch);

  // A task stored below the reader's last seq (an import, a late commit): the row count tells.
  const other = await open(join(dir, `p${files++}.db`));
  const imported = (await other.generate({ ...small, seed: 77, count: 12 })).tasks.map((t, k) => ({
    ...t,
    split: 'dynamic' as const,
    status: 'active' as const,
    batchId: 'imported',
    seq: -100 + k,
  }));
  await writer.store.putTasks(imported);
  const afterImport = await draws(reader);
  const late = await open(url);
  expect(afterImport).toEqual(await draws(late));
  expect(afterImport).not.toEqual(afterReview);
  await Promise.all([reader.close(), writer.close(), fresh.close(), late.close(), other.close()]);
}

describe('store pool sync', () => {
  it('a draw sees a batch, a review decision and a low-seq import of another harness', async () => {
    await seesOtherWrites(() => join(dir, `p${files++}.db`));
  });

  it.runIf(PG_TEST_URL !== undefined)('the same on PostgreSQL', async () => {
    const db = await createTestDatabase('envh_pool');
    try {
      const url = db.schemaUrl();
      await seesOtherWrites(() => url);
    } finally {
      await db.drop();
    }
  });

  it("after its own generates the pool takes the batches from the batches (when it is next read): the same entries, order and draws as a reload, and no index read", async () => {
    const file = join(dir, `p${files++}.db`);
    const { store, calls } = counted(await openStore(file, { clock }));
    const h = await open(store);
    const other = await open(file);
    await h.generate(small);
    await other.generate({ ...small, seed: 9 }); // stored meanwhile by another harness: this generate falls back to a read
    await h.generate({ ...large, seed: 3 });
    calls.clear();
    const batch = await h.generate(large); // a quarter held for review: not in the pool
    expect(batch.review.length).toBeGreaterThan(0);
    await h.generate({ ...small, seed: 11 }); // a second batch taken in before the pool is read
    expect(calls.get('listTaskIndex')).toBeUndefined();
    const pool = (h as unknown as { tasks: StorePool }).tasks.pool;
    const reloaded = new StorePool(await openStore(file, { clock }));
    await reloaded.reload();
    // Every entry, in seq order, and the pool's shape and draws (which depend on the order within a level).
    for (const entry of await store.listTaskIndex()) expect(pool.get(entry.id)).toEqual(reloaded.pool.get(entry.id));
    expect(pool.size()).toBe(reloaded.pool.size());
    expect(pool.slices('dynamic')).toEqual(reloaded.pool.slices('dynamic'));
    const drawn = (p: typeof pool) => Array.from({ length: 64 }, (_, i) => p.draw(createRng([i]), 'math/arithmetic', 1, 'dynamic').id);
    expect(drawn(pool)).toEqual(drawn(reloaded.pool));
    expect(await draws(h)).toEqual(await draws(await open(file)));
    await Promise.all([h.close(), other.close()]);
  });

  it('a draw with nothing new stored reads the watermark and the task, no index or review audit', async () => {
    const file = join(dir, `p${files++}.db`);
    const { store, calls } = counted(await openStore(file, { clock }));
    const h = await open(store);
    await h.generate(small);
    await h.generateTask({ seed: 0 });
    calls.clear();
    for (let seed = 1; seed <= 10; seed++) await h.generateTask({ seed });
    expect(Object.fromEntries(calls)).toEqual({ taskWatermark: 10, getTask: 10 });
    await h.close();
  });
});
