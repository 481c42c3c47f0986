/** HTTP API v1 end to end on a real loopback socket: endpoints, T10 (authorization), T11 (idempotency, races), T18 (exposure), limits, reaper. */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOracleAgent } from '../../src/agents/index.js';
import { ERROR_CODES, resolvesIn } from '../../src/index.js';
import { createServer, HTTP_STATUS } from '../../src/server/index.js';
import { createClient, startTestServer, type RawResponse, type TestServer } from '../../src/server/testing/fixture.js';

let t: TestServer;
let client: ReturnType<typeof createClient>;

beforeAll(async () => {
  t = await startTestServer({ server: { agents: { oracle: () => createOracleAgent() } } });
  client = createClient(t.port, { sockets: 16 });
}, 60_000);
afterAll(async () => {
  client?.close();
  await t?.close();
});

const admin = (path: string, body?: object | string, method?: string) => client.request({ path, token: t.token, ...(body !== undefined ? { body } : {}), ...(method ? { method } : {}) });

async function createEpisode(body: object = { taskId: t.tasks.endless, seed: 1 }): Promise<{ id: string; token: string; created: any }> {
  const res = await admin('/v1/episodes', body);
  expect(res.status, res.text).toBe(201);
  return { id: res.json.episode.id, token: res.json.token, created: res.json };
}

const step = (ep: { id: string; token: string }, action: unknown, headers: Record<string, string> = {}, extra: object = {}) =>
  client.request({ path: `/v1/episodes/${ep.id}/step`, token: ep.token, headers, body: { action, ...extra } });

function expectProblem(res: RawResponse, status: number, code?: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.headers['content-type']).toBe('application/problem+json');
  expect(res.json.status).toBe(status);
  if (code !== undefined) expect(res.json.code).toBe(code);
}

/** Everything a client could observe of an episode's state, from the server's side. */
function stateOf(ep: { id: string; token: string }) {
  const e = t.server.episodes.authorize(ep.id, ep.token)!;
  return { steps: e.episode?.steps ?? 0, hash: e.episode?.stateHash(), attempt: e.attempt, status: e.episode?.status };
}

describe('episodes over HTTP', () => {
  it('creates, resets, steps, reads back its transitions and closes an episode', async () => {
    const ep = await createEpisode({ domain: 'inventory', taskType: 'restock', level: 1 });
    expect(ep.created.episode.status).toBe('ready');
    const reset = await client.request({ path: `/v1/episodes/${ep.id}/reset`, token: ep.token, body: { seed: 7 } });
    expect(reset.status).toBe(200);
    expect(reset.json.observation.kind).toBe('reset');
    expect(reset.json.info).toMatchObject({ seed: 7, attempt: 1, slice: 'inventory/restock', level: 1 });
    const tool = await step(ep, { type: 'tool', tool: 'list_items', args: {} });
    expect(tool.status).toBe(200);
    expect(tool.json.info.step).toBe(1);
    const bad = await step(ep, { type: 'tool', tool: 'no_such_tool', args: {} });
    expect(bad.status).toBe(200);
    expect(bad.json.observation.error).toMatchObject({ code: 'INVALID_ACTION', pointer: '/tool' });
    const got = await client.request({ path: `/v1/episodes/${ep.id}`, token: ep.token });
    expect(got.status).toBe(200);
    expect(got.json.episode).toMatchObject({ status: 'running', steps: 2, attempt: 1 });
    // Acknowledged means committed: both transitions are in the store already.
    expect(got.json.transitions.map((x: any) => x.step)).toEqual([1, 2]);
    const closed = await client.request({ method: 'DELETE', path: `/v1/episodes/${ep.id}`, token: ep.token });
    expect(closed.json.episode.status).toBe('closed');
    expectProblem(await client.request({ path: `/v1/episodes/${ep.id}`, token: ep.token }), 404, 'EPISODE_NOT_FOUND');
    const stored = await t.harness.store.getEpisode(got.json.episode.attemptId);
    expect(stored?.status).toBe('closed');
  });

  it('plays an inventory task to the end with full reward and refuses steps after it', async () => {
    const ep = await createEpisode({ taskId: t.tasks.endless, seed: 3 });
    const actions = [
      { type: 'tool', tool: 'get_stock', args: { item: 'widget-1' } },
      { type: 'tool', tool: 'add_stock', args: { item: 'widget-1', quantity: 2 } },
      { type: 'message', text: 'widget-1 now has 7 units.' },
      { type: 'finish' },
    ];
    let last: RawResponse | undefined;
    for (const action of actions) {
      last = await step(ep, action);
      expect(last.status, last.text).toBe(200);
    }
    expect(last!.json).toMatchObject({ terminated: true, truncated: false, reward: 1 });
    expectProblem(await step(ep, { type: 'finish' }), 409, 'EPISODE_FINISHED');
    // A fixed task: the next reset runs the same task again.
    const again = await client.request({ path: `/v1/episodes/${ep.id}/reset`, token: ep.token, body: {} });
    expect(again.json.info).toMatchObject({ taskId: t.tasks.endless, attempt: 2 });
    expect(Number.isInteger(again.json.info.seed)).toBe(true);
  });

  it('samples a new task at every reset when created by sampling', async () => {
    const ep = await createEpisode({ domain: 'math', seed: 1 });
    const seen = new Set<string>();
    for (let i = 0; i < 8; i++) {
      const r = await client.request({ path: `/v1/episodes/${ep.id}/reset`, token: ep.token, body: { seed: i } });
      expect(r.json.info.domain).toBe('math');
      seen.add(r.json.info.taskId);
    }
    expect(seen.size).toBeGreaterThan(1);
  });

  it('steps many episodes in one request, each item failing on its own', async () => {
    const a = await createEpisode();
    const b = await createEpisode();
    const res = await admin('/v1/steps', {
      steps: [
        { episodeId: a.id, token: a.token, action: { type: 'tool', tool: 'get_stock', args: { item: 'widget-1' } } },
        { episodeId: b.id, token: b.token, action: { type: 'tool', tool: 'list_items', args: {} }, expectedStep: 1 },
        { episodeId: b.id, token: a.token, action: { type: 'finish' } },
        { episodeId: a.id, token: a.token, action: { type: 'finish' } },
        { episodeId: a.id, token: a.token, action: 'not an action', bogus: 1 },
      ],
    });
    expect(res.status).toBe(200);
    const [ra, rb, foreign, sameEpisode, invalid] = res.json.results;
    expect(ra.ok && rb.ok).toBe(true);
    expect(ra.result.observation.output).toMatchObject({ item: 'widget-1', quantity: 5 });
    expect(foreign).toMatchObject({ ok: false, problem: { status: 404, code: 'EPISODE_NOT_FOUND' } });
    expect(sameEpisode).toMatchObject({ ok: false, problem: { status: 409, code: 'EPISODE_BUSY' } });
    expect(invalid).toMatchObject({ ok: false, problem: { status: 422, pointer: '/steps/4/bogus' } });
    expect(stateOf(a).steps).toBe(1);
    expect(stateOf(b).steps).toBe(1);
    // Answered from the step journal: SQLite has it within 10 ms (docs/http.md, "Durability").
    await t.server.episodes.settled();
    const stored = await t.harness.store.listTransitions(t.server.episodes.authorize(a.id, a.token)!.episode!.id!);
    expect(stored).toHaveLength(1);
  });

  it('drives the curriculum, snapshots and runs', async () => {
    const use = await admin('/v1/curriculum', { strategy: 'threshold', config: { threshold: { minSamples: 2, patience: 1 } } }, 'PUT');
    expect(use.status, use.text).toBe(200);
    expect(use.json).toMatchObject({ active: true, strategy: 'threshold' });
    const results = Array.from({ length: 6 }, () => ({ slice: 'math/arithmetic', level: 1, success: 1 }));
    const adjusted = await admin('/v1/curriculum/adjust', { results });
    expect(adjusted.status, adjusted.text).toBe(200);
    expect(adjusted.json.curriculum.levels['math/arithmetic']).toBeGreaterThan(1);
    const dist = await admin('/v1/curriculum/distribution', { results: [{ slice: 'inventory/restock', level: 1, success: 0 }] });
    expect(dist.status).toBe(200);
    const badSlice = await admin('/v1/curriculum/adjust', { results: [{ slice: 'nope/x', level: 1, success: 1 }] });
    expectProblem(badSlice, 422, 'PARAMS_INVALID');
    expect(resolvesIn({ results: [{ slice: 'nope/x', level: 1, success: 1 }] }, badSlice.json.pointer)).toBe(true);
    // Nothing pinned: the curriculum picks the task.
    const ep = await createEpisode({ seed: 2 });
    expect(ep.created.info.taskId).toMatch(/^[0-9a-f]{64}$/);

    const snap = await admin('/v1/snapshots', { label: 'before' });
    expect(snap.status).toBe(201);
    const sampled = [];
    for (let i = 0; i < 5; i++) sampled.push((await admin('/v1/tasks/sample')).json.task.id);
    const restored = await admin(`/v1/snapshots/${snap.json.id.slice(0, 16)}/restore`, {});
    expect(restored.json.id).toBe(snap.json.id);
    const again = [];
    for (let i = 0; i < 5; i++) again.push((await admin('/v1/tasks/sample')).json.task.id);
    expect(again).toEqual(sampled);
    expect((await admin(`/v1/snapshots/${snap.json.id}`)).json.label).toBe('before');
    expect((await admin('/v1/snapshots')).json.snapshots.length).toBeGreaterThan(0);

    const run = await admin('/v1/runs', { agent: { name: 'py-agent', version: '1', config: { lr: 0.1 } } });
    expect(run.status).toBe(201);
    const inRun = await createEpisode({ taskId: t.tasks.endless, seed: 1, runId: run.json.run.id });
    await step(inRun, { type: 'finish' });
    const finished = await admin(`/v1/runs/${run.json.run.id}/finish`, { summary: { reward: 0 } });
    expect(finished.json.run).toMatchObject({ status: 'finished', summary: { reward: 0 } });
    expectProblem(await admin(`/v1/runs/${run.json.run.id}/finish`, {}), 409, 'STORE_CONFLICT');
    expect((await admin(`/v1/runs/${run.json.run.id}`)).json.run.snapshotEnd).toMatch(/^[0-9a-f]{64}$/);
    const episodes = await t.harness.store.listEpisodes({ runId: run.json.run.id });
    expect(episodes).toHaveLength(1);
    expectProblem(await admin('/v1/runs/nope'), 404, 'RUN_NOT_FOUND');
    expectProblem(await admin('/v1/runs', { evaluate: { agent: 'nobody' } }), 422, 'PARAMS_INVALID');
  });

  it('evaluates a server-side agent as a run with pass^k', async () => {
    const res = await admin('/v1/runs', { evaluate: { agent: 'oracle', split: 'heldout', k: 2 } });
    expect(res.status, res.text).toBe(201);
    expect(res.json.run).toMatchObject({ kind: 'eval', status: 'finished' });
    expect(res.json.rows.length).toBeGreaterThan(0);
    expect(res.json.rows[0].passK[0]).toBe(1);
    expect((await admin(`/v1/runs/${res.json.run.id}?events=true`)).json.events.length).toBe(4);
  });

  it('answers the hot routes the same in-process (hono) and on the socket (fast path)', async () => {
    const ep = await createEpisode();
    const inProcess = (path: string, token: string, body: unknown, headers: Record<string, string> = {}) =>
      t.server.fetch(new Request(`http://127.0.0.1${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }));
    const action = { type: 'tool', tool: 'get_stock', args: { item: 'widget-1' } };
    const first = await inProcess(`/v1/episodes/${ep.id}/step`, ep.token, { action }, { 'idempotency-key': 'same' });
    const firstText = await first.text();
    const replay = await step(ep, action, { 'idempotency-key': 'same' });
    expect(replay.text).toBe(firstText);
    const ghost = `/v1/episodes/${ep.id.replace(/.$/, (c) => (c === 'a' ? 'b' : 'a'))}/step`;
    const a = await inProcess(ghost, ep.token, { action });
    const b = await client.request({ path: ghost, token: ep.token, body: { action } });
    expect([a.status, b.status]).toEqual([404, 404]);
    expect(await a.text()).toBe(b.text);
    const batch = { steps: [{ episodeId: ep.id, token: ep.token, action, expectedStep: 2 }] };
    const viaHono = await inProcess('/v1/steps', t.token, batch);
    expect((await viaHono.json() as any).results[0].ok).toBe(true);
    const viaSocket = await admin('/v1/steps', { steps: [{ ...batch.steps[0], expectedStep: 2 }] });
    expect(viaSocket.json.results[0].problem.code).toBe('STORE_CONFLICT');
    expect((await inProcess('/v1/steps', ep.token, batch)).status).toBe(401);
  });

  it('hides reference solutions from task views unless full=true', async () => {
    const task = await admin(`/v1/tasks/${t.tasks.endless}`);
    expect(task.json.task.spec.solution).toBeUndefined();
    expect(task.json.task.spec.user).toBeUndefined();
    const full = await admin(`/v1/tasks/${t.tasks.endless}?full=true`);
    expect(full.json.task.spec.solution.length).toBeGreaterThan(0);
    expectProblem(await admin('/v1/tasks/sample?level=x'), 422, 'PARAMS_INVALID');
    expectProblem(await admin(`/v1/tasks/${'0'.repeat(64)}`), 404, 'TASK_NOT_FOUND');
  });

  it('serves an OpenAPI 3.1 document generated from the zod schemas', async () => {
    const doc = await admin('/v1/openapi.json');
    expect(doc.json.openapi).toBe('3.1.0');
    for (const path of ['/v1/episodes', '/v1/episodes/{id}/step', '/v1/steps', '/v1/curriculum', '/v1/snapshots/{id}/restore', '/v1/runs/{id}']) {
      expect(Object.keys(doc.json.paths)).toContain(path);
    }
    expect(doc.json.components.schemas.StepResult).toBeDefined();
    expect(doc.json.components.schemas.Problem.properties.pointer).toBeDefined();
  });

  it('answers every error as problem+json with a code from the one status table', async () => {
    expectProblem(await admin('/v1/nowhere'), 404, 'ROUTE_NOT_FOUND');
    expectProblem(await admin('/v1/episodes', '{"taskId": '), 422, 'PARAMS_INVALID');
    const conflict = await admin('/v1/episodes', { taskId: t.tasks.endless, level: 2 });
    expectProblem(conflict, 422, 'PARAMS_INVALID');
    expect(conflict.json.pointer).toBe('/level');
    const unknown = await admin('/v1/episodes', { taskId: t.tasks.endless, colour: 'red' });
    expect(unknown.json.pointer).toBe('/colour');
    expectProblem(await admin('/v1/episodes', { domain: 'nope' }), 404, 'DOMAIN_NOT_FOUND');
    expectProblem(await admin('/v1/episodes', { taskId: 'f'.repeat(64) }), 404, 'TASK_NOT_FOUND');
    expectProblem(await client.request({ path: '/v1/episodes', token: t.token, headers: { 'content-type': 'text/plain' }, body: '{}' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('maps every error code to the HTTP status docs/errors.md gives it', () => {
    const documented = new Map<string, number>();
    for (const line of readFileSync('docs/errors.md', 'utf8').split('\n')) {
      const m = /^\| `([A-Z_]+)` \| \d+ \| (\d{3}) \|/.exec(line);
      if (m) documented.set(m[1]!, Number(m[2]));
    }
    for (const code of ERROR_CODES) expect(HTTP_STATUS[code], code).toBe(documented.get(code));
  });
});

describe('T10: authorization matrix', () => {
  it('refuses 100% of foreign, tokenless and malformed attempts on every episode route, and the victim is unchanged', async () => {
    const victim = await createEpisode();
    const attacker = await createEpisode();
    await step(victim, { type: 'tool', tool: 'add_stock', args: { item: 'widget-1', quantity: 1 } });
    const before = stateOf(victim);
    const detailBefore = (await client.request({ path: `/v1/episodes/${victim.id}`, token: victim.token })).text;

    const wrongLength = `${victim.token}x`;
    const credentials: Array<{ name: string; headers: Record<string, string>; expected: number }> = [
      { name: 'no token', headers: {}, expected: 401 },
      { name: 'malformed: not bearer', headers: { authorization: `Basic ${victim.token}` }, expected: 401 },
      { name: 'malformed: bad characters', headers: { authorization: 'Bearer ***' }, expected: 401 },
      { name: 'malformed: empty', headers: { authorization: 'Bearer ' }, expected: 401 },
      { name: "another episode's token", headers: { authorization: `Bearer ${attacker.token}` }, expected: 404 },
      { name: 'the server token', headers: { authorization: `Bearer ${t.token}` }, expected: 404 },
      { name: 'wrong length', headers: { authorization: `Bearer ${wrongLength}` }, expected: 404 },
      { name: 'truncated', headers: { authorization: `Bearer ${victim.token.slice(0, -1)}` }, expected: 404 },
    ];
    const routes = [
      { method: 'GET', path: `/v1/episodes/${victim.id}` },
      { method: 'DELETE', path: `/v1/episodes/${victim.id}` },
      { method: 'POST', path: `/v1/episodes/${victim.id}/reset`, body: { seed: 1 } },
      { method: 'POST', path: `/v1/episodes/${victim.id}/step`, body: { action: { type: 'tool', tool: 'remove_stock', args: { item: 'widget-1', quantity: 1 } } } },
    ];
    let attempts = 0;
    const notFoundBodies = new Map<string, Set<string>>();
    for (const route of routes) {
      for (const cred of credentials) {
        const res = await client.request({ method: route.method, path: route.path, headers: cred.headers, ...(route.body ? { body: route.body } : {}) });
        attempts++;
        expect(res.status, `${route.method} ${route.path} with ${cred.name}`).toBe(cred.expected);
        expect(res.headers['content-type']).toBe('application/problem+json');
        if (res.status === 404) {
          const set = notFoundBodies.get(route.path + route.method) ?? new Set();
          set.add(res.text);
          notFoundBodies.set(route.path + route.method, set);
        }
      }
      // An unknown id with a valid token answers exactly like a foreign token: no existence oracle.
      const unknown = await client.request({ method: route.method, path: route.path.replace(victim.id, attacker.id.replace(/.$/, (c) => (c === '0' ? '1' : '0'))), token: attacker.token, ...(route.body ? { body: route.body } : {}) });
      expect(unknown.status).toBe(404);
    }
    for (const bodies of notFoundBodies.values()) expect(bodies.size).toBe(1);
    // The batched endpoint: the server token is needed, and each item needs its own episode's token.
    const batch = await admin('/v1/steps', { steps: [{ episodeId: victim.id, token: attacker.token, action: { type: 'finish' } }, { episodeId: victim.id, token: wrongLength, action: { type: 'finish' } }] });
    expect(batch.json.results.map((r: any) => r.problem.status)).toEqual([404, 404]);
    expectProblem(await client.request({ path: '/v1/steps', token: attacker.token, body: { steps: [{ episodeId: victim.id, token: victim.token, action: { type: 'finish' } }] } }), 401, 'UNAUTHORIZED');
    // Admin routes refuse episode tokens and anything else that is not the server token.
    for (const path of ['/v1/health', '/v1/pool', '/v1/curriculum', '/v1/runs', '/v1/snapshots', '/v1/openapi.json']) {
      for (const headers of [{}, { authorization: `Bearer ${victim.token}` }, { authorization: `Bearer ${t.token}x` }, { authorization: 'Token abc' }] as Array<Record<string, string>>) {
        const res = await client.request({ path, headers });
        attempts++;
        expect(res.status, `${path} ${JSON.stringify(headers)}`).toBe(401);
      }
    }
    expect(attempts).toBeGreaterThan(50);
    expect(stateOf(victim)).toEqual(before);
    expect((await client.request({ path: `/v1/episodes/${victim.id}`, token: victim.token })).text.replace(/"lastUsedAt":"[^"]+"/, '')).toBe(detailBefore.replace(/"lastUsedAt":"[^"]+"/, ''));
  });
});

describe('T11: idempotency and concurrent steps', () => {
  it('replays the same key byte for byte and refuses the same key with another body (422)', async () => {
    const ep = await createEpisode();
    const action = { type: 'tool', tool: 'add_stock', args: { item: 'gadget-2', quantity: 3 } };
    const first = await step(ep, action, { 'idempotency-key': 'k-1' });
    expect(first.status).toBe(200);
    for (let i = 0; i < 20; i++) {
      const again = await step(ep, action, { 'idempotency-key': 'k-1' });
      expect(again.status).toBe(200);
      expect(again.text).toBe(first.text);
      expect(again.headers['idempotent-replayed']).toBe('true');
    }
    expect(stateOf(ep).steps).toBe(1);
    // The same request in other bytes (key order, whitespace) is the same request: replayed, not applied.
    const reordered = `{ "action" : {"args":{"quantity":3,"item":"gadget-2"},"tool":"add_stock","type":"tool"} }`;
    const same = await client.request({ path: `/v1/episodes/${ep.id}/step`, token: ep.token, headers: { 'idempotency-key': 'k-1' }, body: reordered });
    expect(same.text).toBe(first.text);
    expect(same.headers['idempotent-replayed']).toBe('true');
    // A body that is not JSON is identified by its bytes: the same bytes replay its refusal, others do not.
    const broken = await client.request({ path: `/v1/episodes/${ep.id}/step`, token: ep.token, headers: { 'idempotency-key': 'k-3' }, body: '{"action":' });
    expectProblem(broken, 422, 'PARAMS_INVALID');
    expect((await client.request({ path: `/v1/episodes/${ep.id}/step`, token: ep.token, headers: { 'idempotency-key': 'k-3' }, body: '{"action":' })).text).toBe(broken.text);
    expectProblem(await client.request({ path: `/v1/episodes/${ep.id}/step`, token: ep.token, headers: { 'idempotency-key': 'k-3' }, body: '{"action": ' }), 422, 'IDEMPOTENCY_CONFLICT');
    expect(stateOf(ep).steps).toBe(1);
    const other = await step(ep, { ...action, args: { item: 'gadget-2', quantity: 4 } }, { 'idempotency-key': 'k-1' });
    expectProblem(other, 422, 'IDEMPOTENCY_CONFLICT');
    expect(stateOf(ep).steps).toBe(1);
    // A rejected request is replayed too (same answer), and changes nothing.
    const rejected = await client.request({ path: `/v1/episodes/${ep.id}/step`, token: ep.token, headers: { 'idempotency-key': 'k-2' }, body: { action, expectedStep: 9 } });
    expectProblem(rejected, 409, 'STORE_CONFLICT');
    expect(rejected.json.pointer).toBe('/expectedStep');
    expect((await client.request({ path: `/v1/episodes/${ep.id}/step`, token: ep.token, headers: { 'idempotency-key': 'k-2' }, body: { action, expectedStep: 9 } })).text).toBe(rejected.text);
    expectProblem(await step(ep, action, { 'idempotency-key': 'bad key with spaces' }), 422, 'PARAMS_INVALID');
    const stored = await t.harness.store.listTransitions(t.server.episodes.authorize(ep.id, ep.token)!.episode!.id!);
    expect(stored).toHaveLength(1);
  });

  it('retries after a dropped connection apply the step exactly once', async () => {
    const ep = await createEpisode();
    const body = JSON.stringify({ action: { type: 'tool', tool: 'add_stock', args: { item: 'widget-1', quantity: 1 } } });
    for (let i = 0; i < 20; i++) {
      const key = `drop-${i}`;
      await new Promise<void>((resolve) => {
        const socket = net.connect(t.port, '127.0.0.1', () => {
          socket.end(`POST /v1/episodes/${ep.id}/step HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${ep.token}\r\nIdempotency-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
          socket.destroy();
          resolve();
        });
      });
      const retry = await client.request({ path: `/v1/episodes/${ep.id}/step`, token: ep.token, headers: { 'idempotency-key': key }, body });
      if (retry.status === 409) {
        expect(retry.json.code).toBe('EPISODE_BUSY');
        const again = await client.request({ path: `/v1/episodes/${ep.id}/step`, token: ep.token, headers: { 'idempotency-key': key }, body });
        expect(again.status).toBe(200);
      } else expect(retry.status).toBe(200);
    }
    await t.server.episodes.settled();
    const steps = (await t.harness.store.listTransitions(t.server.episodes.authorize(ep.id, ep.token)!.episode!.id!)).map((x) => x.step);
    expect(steps).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it('1,000 concurrent double steps: exactly one applies, the other gets 409', async () => {
    // The default server answers from its step journal within the request's own turn, so the two requests of
    // a pair rarely overlap; a server committing to SQLite before each answer (journal: false) has them
    // overlap too (EPISODE_BUSY). Both must apply exactly one of each pair.
    const plain = await startTestServer({ server: { journal: false } });
    try {
      for (const server of [t, plain]) {
        const codes = await doubles(server);
        // Both ways of losing are 409: overlapping (busy) or just after the winner (expectedStep already taken).
        expect(codes.EPISODE_BUSY + codes.STORE_CONFLICT).toBe(1000);
        if (server === plain) expect(codes.EPISODE_BUSY).toBeGreaterThan(0);
      }
    } finally {
      await plain.close();
    }
  }, 120_000);
});

/** 1,000 pairs of the same step (same expectedStep) from two connections; checks exactly one of each applied. */
async function doubles(server: TestServer): Promise<{ EPISODE_BUSY: number; STORE_CONFLICT: number }> {
  const own = createClient(server.port, { sockets: 1 });
  const created = await own.request({ path: '/v1/episodes', token: server.token, body: { taskId: server.tasks.endless, seed: 1 } });
  own.close();
  expect(created.status, created.text).toBe(201);
  const ep = { id: created.json.episode.id as string, token: created.json.token as string };
  const a = createClient(server.port, { sockets: 1 });
  const b = createClient(server.port, { sockets: 1 });
  const codes = { EPISODE_BUSY: 0, STORE_CONFLICT: 0 };
  try {
    for (let i = 1; i <= 1000; i++) {
      const action = { type: 'tool', tool: i % 2 ? 'add_stock' : 'get_stock', args: i % 2 ? { item: 'widget-1', quantity: 1 } : { item: 'widget-1' } };
      const req = { path: `/v1/episodes/${ep.id}/step`, token: ep.token, body: { action, expectedStep: i } };
      const [x, y] = await Promise.all([a.request(req), b.request(req)]);
      const statuses = [x.status, y.status].sort();
      expect(statuses, `${x.text} / ${y.text}`).toEqual([200, 409]);
      const loser = x.status === 409 ? x : y;
      codes[loser.json.code as keyof typeof codes]++;
    }
    await server.server.episodes.settled();
    const stored = await server.harness.store.listTransitions(server.server.episodes.authorize(ep.id, ep.token)!.episode!.id!);
    expect(stored.map((x) => x.step)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
    // 500 add_stock calls of 1 applied exactly once each: widget-1 went from 5 to 505.
    const stock = await a.request({ path: `/v1/episodes/${ep.id}/step`, token: ep.token, body: { action: { type: 'tool', tool: 'get_stock', args: { item: 'widget-1' } } } });
    expect(stock.json.observation.output.quantity).toBe(505);
  } finally {
    a.close();
    b.close();
  }
  return codes;
}

describe('T18: exposure', () => {
  it('binds loopback by default', async () => {
    const s = createServer({ harness: t.harness, port: 0 });
    const { host } = await s.listen();
    expect(host).toBe('127.0.0.1');
    expect(s.tokenGenerated).toBe(true);
    expect(s.token).toMatch(/^ehs_[A-Za-z0-9_-]{43}$/);
    await s.close();
  });

  it('answers 403 to foreign Host or Origin and 401 without a token, on every route of the document', async () => {
    const doc = (await admin('/v1/openapi.json')).json;
    const ep = await createEpisode();
    let checked = 0;
    for (const [path, methods] of Object.entries<Record<string, unknown>>(doc.paths)) {
      for (const method of Object.keys(methods)) {
        const p = path.replace('{id}', ep.id);
        const body = method === 'get' || method === 'delete' ? undefined : {};
        for (const headers of [{ host: 'evil.example' }, { host: 'evil.example:80' }, { origin: 'http://evil.example' }, { origin: 'null' }, { host: 'localhost.evil.example' }] as Array<Record<string, string>>) {
          const res = await client.request({ method: method.toUpperCase(), path: p, headers: { authorization: `Bearer ${t.token}`, ...headers }, ...(body ? { body } : {}) });
          expect(res.status, `${method} ${path} ${JSON.stringify(headers)}`).toBe(403);
          expect(res.json.code).toBe('FORBIDDEN');
          checked++;
        }
        const tokenless = await client.request({ method: method.toUpperCase(), path: p, ...(body ? { body } : {}) });
        expect(tokenless.status, `${method} ${path}`).toBe(401);
        expect(tokenless.headers['www-authenticate']).toMatch(/^Bearer/);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(100);
    // Loopback names with any port, and a same-host Origin, pass.
    for (const host of ['localhost', `localhost:${t.port}`, '127.0.0.1', `[::1]:${t.port}`]) {
      expect((await client.request({ path: '/v1/health', token: t.token, headers: { host, origin: `http://${host}` } })).status).toBe(200);
    }
  });

  it('refuses to create a server on a non-loopback address without a token', () => {
    expect(() => createServer({ harness: t.harness, host: '0.0.0.0' })).toThrow(/refusing to listen on 0.0.0.0 without a token/);
    expect(() => createServer({ harness: t.harness, host: '0.0.0.0', token: 'short' })).toThrow(/token must be/);
    expect(() => createServer({ harness: t.harness, host: '0.0.0.0', token: 'a-long-enough-operator-token' })).not.toThrow();
  });

  it('`envharness serve --host 0.0.0.0` without a token exits non-zero', async () => {
    const env = { ...process.env };
    delete env.ENVHARNESS_TOKEN;
    const child = spawn(process.execPath, ['bin/envharness.js', '--store', `sqlite:${t.dir}/cli.db`, 'serve', '--host', '0.0.0.0', '--port', '0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).not.toBe(0);
    expect(err).toMatch(/refusing to listen on 0\.0\.0\.0 without a token/);
  }, 60_000);
});

describe('limits and lifetime', () => {
  it('answers 413 to a body over the limit, fast', async () => {
    const ep = await createEpisode();
    const big = JSON.stringify({ action: { type: 'message', text: 'x'.repeat(2 * 1024 * 1024) } });
    const res = await client.request({ path: `/v1/episodes/${ep.id}/step`, token: ep.token, body: big });
    expectProblem(res, 413, 'PAYLOAD_TOO_LARGE');
    expect(res.ms).toBeLessThan(1000);
    expect(stateOf(ep).steps).toBe(0);
  });

  it('answers malformed HTTP with a JSON 400 and keeps serving', async () => {
    const reply = await new Promise<string>((resolve) => {
      const socket = net.connect(t.port, '127.0.0.1', () => socket.write('GARBAGE / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'));
      let text = '';
      socket.on('data', (d) => (text += d));
      socket.on('close', () => resolve(text));
    });
    expect(reply).toMatch(/^HTTP\/1\.1 400/);
    expect(reply).toContain('"code":"MALFORMED_REQUEST"');
    expect((await admin('/v1/health')).status).toBe(200);
  });

  it('reaps idle episodes and records them as closed', async () => {
    let now = 1_000_000;
    const s = createServer({ harness: t.harness, port: 0, idleMs: 60_000, now: () => now });
    const res = await s.fetch(
      new Request('http://127.0.0.1/v1/episodes', { method: 'POST', headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ taskId: t.tasks.endless, seed: 1 }) }),
    );
    const created = (await res.json()) as any;
    expect(s.episodes.size).toBe(1);
    now += 59_000;
    expect(await s.reap()).toBe(0);
    now += 1_000;
    expect(await s.reap()).toBe(1);
    expect(s.episodes.size).toBe(0);
    expect((await t.harness.store.getEpisode(created.info.episodeId))?.status).toBe('closed');
    const after = await s.fetch(new Request(`http://127.0.0.1/v1/episodes/${created.episode.id}`, { headers: { authorization: `Bearer ${created.token}` } }));
    expect(after.status).toBe(404);
    await s.close();
  });
});
