/** The OpenEnv surface's edges on a real listener: refused upgrades, malformed path keys, session timeout, shutdown, and the pure mappings. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTestServer, type TestServer } from '../testing/fixture.js';
import { canonicalize } from '../../index.js';
import { parseReset, stepMessage, stepResult, stepResultText, toAction, type SessionContext } from './messages.js';

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer({ server: { openenv: { sessionTimeoutS: 1, maxConcurrentEnvs: 8 } } });
}, 120_000);
afterAll(async () => t?.close());

const wsUrl = (path: string) => `${t.url.replace('http://', 'ws://')}${path}`;

function open(path: string, headers: Record<string, string> = {}): Promise<{ ws: WebSocket; next: () => Promise<any>; closed: Promise<number> }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl(path), { headers });
    const queue: any[] = [];
    const waiting: Array<(v: any) => void> = [];
    ws.on('message', (data) => {
      const v = JSON.parse(data.toString());
      const w = waiting.shift();
      if (w) w(v);
      else queue.push(v);
    });
    const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)));
    ws.on('open', () => resolve({ ws, closed, next: () => (queue.length > 0 ? Promise.resolve(queue.shift()) : new Promise((r) => waiting.push(r))) }));
    ws.on('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    ws.on('error', reject);
  });
}

describe('OpenEnv surface', () => {
  it('refuses upgrades without the server token, with a foreign Origin, or a malformed key, and keeps serving', async () => {
    await expect(open('/openenv/ws')).rejects.toThrow('HTTP 401');
    await expect(open(`/openenv/key/%E0%A4%A/ws`)).rejects.toThrow('HTTP 401');
    await expect(open(`/openenv/key/${t.token}/ws`, { origin: 'https://evil.example' })).rejects.toThrow('HTTP 403');
    await expect(open('/v1/ws', { authorization: `Bearer ${t.token}` })).rejects.toThrow('HTTP 404');
    const res = await fetch(`${t.url}/openenv/key/%E0%A4%A/health`);
    expect(res.status).toBe(401);
    const ok = await fetch(`${t.url}/openenv/key/${t.token}/health`);
    expect(await ok.json()).toEqual({ status: 'healthy' });
  });

  it('runs an episode with a bearer header and records it like any episode', async () => {
    const { ws, next } = await open('/openenv/ws', { authorization: `Bearer ${t.token}` });
    ws.send(JSON.stringify({ type: 'reset', data: { task_id: t.tasks.short, seed: 4 } }));
    const reset = await next();
    expect(reset.type).toBe('observation');
    const id = reset.data.observation.metadata.episode_id as string;
    ws.send(JSON.stringify({ type: 'step', data: { type: 'tool', tool: 'list_items', args: {} } }));
    const step = await next();
    expect(step.data.observation.metadata.step).toBe(1);
    await t.server.episodes.settled();
    const transitions = await t.harness.store.listTransitions(`${id}:1`);
    expect(transitions).toHaveLength(1);
    ws.send(JSON.stringify({ type: 'close' }));
    await new Promise((r) => ws.on('close', r));
    // The session's episode is closed with the socket, and recorded as closed.
    let record = await t.harness.store.getEpisode(`${id}:1`);
    for (let i = 0; i < 100 && record?.status !== 'closed'; i++) {
      await new Promise((r) => setTimeout(r, 20));
      record = await t.harness.store.getEpisode(`${id}:1`);
    }
    expect(record?.status).toBe('closed');
  });

  it('answers an HTTP /step with the bytes of the stored transition\'s observation, and the same value as before', async () => {
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${t.url}/openenv${path}`, { method: 'POST', headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect(res.status).toBe(200);
      return res.text();
    };
    const reset = JSON.parse(await post('/reset', { task_id: t.tasks.short, seed: 5 }));
    const id = reset.observation.metadata.episode_id as string;
    const listed = JSON.parse(await post('/step', { episode_id: id, action: { type: 'tool', tool: 'list_items', args: {} } }));
    const item = listed.observation.output[0].item as string;
    // get_stock's output keys (item, quantity, locked) are not in canonical order: the spliced text is told apart.
    const text = await post('/step', { episode_id: id, action: { type: 'tool', tool: 'get_stock', args: { item } } });
    await t.server.episodes.settled();
    const transition = (await t.harness.store.listTransitions(`${id}:1`))[1];
    // The observation is the text written for the transition (canonical key order), metadata appended to it.
    const observation = canonicalize(transition!.observation);
    expect(text.startsWith(`{"observation":${observation.slice(0, -1)},"metadata":{`)).toBe(true);
    const parsed = JSON.parse(text);
    const { metadata, ...rest } = parsed.observation;
    expect(rest).toEqual(transition!.observation);
    expect(metadata.step).toBe(2);
    expect(metadata.info).toEqual(transition!.info);
    expect(Object.keys(parsed)).toEqual(['observation', 'reward', 'done']);
    expect(parsed.reward).toBe(transition!.reward);
  });

  it('closes a session idle for session_timeout with 1001', async () => {
    const { closed } = await open(`/openenv/key/${t.token}/ws`);
    expect(await closed).toBe(1001);
  });

  it('cuts off a client that sends without reading (more than 256 queued messages)', async () => {
    const { ws, next, closed } = await open(`/openenv/key/${t.token}/ws`);
    // Resets commit to the store, so 300 of them sent at once cannot drain as fast as they arrive.
    for (let i = 0; i < 300; i++) ws.send(JSON.stringify({ type: 'reset', data: { task_id: t.tasks.short, seed: i } }));
    const answers: any[] = [];
    let code = 0;
    void closed.then((c) => (code = c));
    while (code === 0) {
      const answer = await Promise.race([next(), closed.then(() => undefined)]);
      if (answer === undefined) break;
      answers.push(answer);
    }
    expect(await closed).toBe(1008);
    expect(answers.some((a) => a.type === 'error' && a.data.code === 'SESSION_ERROR')).toBe(true);
    expect(answers.filter((a) => a.type === 'observation').length).toBeLessThan(300);
  });

  it('maps OpenEnv actions and reset parameters', () => {
    expect(toAction({ type: 'call_tool', tool_name: 'get', arguments: { a: 1 }, metadata: {} })).toEqual({ kind: 'step', action: { type: 'tool', tool: 'get', args: { a: 1 } }, callTool: 'get' });
    // A nameless call_tool goes to the runtime, which refuses it as an INVALID_ACTION step.
    expect(toAction({ type: 'call_tool', arguments: {} })).toEqual({ kind: 'step', action: { type: 'tool', tool: undefined, args: {} } });
    expect(toAction({ type: 'finish', metadata: { x: 1 } })).toEqual({ kind: 'step', action: { type: 'finish' } });
    expect(toAction({ type: 'list_tools' })).toEqual({ kind: 'list_tools' });
    expect(toAction('free text')).toEqual({ kind: 'step', action: 'free text' });
    expect(parseReset({ seed: 3, domain: 'inventory', group_id: 'g', group_size: 2 })).toEqual({ seed: 3, create: { domain: 'inventory' }, group: { id: 'g', size: 2 } });
    expect(() => parseReset({ group_id: 'g' })).toThrow('group_id and group_size come together');
    expect(() => parseReset({ seed: -1 })).toThrow('seed must be an integer >= 0');
    expect(() => parseReset([1])).toThrow('reset data must be an object');
  });

  it('keeps a session open past the HTTP head deadline (the upgrade was the request)', async () => {
    const other = await startTestServer({ server: { limits: { headersTimeoutMs: 200 } } });
    try {
      const ws = new WebSocket(`${other.url.replace('http://', 'ws://')}/openenv/key/${other.token}/ws`);
      const frames: string[] = [];
      ws.on('message', (d) => frames.push(d.toString()));
      let failure: unknown;
      ws.on('error', (e) => (failure = e));
      await new Promise((r) => ws.on('open', r));
      ws.send(JSON.stringify({ type: 'reset', data: { task_id: other.tasks.short, seed: 1 } }));
      await new Promise((r) => setTimeout(r, 600));
      ws.send(JSON.stringify({ type: 'step', data: { type: 'tool', tool: 'list_items', args: {} } }));
      for (let i = 0; i < 100 && frames.length < 2 && failure === undefined; i++) await new Promise((r) => setTimeout(r, 20));
      expect(failure).toBeUndefined();
      expect(frames.map((f) => JSON.parse(f).type)).toEqual(['observation', 'observation']);
      expect(ws.readyState).toBe(WebSocket.OPEN);
      ws.close();
    } finally {
      await other.close();
    }
  }, 120_000);

  it('builds the WebSocket step message text exactly as JSON.stringify of the step result', () => {
    const info = { episodeId: 'ep_1:1', taskId: 't'.repeat(64), template: 'inventory/restock@1', domain: 'inventory', taskType: 'restock', level: 2, slice: 'inventory/restock', seed: 7, attempt: 1 };
    const base = { episodeId: 'ep_1', info, template: info.template, budget: { steps: 10, consecutiveErrors: 3 } };
    const group = { id: 'g', size: 2, members: 2, done: true, stats: { mean: 0.5, variance: 0.25, zeroVariance: false }, skipped: false };
    const results = [
      { observation: { kind: 'tool', output: { quantity: 3, note: 'a "quoted" \u2028 line' } }, reward: 0.25, terminated: false, truncated: false, feedback: [{ code: 'OFF_PATH', message: 'm', ref: 'get_stock' }], info: { step: 1, outcome: 0, shaping: 0.25, stateHash: 'h' } },
      { observation: { kind: 'tool', output: null, error: { code: 'INVALID_ACTION', message: 'bad', pointer: '/args/item' } }, reward: 0, terminated: false, truncated: true, truncation: 'steps', feedback: [], info: { step: 10, outcome: 0, shaping: 0, stateHash: 'h', endReason: 'budget' } },
      { observation: { kind: 'message', text: 'hello' }, reward: 1, terminated: true, truncated: false, feedback: [], info: { step: 3, outcome: 1, shaping: 0 } },
      { observation: {}, reward: -0.5, terminated: false, truncated: false, feedback: [], info: { step: 2 } },
    ];
    for (const withGroup of [false, true]) {
      for (const r of results) {
        const ctx = (): SessionContext => (withGroup ? { ...base, group: group as never } : { ...base });
        const expected = JSON.stringify({ type: 'observation', data: stepResult(r as never, ctx()) });
        const c = ctx();
        expect(stepMessage(r as never, c)).toBe(expected);
        expect(stepMessage(r as never, c)).toBe(expected); // again, from the per-episode cache
        expect(stepResultText(r as never, c)).toBe(JSON.stringify(stepResult(r as never, ctx())));
      }
    }
    // call_tool answers keep their own shape.
    const ctx: SessionContext = { ...base };
    expect(stepMessage(results[0] as never, ctx, 'get_stock')).toBe(JSON.stringify({ type: 'observation', data: stepResult(results[0] as never, ctx, 'get_stock') }));
  });

  it('closes open sessions when the server stops', async () => {
    const other = await startTestServer();
    const url = other.url.replace('http://', 'ws://');
    const ws = new WebSocket(`${url}/openenv/key/${other.token}/ws`);
    await new Promise((r) => ws.on('open', r));
    const code = new Promise<number>((r) => ws.on('close', (c) => r(c)));
    await other.close();
    expect(await code).toBe(1001);
  }, 120_000);
});
