/**
 * PostgreSQL bench: transition writes/s (one batch per call, and concurrent calls group-committed), steps/s
 * through HAProxy with 1, 2 and 3 `serve` replicas, and the time to rebuild an episode by replay against its
 * length. Uses ENVHARNESS_TEST_PG, or starts a throwaway cluster with .ci/postgres.sh.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import net from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { createEpisode, createHarness, NODE_HEAP_FLAGS, type Action, type StoredTask, type Transition } from '../src/index.js';
import { builtinDomains } from '../src/builtins.js';
import { createPostgresStore, type PostgresStore } from '../src/storage/postgres/index.js';
import { createEpisodeRecorder, replayInto } from '../src/server/replicas.js';
import { makeTransition } from '../test/conformance/store-fixtures.js';
import { fmt, median, type BenchRow, type BenchSection } from './lib.js';
import { systemClock } from '../src/cli/clock.js';

const TOKEN = 'bench-replica-token-0123456789';
const HAPROXY = ['/usr/sbin/haproxy', '/usr/bin/haproxy'].find((p) => existsSync(p));
const LOAD_SECONDS = 5;
const CLIENTS = 16;

export async function run(): Promise<BenchSection[]> {
  const dir = mkdtempSync(join(tmpdir(), 'envharness-bench-pg-'));
  // The cluster runs as user postgres (initdb refuses root), which must be able to enter this folder.
  chmodSync(dir, 0o755);
  let admin = process.env.ENVHARNESS_TEST_PG || undefined;
  let started = false;
  try {
    if (admin === undefined) {
      try {
        admin = execFileSync('.ci/postgres.sh', ['start', join(dir, 'pg')], { encoding: 'utf8' }).trim();
        started = true;
      } catch (error) {
        return [{ title: 'PostgreSQL', description: `not measured: no PostgreSQL server (${String(error).slice(0, 200)}); set ENVHARNESS_TEST_PG or install postgresql`, rows: [] }];
      }
    }
    const database = await createDatabase(admin);
    const load = `load average ${loadavg()[0]!.toFixed(1)} at the start`;
    return [await benchWrites(database, load), await benchReplicas(database, dir, load), await benchRebuild(database, load)];
  } finally {
    if (started) execFileSync('.ci/postgres.sh', ['stop', join(dir, 'pg')]);
    rmSync(dir, { recursive: true, force: true });
  }
}

async function createDatabase(admin: string): Promise<string> {
  const name = `envh_bench_${process.pid}_${Date.now()}`;
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return url.toString();
}

function schemaUrl(database: string, schema: string): string {
  const u = new URL(database);
  u.searchParams.set('schema', schema);
  return u.toString();
}

async function benchWrites(database: string, load: string): Promise<BenchSection> {
  const store = await createPostgresStore(schemaUrl(database, 'writes'));
  const rows: BenchRow[] = [];
  try {
    const template = makeTransition('bench', 0);
    let episode = 0;
    const batchOf = (size: number): Transition[] => {
      const id = `bench-${(episode++).toString(16).padStart(12, '0')}`;
      return Array.from({ length: size }, (_, s) => ({ ...template, episodeId: id, step: s, info: { ...template.info, step: s } }));
    };
    const cases = [
      { label: '1 call at a time, 512 transitions each', calls: 1, size: 512, total: 51_200 },
      { label: '1 call at a time, 4096 transitions each', calls: 1, size: 4096, total: 81_920 },
      { label: '64 concurrent calls of 16 (group commit)', calls: 64, size: 16, total: 40_960 },
      { label: '8 concurrent calls of 1 (group commit)', calls: 8, size: 1, total: 4_000 },
    ];
    for (const c of cases) {
      const rates: number[] = [];
      const before = store.transitionCommits;
      for (let r = 0; r < 3; r++) {
        const t0 = performance.now();
        for (let written = 0; written < c.total; written += c.calls * c.size) {
          await Promise.all(Array.from({ length: c.calls }, () => store.appendTransitions(batchOf(c.size))));
        }
        rates.push((c.total * 1000) / (performance.now() - t0));
      }
      const commits = (store.transitionCommits - before) / 3;
      rows.push({ case: c.label, 'transitions/s': fmt(median(rates)), 'commits per run': Math.round(commits), target: c.size >= 512 ? '≥ 50k/s' : '' });
    }
  } finally {
    await store.close();
  }
  return {
    title: 'PostgreSQL: transition writes',
    description: `appendTransitions on a PostgreSQL 15 server on loopback (synchronous_commit on, fsync on), ${Buffer.byteLength(JSON.stringify(makeTransition('bench', 0)))}-byte transitions, median of 3 runs. Measured under today's load: ${load}.`,
    rows,
  };
}

async function benchReplicas(database: string, dir: string, load: string): Promise<BenchSection> {
  if (HAPROXY === undefined) return { title: 'PostgreSQL: steps through HAProxy', description: 'not measured: haproxy is not installed', rows: [] };
  const url = schemaUrl(database, 'replicas');
  const harness = await createHarness({ clock: systemClock, store: url, domains: builtinDomains() });
  let tasks: StoredTask[];
  try {
    await harness.initialize({ seed: 1 });
    await harness.installRegressionSets(); // shipped sets install on first use; the replicas play their tasks
    tasks = await harness.store.listTasks({ split: 'regression', status: 'active' });
  } finally {
    await harness.close();
  }
  const replicas: Array<{ port: number; child: ChildProcess }> = [];
  const rows: BenchRow[] = [];
  try {
    for (let i = 0; i < 3; i++) replicas.push(await startReplica(url));
    for (const n of [1, 2, 3]) {
      const port = await freePort();
      const cfg = join(dir, `haproxy-${n}.cfg`);
      writeFileSync(cfg, haproxyConfig(port, replicas.slice(0, n).map((r) => r.port)));
      const proxy = spawn(HAPROXY, ['-f', cfg, '-db'], { stdio: 'ignore' });
      try {
        await waitFor(async () => (await call(port, 'GET', '/v1/health')).status === 200);
        const { steps, ms, latencies } = await loadRun(port, tasks);
        latencies.sort((a, b) => a - b);
        rows.push({
          replicas: n,
          'steps/s': fmt((steps * 1000) / ms),
          'p50 ms': latencies[Math.floor(latencies.length / 2)]!.toFixed(1),
          'p99 ms': latencies[Math.floor(latencies.length * 0.99)]!.toFixed(1),
        });
      } finally {
        proxy.kill('SIGKILL');
      }
    }
  } finally {
    for (const r of replicas) r.child.kill('SIGTERM');
  }
  return {
    title: 'PostgreSQL: steps through HAProxy',
    description:
      `${CLIENTS} Node clients (fetch, keep-alive), each creating a retail regression episode and stepping its reference solution, then the next, for ${LOAD_SECONDS} s, ` +
      `through HAProxy (uri hash: one replica per episode) to 1, 2 or 3 \`envharness serve\` replicas on one PostgreSQL. Steps only (creation excluded from the count). ` +
      `Clients, HAProxy, replicas and PostgreSQL all share the 2 cores, so more replicas cannot add CPU here; measured under today's load: ${load}.`,
    rows,
  };
}

async function loadRun(port: number, tasks: StoredTask[]): Promise<{ steps: number; ms: number; latencies: number[] }> {
  let steps = 0;
  let next = 0;
  const latencies: number[] = [];
  const until = performance.now() + LOAD_SECONDS * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (performance.now() < until) {
        const task = tasks[next++ % tasks.length]!;
        const created = await call(port, 'POST', '/v1/episodes', TOKEN, { taskId: task.id, seed: next });
        if (created.status !== 201) throw new Error(`create: ${created.status} ${created.body}`);
        const { episode, token } = JSON.parse(created.body) as { episode: { id: string }; token: string };
        for (const action of (task.spec.solution ?? []) as Action[]) {
          if (performance.now() >= until) break;
          const s0 = performance.now();
          const r = await call(port, 'POST', `/v1/episodes/${episode.id}/step`, token, { action });
          if (r.status !== 200) throw new Error(`step: ${r.status} ${r.body}`);
          latencies.push(performance.now() - s0);
          steps += 1;
        }
      }
    }),
  );
  return { steps, ms: performance.now() - t0, latencies };
}

async function benchRebuild(database: string, load: string): Promise<BenchSection> {
  const url = schemaUrl(database, 'rebuild');
  const harness = await createHarness({ clock: systemClock, store: url, domains: builtinDomains() });
  const rows: BenchRow[] = [];
  try {
    await harness.initialize({ seed: 1 });
    await harness.installRegressionSets(['retail']);
    const task = (await harness.store.listTasks({ split: 'regression', status: 'active' })).find((t) => t.domain === 'retail' && (t.spec.solution ?? []).some((a) => a.type === 'tool'))!;
    const domain = builtinDomains().find((d) => d.name === task.domain)!;
    const probe = (task.spec.solution as Action[]).find((a) => a.type === 'tool')!;
    const store = harness.store as PostgresStore;
    // Long episodes: the task's budget lifted, one read-only call repeated (REDUNDANT_CALL feedback each time).
    const dynamics = { budget: { steps: 100_000, toolCalls: 100_000, consecutiveErrors: 100_000 } };
    for (const length of [10, 100, 1000, 5000]) {
      const id = `rebuild-${length}`;
      const recorder = createEpisodeRecorder(store);
      const episode = createEpisode(domain, task, { ...dynamics, recorder, episodeId: () => id });
      episode.reset({ seed: 3 });
      for (let i = 0; i < length && episode.status === 'running'; i++) episode.step(probe);
      await episode.flush();
      const stored = (await store.listTransitions(id)).length;
      const times: number[] = [];
      for (let r = 0; r < 5; r++) {
        const t0 = performance.now();
        const transitions = await store.listTransitions(id);
        const fresh = createEpisodeRecorder(store);
        replayInto(createEpisode(domain, task, { ...dynamics, recorder: fresh, episodeId: () => id }), fresh, 3, transitions);
        times.push(performance.now() - t0);
      }
      rows.push({ 'steps played': length, 'steps stored (the episode may end first)': stored, 'rebuild ms (read + replay)': median(times).toFixed(1), 'µs per stored step': ((median(times) * 1000) / Math.max(1, stored)).toFixed(0) });
    }
  } finally {
    await harness.close();
  }
  return {
    title: 'PostgreSQL: rebuilding an episode by replay',
    description: `What a replica pays to take over an episode: read its transitions from PostgreSQL and replay them (state hash checked per step), for one retail task with a read-only call repeated; median of 5. Measured under today's load: ${load}.`,
    rows,
  };
}

async function startReplica(url: string): Promise<{ port: number; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [...NODE_HEAP_FLAGS, 'bin/envharness.js', '--store', url, 'serve', '--port', String(port), '--token', TOKEN, '--no-mcp'], { stdio: 'ignore' });
  await waitFor(async () => (await call(port, 'GET', '/v1/health')).status === 200);
  return { port, child };
}

function haproxyConfig(port: number, backends: number[]): string {
  return [
    'global', '  maxconn 2000',
    'defaults', '  mode http', '  timeout connect 1s', '  timeout client 30s', '  timeout server 30s', '  option http-keep-alive',
    'frontend api', `  bind 127.0.0.1:${port}`, '  default_backend replicas',
    'backend replicas', '  balance uri depth 3', '  hash-type consistent', '  option httpchk',
    `  http-check send meth GET uri /v1/health ver HTTP/1.1 hdr Host 127.0.0.1 hdr Authorization "Bearer ${TOKEN}"`,
    ...backends.map((p, i) => `  server r${i + 1} 127.0.0.1:${p} check inter 1s`),
    '',
  ].join('\n');
}

async function call(port: number, method: string, path: string, token = TOKEN, body?: unknown): Promise<{ status: number; body: string }> {
  try {
    const r = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: r.status, body: await r.text() };
  } catch (error) {
    return { status: 0, body: String(error) };
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

async function waitFor(check: () => Promise<boolean>, timeoutMs = 90_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('timed out waiting for a server');
    await new Promise((r) => setTimeout(r, 200));
  }
}
