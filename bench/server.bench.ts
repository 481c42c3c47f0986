/**
 * HTTP server benchmarks: capacity under a keep-alive load generator on loopback (8 connections; the
 * server, `envharness serve`, and the generator share the machine's cores), the sequential Python
 * client's step latency, and the batched endpoint's session-steps/s from one Python client. Each figure
 * is set beside a null route measured the same way at the same time, because this machine is shared.
 * The load generator is wrk (`-t1 -c8`, as in the perf anchors) when it is on PATH, else a Node one.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { prepareStore, spawnNullServer, spawnScriptServer, spawnServe, stopServe } from '../src/server/testing/fixture.js';
import { fmt, median } from './lib.js';
import type { BenchRow, BenchSection } from './lib.js';

const SECONDS = Number(process.env.ENVHARNESS_BENCH_HTTP_SECONDS ?? 5);
const RUNS = Number(process.env.ENVHARNESS_BENCH_HTTP_RUNS ?? 3);
const CONNECTIONS = 8;
/** Issue 17's many-episodes target: this many open at once (the server's default `limits.maxOpenEpisodes`), p99 step ≤ 50 ms. */
const MANY_EPISODES = 4096;
/** Connections stepping the many episodes, each round-robining over its share (64 episodes each). */
const MANY_CONNECTIONS = 64;
const TOKEN = 'bench-token-0123456789abcdefghij';
const PYTHON = process.env.ENVHARNESS_PYTHON ?? 'python3';
/** The wrk binary; ENVHARNESS_BENCH_WRK= (empty) forces the Node load generator. */
const WRK = process.env.ENVHARNESS_BENCH_WRK ?? 'wrk';
const HAS_WRK = WRK !== '' && spawnSync(WRK, ['-v'], { encoding: 'utf8' }).error === undefined;
/**
 * Episodes per target, round-robined: four per connection, as a pooled client spreads its episodes over its
 * connections (wrk's script cannot tie an episode to a connection; the Node generator gives connection c the
 * episodes c, c + 8, ... in turn). Both generators run this same workload, so a figure does not depend on
 * whether wrk is installed.
 */
const EPISODES = CONNECTIONS * 4;

/** Clock ticks of user + system time a process has used, in microseconds. */
function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

interface LoadResult {
  perSec: number;
  p50: number;
  p99: number;
  errors: number;
  /** Server CPU per request (µs): what one core of a quiet machine would pay per step. */
  cpuUs: number;
}

interface Target {
  name: string;
  port: number;
  pid: number;
  /** One request per episode (path, token, body). */
  requests: Array<{ path: string; token: string; body: string }>;
}

function load(target: Target, seconds: number, dir: string, connections = CONNECTIONS): Promise<LoadResult> {
  return HAS_WRK ? Promise.resolve(wrkLoad(target, seconds, dir, connections)) : nodeLoad(target.port, target.pid, target.requests.map((r) => post(r.path, target.port, r.token, r.body)), connections, seconds);
}

/** wrk -t1 -c<connections> with a Lua script that round-robins over the target's episodes. */
function wrkLoad(target: Target, seconds: number, dir: string, connections: number): LoadResult {
  const lua = (text: string) => JSON.stringify(text); // a JSON string literal is a valid Lua string literal for this ASCII
  const requests = target.requests.map(
    (r) => `wrk.format("POST", ${lua(r.path)}, {["Host"]=${lua(`127.0.0.1:${target.port}`)}, ["Authorization"]=${lua(`Bearer ${r.token}`)}, ["Content-Type"]="application/json"}, ${lua(r.body)})`,
  );
  const script = join(dir, 'load.lua');
  writeFileSync(script, `local requests = {\n${requests.join(',\n')}\n}\nlocal i = 0\nrequest = function()\n  i = i % #requests + 1\n  return requests[i]\nend\n`);
  const cpu0 = cpuMicros(target.pid);
  const run = spawnSync(WRK, ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '-s', script, `http://127.0.0.1:${target.port}`], { encoding: 'utf8', timeout: (seconds + 30) * 1000 });
  const cpu = cpuMicros(target.pid) - cpu0;
  const out = run.stdout ?? '';
  const total = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0);
  if (run.status !== 0 || total === 0) throw new Error(`wrk failed (${run.status}): ${out}${run.stderr}`);
  const errors = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0) + [...out.matchAll(/(?:connect|read|write|timeout) (\d+)/g)].reduce((sum, m) => sum + Number(m[1]), 0);
  return {
    perSec: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)![1]),
    p50: wrkMs(/\s50%\s+(\S+)/.exec(out)?.[1]),
    p99: wrkMs(/\s99%\s+(\S+)/.exec(out)?.[1]),
    errors,
    cpuUs: cpu / total,
  };
}

/** A wrk latency ("812.00us", "1.20ms", "2.01s") in milliseconds. */
function wrkMs(text: string | undefined): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(text ?? '');
  if (m === null) return NaN;
  return Number(m[1]) * ({ us: 0.001, ms: 1, s: 1000, m: 60_000 } as Record<string, number>)[m[2]!]!;
}

/**
 * Closed-loop load: one request in flight per connection, raw sockets (the generator stays cheap).
 * Connection c sends requests c, c + connections, c + 2 × connections, ... in turn.
 */
async function nodeLoad(port: number, pid: number, requests: Buffer[], connections: number, seconds: number): Promise<LoadResult> {
  const latencies: number[] = [];
  let errors = 0;
  const cpu0 = cpuMicros(pid);
  const t0 = performance.now();
  const end = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: Math.min(connections, requests.length) }, (_, c) => requests.filter((_, i) => i % connections === c)).map(
      (mine) =>
        new Promise<void>((resolve) => {
          let next = 0;
          const socket = net.connect(port, '127.0.0.1');
          socket.setNoDelay(true);
          let buffer = '';
          let sent = 0;
          const send = () => {
            sent = performance.now();
            socket.write(mine[next]!);
            next = (next + 1) % mine.length;
          };
          socket.on('connect', send);
          socket.on('error', () => resolve());
          socket.on('data', (d) => {
            buffer += d.toString('latin1');
            for (;;) {
              const head = buffer.indexOf('\r\n\r\n');
              if (head < 0) return;
              const m = /content-length: *(\d+)/i.exec(buffer.slice(0, head));
              const length = m ? Number(m[1]) : 0;
              if (buffer.length < head + 4 + length) return;
              if (!buffer.startsWith('HTTP/1.1 200')) errors++;
              buffer = buffer.slice(head + 4 + length);
              latencies.push(performance.now() - sent);
              if (Date.now() < end) send();
              else {
                socket.end();
                resolve();
                return;
              }
            }
          });
        }),
    ),
  );
  const elapsed = (performance.now() - t0) / 1000;
  const cpu = cpuMicros(pid) - cpu0;
  latencies.sort((a, b) => a - b);
  return {
    perSec: latencies.length / elapsed,
    p50: latencies[latencies.length >> 1] ?? 0,
    p99: latencies[Math.floor(latencies.length * 0.99)] ?? 0,
    errors,
    cpuUs: cpu / Math.max(1, latencies.length),
  };
}

function post(path: string, port: number, token: string, body: string): Buffer {
  return Buffer.from(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
}

async function createEpisodes(port: number, body: object, n: number, firstSeed = 0): Promise<Array<{ id: string; token: string }>> {
  const out = [];
  for (let i = firstSeed; i < firstSeed + n; i++) {
    const res = await fetch(`http://127.0.0.1:${port}/v1/episodes`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ ...body, seed: i }) });
    if (res.status !== 201) throw new Error(`cannot create an episode (${JSON.stringify(body)}): ${await res.text()}`);
    const json = (await res.json()) as { episode: { id: string }; token: string };
    out.push({ id: json.episode.id, token: json.token });
  }
  return out;
}

/** `n` episodes created `parallel` at a time (seeds 0..n-1). */
async function createManyEpisodes(port: number, body: object, n: number, parallel: number): Promise<Array<{ id: string; token: string }>> {
  const share = Math.ceil(n / parallel);
  const parts = await Promise.all(Array.from({ length: parallel }, (_, p) => createEpisodes(port, body, Math.max(0, Math.min(share, n - p * share)), p * share)));
  return parts.flat();
}

function medianOf(results: LoadResult[]): LoadResult {
  return {
    perSec: median(results.map((r) => r.perSec)),
    p50: median(results.map((r) => r.p50)),
    p99: median(results.map((r) => r.p99)),
    errors: results.reduce((s, r) => s + r.errors, 0),
    cpuUs: median(results.map((r) => r.cpuUs)),
  };
}

function python(args: string[]): Record<string, number> | undefined {
  const run = spawnSync(PYTHON, ['clients/python/bench/bench_client.py', ...args], { encoding: 'utf8', timeout: 120_000 });
  if (run.status !== 0) {
    process.stderr.write(`bench: python client failed: ${run.stderr}\n`);
    return undefined;
  }
  return JSON.parse(run.stdout.trim().split('\n').pop()!) as Record<string, number>;
}

function medianField(results: Array<Record<string, number> | undefined>, field: string): number {
  return median(results.filter((r): r is Record<string, number> => r !== undefined).map((r) => r[field]!));
}

/**
 * The WebSocket floor: a `ws` server (the library the OpenEnv surface uses, no permessage-deflate) that parses
 * each message and answers a fixed OpenEnv observation of about the same size as a null-domain step's.
 */
const WS_NULL_SERVER = `
const http = require('node:http');
const { WebSocketServer } = require('ws');
const meta = { episode_id: 'ep_0123456789abcdef', step: 1, terminated: false, truncated: false, feedback: [], info: { step: 1, outcome: 0, shaping: 0, stateHash: '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef' }, budget: { limit: { steps: 1000000 }, used: { steps: 1 } }, task: { id: '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', template: 'null', slice: 'null/null', level: 1, seed: 0, attempt: 1 } };
const out = JSON.stringify({ type: 'observation', data: { observation: { kind: 'tool', output: null, metadata: meta }, reward: 0, done: false } });
const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
const server = http.createServer((req, res) => { res.writeHead(404); res.end(); });
server.on('upgrade', (req, socket, head) => wss.handleUpgrade(req, socket, head, (ws) => ws.on('message', (d) => { JSON.parse(d.toString()); ws.send(out); })));
server.listen(0, '127.0.0.1', function () { console.log('listening on http://127.0.0.1:' + this.address().port); });
`;

function spawnWsNullServer(): Promise<{ child: ChildProcess; port: number }> {
  return spawnScriptServer(WS_NULL_SERVER, 'WebSocket null server');
}

/**
 * Sequential steps over one OpenEnv WebSocket session from a Node `ws` client (cheap next to Python's): what a
 * step costs the server, as latency and as the server process's CPU per step. Episodes that end are reset.
 */
async function nodeWsSequential(port: number, pid: number, seconds: number): Promise<Record<string, number>> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/openenv/ws`, { headers: { authorization: `Bearer ${TOKEN}` }, perMessageDeflate: false });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  const call = (message: string) =>
    new Promise<{ type: string; data: { done?: boolean } }>((resolve) => {
      ws.once('message', (data) => resolve(JSON.parse(data.toString()) as { type: string; data: { done?: boolean } }));
      ws.send(message);
    });
  const reset = JSON.stringify({ type: 'reset', data: { seed: 0, domain: 'null' } });
  const step = JSON.stringify({ type: 'step', data: { type: 'tool', tool: 'noop', args: {} } });
  const once = async () => {
    const answer = await call(step);
    if (answer.type !== 'observation') throw new Error(`WebSocket step failed: ${JSON.stringify(answer)}`);
    if (answer.data.done === true) await call(reset);
  };
  await call(reset);
  for (let i = 0; i < 500; i++) await once();
  const latencies: number[] = [];
  const cpu0 = cpuMicros(pid);
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  while (performance.now() < end) {
    const t = performance.now();
    await once();
    latencies.push(performance.now() - t);
  }
  const elapsed = (performance.now() - t0) / 1000;
  const cpu = cpuMicros(pid) - cpu0;
  ws.close();
  latencies.sort((a, b) => a - b);
  return { p50Us: latencies[latencies.length >> 1]! * 1000, p99Us: latencies[Math.floor(latencies.length * 0.99)]! * 1000, stepsPerSec: latencies.length / elapsed, cpuUs: cpu / latencies.length };
}

/** The test domains as compiled by `npm run build`. */
const DOMAINS = 'dist/server/testing/domains.js';

export async function run(): Promise<BenchSection[]> {
  const loadAtStart = loadavg()[0]!;
  const dir = mkdtempSync(join(tmpdir(), 'envharness-bench-http-'));
  const { path, tasks } = await prepareStore(dir);
  // What users run: the compiled CLI (`npx envharness serve` runs dist/; bench/run.ts built it before any section),
  // with the test domains compiled too (a .ts domain module would run the whole CLI from the sources through tsx).
  const serve = (store: string, args: string[]) => spawnServe(store, TOKEN, args, [], DOMAINS);
  const server = await serve(path, ['--idle', '3600']);
  // The explicitly weaker mode (docs/http.md, "Durability"): a step is answered once applied, committed within 10 ms.
  // Its own copy of the store, so that the two servers never wait on each other's write lock.
  const relaxedPath = join(dir, 'relaxed.db');
  copyFileSync(path, relaxedPath);
  const relaxed = await serve(relaxedPath, ['--idle', '3600', '--durability', 'relaxed']);
  // The many-episodes row gets its own server: the open-episode cap is per server, and the others hold ~100.
  const manyPath = join(dir, 'many.db');
  copyFileSync(path, manyPath);
  const many = await serve(manyPath, ['--idle', '3600']);
  const raw = await spawnNullServer();
  const wsNull = await spawnWsNullServer();
  try {
    // ---- capacity --------------------------------------------------------------------------
    const noopBody = JSON.stringify({ action: { type: 'tool', tool: 'noop', args: {} } });
    const toolBody = JSON.stringify({ action: { type: 'tool', tool: 'get_stock', args: { item: 'widget-1' } } });
    const nullEpisodes = await createEpisodes(server.port, { domain: 'null' }, EPISODES);
    const toolEpisodes = await createEpisodes(server.port, { taskId: tasks.endless }, EPISODES);
    // A retail task of the shipped regression set, its budget lifted so that the episodes never end.
    const retailBody = JSON.stringify({ action: { type: 'tool', tool: 'list_all_product_types', args: {} } });
    const lifted = { steps: 1_000_000_000, toolCalls: 1_000_000_000, consecutiveErrors: 1_000_000_000 };
    const retailEpisodes = await createEpisodes(server.port, { domain: 'retail', split: 'regression', dynamics: { budget: lifted } }, EPISODES).catch((error: Error) => {
      process.stderr.write(`bench: no retail target: ${error.message}\n`);
      return [];
    });
    const relaxedNull = await createEpisodes(relaxed.port, { domain: 'null' }, EPISODES);
    const relaxedRetail = retailEpisodes.length === 0 ? [] : await createEpisodes(relaxed.port, { domain: 'retail', split: 'regression', dynamics: { budget: lifted } }, EPISODES);
    const steps = (episodes: Array<{ id: string; token: string }>, body: string) => episodes.map((e) => ({ path: `/v1/episodes/${e.id}/step`, token: e.token, body }));
    const targets: Target[] = [
      { name: 'node:http null route (floor of this machine, same moment)', port: raw.port, pid: raw.child.pid!, requests: [{ path: '/step', token: 'x', body: noopBody }] },
      { name: 'envharness serve: null-domain step (validate, step, record, commit, answer)', port: server.port, pid: server.child.pid!, requests: steps(nullEpisodes, noopBody) },
      { name: 'envharness serve: inventory tool step (get_stock)', port: server.port, pid: server.child.pid!, requests: steps(toolEpisodes, toolBody) },
      ...(retailEpisodes.length > 0 ? [{ name: 'envharness serve: retail tool step (list_all_product_types)', port: server.port, pid: server.child.pid!, requests: steps(retailEpisodes, retailBody) }] : []),
      { name: 'envharness serve --durability relaxed: null-domain step (answered once applied, committed within 10 ms)', port: relaxed.port, pid: relaxed.child.pid!, requests: steps(relaxedNull, noopBody) },
      ...(relaxedRetail.length > 0 ? [{ name: 'envharness serve --durability relaxed: retail tool step (list_all_product_types)', port: relaxed.port, pid: relaxed.child.pid!, requests: steps(relaxedRetail, retailBody) }] : []),
    ];
    // The node generator holds one connection per request: the floor gets one per connection too.
    if (!HAS_WRK) targets[0]!.requests = Array.from({ length: CONNECTIONS }, () => targets[0]!.requests[0]!);
    for (const target of targets) await load(target, 1, dir); // warm-up
    const results = new Map<string, LoadResult[]>();
    for (let r = 0; r < RUNS; r++) {
      // Interleaved, so that every target sees the same machine load.
      for (const target of targets) {
        const list = results.get(target.name) ?? [];
        list.push(await load(target, SECONDS, dir));
        results.set(target.name, list);
      }
    }
    // ---- many open episodes -----------------------------------------------------------------
    const manyEpisodes = await createManyEpisodes(many.port, { domain: 'null' }, MANY_EPISODES, 16);
    const manyTarget: Target = { name: `envharness serve: null-domain step, ${MANY_EPISODES} episodes open, ${MANY_CONNECTIONS} connections round-robining over them`, port: many.port, pid: many.child.pid!, requests: steps(manyEpisodes, noopBody) };
    await load(manyTarget, 1, dir, MANY_CONNECTIONS);
    const manyRuns: LoadResult[] = [];
    for (let r = 0; r < RUNS; r++) manyRuns.push(await load(manyTarget, SECONDS, dir, MANY_CONNECTIONS));
    results.set(manyTarget.name, manyRuns);

    const floor = medianOf(results.get(targets[0]!.name)!);
    const capacityRows: BenchRow[] = [...targets, manyTarget].map((target) => {
      const m = medianOf(results.get(target.name)!);
      return {
        target: target.name,
        'steps/s': fmt(m.perSec),
        'p50 ms': m.p50.toFixed(2),
        'p99 ms': m.p99.toFixed(2),
        'server CPU µs/step': m.cpuUs.toFixed(0),
        'steps/s vs floor': `${((m.perSec / floor.perSec) * 100).toFixed(0)}%`,
        'CPU/step vs floor': `${(m.cpuUs / floor.cpuUs).toFixed(2)}x`,
        errors: m.errors,
      };
    });

    // ---- Python client ---------------------------------------------------------------------
    const url = `http://127.0.0.1:${server.port}`;
    const rawUrl = `http://127.0.0.1:${raw.port}`;
    const seconds = String(Math.max(2, Math.round(SECONDS / 2)));
    const seq: Array<Record<string, number> | undefined> = [];
    const seqRaw: Array<Record<string, number> | undefined> = [];
    const seqSocket: Array<Record<string, number> | undefined> = [];
    const batch32: Array<Record<string, number> | undefined> = [];
    const batch256: Array<Record<string, number> | undefined> = [];
    const ws: Array<Record<string, number> | undefined> = [];
    const seqRelaxed: Array<Record<string, number> | undefined> = [];
    const wsRelaxed: Array<Record<string, number> | undefined> = [];
    const relaxedUrl = `http://127.0.0.1:${relaxed.port}`;
    const wsNullUrl = `http://127.0.0.1:${wsNull.port}`;
    const wsFloor: Array<Record<string, number> | undefined> = [];
    const nodeWs: Record<'floor' | 'committed' | 'relaxed', Array<Record<string, number>>> = { floor: [], committed: [], relaxed: [] };
    for (let r = 0; r < RUNS; r++) {
      wsFloor.push(python(['--url', wsNullUrl, '--mode', 'websocket', '--seconds', seconds]));
      nodeWs.floor.push(await nodeWsSequential(wsNull.port, wsNull.child.pid!, Number(seconds)));
      nodeWs.committed.push(await nodeWsSequential(server.port, server.child.pid!, Number(seconds)));
      nodeWs.relaxed.push(await nodeWsSequential(relaxed.port, relaxed.child.pid!, Number(seconds)));
      seqRaw.push(python(['--url', rawUrl, '--mode', 'raw', '--seconds', seconds]));
      seqSocket.push(python(['--url', rawUrl, '--mode', 'socket', '--seconds', seconds]));
      seq.push(python(['--url', url, '--token', TOKEN, '--mode', 'sequential', '--seconds', seconds]));
      ws.push(python(['--url', url, '--token', TOKEN, '--mode', 'websocket', '--seconds', seconds]));
      seqRelaxed.push(python(['--url', relaxedUrl, '--token', TOKEN, '--mode', 'sequential', '--seconds', seconds]));
      wsRelaxed.push(python(['--url', relaxedUrl, '--token', TOKEN, '--mode', 'websocket', '--seconds', seconds]));
      batch32.push(python(['--url', url, '--token', TOKEN, '--mode', 'batched', '--sessions', '32', '--seconds', seconds]));
      batch256.push(python(['--url', url, '--token', TOKEN, '--mode', 'batched', '--sessions', '256', '--seconds', seconds]));
    }
    const version = seq.find((r) => r !== undefined)?.['python'] ?? '?';
    const floorP50 = medianField(seqRaw, 'p50Us');
    const floorRate = medianField(seqRaw, 'stepsPerSec');
    const vsFloor = (p50: number) => `${(p50 / floorP50).toFixed(2)}x`;
    const rateVsFloor = (rate: number) => `${(rate / floorRate).toFixed(1)}x`;
    const batchRow = (label: string, runs: Array<Record<string, number> | undefined>): BenchRow => {
      const rate = medianField(runs, 'sessionStepsPerSec');
      return { measurement: label, 'p50 µs': '', 'p50 vs floor': '', 'p99 µs': '', 'steps/s': `${fmt(rate)} session-steps/s (${medianField(runs, 'requestMs').toFixed(2)} ms per request)`, 'steps/s vs floor': rateVsFloor(rate) };
    };
    const seqRow = (label: string, runs: Array<Record<string, number> | undefined>): BenchRow => {
      const p50 = medianField(runs, 'p50Us');
      const rate = medianField(runs, 'stepsPerSec');
      return { measurement: label, 'p50 µs': p50.toFixed(0), 'p50 vs floor': vsFloor(p50), 'p99 µs': medianField(runs, 'p99Us').toFixed(0), 'steps/s': fmt(rate), 'steps/s vs floor': rateVsFloor(rate) };
    };
    const wsFloorP50 = medianField(wsFloor, 'p50Us');
    const wsVsFloor = (p50: number) => `${(p50 / wsFloorP50).toFixed(2)}x`;
    const nodeFloor = medianField(nodeWs.floor, 'p50Us');
    const nodeFloorCpu = medianField(nodeWs.floor, 'cpuUs');
    const wsRows: BenchRow[] = [
      { measurement: 'Python: envharness_client.openenv (asyncio) against the WebSocket null route (the Python WebSocket floor)', 'p50 µs': wsFloorP50.toFixed(0), 'p50 vs WS floor': '1.00x', 'p99 µs': medianField(wsFloor, 'p99Us').toFixed(0), 'server CPU µs/step': '', 'server CPU vs WS floor': '' },
      { measurement: 'Python: the same client, one OpenEnv session on `envharness serve` (journaled before the answer)', 'p50 µs': medianField(ws, 'p50Us').toFixed(0), 'p50 vs WS floor': wsVsFloor(medianField(ws, 'p50Us')), 'p99 µs': medianField(ws, 'p99Us').toFixed(0), 'server CPU µs/step': '', 'server CPU vs WS floor': '' },
      { measurement: 'Python: the same against `serve --durability relaxed`', 'p50 µs': medianField(wsRelaxed, 'p50Us').toFixed(0), 'p50 vs WS floor': wsVsFloor(medianField(wsRelaxed, 'p50Us')), 'p99 µs': medianField(wsRelaxed, 'p99Us').toFixed(0), 'server CPU µs/step': '', 'server CPU vs WS floor': '' },
      ...(
        [
          ['Node `ws` client against the WebSocket null route (the floor)', nodeWs.floor],
          ['Node `ws` client, one OpenEnv session on `envharness serve` (journaled before the answer)', nodeWs.committed],
          ['Node `ws` client against `serve --durability relaxed`', nodeWs.relaxed],
        ] as const
      ).map(([label, runs]): BenchRow => {
        const p50 = medianField(runs, 'p50Us');
        const cpu = medianField(runs, 'cpuUs');
        return { measurement: label, 'p50 µs': p50.toFixed(0), 'p50 vs WS floor': `${(p50 / nodeFloor).toFixed(2)}x`, 'p99 µs': medianField(runs, 'p99Us').toFixed(0), 'server CPU µs/step': cpu.toFixed(0), 'server CPU vs WS floor': `${(cpu / nodeFloorCpu).toFixed(2)}x` };
      }),
    ];
    const pythonRows: BenchRow[] = [
      seqRow('sequential step, stdlib http.client against the node:http null route (the client floor)', seqRaw),
      seqRow('sequential step, a plain socket (one sendall, recv) against the same null route', seqSocket),
      seqRow('sequential env.step() with envharness_client (Idempotency-Key, expectedStep, journaled before the answer)', seq),
      seqRow('sequential env.step() against `serve --durability relaxed` (answered once applied)', seqRelaxed),
      batchRow('client.step_many, 32 sessions per request', batch32),
      batchRow('client.step_many, 256 sessions per request', batch256),
    ];
    const cpus = results.get(targets[1]!.name)!.map((r) => r.cpuUs);
    return [
      {
        title: 'HTTP server capacity (loopback, 8 keep-alive connections)',
        description:
          (HAS_WRK
            ? `wrk 4 (\`-t1 -c${CONNECTIONS}\`, a Lua script round-robining over ${EPISODES} episodes per target, ${SECONDS} s × ${RUNS} runs, median) against \`envharness serve\` `
            : `A Node load generator (raw sockets, one request in flight per connection, each connection round-robining over ${EPISODES / CONNECTIONS} of the target's ${EPISODES} episodes, ${SECONDS} s × ${RUNS} runs, median; wrk was not on PATH: \`apt-get install wrk\`) against \`envharness serve\` `) +
          '(another process: the compiled CLI and test domains, node started with the flags the `envharness` command gives it; SQLite WAL store; by default every step is in the step journal before its answer and in SQLite about 20 ms later, committed by the store\'s writer thread, docs/http.md "Durability"; `--durability relaxed` answers once applied) and, interleaved, a plain node:http null route (plain `node`, V8\'s defaults). ' +
          'Server, generator and any other load share the machine. "server CPU µs/step" is the server process\'s user+system time per step. ' +
          `Machine load (1 min): ${loadAtStart.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end, on ${availableParallelism()} cores.`,
        rows: capacityRows,
        notes: [
          'Targets (perf-anchors §4): ≥ 29k retail tool steps/s (10× tau-bench behind FastAPI, 2.9k req/s there), ≈ 90% of a null route on the same machine.',
          `Issue 17: null-domain steps/s ≥ 70% of the floor's, retail ≥ 50%; with ${MANY_EPISODES} episodes open at once, p99 step latency ≤ 50 ms (the last row; its floor ratio compares ${MANY_CONNECTIONS} connections with the floor's ${CONNECTIONS}).`,
          `One server process uses one core: at ${median(cpus).toFixed(0)} µs of CPU per null step it could serve about ${fmt(1e6 / median(cpus))} steps/s with a core to itself.`,
          'Both the default (step journal) and `--durability relaxed` (docs/http.md) answer before the SQLite commit and commit in groups, about 20 ms later by default and within 10 ms when relaxed; the default also writes each commit group to the journal before answering (and loses nothing acknowledged to a process crash), and its SQLite commits run on the store\'s writer thread, while relaxed mode commits on the serving thread.',
        ],
      },
      {
        title: 'HTTP from Python (standard-library client)',
        description: `clients/python/bench/bench_client.py (Python ${version}), one process, against the same \`envharness serve\` (null-domain steps); medians of ${RUNS} runs of ${seconds} s.`,
        rows: pythonRows,
        notes: [
          'Targets (perf-anchors §4, set on a faster machine): sequential p50 ≤ 230 µs, i.e. ≤ 1.2x the stdlib http.client floor against a null route (189 µs there); batched ≥ 20k session-steps/s with ≥ 32 sessions per request. Here the ratios to the floors measured in the same run are the yardstick.',
          'The WebSocket rows are in their own section, beside a WebSocket null route measured in the same run.',
          'envharness_client talks HTTP/1.1 on a plain socket (standard library only), so it can come in under the http.client floor; the plain-socket row is the floor of that approach.',
        ],
      },
      {
        title: 'OpenEnv WebSocket session (loopback, one step in flight)',
        description:
          `Sequential null-domain steps over one OpenEnv \`/openenv/ws\` session, medians of ${RUNS} runs of ${seconds} s, interleaved with a WebSocket null route ` +
          '(a `ws` server in its own process that parses each message and answers a fixed observation of the same size). The Python rows use envharness_client.openenv (asyncio, standard library); ' +
          'the Node rows use the `ws` client, whose own cost is small, so they show what a step costs the server: "server CPU µs/step" is the server process\'s user+system time per step.',
        rows: wsRows,
        notes: [
          'Target (issue 17): WebSocket p50 ≤ 150 µs on loopback.',
          'A step in the default mode is answered after one `write()` of its commit group to the step journal (docs/storage.md, "Step journal"); SQLite gets the journal\'s entries in groups about 20 ms later on the store\'s writer thread (`--durability relaxed` commits its steps on the serving thread), so the difference between the two server rows is the journal write per step on one sequential session, less the commits the writer thread takes over.',
        ],
      },
    ];
  } finally {
    raw.child.kill('SIGTERM');
    wsNull.child.kill('SIGTERM');
    await stopServe(server.child);
    await stopServe(relaxed.child);
    await stopServe(many.child);
    rmSync(dir, { recursive: true, force: true });
  }
}
