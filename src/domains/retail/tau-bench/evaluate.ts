/** pass^k on imported tau-bench tasks, as tau-bench computes it, beside EnvHarness's own outcome. */
import { EnvHarnessError, type Agent, type Task } from '../../../core/index.js';
import { passHatK, passKTable, type PassKRow } from '../../../report/metrics.js';
import type { Recorder } from '../../../runtime/index.js';
import type { TauBenchEpisodeResult, TauBenchRunner } from './episode.js';

export interface EvaluateTauBenchOptions {
  runner: TauBenchRunner;
  tasks: readonly Task[];
  agent: Agent;
  /** Trials per task (seeds 0..k-1), as tau-bench's `num_trials`. */
  k?: number;
  recorder?: Recorder;
  /** Prefix of the episode ids (`<runId>:<task index>:<trial>`) and the run id recorded with them. */
  runId?: string;
  onProgress?: (done: number, total: number) => void;
}

export interface TauBenchEvaluation {
  /** pass^1..pass^k of tau-bench's reward per slice (`retail/<type>`) and overall (`*`). */
  rows: PassKRow[];
  /** tau-bench's headline numbers: pass^1..pass^k over all tasks. */
  passK: number[];
  /** The same table over EnvHarness's outcome; equal to `rows` when the two gradings agree. */
  runtimeRows: PassKRow[];
  /** Episodes where EnvHarness's outcome and tau-bench's reward differ (expected: none). */
  disagreements: string[];
  episodes: TauBenchEpisodeResult[];
}

/**
 * Runs every task k times and computes pass^k exactly as tau-bench does: for each task with c
 * successes in n trials, C(c, k) / C(n, k), averaged over tasks (`passHatK`). Unlike the harness's
 * evaluation, episodes lost to a simulator error count as failures, as they do in tau-bench.
 * @example
 * const { passK } = await evaluateTauBench({ runner, tasks, agent, k: 4 });
 */
export async function evaluateTauBench(options: EvaluateTauBenchOptions): Promise<TauBenchEvaluation> {
  const k = options.k ?? 1;
  if (!Number.isInteger(k) || k < 1) throw new EnvHarnessError('PARAMS_INVALID', `k must be an integer >= 1, got ${k}`, { details: { pointer: '/k' } });
  if (options.tasks.length === 0) throw new EnvHarnessError('POOL_EMPTY', 'no tau-bench tasks to evaluate on; import them with `envharness import tau-bench`');
  const prefix = options.runId ?? 'tau-bench';
  const episodes: TauBenchEpisodeResult[] = [];
  const total = options.tasks.length * k;
  for (const [i, task] of options.tasks.entries()) {
    for (let trial = 0; trial < k; trial++) {
      episodes.push(
        await options.runner.runEpisode(task, options.agent, {
          seed: trial,
          episodeId: `${prefix}:${i}:${trial}`,
          ...(options.recorder ? { recorder: options.recorder } : {}),
          ...(options.runId ? { runId: options.runId } : {}),
        }),
      );
      options.onProgress?.(episodes.length, total);
    }
  }
  const trials = episodes.map((e) => ({ taskId: e.taskId, slice: e.slice, success: e.tauBench.reward === 1 }));
  const runtimeTrials = episodes.map((e) => ({ taskId: e.taskId, slice: e.slice, success: e.outcome >= 1 }));
  return {
    rows: passKTable(trials, k),
    passK: Array.from({ length: k }, (_, i) => passHatK(trials, i + 1).value),
    runtimeRows: passKTable(runtimeTrials, k),
    disagreements: episodes.filter((e) => (e.outcome >= 1 ? 1 : 0) !== e.tauBench.reward).map((e) => e.episodeId),
    episodes,
  };
}
