import BetterSqlite3 from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeBatch, makeTask } from '../../../test/conformance/store-fixtures.js';
import { systemClock } from '../../cli/clock.js';
import { createSqliteStore } from './index.js';

const dir = mkdtempSync(join(tmpdir(), 'envharness-save-batch-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The columns of a batch's task rows as SQLite holds them, in seq order. */
function rowsOf(path: string, batchId: string): unknown[] {
  const db = new BetterSqlite3(path, { readonly: true });
  try {
    return db
      .prepare('SELECT t.id, t.template, t.domain, t.task_type, t.level, t.split, t.status, k.id AS batch_id, t.body FROM tasks t JOIN batch_keys k ON k.seq = t.batch_key WHERE k.id = ? ORDER BY t.seq')
      .all(batchId);
  } finally {
    db.close();
  }
}

describe('sqlite store: saveBatch with the batch columns as literals of its statement', () => {
  // Two full groups of 32 rows per statement, then 6 rows one by one.
  const count = 70;

  it('stores the same columns whether the rows share their template columns or not, quotes and all', async () => {
    const path = join(dir, 'literals.db');
    const store = createSqliteStore(path, { now: systemClock });
    // One template whose domain and task type hold quotes and non-ASCII (the literal path) ...
    const shared = Array.from({ length: count }, (_, i) => makeTask(2_000 + i, { domain: "o'brien", taskType: "it's \"x\" 客户", level: 1 + (i % 3) }));
    // ... and a batch mixing two templates (every column bound per row).
    const mixed = Array.from({ length: count }, (_, i) =>
      makeTask(3_000 + i, i % 2 === 0 ? { template: 'test/lookup@1' } : { template: "test/o'lookup@2", domain: 'other', taskType: 'find' }),
    );
    const sharedBatch = makeBatch(shared, { seed: 1 });
    const mixedBatch = makeBatch(mixed, { seed: 2, split: 'heldout' });
    await store.saveBatch(sharedBatch, { review: [shared[5]!.id, shared[40]!.id, shared[69]!.id] });
    await store.saveBatch(mixedBatch, { review: [mixed[33]!.id] });
    await store.close();

    const expected = (tasks: typeof shared, batchId: string, split: string, review: readonly string[]) =>
      tasks.map((t) => ({
        id: t.id,
        template: t.template,
        domain: t.domain,
        task_type: t.taskType,
        level: t.level,
        split,
        status: review.includes(t.id) ? 'pending_review' : 'active',
        batch_id: batchId,
        body: expect.any(String),
      }));
    expect(rowsOf(path, sharedBatch.manifest.id)).toEqual(expected(shared, sharedBatch.manifest.id, 'dynamic', [shared[5]!.id, shared[40]!.id, shared[69]!.id]));
    expect(rowsOf(path, mixedBatch.manifest.id)).toEqual(expected(mixed, mixedBatch.manifest.id, 'heldout', [mixed[33]!.id]));

    const reopened = createSqliteStore(path, { now: systemClock });
    expect((await reopened.listTasks({ batchId: sharedBatch.manifest.id })).map((t) => ({ ...t, seq: 0, split: 'x', status: 'x', batchId: 'x' }))).toEqual(
      shared.map((t) => ({ ...t, seq: 0, split: 'x', status: 'x', batchId: 'x' })),
    );
    expect((await reopened.listReviews('pending')).map((r) => r.taskId).sort()).toEqual([shared[5]!.id, shared[40]!.id, shared[69]!.id, mixed[33]!.id].sort());
    await reopened.close();
  });
});
