/**
 * The web domain's simulated half: steps/s of the pure page (`step` on reference actions) and oracle
 * episodes/s through the runtime (reset, every reference action with its observation, grading), per
 * level. The Chromium half (web-browser's `bench/web-chromium.bench.ts`) plays the same episodes
 * (`webBenchTasks`) and takes its ratio against `measureWebSim` in its own run.
 */
import { loadavg } from 'node:os';
import type { Task } from '../src/core/index.js';
import { instantiateTask } from '../src/generation/index.js';
import { createEpisode } from '../src/runtime/index.js';
import { initialPage, step, toWebAction, web, webTemplates, type PageState, type WebAction } from '../src/domains/web/index.js';
import { fmt, measure, median, type BenchSection } from './lib.js';

/** Episodes per level: every template, a few seeds (the same set both halves play). */
export function webBenchTasks(level: number, seeds = 3): Task[] {
  const out: Task[] = [];
  for (const template of webTemplates) for (let seed = 1; seed <= seeds; seed++) out.push(instantiateTask(template, { level, seed, index: 0 }));
  return out;
}

/** Simulated steps/s (pure `step` from built initial pages) and oracle episodes/s (runtime) on tasks. */
export function measureWebSim(tasks: readonly Task[]): {
  stepsPerSec: number;
  episodesPerSec: number;
  stepsPerEpisode: number;
  stepsPerCpuSec: number;
  episodesPerCpuSec: number;
  firstVisitStepsPerCpuSec: number;
} {
  const plays = tasks.map((task) => ({ page: initialPage(task.spec.initialState), actions: task.spec.solution.map((a) => toWebAction(a)!).filter((a): a is WebAction => a !== undefined) }));
  const total = plays.reduce((n, p) => n + p.actions.length, 0);
  let sink: PageState | undefined;
  const playSteps = (n: number): void => {
    let done = 0;
    while (done < n) {
      for (const play of plays) {
        let page = play.page;
        for (const action of play.actions) page = step(page, action).page;
        sink = page;
        done += play.actions.length;
        if (done >= n) break;
      }
    }
  };
  const playEpisodes = (n: number): void => {
    for (let i = 0; i < n; i++) {
      const task = tasks[i % tasks.length]!;
      const episode = createEpisode(web, task);
      episode.reset({ seed: i });
      for (const action of task.spec.solution) if (episode.step(action).terminated) break;
    }
  };
  const steps = measure(playSteps, { runs: 5, targetMs: 300, minOps: total });
  const episodes = measure(playEpisodes, { runs: 5, targetMs: 300 });
  if (sink === undefined) throw new Error('no steps ran');
  return {
    stepsPerSec: steps.opsPerSec,
    episodesPerSec: episodes.opsPerSec,
    stepsPerEpisode: total / plays.length,
    // On a shared machine wall-clock rates fall with the load; per CPU-second of this process they do much less.
    stepsPerCpuSec: perCpuSecond(playSteps, Math.max(total, Math.round(steps.opsPerSec * 0.3))),
    episodesPerCpuSec: perCpuSecond(playEpisodes, Math.max(tasks.length, Math.round(episodes.opsPerSec * 0.3))),
    firstVisitStepsPerCpuSec: firstVisitSteps(tasks),
  };
}

/**
 * Steps per CPU-second when no page state repeats: each play starts from its own freshly built initial
 * page (its own world parsed from the task's JSON, its own session), so nothing another play computed is
 * reused: no render, no row of a table, no label. This is what an agent pays on states no episode of its
 * task has met. Each play's world is built just before its steps, outside the timed part, and the CPU time
 * of its steps alone is counted: built all at once up front, the round's 120 young worlds were copied by
 * the collections that ran during the steps (about a quarter of the time measured), a cost of building
 * worlds that an agent's step does not pay. A round is a few milliseconds of CPU, so the median of
 * several rounds is reported (one round alone moved by a third between runs).
 */
function firstVisitSteps(tasks: readonly Task[], copies = 5, rounds = 7): number {
  const actions = tasks.map((task) => task.spec.solution.map((a) => toWebAction(a)).filter((a): a is WebAction => a !== undefined));
  const rates: number[] = [];
  let sink: PageState | undefined;
  for (let round = 0; round < rounds; round++) {
    let steps = 0;
    let cpu = 0;
    for (let c = 0; c < copies; c++) {
      for (let t = 0; t < tasks.length; t++) {
        let page = initialPage(tasks[t]!.spec.initialState);
        const before = process.cpuUsage();
        for (const action of actions[t]!) page = step(page, action).page;
        const used = process.cpuUsage(before);
        cpu += used.user + used.system;
        steps += actions[t]!.length;
        sink = page;
      }
    }
    rates.push(steps / (cpu / 1e6));
  }
  if (sink === undefined) throw new Error('no steps ran');
  return median(rates);
}

/**
 * Operations per CPU-second (user + system) of this process: the median over `runs` runs of `n`
 * operations (one run is a few hundred milliseconds, and a single garbage collection moves it a lot).
 */
function perCpuSecond(fn: (n: number) => void, n: number, runs = 5): number {
  const rates: number[] = [];
  for (let i = 0; i < runs; i++) {
    const before = process.cpuUsage();
    fn(n);
    const used = process.cpuUsage(before);
    rates.push(n / ((used.user + used.system) / 1e6));
  }
  return median(rates);
}

export async function run(): Promise<BenchSection[]> {
  const load = loadavg()[0]!;
  const rows = [];
  for (let level = 1; level <= 5; level++) {
    const m = measureWebSim(webBenchTasks(level));
    rows.push({
      level,
      'steps/episode': m.stepsPerEpisode.toFixed(1),
      'simulated steps/s': fmt(m.stepsPerSec),
      'steps per CPU-s': fmt(m.stepsPerCpuSec),
      'first-visit steps per CPU-s': fmt(m.firstVisitStepsPerCpuSec),
      'oracle episodes/s (runtime)': fmt(m.episodesPerSec),
      'episodes per CPU-s': fmt(m.episodesPerCpuSec),
    });
  }
  return [
    {
      title: 'Web domain: simulated page',
      description:
        'Per level, 24 tasks (8 templates x 3 seeds). Simulated steps/s: the pure `step(page, action)` over the reference actions from built initial pages (no observation text). ' +
        'Oracle episodes/s: full episodes through the runtime (reset, every reference action with its accessibility-tree observation, feedback and grading). Targets: 100k steps/s, 5,000 episodes/s. ' +
        'Both replay the same tasks, so after the first play of a task they mostly meet page states an earlier episode rendered (kept per bid log and reused). First-visit steps: each play from its own freshly built world and initial page, so nothing is reused; each world is built just before its play and only the CPU time of the steps is counted (median of 7 rounds of 5 plays per task).',
      rows,
      notes: [`load average at start ${load.toFixed(2)}, at end ${loadavg()[0]!.toFixed(2)} on this machine's cores; the per-CPU-second columns divide by this process's user + system CPU time (medians of 5 runs; first visits of 7 rounds)`, 'The Chromium half (same episodes, ratio) is bench/web-chromium.bench.ts, from the web-browser helper.', 'First visits since 2026-12-05 (third pass) time each play alone, its world built just before it: earlier runs built a round\'s 120 worlds up front and also counted the collector copying them during the steps (about a quarter of their time), so their first-visit figures are not like for like with these.'],
    },
  ];
}
