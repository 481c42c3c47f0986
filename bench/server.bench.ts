/**
 * HTTP server benchmarks: capacity under a keep-alive load generator on loopback (8 connections; the
 * server, `envharness serve`, and the generator share the machine's cores), the sequential Python
 * client's step latency, and the batched endpoint's session-steps/s from one Python client. Each figure
 * is set beside a null route measured the same way at the same time, because this machine is shared.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prepareStore, spawnNullServer, spawnServe, stopServe } from '../src/server/testing/fixture.js';
import { fmt, median } from './lib.js';
import type { BenchRow, BenchSection } from './lib.js';

const SECONDS = Number(process.env.ENVHARNESS_BENCH_HTTP_SECONDS ?? 5);
const RUNS = Number(process.env.ENVHARNESS_BENCH_HTTP_RUNS ?? 3);
const CONNECTIONS = 8;
const TOKEN = 'bench-token-0123456789abcdefghij';
const PYTHON = process.env.ENVHARNESS_PYTHON ?? 'python3';

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

/** Closed-loop load: one request in flight per connection, raw sockets (the generator stays cheap). */
async function load(port: number, pid: number, requests: Buffer[], seconds: number): Promise<LoadResult> {
  const latencies: number[] = [];
  let errors = 0;
  const cpu0 = cpuMicros(pid);
  const t0 = performance.now();
  const end = Date.now() + seconds * 1000;
  await Promise.all(
    requests.map(
      (request) =>
        new Promise<void>((resolve) => {
          const socket = net.connect(port, '127.0.0.1');
          socket.setNoDelay(true);
          let buffer = '';
          let sent = 0;
          const send = () => {
            sent = performance.now();
            socket.write(request);
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

async function createEpisodes(port: number, body: object, n: number): Promise<Array<{ id: string; token: string }>> {
  const out = [];
  for (let i = 0; i < n; i++) {
    const res = await fetch(`http://127.0.0.1:${port}/v1/episodes`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ ...body, seed: i }) });
    if (res.status !== 201) throw new Error(`cannot create an episode (${JSON.stringify(body)}): ${await res.text()}`);
    const json = (await res.json()) as { episode: { id: string }; token: string };
    out.push({ id: json.episode.id, token: json.token });
  }
  return out;
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

export async function run(): Promise<BenchSection[]> {
  const dir = mkdtempSync(join(tmpdir(), 'envharness-bench-http-'));
  const { path, tasks } = await prepareStore(dir);
  const server = await spawnServe(path, TOKEN, ['--idle', '3600']);
  const raw = await spawnNullServer();
  try {
    // ---- capacity --------------------------------------------------------------------------
    const noopBody = JSON.stringify({ action: { type: 'tool', tool: 'noop', args: {} } });
    const toolBody = JSON.stringify({ action: { type: 'tool', tool: 'get_stock', args: { item: 'widget-1' } } });
    const nullEpisodes = await createEpisodes(server.port, { domain: 'null' }, CONNECTIONS);
    const toolEpisodes = await createEpisodes(server.port, { taskId: tasks.endless }, CONNECTIONS);
    // A retail task of the shipped regression set, its budget lifted so that the episodes never end.
    const retailBody = JSON.stringify({ action: { type: 'tool', tool: 'list_all_product_types', args: {} } });
    const lifted = { steps: 1_000_000_000, toolCalls: 1_000_000_000, consecutiveErrors: 1_000_000_000 };
    const retailEpisodes = await createEpisodes(server.port, { domain: 'retail', split: 'regression', dynamics: { budget: lifted } }, CONNECTIONS).catch((error: Error) => {
      process.stderr.write(`bench: no retail target: ${error.message}\n`);
      return [];
    });
    const targets: Array<{ name: string; port: number; pid: number; requests: Buffer[] }> = [
      { name: 'node:http null route (floor of this machine, same moment)', port: raw.port, pid: raw.child.pid!, requests: Array.from({ length: CONNECTIONS }, () => post('/step', raw.port, 'x', noopBody)) },
      { name: 'envharness serve: null-domain step (validate, step, record, commit, answer)', port: server.port, pid: server.child.pid!, requests: nullEpisodes.map((e) => post(`/v1/episodes/${e.id}/step`, server.port, e.token, noopBody)) },
      { name: 'envharness serve: inventory tool step (get_stock)', port: server.port, pid: server.child.pid!, requests: toolEpisodes.map((e) => post(`/v1/episodes/${e.id}/step`, server.port, e.token, toolBody)) },
      ...(retailEpisodes.length > 0
        ? [{ name: 'envharness serve: retail tool step (list_all_product_types)', port: server.port, pid: server.child.pid!, requests: retailEpisodes.map((e) => post(`/v1/episodes/${e.id}/step`, server.port, e.token, retailBody)) }]
        : []),
    ];
    for (const target of targets) await load(target.port, target.pid, target.requests, 1); // warm-up
    const results = new Map<string, LoadResult[]>();
    for (let r = 0; r < RUNS; r++) {
      // Interleaved, so that every target sees the same machine load.
      for (const target of targets) {
        const list = results.get(target.name) ?? [];
        list.push(await load(target.port, target.pid, target.requests, SECONDS));
        results.set(target.name, list);
      }
    }
    const floor = medianOf(results.get(targets[0]!.name)!);
    const capacityRows: BenchRow[] = targets.map((target) => {
      const m = medianOf(results.get(target.name)!);
      return {
        target: target.name,
        'steps/s': fmt(m.perSec),
        'p50 ms': m.p50.toFixed(2),
        'p99 ms': m.p99.toFixed(2),
        'server CPU µs/step': m.cpuUs.toFixed(0),
        'vs floor': `${((m.perSec / floor.perSec) * 100).toFixed(0)}%`,
        errors: m.errors,
      };
    });

    // ---- Python client ---------------------------------------------------------------------
    const url = `http://127.0.0.1:${server.port}`;
    const rawUrl = `http://127.0.0.1:${raw.port}`;
    const seconds = String(Math.max(2, Math.round(SECONDS / 2)));
    const seq: Array<Record<string, number> | undefined> = [];
    const seqRaw: Array<Record<string, number> | undefined> = [];
    const batch32: Array<Record<string, number> | undefined> = [];
    const batch256: Array<Record<string, number> | undefined> = [];
    for (let r = 0; r < RUNS; r++) {
      seqRaw.push(python(['--url', rawUrl, '--mode', 'raw', '--seconds', seconds]));
      seq.push(python(['--url', url, '--token', TOKEN, '--mode', 'sequential', '--seconds', seconds]));
      batch32.push(python(['--url', url, '--token', TOKEN, '--mode', 'batched', '--sessions', '32', '--seconds', seconds]));
      batch256.push(python(['--url', url, '--token', TOKEN, '--mode', 'batched', '--sessions', '256', '--seconds', seconds]));
    }
    const version = seq.find((r) => r !== undefined)?.['python'] ?? '?';
    const pythonRows: BenchRow[] = [
      { measurement: 'sequential step, stdlib http.client against the node:http null route (the client floor)', 'p50 µs': medianField(seqRaw, 'p50Us').toFixed(0), 'p99 µs': medianField(seqRaw, 'p99Us').toFixed(0), 'steps/s': fmt(medianField(seqRaw, 'stepsPerSec')) },
      { measurement: 'sequential env.step() with envharness_client (Idempotency-Key, expectedStep, commit before the answer)', 'p50 µs': medianField(seq, 'p50Us').toFixed(0), 'p99 µs': medianField(seq, 'p99Us').toFixed(0), 'steps/s': fmt(medianField(seq, 'stepsPerSec')) },
      { measurement: 'client.step_many, 32 sessions per request', 'p50 µs': '', 'p99 µs': '', 'steps/s': `${fmt(medianField(batch32, 'sessionStepsPerSec'))} session-steps/s (${medianField(batch32, 'requestMs').toFixed(2)} ms per request)` },
      { measurement: 'client.step_many, 256 sessions per request', 'p50 µs': '', 'p99 µs': '', 'steps/s': `${fmt(medianField(batch256, 'sessionStepsPerSec'))} session-steps/s (${medianField(batch256, 'requestMs').toFixed(2)} ms per request)` },
    ];
    const cpus = results.get(targets[1]!.name)!.map((r) => r.cpuUs);
    return [
      {
        title: 'HTTP server capacity (loopback, 8 keep-alive connections)',
        description:
          `A Node load generator (raw sockets, one request in flight per connection, ${SECONDS} s × ${RUNS} runs, median) against \`envharness serve\` ` +
          '(another process, SQLite WAL store, every step committed before its answer) and, interleaved, a plain node:http null route. ' +
          'Server, generator and any other load share the machine. "server CPU µs/step" is the server process\'s user+system time per step.',
        rows: capacityRows,
        notes: [
          'Targets (perf-anchors §4): ≥ 29k retail tool steps/s (10× tau-bench behind FastAPI, 2.9k req/s there), ≈ 90% of a null route on the same machine.',
          `One server process uses one core: at ${median(cpus).toFixed(0)} µs of CPU per null step it could serve about ${fmt(1e6 / median(cpus))} steps/s with a core to itself.`,
        ],
      },
      {
        title: 'HTTP from Python (standard-library client)',
        description: `clients/python/bench/bench_client.py (Python ${version}), one process, against the same \`envharness serve\` (null-domain steps); medians of ${RUNS} runs of ${seconds} s.`,
        rows: pythonRows,
        notes: ['Targets: sequential p50 ≤ 230 µs (tau-bench/FastAPI: 599 µs, stdlib client against a fastify null route: 189 µs); batched ≥ 20k session-steps/s with ≥ 32 sessions per request.'],
      },
    ];
  } finally {
    raw.child.kill('SIGTERM');
    await stopServe(server.child);
    rmSync(dir, { recursive: true, force: true });
  }
}
