/**
 * T7 and the idempotency edge cases (issue 14 §5, §6) over raw sockets against the real server: the head
 * and body deadlines hold (EnvHarness's own, not Node's), the connection and open-episode caps answer
 * 429 with Retry-After, an oversized chunked body is 413 (not a reset) on every route, the same JSON
 * with other whitespace replays, and a key older than the window says it was forgotten.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../../src/harness/harness.js';
import { createInventoryDomain, makeInventoryTask } from '../../src/runtime/testing/index.js';
import { createServer, type EnvHarnessServer } from '../../src/server/index.js';
import { MAX_IDEMPOTENCY_KEYS } from '../../src/server/episodes.js';
import { systemClock } from '../../src/cli/clock.js';

let harness: Harness;
let server: EnvHarnessServer;
let url: string;
let port: number;
const task = { ...makeInventoryTask({ budget: { steps: 10_000 } }), split: 'heldout' as const, status: 'active' as const, batchId: 't7', seq: 1 };

beforeAll(async () => {
  harness = await createHarness({ clock: systemClock, store: ':memory:', domains: [createInventoryDomain()] });
  await harness.initialize({ seed: 1 });
  await harness.store.putTasks([task]);
  server = createServer({ harness, port: 0, limits: { headersTimeoutMs: 1000, bodyTimeoutMs: 1000, maxConnections: 20, maxOpenEpisodes: 8 } });
  ({ url, port } = await server.listen());
});
afterAll(async () => {
  await server.close();
  await harness.close();
});

const admin = () => ({ authorization: `Bearer ${server.token}`, 'content-type': 'application/json' });

/** Opens a raw socket, writes `chunks` (with pauses), and resolves with everything received and how long until the close. */
function raw(chunks: Array<string | Buffer | number>): Promise<{ text: string; closedAfterMs: number }> {
  return new Promise((done) => {
    const started = performance.now();
    const socket: Socket = connect(port, '127.0.0.1');
    let text = '';
    socket.setEncoding('utf8').on('data', (c: string) => (text += c));
    socket.on('error', () => undefined);
    socket.on('close', () => done({ text, closedAfterMs: performance.now() - started }));
    void (async () => {
      for (const c of chunks) {
        if (socket.destroyed) return;
        if (typeof c === 'number') await new Promise((r) => setTimeout(r, c));
        else socket.write(c);
      }
    })();
  });
}

async function newEpisode(): Promise<{ id: string; token: string }> {
  const res = await fetch(`${url}/v1/episodes`, { method: 'POST', headers: admin(), body: JSON.stringify({ taskId: task.id, seed: 0 }) });
  expect(res.status).toBe(201);
  const body = (await res.json()) as { episode: { id: string }; token: string };
  return { id: body.episode.id, token: body.token };
}

describe('T7: limits enforced by EnvHarness', () => {
  it('closes a connection whose request head never finishes within the head deadline (408)', async () => {
    const r = await raw(['GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n', 300, 'X-Slow: 1\r\n', 5000]);
    expect(r.closedAfterMs).toBeLessThan(2500);
    expect(r.text).toMatch(/^HTTP\/1.1 408/);
  });

  it('closes a request whose body does not arrive within the body deadline, while another slow body is open', async () => {
    const head = `POST /v1/episodes HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`;
    const [a, b] = await Promise.all([raw([head, 6000]), raw([head, 300, '"', 6000])]);
    for (const r of [a, b]) {
      expect(r.closedAfterMs).toBeLessThan(2500);
      expect(r.text).toMatch(/^HTTP\/1.1 408/);
    }
  });

  it('answers 413 to an oversized chunked body on the step route and on a hono route, instead of a reset', async () => {
    const ep = await newEpisode();
    const chunk = `${(64 * 1024).toString(16)}\r\n${'a'.repeat(64 * 1024)}\r\n`;
    for (const [path, auth] of [[`/v1/episodes/${ep.id}/step`, ep.token], ['/v1/episodes', server.token]] as const) {
      const head = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${auth}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
      const r = await raw([head, ...Array.from({ length: 40 }, () => chunk), '0\r\n\r\n', 3000]);
      expect(r.text, path).toMatch(/^HTTP\/1.1 413/);
    }
  });

  it('caps open connections: the one beyond is answered 429 with Retry-After and closed', async () => {
    const sockets: Socket[] = [];
    for (let i = 0; i < 20; i++) {
      const s = connect(port, '127.0.0.1');
      s.on('error', () => undefined);
      sockets.push(s);
      await new Promise((r) => s.once('connect', r));
    }
    const r = await raw([2000]);
    expect(r.text).toMatch(/^HTTP\/1.1 429/);
    expect(r.text).toMatch(/Retry-After: 1/i);
    for (const s of sockets) s.destroy();
  });
});

describe('idempotency edge cases', () => {
  it('the same JSON with other whitespace and key order replays instead of 422', async () => {
    const ep = await newEpisode();
    const step = (body: string) =>
      fetch(`${url}/v1/episodes/${ep.id}/step`, { method: 'POST', headers: { authorization: `Bearer ${ep.token}`, 'content-type': 'application/json', 'idempotency-key': 'k-ws' }, body });
    const first = await step('{"action":{"type":"tool","tool":"list_items","args":{}}}');
    expect(first.status).toBe(200);
    const again = await step('{ "action" : { "args" : { }, "tool" : "list_items", "type" : "tool" } }\n');
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.text()).toBe(await first.text());
  });

  it(`a key older than the window (${MAX_IDEMPOTENCY_KEYS} keys) is answered as forgotten, never applied twice`, async () => {
    const ep = await newEpisode();
    const step = (key: string) =>
      fetch(`${url}/v1/episodes/${ep.id}/step`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ep.token}`, 'content-type': 'application/json', 'idempotency-key': key },
        body: '{"action":{"type":"tool","tool":"list_items","args":{}}}',
      });
    for (let i = 0; i <= MAX_IDEMPOTENCY_KEYS; i++) expect((await step(`key-${i}`)).status).toBe(200);
    const steps = (await harness.store.listTransitions(`${ep.id}:1`)).length;
    const old = await step('key-0');
    expect(old.status).toBe(409);
    expect(((await old.json()) as { code: string }).code).toBe('IDEMPOTENCY_FORGOTTEN');
    expect(await harness.store.listTransitions(`${ep.id}:1`)).toHaveLength(steps);
  });
});

describe('open-episode cap (last: it fills the server)', () => {
  it('caps open episodes: the next create is 429 with Retry-After', async () => {
    while (server.episodes.size < 8) await newEpisode();
    const res = await fetch(`${url}/v1/episodes`, { method: 'POST', headers: admin(), body: JSON.stringify({ taskId: task.id }) });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(((await res.json()) as { code: string }).code).toBe('TOO_MANY_REQUESTS');
  });

});
