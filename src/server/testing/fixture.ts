/**
 * Test fixtures of the HTTP server: a harness with tasks in a temporary store, a server on it, and a
 * raw HTTP client (node:http, keep-alive) that can send any Host, Origin or body bytes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHarness, NODE_HEAP_FLAGS, type Harness, type StoredTask, type TaskSpec } from '../../index.js';
import { math } from '../../domains/math/index.js';
import { makeInventoryTask } from '../../runtime/testing/index.js';
import { createServer, type EnvHarnessServer, type ServerOptions } from '../index.js';
import { createTestDomains } from './domains.js';
import { systemClock } from '../../cli/clock.js';

/** Ids of the tasks every fixture store holds besides generated ones. */
export interface FixtureTasks {
  /** An inventory task with budgets no test reaches (fuzzing, races). */
  endless: string;
  /** An inventory task of 40 steps at most (soak: episodes end and reset). */
  short: string;
}

/**
 * Writes a store with tasks: generated inventory (restock, clearance; levels 1-2), math (chain-sum; 1-3)
 * and null (noop) tasks in the dynamic pool, plus the hand-built `FixtureTasks`. Returns the file path.
 */
export async function prepareStore(dir: string): Promise<{ path: string; tasks: FixtureTasks }> {
  const path = join(dir, 'envharness.db');
  const harness = await createHarness({ clock: systemClock, store: path, domains: [math, ...createTestDomains()] });
  try {
    await harness.initialize({ seed: 1 });
    await harness.generate({ templates: [{ id: 'inventory/restock@1' }, { id: 'inventory/clearance@1' }], levels: [1, 2], count: 40, seed: 1, split: 'dynamic' }, { workers: 1 });
    await harness.generate({ templates: [{ id: 'math/chain-sum@1' }], levels: [1, 2, 3], count: 30, seed: 1, split: 'dynamic' }, { workers: 1 });
    await harness.generate({ templates: [{ id: 'null/noop@1' }], levels: [1], count: 1, seed: 1, split: 'dynamic', gates: { non_trivial: false } }, { workers: 1 });
    const endless = fixtureTask({ budget: { steps: 1_000_000_000, consecutiveErrors: 1_000_000_000 } }, 1_000_000);
    const short = fixtureTask({ budget: { steps: 40, consecutiveErrors: 40 } }, 1_000_001);
    await harness.store.putTasks([endless, short]);
    return { path, tasks: { endless: endless.id, short: short.id } };
  } finally {
    await harness.close();
  }
}

function fixtureTask(overrides: Partial<TaskSpec>, seq: number): StoredTask {
  return { ...makeInventoryTask(overrides), split: 'heldout', status: 'active', batchId: 'fixture', seq };
}

export interface TestServer {
  harness: Harness;
  server: EnvHarnessServer;
  /** Base URL when listening (`http://127.0.0.1:<port>`), else ''. */
  url: string;
  port: number;
  token: string;
  dir: string;
  storePath: string;
  tasks: FixtureTasks;
  close(): Promise<void>;
}

/** A harness on a fresh fixture store and a server on it (listening on a free loopback port unless `listen: false`). */
export async function startTestServer(options: { listen?: boolean; server?: Partial<Omit<ServerOptions, 'harness'>> } = {}): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'envharness-server-'));
  const { path, tasks } = await prepareStore(dir);
  const harness = await createHarness({ clock: systemClock, store: path, domains: [math, ...createTestDomains()] });
  await harness.initialize();
  const server = createServer({ harness, port: 0, ...options.server });
  let url = '';
  let port = 0;
  if (options.listen !== false) ({ url, port } = await server.listen());
  return {
    harness,
    server,
    url,
    port,
    token: server.token,
    dir,
    storePath: path,
    tasks,
    async close() {
      try {
        await server.close();
        await harness.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** The body parsed as JSON (undefined when it is not JSON). */
  json: any;
  ms: number;
}

export interface RawRequest {
  method?: string;
  path: string;
  /** Sent as they are; `host` defaults to 127.0.0.1:<port>. */
  headers?: Record<string, string>;
  /** A string or bytes sent as they are; an object is sent as JSON. */
  body?: string | Buffer | object;
  token?: string;
}

/** A keep-alive HTTP client for one server. */
export function createClient(port: number, options: { sockets?: number } = {}) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.sockets ?? 8 });
  async function request(req: RawRequest): Promise<RawResponse> {
    const body = req.body === undefined ? undefined : typeof req.body === 'string' || Buffer.isBuffer(req.body) ? req.body : JSON.stringify(req.body);
    const headers: Record<string, string> = { host: `127.0.0.1:${port}`, ...req.headers };
    if (req.token !== undefined) headers['authorization'] ??= `Bearer ${req.token}`;
    if (body !== undefined) {
      headers['content-type'] ??= 'application/json';
      headers['content-length'] = String(Buffer.byteLength(body));
    }
    const t0 = performance.now();
    return new Promise((resolve, reject) => {
      const r = http.request({ host: '127.0.0.1', port, method: req.method ?? (body === undefined ? 'GET' : 'POST'), path: req.path, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json, ms: performance.now() - t0 });
        });
        res.on('error', reject);
      });
      r.on('error', reject);
      r.end(body);
    });
  }
  return { request, close: () => agent.destroy() };
}

/**
 * A lean keep-alive client for load tests: one socket, one request in flight, requests written as one
 * buffer and answers framed by Content-Length. It costs the measuring process a fraction of what
 * node:http's client does, so that latencies under load are the server's rather than the client's.
 */
export function createSocketClient(port: number) {
  let socket: net.Socket | undefined;
  let buffer: Buffer = Buffer.alloc(0);
  let waiting: { resolve: () => void; reject: (error: Error) => void } | undefined;

  function connect(): net.Socket {
    const s = net.connect(port, '127.0.0.1');
    s.setNoDelay(true);
    s.on('data', (chunk: Buffer) => {
      buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
      waiting?.resolve();
    });
    const fail = (error: Error) => {
      if (socket === s) socket = undefined;
      waiting?.reject(error);
    };
    s.on('error', fail);
    s.on('close', () => fail(new Error('the server closed the connection')));
    return s;
  }

  function more(): Promise<void> {
    return new Promise((resolve, reject) => (waiting = { resolve, reject }));
  }

  async function request(req: RawRequest): Promise<RawResponse> {
    const body = req.body === undefined ? undefined : typeof req.body === 'string' || Buffer.isBuffer(req.body) ? Buffer.from(req.body) : Buffer.from(JSON.stringify(req.body));
    let head = `${req.method ?? (body === undefined ? 'GET' : 'POST')} ${req.path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`;
    if (req.token !== undefined) head += `Authorization: Bearer ${req.token}\r\n`;
    for (const [name, value] of Object.entries(req.headers ?? {})) head += `${name}: ${value}\r\n`;
    if (body !== undefined) head += `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n`;
    const t0 = performance.now();
    socket ??= connect();
    buffer = Buffer.alloc(0);
    socket.write(body === undefined ? `${head}\r\n` : Buffer.concat([Buffer.from(`${head}\r\n`), body]));
    let end: number;
    while ((end = buffer.indexOf('\r\n\r\n')) < 0) await more();
    const lines = buffer.subarray(0, end).toString('latin1').split('\r\n');
    const headers: http.IncomingHttpHeaders = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    while (buffer.length < end + 4 + length) await more();
    const text = buffer.subarray(end + 4, end + 4 + length).toString('utf8');
    waiting = undefined;
    if (headers['connection'] === 'close') {
      socket.destroy();
      socket = undefined;
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: Number(lines[0]!.split(' ')[1]), headers, text, json, ms: performance.now() - t0 };
  }
  return { request, close: () => socket?.destroy() };
}

/**
 * Starts `envharness serve --port 0` (through bin/envharness.js, with the node flags its first line gives
 * node, as the `envharness` command runs it) on a store with the test domains and resolves once it prints
 * where it listens. The caller stops it (SIGTERM records open episodes as closed). `domainModule`: the test
 * domains' TypeScript (the CLI then runs from the sources, through tsx) or their compiled module in dist/ (the
 * compiled CLI, as installed).
 */
export async function spawnServe(
  storePath: string,
  token: string,
  args: string[] = [],
  nodeArgs: string[] = [],
  domainModule = 'src/server/testing/domains.ts',
): Promise<{ child: ChildProcess; port: number; stderr: () => string }> {
  const child = spawn(process.execPath, [...NODE_HEAP_FLAGS, ...nodeArgs, 'bin/envharness.js', '--store', `sqlite:${storePath}`, 'serve', '--port', '0', '--domain-module', domainModule, ...args], {
    env: { ...process.env, ENVHARNESS_TOKEN: token, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.stderr!.on('data', (d) => (err += d));
    child.on('exit', (code) => reject(new Error(`envharness serve exited with ${code}: ${err}`)));
  });
  return { child, port, stderr: () => err };
}

/**
 * The V8 heap in use after a full garbage collection, in bytes, of a process started with
 * `--inspect=127.0.0.1:0` (through the inspector protocol: HeapProfiler.collectGarbage, then
 * Runtime.getHeapUsage), so that a memory bound measures what is retained, not V8's heap sizing. Nothing
 * in the server has to cooperate. The inspector's address is read from the process's stderr.
 */
export class HeapProbe {
  /** `stderr`: the process's standard error so far (`spawnServe`'s), where the inspector prints its address. */
  constructor(private readonly stderr: () => string) {}

  async usedAfterGc(): Promise<number> {
    const url = /Debugger listening on (ws:\/\/\S+)/.exec(this.stderr())?.[1];
    if (url === undefined) throw new Error(`no inspector address on the process's stderr (start it with --inspect=127.0.0.1:0): ${this.stderr()}`);
    const { WebSocket } = await import('ws');
    const socket = new WebSocket(url);
    await new Promise<void>((resolve, reject) => socket.once('open', () => resolve()).once('error', reject));
    let id = 0;
    const call = (method: string): Promise<Record<string, unknown>> =>
      new Promise((resolve, reject) => {
        const mine = ++id;
        const onMessage = (data: Buffer): void => {
          const message = JSON.parse(String(data)) as { id?: number; result?: Record<string, unknown>; error?: unknown };
          if (message.id !== mine) return;
          socket.off('message', onMessage);
          if (message.error !== undefined) reject(new Error(`${method}: ${JSON.stringify(message.error)}`));
          else resolve(message.result ?? {});
        };
        socket.on('message', onMessage);
        socket.send(JSON.stringify({ id: mine, method }));
      });
    try {
      // Twice: the first collection can leave objects whose finalisers free more.
      await call('HeapProfiler.collectGarbage');
      await call('HeapProfiler.collectGarbage');
      return (await call('Runtime.getHeapUsage')).usedSize as number;
    } finally {
      socket.close();
    }
  }
}

/** Stops a spawned server and resolves with its exit code. */
export function stopServe(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

/** A null env step on plain node:http, in its own process: parse the body, answer a StepResult-shaped JSON. */
const NULL_SERVER = `
const http = require('node:http');
const out = JSON.stringify({ observation: { kind: 'tool', output: null }, reward: 0, terminated: false, truncated: false, feedback: [], info: { step: 1, outcome: 0, shaping: 0, stateHash: 'null' } });
http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    JSON.parse(Buffer.concat(chunks).toString() || '{}');
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
    res.end(out);
  });
}).listen(0, '127.0.0.1', function () { console.log('listening on http://127.0.0.1:' + this.address().port); });
`;

/** The floor of this machine: a null route on plain node:http in a child process (benches and latency baselines). */
export function spawnNullServer(): Promise<{ child: ChildProcess; port: number }> {
  return spawnScriptServer(NULL_SERVER, 'null server');
}

/**
 * Runs `script` (`node -e`) in a child process and resolves with its port once it prints `listening on
 * http://127.0.0.1:PORT`. Plain `node` with V8's defaults, as anyone runs a bare route (not the flags
 * `envharness serve` runs with).
 */
export async function spawnScriptServer(script: string, name: string): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.on('exit', (code) => reject(new Error(`${name} exited with ${code}`)));
  });
  return { child, port };
}
