/** Whole-process CPU of the shipped CLI (bin/envharness.js on the compiled dist/): --help, a one-task eval, a fresh-store generate. */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { NODE_HEAP_FLAGS, WORKER_THRESHOLD } from '../src/core/index.js';
import { fmt, median, type BenchSection } from './lib.js';
import { peerFigures, peerLabel, ratioVsPeer } from './peers.js';

const peers = peerFigures();

const RUNS = 5;
/**
 * Candidates the larger run of a pair generates beyond SMALL: 80,000 since 2026-12-06 (40,000 before), so the
 * start-up's run-to-run spread (the SMALL run is mostly start-up) weighs half as much against the difference.
 */
const EXTRA = 80_000;
/**
 * Pairs of generate runs (SMALL and SMALL + EXTRA candidates): one run's CPU varied by 0.1-0.3 s from the
 * next on this shared 2-core host (load 7-9), against a difference of ~1.1 s, so 3 pairs could move the
 * figure by 10% or more. On 2026-12-06 (host CPU pressure 6-12%) the same build's runs spread over 1.02-1.36 s
 * and 2.01-2.79 s: single pairs gave 25k-43k candidates per CPU-second, medians of 5 pairs 33.3k (a bench run) and
 * 37.7k and 39.0k (two builds in an A/B right after, the same on this path): 9.
 */
const CHAIN_PAIRS = 9;
/** Candidates of the smaller generate run: the fewest with which generate starts its worker threads. */
const SMALL = WORKER_THRESHOLD;
const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

// A wrapper process that runs the CLI (with the node flags bin/envharness.js's first line gives node, as the
// \`envharness\` command runs) and reports the CPU of its waited-for children from the kernel
// (cutime + cstime, fields 16 and 17 of /proc/self/stat): the CLI's whole process, threads included.
const WRAPPER = `
const { spawnSync } = require('node:child_process');
const run = spawnSync(process.execPath, [...${JSON.stringify(NODE_HEAP_FLAGS)}, 'bin/envharness.js', ...process.argv.slice(1)], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
if (run.status !== 0) { process.stderr.write(String(run.stderr)); process.exit(run.status ?? 1); }
const fields = require('node:fs').readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
process.stdout.write(String(Number(fields[13]) + Number(fields[14])));
`;

/** CPU seconds (user + system) of one `envharness ...` process. */
function cpuSeconds(args: string[]): number {
  const run = spawnSync(process.execPath, ['-e', WRAPPER, '--', ...args], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`envharness ${args.join(' ')} failed (${run.status}): ${run.stderr}`);
  return Number(run.stdout) / TICKS_PER_SECOND;
}

export async function run(): Promise<BenchSection[]> {
  // What users run: the compiled CLI (bench/run.ts built it from the current sources before any section).
  const dir = mkdtempSync(join(tmpdir(), 'envharness-bench-cli-'));
  try {
    const store = join(dir, 'existing.db');
    cpuSeconds(['--store', store, 'eval', '--agent', 'oracle', '--limit', '1', '--agent-state', join(dir, 'none.json')]); // the existing store: every shipped regression set installed
    const help: number[] = [];
    const evals: number[] = [];
    const generate: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      help.push(cpuSeconds(['--help']));
      evals.push(cpuSeconds(['--store', store, 'eval', '--agent', 'oracle', '--limit', '1', '--agent-state', join(dir, 'none.json')]));
      generate.push(cpuSeconds(['--store', join(dir, `fresh-${i}.db`), 'generate', '--template', 'retail/cancel', '--count', '10']));
    }
    // The generation target through the real command: math/chain-sum with every gate and the SQLite store,
    // per candidate = the CPU of a run of SMALL + EXTRA candidates less a run of SMALL. Both runs start the
    // same worker threads (SMALL is the count from which generate uses them), so start-up cancels out,
    // the threads' included.
    const small: number[] = [];
    const large: number[] = [];
    const chain = (count: number, i: number): number =>
      cpuSeconds(['--store', join(dir, `chain-${count}-${i}.db`), 'generate', '--template', 'math/chain-sum', '--level', '5', '--count', String(count), '--seed', String(i)]);
    for (let i = 0; i < CHAIN_PAIRS; i++) {
      small.push(chain(SMALL, i));
      large.push(chain(SMALL + EXTRA, i));
    }
    const perCpu = EXTRA / Math.max(1e-9, median(large) - median(small));
    return [
      {
        title: 'CLI: generation through envharness generate',
        description:
          `Whole-process CPU (all threads: the main thread and the worker threads, which instantiate, MinHash and run the schema, oracle and non-triviality gates) of \`envharness generate --template math/chain-sum --level 5\` into a fresh SQLite store, every gate on, on the compiled dist/. Candidates per CPU-second = ${fmt(EXTRA)} / (CPU of --count ${SMALL + EXTRA} - CPU of --count ${SMALL}), medians of ${CHAIN_PAIRS} runs each, alternating; both runs start the same worker threads, so their start-up cancels out.`,
        rows: [
          {
            workload: 'envharness generate math/chain-sum level 5, all gates, fresh SQLite store',
            [`CPU s (${fmt(SMALL)} / ${fmt(SMALL + EXTRA)} candidates)`]: `${fmt(median(small))} / ${fmt(median(large))}`,
            'candidates per CPU-s': fmt(perCpu),
            [peerLabel(peers, 'reasoning-gym median generator')]: `${fmt(peers.reasoningGym.medianItemsPerSec)} items/s`,
            ratio: ratioVsPeer(peers, perCpu, peers.reasoningGym.medianItemsPerSec),
            target: '>= reasoning-gym median',
          },
        ],
        targets: [
          {
            source: 'issue 18',
            workload: 'envharness generate math/chain-sum level 5, all gates, fresh SQLite store',
            target: '≥ reasoning-gym\'s median generator (items/s)',
            figure: `${fmt(perCpu)} candidates per CPU-s, ${fmt(perCpu / peers.reasoningGym.medianItemsPerSec)}x`,
            reference: `reasoning-gym median generator ${peers.sameRun ? '(same run)' : '(another run)'}: ${fmt(peers.reasoningGym.medianItemsPerSec)} items/s`,
            met: perCpu >= peers.reasoningGym.medianItemsPerSec,
          },
        ],
        notes: [
          peers.sameRun
            ? `reasoning-gym ${peers.source}: ${peers.reasoningGym.workload}; generated only (no gates, no store).`
            : `reasoning-gym is not run in this bench (set PEERS to run it here, bench/peers/README.md): ${peers.reasoningGym.workload}, from ${peers.source}; generated only (no gates, no store). The ratio is against another run.`,
          `1-minute load average at the end: ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores.`,
        ],
      },
      {
        title: 'CLI: whole-process CPU',
        description: `User + system CPU seconds of one \`node bin/envharness.js ...\` process on the compiled dist/ (the kernel's accounting of the waited-for child), median of ${RUNS}. Targets: --help <= 0.3 s, one-task eval <= 1 s. The existing store holds every built-in domain's regression set (the first eval installed them); a fresh-store generate of retail installs retail's only, from dist/prebuilt.`,
        rows: [
          { command: 'envharness --help', 'CPU s': fmt(median(help)), target: '<= 0.3' },
          { command: 'envharness eval --agent oracle --limit 1 (existing store)', 'CPU s': fmt(median(evals)), target: '<= 1' },
          { command: 'envharness generate --template retail/cancel --count 10 (fresh store)', 'CPU s': fmt(median(generate)), target: '' },
        ],
        notes: [`1-minute load average at the end: ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores.`],
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
