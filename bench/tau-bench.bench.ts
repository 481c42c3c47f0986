/** tau-bench interop: gold replay of the imported train split through the episode runtime, next to tau-bench's own episodes on the same split (same run with PEERS, else another run's). */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { Action, Agent, Task } from '../src/core/index.js';
import { callsOfTrace, createTauBenchRunner, gradeTauBench, importTauBench, rebuildRetailState } from '../src/domains/retail/tau-bench/index.js';
import { createEpisode, createRuntimeCache } from '../src/runtime/index.js';
import { fmt, measure, measureAsync, type BenchSection } from './lib.js';
import { peerFigures, peerLabel, ratioVsPeer } from './peers.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const dataDir = process.env.TAU_BENCH_DATA ?? path.resolve(here, '../../shared/data/tau-bench-retail');

/** Process CPU milliseconds per episode of `fn(n)`. */
function cpuPerEpisode(fn: (n: number) => void, n: number): number {
  const start = process.cpuUsage();
  fn(n);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000 / n;
}

export async function run(): Promise<BenchSection[]> {
  if (!existsSync(dataDir)) {
    return [{ title: 'tau-bench interop', description: `skipped: tau-bench data not found at ${dataDir} (set TAU_BENCH_DATA)`, rows: [] }];
  }
  const peers = peerFigures();
  const tauEpisodesPerSec = peers.tauBench.episodesPerSec;
  const t0 = performance.now();
  const imported = importTauBench({ dir: dataDir });
  const importMs = performance.now() - t0;
  const train = imported.sets.find((s) => s.set === 'train')!.batch.tasks;
  const domain = imported.domain;
  const cache = createRuntimeCache(domain);

  // One gold replay: reset, the gold actions, finish; the runtime grades by state hash.
  const episode = (task: Task, grade: boolean): number => {
    const e = createEpisode(domain, task, { cache });
    e.reset({ seed: 0 });
    let outcome = 0;
    for (const action of task.spec.solution) outcome = e.step(action).info.outcome;
    if (grade) {
      const messages = e.trace.flatMap((t) => (t.action.type === 'message' ? [t.action.text] : []));
      outcome = gradeTauBench(task, rebuildRetailState(domain, task, callsOfTrace(e.trace), e.stateHash()), messages);
    }
    if (outcome !== 1) throw new Error(`gold replay of ${task.id} scored ${outcome}`);
    return outcome;
  };
  const loop = (grade: boolean) => (n: number) => {
    for (let i = 0; i < n; i++) episode(train[i % train.length]!, grade);
  };
  const steps = train.reduce((s, t) => s + t.spec.solution.length, 0) / train.length;
  const runtime = measure(loop(false), { minOps: train.length, targetMs: 1000 });
  const graded = measure(loop(true), { minOps: train.length, targetMs: 1000 });
  const runtimeCpu = cpuPerEpisode(loop(false), train.length * 2);
  const gradedCpu = cpuPerEpisode(loop(true), train.length * 2);

  const runner = createTauBenchRunner(domain);
  const gold: Agent = {
    name: 'gold',
    version: '1',
    privileged: true,
    config: () => ({}),
    begin: (ctx) => {
      const actions: readonly Action[] = ctx.task!.spec.solution;
      let i = 0;
      return { act: () => actions[i++] ?? { type: 'finish' } };
    },
  };
  const looped = await measureAsync(
    async (n) => {
      for (let i = 0; i < n; i++) await runner.runEpisode(train[i % train.length]!, gold, { seed: 0 });
    },
    { n: train.length, runs: 3 },
  );

  const row = (workload: string, rate: number, cpuMs?: number) => ({
    workload,
    'episodes/s': fmt(rate),
    'ms/episode': (1000 / rate).toFixed(3),
    'CPU ms/episode': cpuMs === undefined ? '-' : cpuMs.toFixed(3),
    [peerLabel(peers, 'tau-bench')]: `${fmt(tauEpisodesPerSec)} episodes/s`,
    'x tau-bench': ratioVsPeer(peers, rate, tauEpisodesPerSec),
  });
  return [
    {
      title: 'tau-bench interop: gold replay of the imported train split',
      description:
        `The 500 imported train tasks (${steps.toFixed(2)} actions per episode on average, the gold actions plus \`finish\`), ` +
        "replayed through EnvHarness's episode runtime on tau-bench's own database (1,000 orders, 500 users, 50 products). " +
        (peers.sameRun
          ? `tau-bench, ${peers.source}: ${peers.tauBench.episodes}. Both sides play the same split's gold actions.`
          : `tau-bench's figure is not measured in this run (run with PEERS set to measure it here): ${peers.tauBench.episodes}, from ${peers.source}. ` +
            'The ratio compares different splits taken in different runs.'),
      rows: [
        row("runtime episode: reset + gold steps + finish (EnvHarness's outcome, by state hash)", runtime.opsPerSec, runtimeCpu),
        row("same, plus tau-bench's reward (world rebuilt from the trace, hashes compared)", graded.opsPerSec, gradedCpu),
        row("createTauBenchRunner: agent loop, both gradings (no canonical digests)", looped.opsPerSec),
      ],
      notes: [
        'Wall-clock medians; the CPU column is process CPU time per episode, which is what the work costs when other processes share the 2 cores (wall time then overstates it).',
        `Import of both task files (520 tasks, gates: schema, exact duplicates, oracle replay; world load included): ${importMs.toFixed(0)} ms.`,
        "tau-bench spends 84 % of an episode computing its reward (a full reload, replay and hash of the database); EnvHarness forks the world copy-on-write and compares incremental hashes, and computes tau-bench's exact digest only on request.",
      ],
    },
  ];
}
