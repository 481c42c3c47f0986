/**
 * Replicas must-show (issue 21): PostgreSQL + 3 `envharness serve` replicas + HAProxy on loopback. A client
 * steps 64 retail episodes through the balancer with Idempotency-Keys and retries; one replica is SIGKILLed
 * mid-run. Afterwards: no acknowledged transition is lost or duplicated, the episodes the dead replica held
 * were taken over and rebuilt, and every episode ends with the state hashes and rewards of the same seeds
 * and actions played in this process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinDomains } from '../../src/builtins.js';
import { createEpisode, createHarness, type Action, type StepResult, type StoredTask } from '../../src/index.js';
import { createPostgresStore } from '../../src/storage/postgres/index.js';
import { createTestDatabase, PG_SKIP_MESSAGE, PG_TEST_URL, type TestDatabase } from '../support/postgres.js';
import { systemClock } from '../../src/cli/clock.js';

const EPISODES = 64;
const CONCURRENCY = 16;
const TOKEN = 'replica-test-token-0123456789';
const MAX_ATTEMPTS = 60;

const haproxy = (() => {
  for (const path of ['/usr/sbin/haproxy', '/usr/bin/haproxy', '/usr/local/sbin/haproxy']) {
    try {
      if (existsSync(path)) return path;
    } catch {
      // next
    }
  }
  return undefined;
})();

if (PG_TEST_URL === undefined || haproxy === undefined) {
  describe('replicas behind HAProxy', () => {
    it.skip(PG_TEST_URL === undefined ? PG_SKIP_MESSAGE : 'HAProxy not installed (apt-get install haproxy; .ci/run installs it)', () => undefined);
  });
} else {
  const dir = mkdtempSync(join(tmpdir(), 'envharness-replicas-'));
  let db: TestDatabase;
  let storeUrl: string;
  let tasks: StoredTask[];
  const replicas: Array<{ port: number; child: ChildProcess }> = [];
  let proxy: ChildProcess | undefined;
  let proxyPort: number;

  beforeAll(async () => {
    db = await createTestDatabase('envh_replicas');
    storeUrl = db.schemaUrl();
    const harness = await createHarness({ clock: systemClock, store: storeUrl, domains: builtinDomains() });
    try {
      await harness.initialize({ seed: 1 });
      await harness.installRegressionSets(); // they install on first use; the episodes play their tasks
      tasks = (await harness.store.listTasks({ split: 'regression', status: 'active' })).slice(0, EPISODES);
    } finally {
      await harness.close();
    }
    expect(tasks).toHaveLength(EPISODES);
    for (let i = 0; i < 3; i++) replicas.push(await startReplica(storeUrl));
    proxyPort = await freePort();
    const cfg = join(dir, 'haproxy.cfg');
    writeFileSync(cfg, haproxyConfig(proxyPort, replicas.map((r) => r.port)));
    proxy = spawn(haproxy, ['-f', cfg, '-db'], { stdio: ['ignore', 'pipe', 'pipe'] });
    await waitFor(async () => (await call(proxyPort, 'GET', '/v1/health', TOKEN)).status === 200, 'HAProxy to serve /v1/health');
  }, 180_000);

  afterAll(async () => {
    proxy?.kill('SIGKILL');
    for (const r of replicas) r.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    await db?.drop();
  });

  describe('replicas behind HAProxy', () => {
    it('64 episodes through the balancer, one replica SIGKILLed: nothing lost or duplicated, same results as one process', { timeout: 300_000 }, async () => {
      // Episodes, created with their first reset through the balancer.
      const runs: Array<{ task: (typeof tasks)[number]; seed: number; id: string; token: string; actions: Action[]; acked: string[] }> = [];
      for (const [i, task] of tasks.entries()) {
        const seed = 1000 + i;
        const created = await call(proxyPort, 'POST', '/v1/episodes', TOKEN, { taskId: task.id, seed });
        expect(created.status, created.body).toBe(201);
        const { episode, token } = JSON.parse(created.body) as { episode: { id: string }; token: string };
        runs.push({ task, seed, id: episode.id, token, actions: (task.spec.solution ?? []) as Action[], acked: [] as string[] });
      }
      const total = runs.reduce((n, r) => n + r.actions.length, 0);
      let ackedSteps = 0;
      let retries = 0;
      let killed = false;
      const victim = replicas[1]!;
      // The victim's replica id: the owner of an episode created on it directly (not one of the runs).
      const schema = new URL(storeUrl).searchParams.get('schema');
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      const probe = await call(victim.port, 'POST', '/v1/episodes', TOKEN, { taskId: tasks[0]!.id, seed: 999 });
      expect(probe.status, probe.body).toBe(201);
      const probeId = (JSON.parse(probe.body) as { episode: { id: string } }).episode.id;
      const victimId = (await client.query<{ owner: string }>(`SELECT owner FROM ${schema}.server_episodes WHERE id = $1`, [probeId])).rows[0]!.owner;
      // The episodes the victim held when it died (read just before the kill), and the read under way, if any.
      let heldAtKill: string[] | undefined;
      let probing: Promise<void> | undefined;

      // 16 clients, each stepping its episodes to the end; the second replica dies a third of the way through.
      const queue = [...runs];
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          for (let run = queue.shift(); run !== undefined; run = queue.shift()) {
            for (const [k, action] of run.actions.entries()) {
              const body = { action, expectedStep: k + 1 };
              for (let attempt = 1; ; attempt++) {
                const reply = await call(proxyPort, 'POST', `/v1/episodes/${run.id}/step`, run.token, body, { 'idempotency-key': `${run.id}-${k + 1}` }).catch((error: Error) => ({ status: 0, body: error.message, headers: {} }));
                if (reply.status === 200) {
                  run.acked.push(reply.body);
                  break;
                }
                // Only what a replica's death causes is retried: the connection, the balancer, a busy or moved episode.
                const retriable = reply.status === 0 || reply.status >= 500 || (reply.status === 409 && /EPISODE_BUSY|episode_moved|STORE_CONFLICT/.test(reply.body));
                if (!retriable || attempt === MAX_ATTEMPTS) throw new Error(`step ${k + 1} of ${run.id}: ${reply.status} ${reply.body}`);
                retries += 1;
                await sleep(50 * Math.min(attempt, 10));
              }
              ackedSteps += 1;
              if (!killed && probing === undefined && ackedSteps >= total / 3) {
                // What the victim holds is read first and the kill follows the read: read after the kill, the
                // survivors (HAProxy redispatches the retries at once) could already have taken every one over.
                // A read that finds it holding no live one (the survivors took its episodes over, as they do before
                // any kill, or those it holds have ended) puts the kill off to a later step: the kill is meant to hit
                // live episodes.
                probing = client
                  .query<{ id: string }>(`SELECT id FROM ${schema}.server_episodes WHERE owner = $1 AND id <> $2`, [victimId, probeId])
                  .then((r) => {
                    probing = undefined;
                    // Live: the client has steps of it still to send (an ended episode is never taken over).
                    const live = r.rows.map((row) => row.id).filter((id) => runs.some((x) => x.id === id && x.acked.length < x.actions.length));
                    if (killed || live.length === 0) return;
                    killed = true;
                    heldAtKill = live;
                    victim.child.kill('SIGKILL');
                  });
              }
            }
          }
        }),
      );
      await probing;
      expect(killed).toBe(true);
      expect(ackedSteps).toBe(total);

      // What the store holds, read directly.
      const store = await createPostgresStore(storeUrl);
      try {
        const held = heldAtKill!;
        const epochs = (await client.query<{ id: string; epoch: string }>(`SELECT id, epoch FROM ${schema}.server_episodes`)).rows;
        const takenOver = epochs.filter((r) => Number(r.epoch) > 1).length;
        const domains = new Map(builtinDomains().map((d) => [d.name, d]));
        for (const run of runs) {
          const transitions = await store.listTransitions(`${run.id}:1`);
          // Every acknowledged step is stored once, in order, with the action the client sent.
          expect(transitions.map((t) => t.step)).toEqual(run.actions.map((_, k) => k + 1));
          expect(transitions.map((t) => t.action)).toEqual(run.actions);
          // Each acknowledgement is the stored step's result.
          run.acked.forEach((text, k) => {
            const result = JSON.parse(text) as StepResult;
            expect(result.info.step).toBe(k + 1);
            expect(result.info.stateHash).toBe(transitions[k]!.info.stateHash);
            expect(result.reward).toBe(transitions[k]!.reward);
          });
          // The same seed and actions in this process give the same states and rewards.
          const local = createEpisode(domains.get(run.task.domain)!, run.task);
          local.reset({ seed: run.seed });
          const expected = run.actions.map((a) => local.step(a));
          expect(transitions.map((t) => [t.info.stateHash, t.reward])).toEqual(expected.map((r) => [r.info.stateHash, r.reward]));
          expect(transitions.at(-1)?.terminated || transitions.at(-1)?.truncated).toBe(true);
        }
        // The kill really hit live episodes: some the victim held when it died were taken over by a survivor and
        // rebuilt, and every step of them is stored once (above). Whether a request was in flight on the victim at
        // that moment (the client's retries) is timing: HAProxy redispatches a refused connection by itself.
        // Creation goes to one replica and stepping to the episode's own, so takeovers happen before the kill too.
        const ownersNow = new Map(
          (await client.query<{ id: string; owner: string }>(`SELECT id, owner FROM ${schema}.server_episodes`)).rows.map((r) => [r.id, r.owner]),
        );
        expect(held.length).toBeGreaterThan(0);
        expect(held.filter((id) => ownersNow.get(id) !== victimId).length).toBeGreaterThan(0);
        expect(takenOver).toBeGreaterThan(0);
        const owners = (await client.query<{ owner: string }>(`SELECT DISTINCT owner FROM ${schema}.server_episodes`)).rows;
        expect(owners.length).toBeGreaterThanOrEqual(2);

        // A retry of an applied step on another replica gets the original reply, and applies nothing.
        const survivor = replicas[2]!;
        for (const run of runs.slice(0, 8)) {
          const k = run.actions.length;
          const again = await call(survivor.port, 'POST', `/v1/episodes/${run.id}/step`, run.token, { action: run.actions[k - 1], expectedStep: k }, { 'idempotency-key': `${run.id}-${k}` });
          expect(again.status).toBe(200);
          expect(again.body).toBe(run.acked[k - 1]);
          expect(again.headers['idempotent-replayed']).toBe('true');
          expect(await store.listTransitions(`${run.id}:1`)).toHaveLength(k);
        }
        // Tokens are capabilities on every replica: a wrong token is 404 everywhere.
        expect((await call(survivor.port, 'GET', `/v1/episodes/${runs[0]!.id}`, 'ehe_wrong_token_000000000000000')).status).toBe(404);
        console.info(`replicas: ${EPISODES} episodes, ${total} steps acknowledged, ${retries} retries, ${held.length} episodes held by the killed replica, ${takenOver} episodes taken over`);
      } finally {
        await client.end();
        await store.close();
      }
    });
  });

  async function startReplica(url: string): Promise<{ port: number; child: ChildProcess }> {
    const port = await freePort();
    const child = spawn(process.execPath, ['bin/envharness.js', '--store', url, 'serve', '--port', String(port), '--token', TOKEN, '--no-mcp'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    });
    let err = '';
    child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    await waitFor(async () => (await call(port, 'GET', '/v1/health', TOKEN).catch(() => ({ status: 0 }))).status === 200, `replica on ${port} (${err})`);
    return { port, child };
  }
}

function haproxyConfig(port: number, backends: number[]): string {
  return [
    'global',
    '  maxconn 2000',
    'defaults',
    '  mode http',
    '  timeout connect 1s',
    '  timeout client 30s',
    '  timeout server 30s',
    '  retries 3',
    '  option redispatch',
    'frontend api',
    `  bind 127.0.0.1:${port}`,
    '  default_backend replicas',
    'backend replicas',
    // One replica per episode while it lives (hash of /v1/episodes/<id>); its episodes move when it dies.
    '  balance uri depth 3',
    '  hash-type consistent',
    '  option httpchk',
    `  http-check send meth GET uri /v1/health ver HTTP/1.1 hdr Host 127.0.0.1 hdr Authorization "Bearer ${TOKEN}"`,
    '  default-server inter 200ms fall 2 rise 2',
    ...backends.map((p, i) => `  server r${i + 1} 127.0.0.1:${p} check`),
    '',
  ].join('\n');
}

interface Reply {
  status: number;
  body: string;
  headers: Record<string, string>;
}

async function call(port: number, method: string, path: string, token: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    signal: AbortSignal.timeout(20_000),
  });
  return { status: response.status, body: await response.text(), headers: Object.fromEntries(response.headers) };
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

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 90_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
