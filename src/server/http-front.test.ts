/**
 * The hand-written front of the hot routes (http-front.ts) over raw sockets: it answers like node:http (same
 * status, headers and bytes as the same request sent chunked, which node:http answers), keeps pipelined
 * requests in order, lends node:http the requests it does not answer on a connection it keeps (in order, with
 * node:http's own answers), hands a connection to node:http for good mid-stream with the bytes it read, and
 * keeps the per-socket deadlines and the keep-alive idle close.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createHarness, type Harness } from '../harness/harness.js';
import { createInventoryDomain, makeInventoryTask } from '../runtime/testing/index.js';
import { systemClock } from '../cli/clock.js';
import { EpisodeRegistry } from './episodes.js';
import { frontReads } from './http-front.js';
import { createServer, type EnvHarnessServer } from './index.js';

let harness: Harness;
let server: EnvHarnessServer;
let port: number;
const task = { ...makeInventoryTask({ budget: { steps: 10_000 } }), split: 'heldout' as const, status: 'active' as const, batchId: 'front', seq: 1 };

beforeAll(async () => {
  harness = await createHarness({ clock: systemClock, store: ':memory:', domains: [createInventoryDomain()] });
  await harness.initialize({ seed: 1 });
  await harness.store.putTasks([task]);
  server = createServer({
    harness,
    port: 0,
    limits: { headersTimeoutMs: 1000, bodyTimeoutMs: 1000 },
    // A route slower than a step: it answers once the front has answered another step, or after 300 ms. Pipelined
    // behind it, a step answered out of order makes it answer second; in order, it answers first.
    extraRoutes: (app) =>
      app.get('/test/slow', async (c) => {
        const start = server.front.answered;
        for (let waited = 0; waited < 300 && server.front.answered === start; waited += 5) await new Promise((r) => setTimeout(r, 5));
        return c.json({ slow: true });
      }),
  });
  ({ port } = await server.listen());
});
afterAll(async () => {
  await server.close();
  await harness.close();
});

function createRequest(extra = ''): string {
  const body = JSON.stringify({ taskId: task.id, seed: 0 });
  return `POST /v1/episodes HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.token}\r\nContent-Type: application/json\r\n${extra}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

function created(r: Response): { id: string; token: string } {
  expect(r.status).toBe(201);
  const body = JSON.parse(r.body) as { episode: { id: string }; token: string };
  return { id: body.episode.id, token: body.token };
}

/** A new episode, created on a raw connection of its own (closed after). */
async function newEpisode(): Promise<{ id: string; token: string }> {
  const c = new Conn();
  try {
    c.write(createRequest());
    return created(await c.read());
  } finally {
    c.end();
  }
}

const ACTION = JSON.stringify({ action: { type: 'tool', tool: 'get_stock', args: { item: 'widget-1' } } });

function stepRequest(ep: { id: string; token: string }, body = ACTION, extra = ''): string {
  return `POST /v1/episodes/${ep.id}/step HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${ep.token}\r\nContent-Type: application/json\r\n${extra}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/** The same request with a chunked body: the front leaves it to node:http. */
function chunkedStepRequest(ep: { id: string; token: string }, body = ACTION): string {
  return `POST /v1/episodes/${ep.id}/step HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${ep.token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`;
}

interface Response {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A raw connection that reads responses (Content-Length framed) in order. */
class Conn {
  readonly socket: Socket;
  private data = Buffer.alloc(0);
  private waiters: Array<() => void> = [];
  closed = false;
  constructor(to = port) {
    this.socket = connect(to, '127.0.0.1');
    this.socket.on('data', (d: Buffer) => {
      this.data = Buffer.concat([this.data, d]);
      for (const w of this.waiters.splice(0)) w();
    });
    this.socket.on('error', () => undefined);
    this.socket.on('close', () => {
      this.closed = true;
      for (const w of this.waiters.splice(0)) w();
    });
  }
  write(text: string): void {
    this.socket.write(text);
  }
  async read(): Promise<Response> {
    for (;;) {
      const end = this.data.indexOf('\r\n\r\n');
      if (end >= 0) {
        const lines = this.data.toString('latin1', 0, end).split('\r\n');
        const headers: Record<string, string> = {};
        for (const line of lines.slice(1)) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
        const length = Number(headers['content-length'] ?? 0);
        if (this.data.length >= end + 4 + length) {
          const body = this.data.toString('utf8', end + 4, end + 4 + length);
          this.data = this.data.subarray(end + 4 + length);
          return { status: Number(lines[0]!.split(' ')[1]), headers, body };
        }
      }
      if (this.closed) throw new Error(`connection closed; unread: ${this.data.toString('latin1')}`);
      await new Promise<void>((r) => this.waiters.push(r));
    }
  }
  /** The next `n` raw bytes. */
  async bytes(n: number): Promise<Buffer> {
    while (this.data.length < n) {
      if (this.closed) throw new Error('connection closed');
      await new Promise<void>((r) => this.waiters.push(r));
    }
    const out = this.data.subarray(0, n);
    this.data = this.data.subarray(n);
    return out;
  }
  async untilClosed(): Promise<void> {
    while (!this.closed) await new Promise<void>((r) => this.waiters.push(r));
  }
  end(): void {
    this.socket.destroy();
  }
}

const withoutDate = (r: Response) => ({ ...r, headers: Object.fromEntries(Object.entries(r.headers).filter(([k]) => k !== 'date')) });

describe('the hot routes\' front', () => {
  it('answers a step with the status, headers and bytes node:http gives the same step', async () => {
    const [a, b] = [await newEpisode(), await newEpisode()];
    const front = new Conn();
    const node = new Conn();
    try {
      for (const [body, key] of [[ACTION, 'k1'], [ACTION, 'k1'], ['{"action":', undefined], [JSON.stringify({ acton: 1 }), undefined]] as const) {
        const extra = key === undefined ? '' : `Idempotency-Key: ${key}\r\n`;
        front.write(stepRequest(a, body, extra));
        node.write(chunkedStepRequest(b, body).replace('Transfer-Encoding', `${extra}Transfer-Encoding`));
        const [x, y] = [await front.read(), await node.read()];
        expect(withoutDate({ ...x, body: x.body.replaceAll(a.id, b.id) })).toEqual(withoutDate(y));
        expect(x.headers['date']).toMatch(/GMT$/);
      }
    } finally {
      front.end();
      node.end();
    }
  });

  it('answers a batched step as node:http does', async () => {
    const [a, b] = [await newEpisode(), await newEpisode()];
    const item = (ep: { id: string; token: string }) => ({ episodeId: ep.id, token: ep.token, action: { type: 'tool', tool: 'get_stock', args: { item: 'widget-1' } }, expectedStep: 1 });
    const front = new Conn();
    const node = new Conn();
    try {
      const head = `POST /v1/steps HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.token}\r\nContent-Type: application/json\r\n`;
      const fb = JSON.stringify({ steps: [item(a), { ...item(a), expectedStep: 5 }] });
      const nb = JSON.stringify({ steps: [item(b), { ...item(b), expectedStep: 5 }] });
      front.write(`${head}Content-Length: ${Buffer.byteLength(fb)}\r\n\r\n${fb}`);
      node.write(`${head}Transfer-Encoding: chunked\r\n\r\n${Buffer.byteLength(nb).toString(16)}\r\n${nb}\r\n0\r\n\r\n`);
      const [x, y] = [await front.read(), await node.read()];
      expect(x.status).toBe(200);
      expect(withoutDate({ ...x, body: x.body.replaceAll(a.id, b.id) })).toEqual(withoutDate(y));
    } finally {
      front.end();
      node.end();
    }
  });

  it('answers a reply larger than its encoding slab, with characters beyond ASCII, as node:http does', async () => {
    // 600 items for episodes that do not exist: each item's problem names its id (with a few 2- and 3-byte characters).
    const steps = Array.from({ length: 600 }, (_, i) => ({ episodeId: `épisode-${i}-€`, token: 'x', action: { type: 'tool', tool: 'get_stock', args: {} } }));
    const body = JSON.stringify({ steps });
    const head = `POST /v1/steps HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.token}\r\nContent-Type: application/json\r\n`;
    const front = new Conn();
    const node = new Conn();
    try {
      const answered = server.front.answered;
      front.write(`${head}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      const x = await front.read();
      expect(server.front.answered).toBe(answered + 1);
      node.write(`${head}Transfer-Encoding: chunked\r\n\r\n${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`);
      const y = await node.read();
      expect(x.status).toBe(200);
      expect(Number(x.headers['content-length'])).toBeGreaterThan(1 << 16);
      expect(x.body).toContain('épisode-599-€');
      expect(withoutDate(x)).toEqual(withoutDate(y));
    } finally {
      front.end();
      node.end();
    }
  });

  it('checks a repeated head again once its episode is closed, and a changed token in full', async () => {
    const [a, b] = [await newEpisode(), await newEpisode()];
    const c = new Conn();
    const other = new Conn();
    try {
      // The same head bytes twice: the second reuses the parsed head and the episode authorised for it.
      for (const step of [1, 2]) {
        c.write(stepRequest(a));
        const r = await c.read();
        expect(r.status).toBe(200);
        expect((JSON.parse(r.body) as { info: { step: number } }).info.step).toBe(step);
      }
      // Episode b's token on a's id, on the same connection: the one 404, and a is not stepped.
      c.write(stepRequest({ id: a.id, token: b.token }));
      expect((await c.read()).status).toBe(404);
      other.write(`DELETE /v1/episodes/${a.id} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${a.token}\r\n\r\n`);
      expect((await other.read()).status).toBe(200);
      // The head that was authorised before, byte for byte: the episode is gone, so is the answer.
      c.write(stepRequest(a));
      const gone = await c.read();
      expect(gone.status).toBe(404);
      expect(JSON.parse(gone.body)).toMatchObject({ code: 'EPISODE_NOT_FOUND' });
      c.write(stepRequest(b));
      expect((JSON.parse((await c.read()).body) as { info: { step: number } }).info.step).toBe(1);
    } finally {
      c.end();
      other.end();
    }
  });

  it('keeps authorised step heads server-wide: a pooled client round-robining episodes over connections has each head checked once', async () => {
    const eps = [await newEpisode(), await newEpisode(), await newEpisode()];
    const conns = [new Conn(), new Conn()];
    const authorize = vi.spyOn(EpisodeRegistry.prototype, 'authorize');
    try {
      // Every request's head differs from its connection's last one; 12 steps, 3 distinct heads.
      for (let round = 0; round < 4; round++) {
        for (const [i, ep] of eps.entries()) {
          const c = conns[(round * eps.length + i) % conns.length]!;
          c.write(stepRequest(ep));
          const r = await c.read();
          expect(r.status).toBe(200);
          expect((JSON.parse(r.body) as { info: { step: number } }).info.step).toBe(round + 1);
        }
      }
      expect(authorize).toHaveBeenCalledTimes(eps.length);
    } finally {
      authorize.mockRestore();
      for (const c of conns) c.end();
    }
  });

  it('reuses a kept head that differs only in its Idempotency-Key value, with the request\'s own key; a head that differs anywhere else is read in full', async () => {
    const [a, b] = [await newEpisode(), await newEpisode()];
    const conns = [new Conn(), new Conn()];
    const authorize = vi.spyOn(EpisodeRegistry.prototype, 'authorize');
    const keyed = (ep: { id: string; token: string }, key: string, body = ACTION, after = '') => stepRequest(ep, body, `Idempotency-Key: ${key}\r\n${after}`);
    const stepOf = (r: Response) => (JSON.parse(r.body) as { info: { step: number } }).info.step;
    try {
      // New keys of other lengths, on either connection: each is applied (a reused key would be replayed instead).
      const first: Response[] = [];
      for (const [i, key] of ['k1', 'k22', 'k333', 'x', 'k22-but-longer-0123456789'].entries()) {
        const c = conns[i % 2]!;
        c.write(keyed(a, key));
        const r = await c.read();
        expect(r.status).toBe(200);
        expect(r.headers['idempotent-replayed']).toBeUndefined();
        expect(stepOf(r)).toBe(i + 1);
        first.push(r);
      }
      expect(authorize).toHaveBeenCalledTimes(1);
      // An earlier key, through the reused head: its reply, byte for byte (the key read is this request's).
      conns[1]!.write(keyed(a, 'k22'));
      const replay = await conns[1]!.read();
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toBe(first[1]!.body);
      // Another body length after the key (Content-Length differs): framed and applied as its own request.
      const spaced = JSON.stringify(JSON.parse(ACTION), null, 1);
      conns[0]!.write(keyed(a, 'k6', spaced) + keyed(a, 'k7'));
      expect(stepOf(await conns[0]!.read())).toBe(6);
      expect(stepOf(await conns[0]!.read())).toBe(7);
      // A key that is not visible ASCII, or with trailing spaces: read as node:http would (refused; trimmed).
      conns[0]!.write(keyed(a, 'k 8'));
      expect(JSON.parse((await conns[0]!.read()).body)).toMatchObject({ code: 'PARAMS_INVALID' });
      conns[0]!.write(keyed(a, 'k9  '));
      const trimmed = await conns[0]!.read();
      expect(stepOf(trimmed)).toBe(8);
      conns[1]!.write(keyed(a, 'k9'));
      expect((await conns[1]!.read()).body).toBe(trimmed.body);
      // The token differs (b's on a's path, a key the same length): read and checked in full, the one 404.
      const calls = authorize.mock.calls.length;
      conns[1]!.write(keyed({ id: a.id, token: b.token }, 'k10'));
      expect((await conns[1]!.read()).status).toBe(404);
      expect(authorize.mock.calls.length).toBeGreaterThan(calls);
      // A header added after the key: not the kept head, so not applied with the first key (node:http joins the two: refused).
      conns[0]!.write(keyed(a, 'k11', ACTION, 'Idempotency-Key: k12\r\n'));
      expect(JSON.parse((await conns[0]!.read()).body)).toMatchObject({ code: 'PARAMS_INVALID' });
      conns[0]!.write(keyed(a, 'k13'));
      expect(stepOf(await conns[0]!.read())).toBe(9);
    } finally {
      authorize.mockRestore();
      for (const c of conns) c.end();
    }
  });

  it('refuses a head with another token for a path whose head is kept, and keeps no refused head', async () => {
    const [a, b] = [await newEpisode(), await newEpisode()];
    const c = new Conn();
    const d = new Conn();
    const authorize = vi.spyOn(EpisodeRegistry.prototype, 'authorize');
    try {
      c.write(stepRequest(a));
      expect((await c.read()).status).toBe(200);
      // a's path with b's token, a made-up one and the server token, on a connection that never sent a's head: the one
      // 404 each time, checked in full each time (a refused head is not kept; node:http, lent it, checks it again), and
      // a is not stepped.
      for (const token of [b.token, b.token, 'ehe_not-a-token-0123456789', server.token]) {
        d.write(stepRequest({ id: a.id, token }));
        const r = await d.read();
        expect(r.status).toBe(404);
        expect(JSON.parse(r.body)).toMatchObject({ code: 'EPISODE_NOT_FOUND' });
      }
      expect(authorize).toHaveBeenCalledTimes(1 + 4 * 2);
      // a's own head, kept from the other connection: not checked again.
      d.write(stepRequest(a));
      expect((JSON.parse((await d.read()).body) as { info: { step: number } }).info.step).toBe(2);
      expect(authorize).toHaveBeenCalledTimes(1 + 4 * 2);
    } finally {
      authorize.mockRestore();
      c.end();
      d.end();
    }
  });

  it('answers 404 to a kept head once its episode is closed, on any connection', async () => {
    const ep = await newEpisode();
    const [c, d, other] = [new Conn(), new Conn(), new Conn()];
    try {
      c.write(stepRequest(ep));
      expect((await c.read()).status).toBe(200);
      other.write(`DELETE /v1/episodes/${ep.id} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${ep.token}\r\n\r\n`);
      expect((await other.read()).status).toBe(200);
      for (const conn of [d, c]) {
        conn.write(stepRequest(ep));
        const gone = await conn.read();
        expect(gone.status).toBe(404);
        expect(JSON.parse(gone.body)).toMatchObject({ code: 'EPISODE_NOT_FOUND' });
      }
    } finally {
      for (const conn of [c, d, other]) conn.end();
    }
  });

  it('answers pipelined steps in order, and a request for another route on the same connection after them', async () => {
    const ep = await newEpisode();
    const c = new Conn();
    try {
      const health = `GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.token}\r\n\r\n`;
      c.write(stepRequest(ep) + stepRequest(ep) + health + stepRequest(ep));
      const steps = [];
      for (let i = 0; i < 2; i++) steps.push(await c.read());
      expect(steps.map((r) => r.status)).toEqual([200, 200]);
      expect(steps.map((r) => (JSON.parse(r.body) as { info: { step: number } }).info.step)).toEqual([1, 2]);
      const h = await c.read();
      expect(h.status).toBe(200);
      expect(JSON.parse(h.body)).toMatchObject({ status: 'ok' });
      const last = await c.read();
      expect((JSON.parse(last.body) as { info: { step: number } }).info.step).toBe(3);
    } finally {
      c.end();
    }
  });

  it('answers thousands of pipelined steps refused before they apply (each answered at once, in the same read loop) in order, then a step', async () => {
    const ep = await newEpisode();
    const c = new Conn();
    try {
      const refused = 3000;
      let text = '';
      for (let i = 0; i < refused; i++) text += stepRequest(ep, `{"action":${i}`);
      c.write(text + stepRequest(ep));
      for (let i = 0; i < refused; i++) {
        const r = await c.read();
        expect(r.status).toBe(422);
        expect(JSON.parse(r.body)).toMatchObject({ code: 'PARAMS_INVALID' });
      }
      const last = await c.read();
      expect(last.status).toBe(200);
      expect((JSON.parse(last.body) as { info: { step: number } }).info.step).toBe(1);
    } finally {
      c.end();
    }
  });

  it('answers a request that arrives a few bytes at a time', async () => {
    const ep = await newEpisode();
    const c = new Conn();
    try {
      const text = stepRequest(ep);
      for (let i = 0; i < text.length; i += 7) {
        c.write(text.slice(i, i + 7));
        await new Promise((r) => setTimeout(r, 1));
      }
      const r = await c.read();
      expect(r.status).toBe(200);
      expect(r.headers['connection']).toBe('keep-alive');
    } finally {
      c.end();
    }
  });

  it('leaves refused requests to node:http: a wrong token is the same 404, and an unread body closes the connection', async () => {
    const ep = await newEpisode();
    const c = new Conn();
    try {
      c.write(stepRequest({ id: ep.id, token: 'ehe_wrong-token-0123456789' }));
      const r = await c.read();
      expect(r.status).toBe(404);
      expect(JSON.parse(r.body)).toMatchObject({ code: 'EPISODE_NOT_FOUND' });
      const d = new Conn();
      d.write(stepRequest(ep).replace('Host: 127.0.0.1', 'Host: evil.example'));
      const refused = await d.read();
      expect(refused.status).toBe(403);
      expect(refused.headers['connection']).toBe('close');
      await d.untilClosed();
    } finally {
      c.end();
    }
  });

  it('reads a large body that arrives in many pieces, and leaves one over the body limit to node:http (413, closed)', async () => {
    const ep = await newEpisode();
    const c = new Conn();
    try {
      const body = JSON.stringify({ action: { type: 'message', text: 'x'.repeat(300_000) } });
      const text = stepRequest(ep, body);
      for (let i = 0; i < text.length; i += 16_384) c.write(text.slice(i, i + 16_384));
      const r = await c.read();
      expect(r.status).toBe(200);
      expect((JSON.parse(r.body) as { info: { step: number } }).info.step).toBe(1);
    } finally {
      c.end();
    }
    const big = new Conn();
    big.write(stepRequest(ep, JSON.stringify({ action: { type: 'message', text: 'x'.repeat(1_100_000) } })));
    const r = await big.read();
    expect(r.status).toBe(413);
    expect(JSON.parse(r.body)).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    await big.untilClosed();
  });

  it('closes a step whose body does not arrive within the body deadline (408)', async () => {
    const ep = await newEpisode();
    const c = new Conn();
    const started = performance.now();
    c.write(stepRequest(ep).slice(0, -5));
    const r = await c.read();
    expect(r.status).toBe(408);
    await c.untilClosed();
    expect(performance.now() - started).toBeLessThan(2500);
  });

  it('answers a client that half-closes after its request, then closes', async () => {
    const ep = await newEpisode();
    const c = new Conn();
    c.socket.end(stepRequest(ep));
    const r = await c.read();
    expect(r.status).toBe(200);
    await c.untilClosed();
  });

  it('after an answer, the next head deadline holds (408, closed), and with the default limits the keep-alive idle time closes first', async () => {
    const ep = await newEpisode();
    const c = new Conn();
    c.write(stepRequest(ep));
    expect((await c.read()).status).toBe(200);
    const timedOut = await c.read();
    expect(timedOut.status).toBe(408);
    await c.untilClosed();

    // Default limits: a 10 s head deadline, a 5 s keep-alive idle time (node:http's keepAliveTimeout before the front).
    const other = createServer({ harness, port: 0 });
    const { port: otherPort } = await other.listen();
    try {
      // The episode is created on the same connection (a lent request), then stepped by the front.
      const d = new Conn(otherPort);
      d.write(createRequest().replace(server.token, other.token));
      const ep = created(await d.read());
      d.write(stepRequest(ep));
      const r = await d.read();
      expect(r.headers['keep-alive']).toBe('timeout=5');
      const answered = performance.now();
      await d.untilClosed();
      const idle = performance.now() - answered;
      expect(idle).toBeGreaterThan(4500);
      expect(idle).toBeLessThan(8000);
    } finally {
      await other.close();
    }
  }, 20_000);

  it('hands a Connection: close request to node:http, which answers and closes', async () => {
    const ep = await newEpisode();
    const c = new Conn();
    c.write(stepRequest(ep, ACTION, 'Connection: close\r\n'));
    const r = await c.read();
    expect(r.status).toBe(200);
    expect(r.headers['connection']).toBe('close');
    await c.untilClosed();
  });

  it('keeps a connection whose first request is another route: an episode created on it is stepped by the front', async () => {
    const before = { ...server.front };
    const c = new Conn();
    try {
      c.write(createRequest());
      const r = await c.read();
      expect(r.headers['connection']).toBe('keep-alive');
      const ep = created(r);
      for (const n of [1, 2]) {
        c.write(stepRequest(ep));
        const s = await c.read();
        expect(s.status).toBe(200);
        expect((JSON.parse(s.body) as { info: { step: number } }).info.step).toBe(n);
      }
      expect(server.front.lent - before.lent).toBe(1);
      expect(server.front.answered - before.answered).toBe(2);
      expect(server.front.handedOver).toBe(before.handedOver);
    } finally {
      c.end();
    }
  });

  it('answers pipelined lent and hot requests in request order: a step behind a lent request waits for its answer', async () => {
    const ep = await newEpisode();
    const before = { ...server.front };
    const c = new Conn();
    try {
      const health = `GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.token}\r\n\r\n`;
      const slow = `GET /test/slow HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.token}\r\n\r\n`;
      // Steps a guard refuses, so the front lends them: a wrong token (404), a wrong content type (415, and
      // node:http closes the connection: it refuses before reading the body).
      const wrongToken = stepRequest({ id: ep.id, token: 'ehe_wrong-token-0123456789' });
      const textStep = stepRequest(ep).replace('Content-Type: application/json', 'Content-Type: text/plain');
      c.write(slow + stepRequest(ep) + health + stepRequest(ep) + wrongToken + stepRequest(ep) + textStep + stepRequest(ep));
      const got: Response[] = [];
      for (let i = 0; i < 7; i++) got.push(await c.read());
      expect(got.map((r) => r.status)).toEqual([200, 200, 200, 200, 404, 200, 415]);
      expect(JSON.parse(got[0]!.body)).toEqual({ slow: true });
      const steps = [got[1]!, got[3]!, got[5]!].map((r) => (JSON.parse(r.body) as { info: { step: number } }).info.step);
      expect(steps).toEqual([1, 2, 3]);
      expect(JSON.parse(got[2]!.body)).toMatchObject({ status: 'ok' });
      expect(got[6]!.headers['connection']).toBe('close');
      await c.untilClosed();
      expect(server.front.lent - before.lent).toBe(4);
      expect(server.front.answered - before.answered).toBe(3);
      expect(server.front.handedOver).toBe(before.handedOver);
    } finally {
      c.end();
    }
  });

  it('closes the connection after a lent request that node:http answers with Connection: close, and after a Connection: close request', async () => {
    const c = new Conn();
    c.write(createRequest());
    const ep = created(await c.read());
    // A refused guard with the body unread: node:http answers 403 with Connection: close; the step behind it is never applied.
    c.write(stepRequest(ep).replace('Host: 127.0.0.1', 'Host: evil.example') + stepRequest(ep));
    const refused = await c.read();
    expect(refused.status).toBe(403);
    expect(refused.headers['connection']).toBe('close');
    await c.untilClosed();

    const d = new Conn();
    d.write(createRequest());
    const other = created(await d.read());
    d.write(stepRequest(other));
    expect((await d.read()).status).toBe(200);
    d.write(`GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.token}\r\nConnection: close\r\n\r\n`);
    const h = await d.read();
    expect(h.status).toBe(200);
    expect(h.headers['connection']).toBe('close');
    await d.untilClosed();
    const e = new Conn();
    try {
      e.write(stepRequest(ep));
      expect((JSON.parse((await e.read()).body) as { info: { step: number } }).info.step).toBe(1);
    } finally {
      e.end();
    }
  });

  it('hands the connection over for a WebSocket upgrade after lent requests, and the session answers on it', async () => {
    const before = { ...server.front };
    const c = new Conn();
    try {
      c.write(createRequest());
      created(await c.read());
      c.write(`GET /openenv/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.token}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`);
      const r = await c.read();
      expect(r.status).toBe(101);
      expect(r.headers['sec-websocket-accept']).toBe('s3pPLMBiTxaQ9kYGzzhZRbK+xOo=');
      expect(server.front.handedOver - before.handedOver).toBe(1);
      // A masked text frame (mask 0) with a message of an unknown type: the session answers with an error frame.
      const payload = Buffer.from(JSON.stringify({ type: 'nope' }));
      c.socket.write(Buffer.concat([Buffer.from([0x81, 0x80 | payload.length, 0, 0, 0, 0]), payload]));
      const frame = await c.bytes(2);
      expect(frame[0]).toBe(0x81);
    } finally {
      c.end();
    }
  });

  it('frees node:http\'s side of a kept connection when the client goes away mid-request or node:http cannot parse a lent request', async () => {
    await expect.poll(() => server.front.lending, { timeout: 5000 }).toBe(0);
    // The client leaves while node:http answers a lent request.
    const gone = new Conn();
    gone.write(createRequest());
    await expect.poll(() => server.front.lending).toBe(1);
    gone.end();
    // A method node:http does not know: its parser's 400, and the connection closes.
    const bad = new Conn();
    bad.write(createRequest());
    created(await bad.read());
    bad.write('FROB /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    const r = await bad.read();
    expect(r.status).toBe(400);
    await bad.untilClosed();
    await expect.poll(() => server.front.lending, { timeout: 5000 }).toBe(0);
    const ep = await newEpisode();
    const c = new Conn();
    try {
      c.write(stepRequest(ep));
      expect((await c.read()).status).toBe(200);
    } finally {
      c.end();
    }
  });

  it('keeps the next head deadline after a lent request (408, closed)', async () => {
    const c = new Conn();
    c.write(createRequest());
    created(await c.read());
    const timedOut = await c.read();
    expect(timedOut.status).toBe(408);
    await c.untilClosed();
  });

  it('closes kept connections on server.close(), idle ones and one whose lent request is in flight, without hanging', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    const other = createServer({ harness, port: 0, extraRoutes: (app) => app.get('/test/held', async (c) => (await held, c.json({ held: true }))) });
    const { port: otherPort } = await other.listen();
    const idle = new Conn(otherPort);
    idle.write(createRequest().replace(server.token, other.token));
    created(await idle.read());
    const busy = new Conn(otherPort);
    busy.write(`GET /test/held HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${other.token}\r\n\r\n`);
    await expect.poll(() => other.front.lending).toBe(2);
    const started = performance.now();
    const closing = other.close();
    await idle.untilClosed();
    release();
    await closing;
    await busy.untilClosed();
    expect(performance.now() - started).toBeLessThan(2500);
    await expect.poll(() => other.front.lending).toBe(0);
  });

  it('frames lent and hot requests that arrive split at any byte, pipelined, and answers them in order', async () => {
    const ep = await newEpisode();
    const c = new Conn();
    try {
      const health = `GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.token}\r\n\r\n`;
      const text = Buffer.from(createRequest() + stepRequest(ep) + health + stepRequest(ep) + createRequest() + stepRequest(ep));
      // Pieces of 1..29 bytes (a fixed sequence), each its own write and TCP segment.
      let x = 7;
      for (let i = 0; i < text.length; ) {
        x = (x * 17 + 5) % 29;
        c.socket.write(text.subarray(i, i + x + 1));
        i += x + 1;
        await new Promise((r) => setImmediate(r));
      }
      const got: Response[] = [];
      for (let i = 0; i < 6; i++) got.push(await c.read());
      expect(got.map((r) => r.status)).toEqual([201, 200, 200, 200, 201, 200]);
      expect([got[1]!, got[3]!, got[5]!].map((r) => (JSON.parse(r.body) as { info: { step: number } }).info.step)).toEqual([1, 2, 3]);
    } finally {
      c.end();
    }
  });

  it('keeps each connection\'s bytes apart when their pieces arrive interleaved (every read goes to one shared buffer)', async () => {
    const eps = [await newEpisode(), await newEpisode(), await newEpisode()];
    const conns = eps.map(() => new Conn());
    try {
      const health = `GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.token}\r\n\r\n`;
      // Differently sized pieces per connection, one piece of each in turn: a head, a body or a request behind a
      // step in flight is cut off by another connection's read.
      const texts = eps.map((ep) => Buffer.from(stepRequest(ep) + stepRequest(ep) + health + stepRequest(ep, JSON.stringify({ action: { type: 'tool', tool: 'get_stock', args: { item: `widget-${ep.id}` } } }))));
      const at = texts.map(() => 0);
      for (let round = 0; at.some((a, i) => a < texts[i]!.length); round++) {
        for (let i = 0; i < conns.length; i++) {
          const n = 5 + ((round * 7 + i * 13) % 37);
          if (at[i]! < texts[i]!.length) conns[i]!.socket.write(texts[i]!.subarray(at[i]!, at[i]! + n));
          at[i]! += n;
          await new Promise((r) => setImmediate(r));
        }
      }
      for (const c of conns) {
        const got: Response[] = [];
        for (let i = 0; i < 4; i++) got.push(await c.read());
        expect(got.map((r) => r.status)).toEqual([200, 200, 200, 200]);
        expect([got[0]!, got[1]!, got[3]!].map((r) => (JSON.parse(r.body) as { info: { step: number } }).info.step)).toEqual([1, 2, 3]);
      }
    } finally {
      for (const c of conns) c.end();
    }
  });

  it('read every connection the way this run asks: into the shared buffer, or through data events (http-front-events.test.ts runs this file again so)', () => {
    if (frontReads.forced) {
      expect(frontReads.shared).toBe(0);
      expect(frontReads.events).toBeGreaterThan(20);
    } else {
      expect(frontReads.shared).toBeGreaterThan(20);
      expect(frontReads.events).toBe(0);
    }
  });
});
