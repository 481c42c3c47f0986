/**
 * T2 (issue 14 §4): storage errors are never swallowed. Real faults: a disk that fills up (a 4 MiB tmpfs,
 * mounted for the test; needs root) under a real HTTP server, and fsync failing with EIO (injected with
 * strace) under the WAL checkpointer of a child process. Criteria: no 2xx for a write that failed, every
 * acknowledged step stored, the faulted request answered 503 within 1 s, /v1/health says why, writes are
 * refused until the condition clears and accepted again after, integrity_check ok.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createHarness } from '../../src/harness/harness.js';
import { createInventoryDomain, makeInventoryTask } from '../../src/runtime/testing/index.js';
import { createServer } from '../../src/server/index.js';
import { createSqliteStore } from '../../src/storage/sqlite/index.js';
import { systemClock } from '../../src/cli/clock.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const base = mkdtempSync(join(tmpdir(), 'envharness-t2-'));
const mountPoint = join(base, 'tiny');
mkdirSync(mountPoint);
const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', mountPoint]).status === 0;
const hasStrace = spawnSync('strace', ['-V']).status === 0;
afterAll(() => {
  if (mounted) spawnSync('umount', ['-l', mountPoint]);
  rmSync(base, { recursive: true, force: true });
});
if (!mounted) console.warn('T2 disk-full part skipped: cannot mount a tmpfs (run as root, as .ci/run does)');
if (!hasStrace) console.warn('T2 fsync-EIO part skipped: strace is not installed (apt-get install strace; .ci/run installs it)');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A harness on `file` (in the tmpfs) holding one held-out inventory task. */
async function inventoryHarness(file: string, steps: number) {
  const harness = await createHarness({ clock: systemClock, store: file, domains: [createInventoryDomain()] });
  await harness.initialize({ seed: 1 });
  const task = { ...makeInventoryTask({ budget: { steps } }), split: 'heldout' as const, status: 'active' as const, batchId: 't2', seq: 1 };
  await harness.store.putTasks([task]);
  return { harness, task };
}

/** Fills the tmpfs with a filler file until `bytes` are left free. */
function fillLeaving(bytes: number): void {
  const free = Number(execFileSync('df', ['--output=avail', '-B1', mountPoint]).toString().trim().split('\n')[1]);
  writeFileSync(join(mountPoint, 'filler'), Buffer.alloc(Math.max(0, free - bytes)));
}

describe('T2: storage faults', () => {
  it.skipIf(!mounted)('a full disk: 503 for the failing write, health says why, writes resume when space is freed', { timeout: 60_000 }, async () => {
    const file = join(mountPoint, 'envharness.db');
    const { harness, task } = await inventoryHarness(file, 100_000);
    const server = createServer({ harness, port: 0 });
    const { url } = await server.listen();
    const admin = { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' };
    const create = () => fetch(`${url}/v1/episodes`, { method: 'POST', headers: admin, body: JSON.stringify({ taskId: task.id, seed: 0 }) });
    try {
      const created = await create();
      expect(created.status).toBe(201);
      const { episode, token } = (await created.json()) as { episode: { id: string }; token: string };
      // Leave little room: a filler takes most of what is left.
      fillLeaving(256 * 1024);
      const statuses: number[] = [];
      let faultedIn = -1;
      let problem: { code?: string } = {};
      for (let i = 0; i < 5000; i++) {
        const started = performance.now();
        const res = await fetch(`${url}/v1/episodes/${episode.id}/step`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ action: { type: 'tool', tool: 'list_items', args: {} } }),
        });
        statuses.push(res.status);
        const text = await res.text();
        if (res.status !== 200) {
          faultedIn = performance.now() - started;
          problem = JSON.parse(text) as { code?: string };
          break;
        }
      }
      const acked = statuses.filter((s) => s === 200).length;
      expect(statuses.at(-1)).toBe(503);
      expect(problem.code).toBe('STORE_FAILED');
      expect(faultedIn).toBeLessThan(1000);
      expect(acked).toBeGreaterThan(0);

      const health = await fetch(`${url}/v1/health`, { headers: admin });
      expect(health.status).toBe(503);
      const h = (await health.json()) as { status: string; fault?: { code: string } };
      expect(h.status).toBe('degraded');
      expect(h.fault?.code).toBe('SQLITE_FULL');
      // Refused while the disk is full: no new episode.
      expect((await create()).status).toBe(503);

      rmSync(join(mountPoint, 'filler'));
      await sleep(1100);
      // The first write after the probe interval is the probe; it succeeds now, and writes are accepted again.
      let again = await create();
      if (again.status === 503) {
        await sleep(1100);
        again = await create();
      }
      expect(again.status).toBe(201);
      const healthy = await fetch(`${url}/v1/health`, { headers: admin });
      expect(healthy.status).toBe(200);
      expect(((await healthy.json()) as { status: string }).status).toBe('ok');

      await server.close();
      await harness.close();
      const store = createSqliteStore(file, { now: systemClock });
      expect(await store.checkIntegrity()).toEqual([]);
      // Every acknowledged step is stored, and the refused one is not.
      expect(await store.listTransitions(`${episode.id}:1`)).toHaveLength(acked);
      await store.close();
    } finally {
      await server.close().catch(() => undefined);
      await harness.close().catch(() => undefined);
    }
  });

  it.skipIf(!hasStrace)('fsync failing with EIO in the checkpointer: reported, writes refused, accepted again once fsync works', { timeout: 60_000 }, async () => {
    const file = join(base, 'eio.db');
    const out = await new Promise<{ code: number | null; out: string; err: string }>((done, fail) => {
      const child = spawn(
        'strace',
        ['-f', '-qq', '-o', '/dev/null', '-e', 'trace=fsync,fdatasync', '-e', 'inject=fsync,fdatasync:error=EIO:when=40..46', process.execPath, '--import', 'tsx', join(here, 'fsync-child.ts'), file],
        { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let o = '';
      let e = '';
      child.stdout.setEncoding('utf8').on('data', (c: string) => (o += c));
      child.stderr.setEncoding('utf8').on('data', (c: string) => (e += c));
      child.on('error', fail);
      child.on('close', (code) => done({ code, out: o, err: e }));
    });
    expect(out.code, out.err).toBe(0);
    const lines = out.out.trim().split('\n');
    const faultAt = lines.findIndex((l) => l.startsWith('fault '));
    expect(faultAt, out.out).toBeGreaterThanOrEqual(0);
    expect(lines[faultAt]).toMatch(/^fault checkpoint SQLITE_IOERR/);
    const refusedAt = lines.findIndex((l) => l === 'refused');
    const clearAt = lines.findIndex((l) => l === 'clear');
    expect(refusedAt).toBeGreaterThan(faultAt);
    expect(clearAt).toBeGreaterThan(refusedAt);
    // The log line says why (stderr of the child).
    expect(out.err).toMatch(/storage fault on .*checkpoint failed \(SQLITE_IOERR/);
    const acked = Number(lines.find((l) => l.startsWith('acked '))!.split(' ')[1]);
    const store = createSqliteStore(file, { now: systemClock });
    expect(await store.checkIntegrity()).toEqual([]);
    expect(await store.listTransitions('eio-episode')).toHaveLength(acked);
    await store.close();
  });

  it.skipIf(!mounted)('a disk without room for the step journal\'s preallocation: serve starts, and acknowledged steps are stored', { timeout: 60_000 }, async () => {
    const { harness, task } = await inventoryHarness(join(mountPoint, 'cramped.db'), 100);
    // Less room than the journal's 1 MiB of zeros, enough for its header and a few steps.
    fillLeaving(512 * 1024);
    try {
      const server = createServer({ harness, port: 0 });
      const { url } = await server.listen();
      const admin = { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' };
      const created = await fetch(`${url}/v1/episodes`, { method: 'POST', headers: admin, body: JSON.stringify({ taskId: task.id, seed: 0 }) });
      expect(created.status).toBe(201);
      const { episode, token } = (await created.json()) as { episode: { id: string }; token: string };
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`${url}/v1/episodes/${episode.id}/step`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ action: { type: 'tool', tool: 'get_stock', args: { item: 'widget-1' } } }),
        });
        expect(res.status).toBe(200);
      }
      await server.close();
      expect(await harness.store.listTransitions(`${episode.id}:1`)).toHaveLength(3);
    } finally {
      rmSync(join(mountPoint, 'filler'), { force: true });
      await harness.close();
    }
  });

  it.skipIf(!mounted)('the fault\'s since, the probe interval and the probe row follow the clock the store is given, not the system clock', { timeout: 60_000 }, async () => {
    const file = join(mountPoint, 'clocked.db');
    let ms = Date.parse('2031-05-06T07:08:09.000Z');
    const now = () => new Date(ms).toISOString();
    const store = createSqliteStore(file, { now });
    await store.setMeta('start', 1);
    fillLeaving(256 * 1024);
    const faultedAt = now();
    let refused: unknown;
    for (let i = 0; i < 200 && refused === undefined; i++) await store.setMeta(`blob-${i}`, 'x'.repeat(64 * 1024)).catch((e: unknown) => (refused = e));
    expect(refused).toMatchObject({ code: 'STORE_FAILED' });
    expect(store.fault()).toMatchObject({ code: 'SQLITE_FULL', since: faultedAt });
    rmSync(join(mountPoint, 'filler'));
    // Space is back, but the given clock has not moved a probe interval (1 s): no probe, writes still refused.
    ms += 999;
    expect(store.fault()?.since).toBe(faultedAt);
    await expect(store.setMeta('during', 1)).rejects.toMatchObject({ code: 'STORE_FAILED' });
    expect(await store.getMeta('store.probe')).toBeUndefined();
    // One more millisecond of the given clock (not of the system's): the probe runs, stamped with it, and succeeds.
    ms += 1;
    expect(store.fault()).toBeUndefined();
    expect(await store.getMeta('store.probe')).toBe(now());
    await store.setMeta('after', 1);
    expect(await store.checkIntegrity()).toEqual([]);
    await store.close();
  });
});
