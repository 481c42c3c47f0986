/**
 * What `envharness serve --durability relaxed` promises (docs/http.md, "Durability"), against the real CLI
 * server and SQLite file: a clean shutdown (SIGTERM) loses no acknowledged step; a SIGKILL loses at most a
 * suffix of each episode's acknowledged steps (never a gap), nothing acknowledged well before it, and no
 * attempt's last step (committed before its answer); a commit failing on a full disk breaks the episode; a
 * bad mode is refused.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness } from '../../src/harness/harness.js';
import { createInventoryDomain, makeInventoryTask } from '../../src/runtime/testing/index.js';
import { createServer } from '../../src/server/index.js';
import { createTestDomains } from '../../src/server/testing/domains.js';
import { prepareStore, spawnServe, stopServe, type FixtureTasks } from '../../src/server/testing/fixture.js';
import { createSqliteStore } from '../../src/storage/sqlite/index.js';
import { systemClock } from '../../src/cli/clock.js';

const TOKEN = 'durability-token-0123456789abcdef';
const STEP = JSON.stringify({ action: { type: 'tool', tool: 'get_stock', args: { item: 'widget-1' } } });
const sharedDir = mkdtempSync(join(tmpdir(), 'envharness-durability-tmpfs-'));
const mountPoint = join(sharedDir, 'tiny');
mkdirSync(mountPoint);
const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', mountPoint]).status === 0;
if (!mounted) console.warn('relaxed disk-full case skipped: cannot mount a tmpfs (run as root, as .ci/run does)');
let dir = '';
let base = '';
let tasks: FixtureTasks;
let copies = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'envharness-durability-'));
  ({ path: base, tasks } = await prepareStore(dir));
}, 120_000);
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  if (mounted) spawnSync('umount', ['-l', mountPoint]);
  rmSync(sharedDir, { recursive: true, force: true });
});

/** A fresh copy of the fixture store, so that each case reads only its own server's writes. */
function freshStore(): string {
  const file = join(dir, `copy-${copies++}.db`);
  copyFileSync(base, file);
  return file;
}

async function createEpisode(port: number, body: object): Promise<{ id: string; token: string; attemptId: string }> {
  const res = await fetch(`http://127.0.0.1:${port}/v1/episodes`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = (await res.json()) as { episode: { id: string; attemptId: string }; token: string };
  expect(res.status).toBe(201);
  return { id: json.episode.id, token: json.token, attemptId: json.episode.attemptId };
}

async function step(port: number, ep: { id: string; token: string }, body = STEP): Promise<{ status: number; json: { info?: { step: number }; terminated?: boolean } }> {
  const res = await fetch(`http://127.0.0.1:${port}/v1/episodes/${ep.id}/step`, { method: 'POST', headers: { authorization: `Bearer ${ep.token}`, 'content-type': 'application/json' }, body });
  return { status: res.status, json: (await res.json()) as { info?: { step: number } } };
}

async function storedSteps(file: string, attemptId: string): Promise<number[]> {
  const store = createSqliteStore(file, { now: systemClock });
  try {
    return (await store.listTransitions(attemptId)).map((t) => t.info.step);
  } finally {
    await store.close();
  }
}

describe('serve --durability relaxed', () => {
  it('loses no acknowledged step on SIGTERM', { timeout: 60_000 }, async () => {
    const file = freshStore();
    const server = await spawnServe(file, TOKEN, ['--durability', 'relaxed']);
    const episodes = await Promise.all([0, 1, 2, 3].map((seed) => createEpisode(server.port, { taskId: tasks.endless, seed })));
    const acked = new Map<string, number[]>();
    // Concurrent steps, and the SIGTERM right after the last answer: well inside the 10 ms commit window.
    await Promise.all(
      episodes.map(async (ep) => {
        const steps: number[] = [];
        for (let i = 0; i < 25; i++) {
          const r = await step(server.port, ep);
          expect(r.status).toBe(200);
          steps.push(r.json.info!.step);
        }
        acked.set(ep.attemptId, steps);
      }),
    );
    expect(await stopServe(server.child)).toBe(0);
    for (const [attemptId, steps] of acked) expect(await storedSteps(file, attemptId)).toEqual(steps);
  });

  it("after SIGKILL keeps a prefix of each episode, with every step acknowledged a while before and every attempt's last step", { timeout: 60_000 }, async () => {
    const file = freshStore();
    const server = await spawnServe(file, TOKEN, ['--durability', 'relaxed']);
    // An attempt that ends: its last step is committed before its answer, whatever comes after.
    const ended = await createEpisode(server.port, { taskId: tasks.short, seed: 0 });
    for (let i = 0; i < 5; i++) expect((await step(server.port, ended)).status).toBe(200);
    const finish = await step(server.port, ended, JSON.stringify({ action: { type: 'finish' } }));
    expect(finish.status).toBe(200);
    expect(finish.json.terminated).toBe(true);
    const episodes = await Promise.all([0, 1, 2, 3].map((seed) => createEpisode(server.port, { taskId: tasks.endless, seed })));
    const acked = new Map<string, number[]>(episodes.map((ep) => [ep.attemptId, []]));
    // Phase 1: steps, then a quiet pause far longer than the commit window: all of these must be stored.
    for (const ep of episodes) for (let i = 0; i < 10; i++) acked.get(ep.attemptId)!.push((await step(server.port, ep)).json.info!.step);
    await new Promise((r) => setTimeout(r, 1500));
    // Phase 2: a burst that the kill interrupts.
    let killed = false;
    const burst = episodes.map(async (ep) => {
      while (!killed) {
        try {
          const r = await step(server.port, ep);
          if (r.status === 200) acked.get(ep.attemptId)!.push(r.json.info!.step);
        } catch {
          if (killed) return;
          throw new Error('the server went away before the kill');
        }
      }
    });
    await new Promise((r) => setTimeout(r, 300));
    killed = true;
    server.child.kill('SIGKILL');
    await Promise.all(burst);
    const check = createSqliteStore(file, { now: systemClock });
    expect(await check.checkIntegrity()).toEqual([]);
    await check.close();
    expect(await storedSteps(file, ended.attemptId)).toEqual([1, 2, 3, 4, 5, 6]);
    let lostTotal = 0;
    for (const ep of episodes) {
      const stored = await storedSteps(file, ep.attemptId);
      const mine = acked.get(ep.attemptId)!;
      expect(mine.length).toBeGreaterThan(10);
      // A prefix: steps 1..n with no gap, holding phase 1, and nothing beyond the one step in flight at the kill.
      expect(stored).toEqual(Array.from({ length: stored.length }, (_, i) => i + 1));
      expect(stored.length).toBeGreaterThanOrEqual(10);
      expect(stored.length).toBeLessThanOrEqual(mine.length + 1);
      lostTotal += Math.max(0, mine.length - stored.length);
    }
    // Printed, not asserted: how many acknowledged steps the kill took (0 is possible, and allowed).
    process.stderr.write(`relaxed SIGKILL: ${lostTotal} acknowledged steps lost of ${[...acked.values()].reduce((s, a) => s + a.length, 0)}\n`);
  });

  it.skipIf(!mounted)('a commit that fails after its steps were acknowledged breaks the episode: 503 STORE_FAILED, never a 2xx after it', { timeout: 60_000 }, async () => {
    // A real full disk (a 4 MiB tmpfs, as T2 uses), under an in-process server in relaxed mode.
    const file = join(mountPoint, 'envharness.db');
    const harness = await createHarness({ clock: systemClock, store: file, domains: [createInventoryDomain()] });
    await harness.initialize({ seed: 1 });
    const task = { ...makeInventoryTask({ budget: { steps: 100_000 } }), split: 'heldout' as const, status: 'active' as const, batchId: 'durability', seq: 1 };
    await harness.store.putTasks([task]);
    const server = createServer({ harness, port: 0, durability: 'relaxed' });
    const { port } = await server.listen();
    try {
      const res = await fetch(`http://127.0.0.1:${port}/v1/episodes`, { method: 'POST', headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ taskId: task.id, seed: 0 }) });
      const { episode, token } = (await res.json()) as { episode: { id: string }; token: string };
      const free = Number(execFileSync('df', ['--output=avail', '-B1', mountPoint]).toString().trim().split('\n')[1]);
      writeFileSync(join(mountPoint, 'filler'), Buffer.alloc(Math.max(0, free - 256 * 1024)));
      const statuses: number[] = [];
      let failure: { code?: string } = {};
      for (let i = 0; i < 20_000 && failure.code === undefined; i++) {
        const r = await step(port, { id: episode.id, token }, JSON.stringify({ action: { type: 'tool', tool: 'list_items', args: {} } }));
        statuses.push(r.status);
        if (r.status !== 200) failure = r.json as { code?: string };
      }
      expect(failure.code).toBe('STORE_FAILED');
      expect(statuses.at(-1)).toBe(503);
      // The episode stays refused: its memory is ahead of its record.
      rmSync(join(mountPoint, 'filler'));
      await new Promise((r) => setTimeout(r, 1100));
      for (let i = 0; i < 3; i++) expect((await step(port, { id: episode.id, token }, JSON.stringify({ action: { type: 'tool', tool: 'list_items', args: {} } }))).status).toBe(503);
      await server.close();
      // The harness's recorder keeps its failure (those acknowledged steps are not stored): closing reports it.
      await expect(harness.close()).rejects.toMatchObject({ code: 'STORE_FAILED' });
      const acked = statuses.filter((x) => x === 200).length;
      const stored = await storedSteps(file, `${episode.id}:1`);
      expect(stored).toEqual(Array.from({ length: stored.length }, (_, i) => i + 1));
      expect(stored.length).toBeLessThanOrEqual(acked);
      process.stderr.write(`relaxed disk full: ${acked} acknowledged, ${stored.length} stored\n`);
    } finally {
      await server.close().catch(() => undefined);
      await harness.close().catch(() => undefined);
    }
  });

  it('refuses an unknown mode with CONFIG_INVALID', async () => {
    const harness = await createHarness({ clock: systemClock, store: freshStore(), domains: createTestDomains() });
    try {
      expect(() => createServer({ harness, durability: 'eventually' as 'relaxed' })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID', details: { pointer: '/durability' } }));
    } finally {
      await harness.close();
    }
  });
});
