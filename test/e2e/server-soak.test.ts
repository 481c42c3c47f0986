/**
 * T8: 32 concurrent episodes stepping against a real `envharness serve` process (reset -> steps, with
 * expectedStep, until each episode ends, then reset again). 0 errors; 0 gaps or duplicates in the stored
 * transitions; every acknowledged step stored; p99 <= 50 ms; open episodes 0 after the clients close.
 *
 * Duration: ENVHARNESS_SOAK_SECONDS (default 120, T8's CI variant; the nightly one is 600). It runs alone,
 * after every other test file (vitest.config.ts), so that the p99 measures the server, not the suite.
 * Latency: p99 <= 50 ms, T8's fixed bound (synchronous=NORMAL); ENVHARNESS_SOAK_P99_MS overrides it (e.g.
 * 250 for a FULL store). The same 32 clients against a plain node:http null route are measured first
 * and printed beside the result, so that a failure on a loaded machine can be told from a slow server.
 * Memory (T8: growth <= 10%): the server's V8 heap after a forced full GC, read through the inspector
 * protocol, after warm-up and once the clients have closed their episodes; RSS is printed beside it but not
 * asserted (it moved -7.8% and +36% in two quiet runs: heap sizing, not retention). The bound has a 4 MiB
 * floor for a heap of a few tens of MiB. It was checked to catch a leak by hand: a server patched to keep
 * every step's request body failed it (see the closing note of issue 14's session).
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync, rmSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../../src/storage/sqlite/index.js';
import { createClient, createSocketClient, HeapProbe, prepareStore, spawnNullServer, spawnServe, stopServe } from '../../src/server/testing/fixture.js';
import { systemClock } from '../../src/cli/clock.js';

const SECONDS = Number(process.env.ENVHARNESS_SOAK_SECONDS ?? 120);
const EPISODES = Number(process.env.ENVHARNESS_SOAK_EPISODES ?? 32);
/** T8 (perf-anchors §4): p99 step latency <= 50 ms with synchronous=NORMAL. */
const P99_MS = Number(process.env.ENVHARNESS_SOAK_P99_MS ?? 50);
const TOKEN = 'soak-test-token-0123456789abcdef';
/** T8: memory growth <= 10% after warm-up, here of the post-GC heap, with a floor for small heaps. */
const HEAP_GROWTH = 0.1;
const HEAP_FLOOR_BYTES = 4 * 1024 * 1024;

const dir = mkdtempSync(join(tmpdir(), 'envharness-soak-'));
let child: ChildProcess | undefined;
afterAll(() => {
  if (child?.exitCode === null) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

function rssKiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : 0;
}

const ACTIONS = [
  { type: 'tool', tool: 'get_stock', args: { item: 'widget-1' } },
  { type: 'tool', tool: 'add_stock', args: { item: 'widget-1', quantity: 1 } },
  { type: 'tool', tool: 'list_items', args: {} },
  { type: 'tool', tool: 'get_stock', args: { item: 'gadget-2' } },
  { type: 'tool', tool: 'remove_stock', args: { item: 'gadget-2', quantity: 1 } },
  { type: 'tool', tool: 'get_stock', args: { item: 'missing' } },
];

/** p99 of EPISODES closed-loop clients posting a step-sized body to a plain node:http null route. */
async function baselineP99(seconds: number): Promise<number> {
  const nullServer = await spawnNullServer();
  const latencies: number[] = [];
  const end = Date.now() + seconds * 1000;
  try {
    await Promise.all(
      Array.from({ length: EPISODES }, async () => {
        const client = createSocketClient(nullServer.port);
        try {
          while (Date.now() < end) latencies.push((await client.request({ path: '/step', token: 'x', body: { action: ACTIONS[0], expectedStep: 1 } })).ms);
        } finally {
          client.close();
        }
      }),
    );
  } finally {
    nullServer.child.kill('SIGTERM');
  }
  latencies.sort((a, b) => a - b);
  return latencies[Math.floor(latencies.length * 0.99)]!;
}

describe('T8: concurrency soak', () => {
  it(`${EPISODES} episodes stepping for ${SECONDS} s against envharness serve`, async () => {
    const baseline = await baselineP99(Math.min(5, Math.max(2, SECONDS / 6)));
    const bound = P99_MS;
    const { path, tasks } = await prepareStore(dir);
    const started = await spawnServe(path, TOKEN, [], ['--inspect=127.0.0.1:0']);
    child = started.child;
    const heap = new HeapProbe(started.stderr);
    const port = started.port;
    const admin = createClient(port, { sockets: 1 });
    const latencies: number[] = [];
    const errors: string[] = [];
    /** attempt id -> steps acknowledged, in order. */
    const acked = new Map<string, number[]>();
    let rssStart = 0;
    const warmup = Date.now() + Math.min(5_000, SECONDS * 200);
    const deadline = Date.now() + SECONDS * 1000;

    async function run(i: number): Promise<void> {
      // A lean client: with 32 of them in one process, node:http's client would be what is measured.
      const client = createSocketClient(port);
      try {
        const created = await client.request({ path: '/v1/episodes', token: TOKEN, body: { taskId: tasks.short, seed: i } });
        if (created.status !== 201) throw new Error(created.text);
        const { id } = created.json.episode;
        const token: string = created.json.token;
        let attempt: string = created.json.info?.episodeId;
        let reset = true;
        let n = 0;
        while (Date.now() < deadline) {
          if (reset) {
            const r = await client.request({ path: `/v1/episodes/${id}/reset`, token, body: { seed: i * 100_000 + n } });
            if (r.status !== 200) errors.push(`reset ${r.status} ${r.text}`);
            attempt = r.json.info.episodeId;
            acked.set(attempt, []);
            reset = false;
          }
          const steps = acked.get(attempt)!;
          const action = ACTIONS[(n + i) % ACTIONS.length];
          const res = await client.request({ path: `/v1/episodes/${id}/step`, token, body: { action, expectedStep: steps.length + 1 } });
          n++;
          if (Date.now() > warmup) latencies.push(res.ms);
          if (res.status !== 200) {
            errors.push(`step ${res.status} ${res.text.slice(0, 200)}`);
            continue;
          }
          steps.push(res.json.info.step);
          if (res.json.terminated || res.json.truncated) reset = true;
        }
        const closed = await client.request({ method: 'DELETE', path: `/v1/episodes/${id}`, token });
        if (closed.status !== 200) errors.push(`close ${closed.status} ${closed.text}`);
      } finally {
        client.close();
      }
    }

    let heapStart: Promise<number> | undefined;
    const rssTimer = setTimeout(() => {
      rssStart = rssKiB(child!.pid!);
      heapStart = heap.usedAfterGc();
      heapStart.catch(() => undefined); // awaited (and so reported) after the run
    }, warmup - Date.now());
    await Promise.all(Array.from({ length: EPISODES }, (_, i) => run(i)));
    clearTimeout(rssTimer);
    const rssEnd = rssKiB(child.pid!);
    const heapBefore = await heapStart;
    const heapAfter = await heap.usedAfterGc();
    const health = await admin.request({ path: '/v1/health', token: TOKEN });
    admin.close();
    expect(await stopServe(child)).toBe(0);

    expect(errors.slice(0, 5)).toEqual([]);
    expect(health.json.episodes).toBe(0);
    const store = createSqliteStore(path, { now: systemClock });
    let stored = 0;
    let total = 0;
    try {
      for (const [attempt, steps] of acked) {
        const transitions = await store.listTransitions(attempt);
        const got = transitions.map((x) => x.step);
        // Every acknowledged step is stored, exactly once, with no gap; nothing beyond them.
        expect(got, attempt).toEqual(Array.from({ length: got.length }, (_, k) => k + 1));
        expect(got).toEqual(steps);
        stored += got.length;
        total += steps.length;
        const record = await store.getEpisode(attempt);
        expect(record?.steps).toBe(got.length);
      }
    } finally {
      await store.close();
    }
    latencies.sort((a, b) => a - b);
    const p50 = latencies[latencies.length >> 1]!;
    const p99 = latencies[Math.floor(latencies.length * 0.99)]!;
    const growth = rssStart > 0 ? (rssEnd - rssStart) / rssStart : 0;
    console.log(
      `T8: ${EPISODES} episodes, ${SECONDS} s, ${total} steps (${(total / SECONDS).toFixed(0)}/s), ${acked.size} attempts, ` +
        `p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms, max ${latencies[latencies.length - 1]!.toFixed(1)} ms, ` +
        `heap after GC ${((heapBefore ?? 0) / 2 ** 20).toFixed(1)} -> ${(heapAfter / 2 ** 20).toFixed(1)} MiB, ` +
        `RSS ${(rssStart / 1024).toFixed(0)} -> ${(rssEnd / 1024).toFixed(0)} MiB (${(growth * 100).toFixed(1)}%); ` +
        `bound ${bound} ms; null route p99 with the same clients just before: ${baseline.toFixed(2)} ms`,
    );
    expect(stored).toBe(total);
    expect(total).toBeGreaterThan(EPISODES * 10);
    expect(p99).toBeLessThanOrEqual(bound);
    expect(rssStart, 'the RSS sample after warm-up was taken').toBeGreaterThan(0);
    expect(heapBefore, 'the heap sample after warm-up was taken').toBeGreaterThan(0);
    expect(heapAfter, 'post-GC heap growth after warm-up (T8: <= 10%)').toBeLessThanOrEqual(Math.max(heapBefore! * (1 + HEAP_GROWTH), heapBefore! + HEAP_FLOOR_BYTES));
  }, (SECONDS + 180) * 1000);
});
