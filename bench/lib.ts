/** Shared helpers for `npm run bench`: timing with medians, and the section shape each bench returns. */
import { performance } from 'node:perf_hooks';
import { canonicalize } from '../src/core/index.js';
import type { Recorder } from '../src/runtime/index.js';

export interface BenchRow {
  [column: string]: string | number;
}

/** One section of BENCHMARKS.md. */
export interface BenchSection {
  title: string;
  /** What was measured and how, in a sentence or two. */
  description: string;
  rows: BenchRow[];
  notes?: string[];
  /** The numeric targets this section checks, with this run's figures: listed together at the top of BENCHMARKS.md. */
  targets?: BenchTarget[];
}

/** A numeric target checked against a figure of this run. */
export interface BenchTarget {
  /** Where the target is set, e.g. "issue 18". */
  source: string;
  /** What was measured, as the section's row names it. */
  workload: string;
  /** The bound, e.g. "≤ 30% of the steps/s with recording off". */
  target: string;
  /** This run's figure, formatted as in the section. */
  figure: string;
  /** The same workload's reference measured in the same run, when the target is relative to one ("" when none). */
  reference: string;
  met: boolean;
}

export interface Measurement {
  /** Median operations per second over the runs. */
  opsPerSec: number;
  /** Median nanoseconds per operation. */
  nsPerOp: number;
  runs: number[];
}

/**
 * Runs `fn(n)` (which must do n operations) repeatedly: calibrates n so one run takes about
 * `targetMs`, then reports the median of `runs` runs.
 */
export function measure(fn: (n: number) => void, options: { runs?: number; targetMs?: number; minOps?: number } = {}): Measurement {
  const runs = options.runs ?? 5;
  const targetMs = options.targetMs ?? 200;
  let n = options.minOps ?? 1;
  // Calibrate (also warms up the JIT).
  for (;;) {
    const t0 = performance.now();
    fn(n);
    const dt = performance.now() - t0;
    if (dt >= targetMs / 4 || n >= 1e9) {
      n = Math.max(1, Math.round((n * targetMs) / Math.max(dt, 0.001)));
      break;
    }
    n *= 4;
  }
  const rates: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    fn(n);
    const dt = performance.now() - t0;
    rates.push((n * 1000) / dt);
  }
  const opsPerSec = median(rates);
  return { opsPerSec, nsPerOp: 1e9 / opsPerSec, runs: rates };
}

/** Async variant of `measure` for work that awaits. */
export async function measureAsync(
  fn: (n: number) => Promise<void>,
  options: { runs?: number; n: number },
): Promise<Measurement> {
  const runs = options.runs ?? 5;
  await fn(Math.max(1, Math.floor(options.n / 10)));
  const rates: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn(options.n);
    rates.push((options.n * 1000) / (performance.now() - t0));
  }
  const opsPerSec = median(rates);
  return { opsPerSec, nsPerOp: 1e9 / opsPerSec, runs: rates };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Runs each of `runs` (each run does `ops` operations) once a round, in order, `rounds` times, so that what the
 * machine and the store's threads do meanwhile lands on every run alike: each run's ops/s per round, its CPU per
 * op over all rounds (the process's, every thread) and, given `threadCpuUs` (the calling thread's CPU time in µs,
 * or undefined where it cannot be read), the calling thread's.
 */
export async function interleavedRounds(
  runs: ReadonlyArray<() => Promise<void>>,
  rounds: number,
  ops: number,
  threadCpuUs: () => number | undefined = () => undefined,
): Promise<Array<{ rates: number[]; cpuUs: number; threadUs: number | undefined }>> {
  const rates = runs.map(() => [] as number[]);
  const cpu = runs.map(() => 0);
  const thread = runs.map(() => 0 as number | undefined);
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < runs.length; i++) {
      const before = process.cpuUsage();
      const t = threadCpuUs();
      const t0 = performance.now();
      await runs[i]!();
      rates[i]!.push((ops * 1000) / (performance.now() - t0));
      const used = process.cpuUsage(before);
      cpu[i]! += used.user + used.system;
      const now = threadCpuUs();
      thread[i] = t === undefined || now === undefined || thread[i] === undefined ? undefined : thread[i]! + (now - t);
    }
  }
  return runs.map((_, i) => ({ rates: rates[i]!, cpuUs: cpu[i]! / (rounds * ops), threadUs: thread[i] === undefined ? undefined : thread[i]! / (rounds * ops) }));
}

/**
 * The "Targets checked in this run" part of BENCHMARKS.md: every target the sections check, with this run's figure
 * and whether it is met, each linked to its section. Nothing when no section checks one.
 */
export function targetLines(sections: readonly BenchSection[]): string[] {
  const targets = sections.flatMap((section) => (section.targets ?? []).map((t) => ({ ...t, section: section.title })));
  if (targets.length === 0) return [];
  const met = targets.filter((t) => t.met).length;
  return [
    '## Targets checked in this run',
    '',
    `The numeric targets the sections below check against their own figures (${met} of ${targets.length} met in this run); each section has the ` +
      'same-run baselines beside its rows. Targets a section states only in its table or notes are not repeated here.',
    '',
    '| source | workload | target | this run | same-run reference | met | section |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...targets.map((t) => `| ${t.source} | ${t.workload} | ${t.target} | ${t.figure} | ${t.reference || '—'} | ${t.met ? 'met' : '**missed**'} | [${t.section}](#${headingAnchor(t.section)}) |`),
    '',
  ];
}

/** The anchor GitHub gives a heading: lower case, punctuation dropped, each space a hyphen. */
export function headingAnchor(title: string): string {
  return title.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

/**
 * A cost as a whole percentage, or with one decimal where rounding would put it on the other side of `bound`
 * (a cost of 30.4% against a target of at most 30% reads "30.4%", not "30%").
 */
export function costPct(x: number, bound = 0.3): string {
  const whole = Math.round(x * 100);
  const crosses = whole === Math.round(bound * 100) && x !== bound;
  return crosses ? `${(x * 100).toFixed(1)}%` : `${whole}%`;
}

/**
 * The least a way of recording could cost in wall-clock throughput on `cores` cores, given the CPU per episode of
 * the episode alone (`offCpu`) and of the episode with the same rows written (`withCpu`, every thread): even if all
 * the work recording adds ran on other cores at no cost of its own, an episode takes at least the longer of its
 * own CPU and the whole CPU spread over every core. A bound from measured work, not a measurement.
 */
export function spreadCostBound(offCpu: number, withCpu: number, cores: number): number {
  if (!(offCpu > 0) || !(cores >= 1)) throw new RangeError(`spreadCostBound needs offCpu > 0 and cores >= 1, got ${offCpu} and ${cores}`);
  return 1 - offCpu / Math.max(offCpu, withCpu / cores);
}

/** Formats a rate or duration for a table cell. */
export function fmt(value: number, digits = 3): string {
  if (value >= 1e6) return `${(value / 1e6).toPrecision(digits)}M`;
  if (value >= 1e3) return `${(value / 1e3).toPrecision(digits)}k`;
  return value.toPrecision(digits);
}

/**
 * Peer figures this bench cannot measure in the same run (tau-bench and reasoning-gym need checkouts and
 * Python packages CI cannot fetch). Each carries where, when and on what workload it was taken, so that a
 * ratio against it is printed as a ratio against another run.
 */
export const PEER_RUNS = {
  source: 'research/perf-anchors.md §2 (the project\'s research note, measured on this machine kind before this session; median of 5 runs)',
  tauBench: {
    episodesPerSec: 4.6,
    episodes: 'tau-bench retail in-process, scripted user, its 115 test tasks: reset + 578 gold tool calls + reward',
    goldStepsPerSec: 14_000,
    goldSteps: "tau-bench's gold tool calls of its 115 test tasks (reads and writes)",
    readStepsPerSec: 45_000,
    readSteps: 'tau-bench get_order/user/product_details',
  },
  reasoningGym: {
    medianItemsPerSec: 22_600,
    chainSumItemsPerSec: 62_000,
    workload: 'reasoning-gym `ds[i]` item generation, default configs, fixed seed, dataset already built (98 runnable generators; chain_sum 62k/s)',
  },
} as const;

/** A ratio against a peer figure from another run, marked as such. */
export function ratioVsOtherRun(ours: number, peer: number): string {
  return `${fmt(ours / peer)}x (vs another run)`;
}

/**
 * The floor of any recorder that serialises on the stepping thread: canonical JSON of each transition and of each
 * episode's final record (a group commit writes only an episode's latest record), nothing kept or written. `encode`
 * also writes each text as UTF-8 into one reused buffer: the floor of a recorder that hands bytes to another thread
 * (what the writer thread's recorder does before the hand-off).
 */
export function serialisingRecorder(encode = false): Recorder {
  let sink = 0;
  const bytes = new Uint8Array(1 << 20);
  const utf8 = new TextEncoder();
  const take = (text: string) => (encode ? utf8.encodeInto(text, bytes).written : text.length);
  return {
    begin: () => undefined,
    record: (t) => {
      sink += take(canonicalize(t));
    },
    end: (e) => {
      sink += take(canonicalize(e));
    },
    flush: () => (sink < 0 ? Promise.reject(new Error('unreachable')) : Promise.resolve()),
  };
}
