/** The harness keeps no call-order-dependent caches: what it draws and generates depends on the store, not on when it was opened (issue 15 item 3). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { BatchRequest, Task } from '../core/index.js';
import { math } from '../domains/math/index.js';
import { MinHashIndex, minhashTask } from '../generation/index.js';
import { createHarness, type Harness } from './harness.js';
import { SplitIndex } from './split-index.js';
import { createSqliteStore } from '../storage/sqlite/index.js';
import { createTestDatabase, PG_TEST_URL } from '../../test/support/postgres.js';

const dir = mkdtempSync(join(tmpdir(), 'envharness-order-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const clock = () => '2026-01-01T00:00:00.000Z';
let files = 0;

async function open(file: string): Promise<Harness> {
  const h = await createHarness({ store: file, domains: [math], clock });
  await h.initialize({ seed: 3 });
  return h;
}

const first: BatchRequest = { templates: [{ id: 'math/chain-sum@1' }], levels: [1, 2], count: 40, seed: 1, split: 'dynamic' };
const second: BatchRequest = { templates: [{ id: 'math/chain-sum@1' }, { id: 'math/count-letters@1' }], levels: [1, 2], count: 60, seed: 2, split: 'dynamic', reviewShare: 0.2 };
// The same seed as `second` and more: its first candidates are exact duplicates of stored tasks.
const third: BatchRequest = { templates: [{ id: 'math/chain-sum@1' }, { id: 'math/count-letters@1' }], levels: [1, 2], count: 90, seed: 2, split: 'dynamic' };

async function draws(h: Harness): Promise<string[]> {
  const ids: string[] = [];
  for (let seed = 0; seed < 12; seed++) ids.push((await h.generateTask({ seed })).id);
  return ids;
}

/** Store `one`: a harness open before another one writes; store `two`: the same writes, then a harness opened after. */
async function opensInAnyOrder(one: string, two: string): Promise<void> {
  // Store 1: `early` is open (and has drawn and generated) before `writer` adds a batch and decides a review.
  const early = await open(one);
  const writer = await open(one);
  await early.generate(first);
  const earlyDrawsBefore = await draws(early);
  const batch = await writer.generate(second);
  await writer.decideReview(batch.review[0]!, 'approved', 'ann');
  const earlyDraws = await draws(early);
  const earlyThird = await early.generate(third);

  // Store 2: the same writes, all by one harness, then `late` is opened after them.
  const solo = await open(two);
  await solo.generate(first);
  const soloBatch = await solo.generate(second);
  await solo.decideReview(soloBatch.review[0]!, 'approved', 'ann');
  await solo.close();
  const late = await open(two);
  const lateDraws = await draws(late);
  const lateThird = await late.generate(third);

  // The early harness saw the other's batch and its approval: its draws changed, and equal the late one's.
  expect(earlyDraws).not.toEqual(earlyDrawsBefore);
  expect(earlyDraws).toEqual(lateDraws);
  // And it deduplicated the third batch against the other's tasks exactly as the late harness did.
  expect(earlyThird.manifest).toEqual(lateThird.manifest);
  expect(earlyThird.log).toEqual(lateThird.log);
  expect(earlyThird.log.some((e) => e.gate === 'exact_duplicate')).toBe(true);
  expect(await early.store.listGenerationLog({ batchId: earlyThird.manifest.id })).toEqual(await late.store.listGenerationLog({ batchId: lateThird.manifest.id }));
  await Promise.all([early.close(), writer.close(), late.close()]);
}

describe('order independence', () => {
  it('a harness opened before another one wrote draws and generates exactly like one opened after', async () => {
    await opensInAnyOrder(join(dir, `o${files++}.db`), join(dir, `o${files++}.db`));
  });

  it.runIf(PG_TEST_URL !== undefined)('the same on PostgreSQL', async () => {
    const db = await createTestDatabase('envh_order');
    try {
      await opensInAnyOrder(db.schemaUrl(), db.schemaUrl());
    } finally {
      await db.drop();
    }
  });

  it('evaluating before generating or after gives the same later draws and batches', async () => {
    const agent = (await import('../agents/oracle.js')).createOracleAgent();
    const results: Array<{ draws: string[]; log: unknown }> = [];
    for (const evaluateFirst of [true, false]) {
      const h = await open(join(dir, `o${files++}.db`));
      await h.generate(first);
      if (evaluateFirst) await h.evaluate({ agent, split: 'dynamic' });
      const batch = await h.generate(second);
      if (!evaluateFirst) await h.evaluate({ agent, split: 'dynamic' });
      results.push({ draws: await draws(h), log: batch.log });
      await h.close();
    }
    expect(results[0]).toEqual(results[1]);
  });

  it('takes a batch it stored in from its gate\'s signatures without reading it back, and equals a fresh index', async () => {
    // The dynamic split's rows that listTasks returns: what a split index reads back.
    const inner = createSqliteStore(join(dir, `o${files++}.db`), { now: clock });
    let read = 0;
    const store = new Proxy(inner, {
      get(target, key) {
        if (key === 'listTasks') {
          return async (filter?: Parameters<typeof target.listTasks>[0]) => {
            const tasks = await target.listTasks(filter);
            if (filter?.split === 'dynamic') read += tasks.length;
            return tasks;
          };
        }
        const value = Reflect.get(target, key);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const fresh = async () => {
      const index = new MinHashIndex();
      for (const task of await inner.listTasks({ split: 'dynamic' })) index.add(task);
      return index.toJSON();
    };
    // A stored batch's ids in order and their signatures (what its near-duplicate gate computed).
    const signed = (tasks: Task[]): [string[], MinHashIndex] => {
      const index = new MinHashIndex({ uniqueIds: true });
      for (const task of tasks) index.addSignature(task.id, minhashTask(task));
      return [tasks.map((task) => task.id), index];
    };
    const h = await createHarness({ store, domains: [math], clock });
    await h.initialize({ seed: 3 });
    // Three batches through one harness: the second and third are gated against the ones before, none read back.
    for (const request of [first, second, third]) await h.generate(request);
    expect(read).toBe(0);
    expect(await inner.countTasks({ split: 'dynamic' })).toBeGreaterThan(0);

    // The index taken in that way is the index of the split: a split index given a stored batch's signatures ...
    const splits = new SplitIndex(store);
    await splits.of('dynamic');
    read = 0;
    const fourth = await h.generate({ ...second, seed: 11 });
    await splits.addSaved('dynamic', fourth.manifest.id, ...signed(fourth.tasks));
    expect((await splits.of('dynamic')).toJSON()).toEqual(await fresh());
    expect(read).toBe(0);
    // ... and declines a batch that is not all that was stored since (another one came first): it reads the store then.
    const fifth = await h.generate({ ...second, seed: 12 });
    const sixth = await h.generate({ ...second, seed: 13 });
    await splits.addSaved('dynamic', sixth.manifest.id, ...signed(sixth.tasks));
    expect(read).toBe(0);
    expect((await splits.of('dynamic')).toJSON()).toEqual(await fresh());
    expect(read).toBe(fifth.tasks.length + sixth.tasks.length);
    await h.close();
  });

  it('the split index equals a fresh index of the split, also after a task was stored below its last seq', async () => {
    const file = join(dir, `o${files++}.db`);
    const h = await open(file);
    await h.generate(first);
    const splits = new SplitIndex(h.store);
    const fresh = async () => {
      const index = new MinHashIndex();
      for (const task of await h.store.listTasks({ split: 'dynamic' })) index.add(task);
      return index.toJSON();
    };
    expect((await splits.of('dynamic')).toJSON()).toEqual(await fresh());
    await h.generate(second);
    expect((await splits.of('dynamic')).toJSON()).toEqual(await fresh());
    // A task imported with a seq below the index's last one (as a late commit or an import gives).
    const other = await open(join(dir, `o${files++}.db`));
    const [foreign] = (await other.generate({ ...first, seed: 99, count: 1 })).tasks;
    const stored = await h.store.listTasks({ split: 'dynamic' });
    await h.store.putTasks([{ ...foreign!, split: 'dynamic', status: 'active', batchId: stored[0]!.batchId, seq: 0 }]);
    const after = (await splits.of('dynamic')).toJSON();
    expect(after.entries[0]!.id).toBe(foreign!.id);
    expect(after).toEqual(await fresh());
    await Promise.all([h.close(), other.close()]);
  });
});
