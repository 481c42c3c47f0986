import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isEnvHarnessError } from '../core/index.js';
import { math } from '../domains/math/index.js';
import { createHarness, type Harness } from './harness.js';
import { systemClock } from '../cli/clock.js';

const dir = mkdtempSync(join(tmpdir(), 'envharness-harness-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
let clockTick = 0;
const clock = () => new Date(Date.UTC(2026, 0, 1, 0, 0, clockTick++)).toISOString();

async function fresh(): Promise<Harness> {
  const h = await createHarness({ store: join(dir, `h${n++}.db`), domains: [math], clock });
  await h.initialize({ seed: 7 });
  return h;
}

async function populate(h: Harness): Promise<void> {
  await h.generate({ templates: [{ id: 'math/chain-sum@1' }], levels: [1, 2, 3], count: 300, seed: 1, split: 'regression' });
  await h.generate({ templates: [{ id: 'math/chain-sum@1', weight: 2 }, { id: 'math/count-letters@1' }], levels: [1, 2], count: 400, seed: 2, split: 'dynamic', reviewShare: 0.1 });
  const pending = await h.pendingReviews();
  await h.decideReview(pending[0]!.taskId, 'rejected', 'alice', 'ambiguous wording');
  await h.decideReview(pending[1]!.taskId, 'approved', 'bob', '');
}

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

describe('snapshots', () => {
  it('export -> import into a fresh store -> export, 20 times, gives one sha256', async () => {
    const first = await fresh();
    await populate(first);
    let { text } = await first.exportSnapshot();
    const expected = sha(text);
    await first.close();
    for (let i = 0; i < 20; i++) {
      const next = await fresh();
      await next.importSnapshot(text);
      text = (await next.exportSnapshot()).text;
      expect(sha(text)).toBe(expected);
      await next.close();
    }
  });

  it('restore into a fresh store continues the identical task sequence', async () => {
    const a = await fresh();
    await populate(a);
    for (let i = 0; i < 5; i++) await a.generateTask();
    const { snapshot, text } = await a.exportSnapshot();
    const seqA: string[] = [];
    for (let i = 0; i < 50; i++) seqA.push((await a.generateTask()).id);

    const b = await fresh();
    const restored = await b.importSnapshot(text);
    expect(restored.id).toBe(snapshot.id);
    const seqB: string[] = [];
    for (let i = 0; i < 50; i++) seqB.push((await b.generateTask()).id);
    expect(seqB).toEqual(seqA);

    // And restoring the same store to the snapshot replays the sequence again.
    await a.restore(snapshot.id);
    const seqA2: string[] = [];
    for (let i = 0; i < 50; i++) seqA2.push((await a.generateTask()).id);
    expect(seqA2).toEqual(seqA);
    await a.close();
    await b.close();
  });

  it('rejects a tampered export and changes nothing', async () => {
    const a = await fresh();
    await populate(a);
    const { text } = await a.exportSnapshot();
    const b = await fresh();
    const tampered = text.replace('"level":2', '"level":3');
    await expect(b.importSnapshot(tampered)).rejects.toSatisfy((e) => isEnvHarnessError(e, 'SNAPSHOT_MISMATCH'));
    expect(await b.store.countTasks()).toBe(0);
    const truncated = text.split('\n').slice(0, 10).join('\n');
    await expect(b.importSnapshot(truncated)).rejects.toSatisfy((e) => isEnvHarnessError(e, 'IMPORT_INVALID'));
    expect(await b.store.countTasks()).toBe(0);
    await a.close();
    await b.close();
  });

  it('snapshot ids depend on content, not on time', async () => {
    const a = await fresh();
    await populate(a);
    const s1 = await a.snapshot();
    const s2 = await a.snapshot({ label: 'again' });
    expect(s2.id).toBe(s1.id);
    await a.generate({ templates: [{ id: 'math/count-letters@1' }], levels: [3], count: 20, seed: 9, split: 'heldout' });
    const s3 = await a.snapshot();
    expect(s3.id).not.toBe(s1.id);
    const diff = await a.diffSnapshots(s1.id, s3.id);
    expect(diff.pool.heldout.same).toBe(false);
    expect(diff.pool.dynamic.same).toBe(true);
    await a.close();
  });
});

describe('regression split', () => {
  it('freezes into a lockfile, verifies, refuses changes and detects drift', async () => {
    const h = await fresh();
    await populate(h);
    const lock = await h.freezeRegression();
    expect(lock.count).toBeGreaterThan(0);
    const text = JSON.stringify(lock);
    expect((await h.verifyRegression(text)).ok).toBe(true);
    await expect(
      h.generate({ templates: [{ id: 'math/chain-sum@1' }], levels: [4], count: 5, seed: 3, split: 'regression' }),
    ).rejects.toSatisfy((e) => isEnvHarnessError(e, 'SPLIT_FROZEN'));
    // A lockfile missing one id is a mismatch that names the id.
    const edited = { ...lock, tasks: lock.tasks.slice(1) };
    await expect(h.verifyRegression(JSON.stringify(edited))).rejects.toSatisfy((e) => isEnvHarnessError(e, 'LOCKFILE_MISMATCH'));
    await h.unfreezeRegression();
    await h.generate({ templates: [{ id: 'math/chain-sum@1' }], levels: [4], count: 5, seed: 3, split: 'regression' });
    const check = await h.verifyRegression(text);
    expect(check.ok).toBe(false);
    expect(check.added.length).toBeGreaterThan(0);
    await h.close();
  });
});

describe('review queue', () => {
  it('keeps pending tasks out of the pool until approved; rejected ones leave it; the audit trail keeps every decision', async () => {
    const h = await fresh();
    const batch = await h.generate({ templates: [{ id: 'math/chain-sum@1' }], levels: [2], count: 200, seed: 5, split: 'dynamic', reviewShare: 0.2 });
    expect(batch.review.length).toBeGreaterThan(10);
    const stats = await h.poolStats();
    expect(stats.pendingReview).toBe(batch.review.length);
    expect(stats.bySplit.dynamic).toBe(batch.manifest.accepted - batch.review.length);
    await h.decideReview(batch.review[0]!, 'rejected', 'carol', 'answer is wrong');
    await h.decideReview(batch.review[1]!, 'approved', 'carol', 'fine');
    const after = await h.poolStats();
    expect(after.rejected).toBe(1);
    expect(after.bySplit.dynamic).toBe(stats.bySplit.dynamic + 1);
    const audit = await h.store.listReviewAudit();
    expect(audit.map((a) => [a.decision, a.reviewer, a.note])).toEqual([
      ['rejected', 'carol', 'answer is wrong'],
      ['approved', 'carol', 'fine'],
    ]);
    await h.close();
  });
});

describe('domain declarations the harness reads', () => {
  it('initialize() lets every domain restore what its tasks need from store metadata', async () => {
    const seen: unknown[] = [];
    const restoring = { ...math, name: 'restoring', templates: [], regressionSet: undefined, restore: async (store: { getMeta(key: string): Promise<unknown> }) => void seen.push(await store.getMeta('restoring.world')) };
    const h = await createHarness({ clock: systemClock, store: join(dir, 'restore.db'), domains: [math, restoring] });
    await h.store.setMeta('restoring.world', { dir: '/data' });
    await h.initialize();
    expect(seen).toEqual([{ dir: '/data' }]);
    await h.close();
  });
});
