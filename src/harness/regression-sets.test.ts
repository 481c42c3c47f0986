/** Shipped regression sets install per domain on first use, from the build's data when it checks out, frozen either way (issue 13 item 8). */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { computeTaskId, digest, REGRESSION_FROZEN_META, type Domain } from '../core/index.js';
import { LIBRARY_REGRESSION_SET, library } from '../domains/library/index.js';
import { math } from '../domains/math/index.js';
import { createHarness, type Harness } from './harness.js';
import { writeRegressionSet } from './prebuilt.js';
import { systemClock } from '../cli/clock.js';

const dir = mkdtempSync(path.join(tmpdir(), 'envharness-regression-sets-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const open: Harness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.close();
});

async function harnessOf(domains: Domain<any>[], prebuilt: string | false): Promise<Harness> {
  const h = await createHarness({ clock: systemClock, store: ':memory:', domains, prebuilt });
  open.push(h);
  await h.initialize();
  return h;
}

const regressionDomains = async (h: Harness) => [...new Set((await h.store.listTaskIndex({ split: 'regression' })).map((e) => e.domain))].sort();

/** The library set as generated (what the build writes), in a file of its own under a fresh folder. */
async function shippedLibrary(name: string): Promise<{ folder: string; file: string }> {
  const h = await harnessOf([library], false);
  const [set] = await h.installRegressionSets(['library']);
  const folder = path.join(dir, name);
  writeRegressionSet(folder, 'library', set!.batches);
  return { folder, file: path.join(folder, 'regression-library.json') };
}

describe('installing the shipped regression sets', { timeout: 120_000 }, () => {
  it('installs nothing when a store opens, and only the domain a command uses, frozen and locked', async () => {
    const h = await harnessOf([math, library], false);
    expect(await regressionDomains(h)).toEqual([]);
    expect(await h.store.getMeta(REGRESSION_FROZEN_META)).toBeUndefined();
    // Not installed yet, the shipped set counts as frozen already: a write into the split is refused and installs nothing.
    expect(await h.isRegressionFrozen()).toBe(true);
    await expect(h.generate({ templates: [{ id: 'library/borrow' }], levels: [1], count: 1, seed: 9, split: 'regression' })).rejects.toMatchObject({ code: 'SPLIT_FROZEN' });
    expect(await regressionDomains(h)).toEqual([]);
    // Generating math (which ships no set) installs nothing; a library verb installs library's.
    await h.generate({ templates: [{ id: 'math/chain-sum' }], levels: [1], count: 3, seed: 1, split: 'dynamic' });
    expect(await regressionDomains(h)).toEqual([]);
    await h.generate({ templates: [{ id: 'library/borrow' }], levels: [1], count: 3, seed: 1, split: 'dynamic' });
    expect(await regressionDomains(h)).toEqual(['library']);
    const ids = (await h.store.listTaskIndex({ split: 'regression', status: 'active' })).map((e) => e.id).sort();
    expect(digest(ids)).toBe(LIBRARY_REGRESSION_SET.digest);
    expect(await h.store.getMeta(REGRESSION_FROZEN_META)).toBe(true);
    expect(await h.store.getMeta('split.regression.lock')).toEqual({ digest: digest(ids), count: ids.length });
    // Frozen from its first use: a write into it is refused.
    await expect(h.generate({ templates: [{ id: 'library/borrow' }], levels: [1], count: 1, seed: 9, split: 'regression' })).rejects.toMatchObject({ code: 'SPLIT_FROZEN' });
  });

  it('a first draw from a regression split installs that domain only', async () => {
    const h = await harnessOf([math, library], false);
    const task = await h.generateTask({ split: 'regression', domain: 'library' });
    expect(task.domain).toBe('library');
    expect(await regressionDomains(h)).toEqual(['library']);
  });

  it('installs the build\'s data as it is, without generating, and gives the store the generated set', async () => {
    const { folder } = await shippedLibrary('same');
    const generated = await harnessOf([library], false);
    await generated.installRegressionSets();
    const shipped = await harnessOf([library], folder);
    const [set] = await shipped.installRegressionSets(['library']);
    expect(set!.source).toBe('shipped');
    const strip = (h: Harness) => h.store.listTasks({ split: 'regression' }).then((ts) => ts.map(({ seq: _s, ...t }) => t));
    expect(await strip(shipped)).toEqual(await strip(generated));
    expect(await shipped.isRegressionFrozen()).toBe(true);
    // Installed once: a second call finds it in the store.
    expect(await shipped.installRegressionSets(['library'])).toEqual([]);
  });

  it('refuses a tampered file before writing anything: a changed task, or a consistent file that is not the pinned set', async () => {
    const { folder, file } = await shippedLibrary('tampered');
    const original = readFileSync(file, 'utf8');
    const data = JSON.parse(original);
    data.batches[0].tasks[0].spec.instructions += ' (and also renew every loan)';
    writeFileSync(file, JSON.stringify(data));
    const h = await harnessOf([library], folder);
    await expect(h.installRegressionSets(['library'])).rejects.toMatchObject({ code: 'LOCKFILE_MISMATCH', details: { pointer: '/batches/0/tasks/0/id' } });
    expect(await regressionDomains(h)).toEqual([]);

    // Consistent with itself (task ids, batch digest and id recomputed) but one task short of the pinned set.
    const short = JSON.parse(original);
    const batch = short.batches[0];
    batch.tasks = batch.tasks.slice(1);
    for (const t of batch.tasks) t.id = computeTaskId(t);
    batch.review = batch.review.filter((id: string) => batch.tasks.some((t: { id: string }) => t.id === id));
    batch.log = batch.log.filter((e: { taskId: string }) => batch.tasks.some((t: { id: string }) => t.id === e.taskId));
    batch.manifest.accepted = batch.tasks.length;
    batch.manifest.digest = digest(batch.tasks.map((t: { id: string }) => t.id));
    const { id: _id, ...body } = batch.manifest;
    batch.manifest.id = digest(body);
    for (const e of batch.log) e.batchId = batch.manifest.id;
    writeFileSync(file, JSON.stringify(short));
    const h2 = await harnessOf([library], folder);
    await expect(h2.installRegressionSets(['library'])).rejects.toMatchObject({ code: 'LOCKFILE_MISMATCH', message: expect.stringContaining('is not the one the domain pins') });
    expect(await regressionDomains(h2)).toEqual([]);
    expect(await h2.store.getMeta(REGRESSION_FROZEN_META)).toBeUndefined();
  });

  it('generates instead when the file was made by other template versions (an older build)', async () => {
    const { folder, file } = await shippedLibrary('stale');
    const data = JSON.parse(readFileSync(file, 'utf8'));
    data.batches[0].manifest.templates[0].sourceDigest = '0'.repeat(64);
    writeFileSync(file, JSON.stringify(data));
    const h = await harnessOf([library], folder);
    const [set] = await h.installRegressionSets(['library']);
    expect(set!.source).toBe('generated');
    expect(digest((await h.store.listTaskIndex({ split: 'regression', status: 'active' })).map((e) => e.id).sort())).toBe(LIBRARY_REGRESSION_SET.digest);
  });
});
