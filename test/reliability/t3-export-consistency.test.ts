/**
 * T3 (issue 14 §2): exports are one consistent view. While another process saves batches into the same
 * file as fast as it can, the same snapshot exported again and again gives the same bytes every time, and
 * a snapshot taken and exported meanwhile always imports (its tasks make exactly the pool it names).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { math } from '../../src/domains/math/index.js';
import { createHarness } from '../../src/harness/harness.js';
import { systemClock } from '../../src/cli/clock.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const dir = mkdtempSync(join(tmpdir(), 'envharness-t3-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

describe('T3: exports while another process writes', () => {
  it('the same snapshot exports to the same bytes, and fresh snapshots always import', { timeout: 120_000 }, async () => {
    const file = join(dir, 't3.db');
    const h = await createHarness({ clock: systemClock, store: file, domains: [math] });
    await h.initialize({ seed: 7 });
    await h.generate({ templates: [{ id: 'math/chain-sum@1' }], levels: [1, 2], count: 200, seed: 2, split: 'dynamic', reviewShare: 0.1 });
    const snapshot = await h.snapshot({ label: 't3' });
    const first = (await h.exportSnapshot(snapshot.id)).text;

    const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'batch-writer-child.ts'), file, '3'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    await new Promise<void>((done, fail) => {
      child.stdout.setEncoding('utf8').on('data', (c: string) => c.includes('started') && done());
      child.on('close', () => fail(new Error(`writer exited: ${err}`)));
    });
    try {
      const counts = new Set<number>();
      for (let i = 0; i < 4; i++) {
        expect(sha((await h.exportSnapshot(snapshot.id)).text), `export ${i}`).toBe(sha(first));
        // A snapshot of the moment, exported at once: whatever the writer added, the file is self-consistent.
        const now = await h.exportSnapshot();
        counts.add(now.text.split('\n').length);
        const target = await createHarness({ clock: systemClock, store: join(dir, `import-${i}.db`), domains: [math] });
        await target.initialize({ seed: 7 });
        expect((await target.importSnapshot(now.text)).id).toBe(now.snapshot.id);
        await target.close();
      }
      // The writer really wrote in between (the fresh exports grew).
      expect(counts.size).toBeGreaterThan(1);
    } finally {
      child.kill('SIGKILL');
      await h.close();
    }
  });

  it('a batch with no accepted task, or only tasks awaiting review, saved after the snapshot changes no export of it', { timeout: 60_000 }, async () => {
    const h = await createHarness({ clock: systemClock, store: join(dir, 'empty-batches.db'), domains: [math] });
    await h.initialize({ seed: 7 });
    const request = { templates: [{ id: 'math/chain-sum@1' }], levels: [1, 2], count: 60, seed: 2, split: 'dynamic' as const };
    await h.generate(request);
    // The same request again: every candidate is an exact duplicate, so nothing is accepted.
    const emptyBefore = await h.generate(request);
    expect(emptyBefore.manifest.accepted).toBe(0);
    await h.generate({ ...request, seed: 3 });
    const snapshot = await h.snapshot({ label: 'before' });
    const first = (await h.exportSnapshot(snapshot.id)).text;
    const emptyAfter = await h.generate({ ...request, seed: 3 });
    const pendingAfter = await h.generate({ ...request, seed: 4, reviewShare: 1 });
    expect(emptyAfter.manifest.accepted).toBe(0);
    expect(pendingAfter.manifest.accepted).toBeGreaterThan(0);
    expect(pendingAfter.review.length).toBe(pendingAfter.manifest.accepted);
    const second = (await h.exportSnapshot(snapshot.id)).text;
    expect(sha(second)).toBe(sha(first));
    // The empty batch saved before the snapshot, between two batches with tasks, is in both.
    expect(first).toContain(emptyBefore.manifest.id);
    expect(first).not.toContain(emptyAfter.manifest.id);
    expect(first).not.toContain(pendingAfter.manifest.id);
    await h.close();
    // And the export round-trips: imported into a fresh store and exported again, the same bytes.
    const fresh = await createHarness({ clock: systemClock, store: join(dir, 'empty-batches-import.db'), domains: [math] });
    await fresh.initialize({ seed: 7 });
    const imported = await fresh.importSnapshot(first);
    expect(sha((await fresh.exportSnapshot(imported.id)).text)).toBe(sha(first));
    await fresh.close();
  });
});
