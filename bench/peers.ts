/**
 * The peers measured in the same `npm run bench` when their checkouts are at hand, else their figures from
 * another run, labelled as such.
 *
 * `PEERS=/path npm run bench` with `/path/reasoning-gym` and `/path/tau-bench` (source checkouts; see
 * bench/peers/README.md for the commits and the Debian packages) runs bench/peers/*.py once, before the
 * sections, with Debian's python3; every section that compares with a peer then reads the same figures.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmt, PEER_RUNS } from './lib.js';

const here = dirname(fileURLToPath(import.meta.url));

/** The figures a section compares with, and where they come from. */
export interface PeerFigures {
  /** True when measured in this run (same machine, same sitting). */
  sameRun: boolean;
  /** Where the figures come from, for a section's notes. */
  source: string;
  tauBench: { episodesPerSec: number; episodes: string; goldStepsPerSec: number; goldSteps: string; readStepsPerSec: number; readSteps: string };
  reasoningGym: { medianItemsPerSec: number; chainSumItemsPerSec: number; workload: string };
}

/** A ratio of ours to the peer's, marked "same run" or "vs another run". */
export function ratioVsPeer(peers: PeerFigures, ours: number, peer: number): string {
  return `${fmt(ours / peer)}x (${peers.sameRun ? 'same run' : 'vs another run'})`;
}

/** The column heading for a peer figure: "(same run)" or "(another run)". */
export function peerLabel(peers: PeerFigures, name: string): string {
  return `${name} (${peers.sameRun ? 'same run' : 'another run'})`;
}

const FROM_ANOTHER_RUN: PeerFigures = {
  sameRun: false,
  source: PEER_RUNS.source,
  tauBench: { ...PEER_RUNS.tauBench },
  reasoningGym: { ...PEER_RUNS.reasoningGym },
};

const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';

/** Runs the peer scripts against the checkouts under `dir` (about two minutes). */
export function measurePeers(dir: string): PeerFigures {
  const run = (script: string, ...args: string[]) => {
    const out = execFileSync(PYTHON, [join(here, 'peers', script), ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 * 1024 * 1024 });
    return JSON.parse(out.trim().split('\n').at(-1)!) as Record<string, any>;
  };
  const rg = run('reasoning_gym_gen.py', join(dir, 'reasoning-gym'), '0.3');
  const tau = run('tau_bench_retail.py', join(dir, 'tau-bench'), 'train', '6');
  const python = `Python ${String(rg['python'])}`;
  return {
    sameRun: true,
    source: `measured in this run (${python}, per CPU-second of the Python process; checkouts in $PEERS, bench/peers/README.md)`,
    tauBench: {
      episodesPerSec: tau['episodes_per_sec'],
      episodes: `tau-bench retail in-process, scripted user, its ${String(tau['tasks'])} train tasks: reset + gold tool calls + the reply that ends the episode and runs its reward (${String(tau['gold_rewarded'])}/${String(tau['episodes_measured'])} measured episodes rewarded 1)`,
      goldStepsPerSec: tau['gold_steps_per_sec'],
      goldSteps: `tau-bench's gold tool calls of its train tasks (${String(tau['gold_calls'])} calls, nearly all writes)`,
      readStepsPerSec: tau['read_steps_per_sec'],
      readSteps: `tau-bench get_order_details/get_user_details/get_product_details on the ids its train tasks' gold calls name (${String(tau['read_calls'])} calls)`,
    },
    reasoningGym: {
      medianItemsPerSec: rg['median_items_per_sec'],
      chainSumItemsPerSec: rg['chain_sum_items_per_sec'],
      workload: `reasoning-gym \`ds[i]\` item generation, default configs, seed 42, dataset already built; median over the ${String(rg['generators'])} generators that run here (${Object.keys(rg['failed'] as object).length} need a package this machine lacks); chain_sum ${fmt(rg['chain_sum_items_per_sec'])}/s`,
    },
  };
}

/** Where `npm run bench` leaves the figures for its sections (set by bench/run.ts). */
export const PEERS_FILE_ENV = 'ENVHARNESS_BENCH_PEERS';

/** The peer figures for this run: measured once by bench/run.ts, measured now when a section runs alone with PEERS set, else another run's. */
export function peerFigures(): PeerFigures {
  const file = process.env[PEERS_FILE_ENV];
  if (file !== undefined && existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as PeerFigures;
  const dir = process.env['PEERS'];
  if (dir !== undefined && existsSync(join(dir, 'reasoning-gym')) && existsSync(join(dir, 'tau-bench'))) {
    const figures = measurePeers(dir);
    if (file !== undefined) writeFileSync(file, JSON.stringify(figures));
    return figures;
  }
  return FROM_ANOTHER_RUN;
}
