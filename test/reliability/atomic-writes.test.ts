/**
 * Issue 14 §1: every multi-step write is one transaction. Each failure below is real (a refused import, or
 * an SQLite error raised inside the writer's transaction by a trigger on one table), and after each one a
 * full logical dump of the database file is byte-for-byte what it was before the command.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isEnvHarnessError, type ErrorCode } from '../../src/core/index.js';
import { math } from '../../src/domains/math/index.js';
import { createHarness, type Harness } from '../../src/harness/harness.js';
import { createAgent } from '../../src/index.js';
import { dumpSqlite, failWritesTo } from './sqlite-dump.js';

const dir = mkdtempSync(join(tmpdir(), 'envharness-atomic-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
let tick = 0;
const clock = () => new Date(Date.UTC(2026, 0, 1, 0, 0, tick++)).toISOString();

async function fresh(): Promise<{ h: Harness; file: string }> {
  const file = join(dir, `s${n++}.db`);
  const h = await createHarness({ store: file, domains: [math], clock });
  await h.initialize({ seed: 7 });
  return { h, file };
}

async function populate(h: Harness, seed = 1): Promise<void> {
  await h.generate({ templates: [{ id: 'math/chain-sum@1' }], levels: [1, 2], count: 60, seed, split: 'regression' });
  await h.generate({ templates: [{ id: 'math/chain-sum@1' }, { id: 'math/count-letters@1' }], levels: [1, 2], count: 120, seed: seed + 1, split: 'dynamic', reviewShare: 0.2 });
  const pending = await h.pendingReviews();
  await h.decideReview(pending[0]!.taskId, 'rejected', 'alice', 'ambiguous');
  await h.decideReview(pending[1]!.taskId, 'approved', 'bob', '');
}

async function failure(promise: Promise<unknown>): Promise<ErrorCode> {
  try {
    await promise;
  } catch (error) {
    if (isEnvHarnessError(error)) return error.code;
    throw error;
  }
  throw new Error('expected the command to fail');
}

const source = await (async () => {
  const { h } = await fresh();
  await populate(h);
  const { text } = await h.exportSnapshot();
  await h.close();
  return text;
})();

describe('snapshot import is one transaction', () => {
  it('a valid export refused by a store with another pool leaves it byte-for-byte as it was', async () => {
    const { h, file } = await fresh();
    await populate(h, 11);
    const before = dumpSqlite(file);
    expect(await failure(h.importSnapshot(source))).toBe('SNAPSHOT_MISMATCH');
    expect(dumpSqlite(file)).toBe(before);
    await h.close();
  });

  // One injected failure per table the import writes; the import's writes are batches, tasks, log,
  // reviews, the review audit, the snapshot and the sampler state, in that order.
  for (const table of ['batches', 'tasks', 'generation_summary', 'reviews', 'review_audit', 'snapshots', 'meta']) {
    it(`a failure writing ${table} leaves the store byte-for-byte as it was, and a retry then succeeds`, async () => {
      const { h, file } = await fresh();
      const before = dumpSqlite(file);
      const undo = failWritesTo(file, table);
      expect(await failure(h.importSnapshot(source))).toBe('STORE_FAILED');
      undo();
      expect(dumpSqlite(file)).toBe(before);
      // Nothing in memory went half-way either: the retry imports exactly the exported content.
      await h.importSnapshot(source);
      expect((await h.exportSnapshot()).text).toBe(source);
      await h.close();
    });
  }

  it('a failure on the last review decision undoes the batches saved before it', async () => {
    const { h, file } = await fresh();
    const before = dumpSqlite(file);
    const undo = failWritesTo(file, 'review_audit', { when: "NEW.decision = 'approved'" });
    expect(await failure(h.importSnapshot(source))).toBe('STORE_FAILED');
    undo();
    expect(dumpSqlite(file)).toBe(before);
    await h.close();
  });
});

describe('other multi-step writes', () => {
  it('split freeze writes both of its records or neither', async () => {
    const { h, file } = await fresh();
    await populate(h);
    const before = dumpSqlite(file);
    const undo = failWritesTo(file, 'meta', { when: "NEW.key = 'split.regression.lock'" });
    expect(await failure(h.freezeRegression())).toBe('STORE_FAILED');
    undo();
    expect(dumpSqlite(file)).toBe(before);
    expect(await h.isRegressionFrozen()).toBe(false);
    await h.freezeRegression();
    expect(await h.isRegressionFrozen()).toBe(true);
    await h.close();
  });

  it('an evaluation run is finished together with its events, or not at all', async () => {
    const { h, file } = await fresh();
    await populate(h);
    const undo = failWritesTo(file, 'runs', { when: "NEW.status = 'finished'" });
    expect(await failure(h.evaluate({ agent: createAgent('rule-based', { seed: 0 }), split: 'regression', limit: 3 }))).toBe('STORE_FAILED');
    undo();
    const [run] = await h.store.listRuns();
    expect(run?.status).toBe('running');
    expect(await h.store.listRunEvents(run!.id)).toEqual([]);
    await h.close();
  });

  it('a training run saves its end snapshot together with its finished record, or neither', async () => {
    const { h, file } = await fresh();
    await populate(h);
    const undo = failWritesTo(file, 'runs', { when: "NEW.status = 'finished'" });
    expect(await failure(h.train({ agent: createAgent('rule-based', { seed: 0 }), episodes: 8, seed: 3 }))).toBe('STORE_FAILED');
    undo();
    const snapshots = await h.store.listSnapshots();
    expect(snapshots.map((s) => s.label)).not.toContain('train end');
    expect((await h.store.listRuns())[0]?.status).toBe('running');
    await h.close();
  });
});
