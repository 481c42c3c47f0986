/**
 * The web domain's simulated half: steps/s of the pure page (`step` on reference actions) and oracle
 * episodes/s through the runtime (reset, every reference action with its observation, grading), per
 * level, replayed and on first visits (each play from its own freshly built world), on one thread (CPU
 * time) and split across two worker threads (wall time). The Chromium half (web-browser's
 * `bench/web-chromium.bench.ts`) plays the same episodes (`webBenchTasks`) and takes its ratio against
 * `measureWebSim` in its own run.
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import type { Task } from '../src/core/index.js';
import { instantiateTask } from '../src/generation/index.js';
import { createEpisode, createRuntimeCache, type PreparedTask, type RuntimeCache } from '../src/runtime/index.js';
import { createWebState, initialPage, step, toWebAction, web, webTemplates, type PageState, type WebAction, type WebState } from '../src/domains/web/index.js';
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
  firstVisitEpisodesPerCpuSec: number;
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
  const firstVisits = firstVisitsPerCpuSecond(tasks);
  return {
    stepsPerSec: steps.opsPerSec,
    episodesPerSec: episodes.opsPerSec,
    stepsPerEpisode: total / plays.length,
    // On a shared machine wall-clock rates fall with the load; per CPU-second of this process they do much less.
    stepsPerCpuSec: perCpuSecond(playSteps, Math.max(total, Math.round(steps.opsPerSec * 0.3))),
    episodesPerCpuSec: perCpuSecond(playEpisodes, Math.max(tasks.length, Math.round(episodes.opsPerSec * 0.3))),
    firstVisitStepsPerCpuSec: firstVisits.steps,
    firstVisitEpisodesPerCpuSec: firstVisits.episodes,
  };
}

/**
 * What first visits of a set of tasks play: each task's reference actions as page actions, and the task as
 * the runtime prepared it (checked, its reference solution played for the reference hash). Preparing is a
 * cost per task, not per episode, paid here once on a world of its own: had an episode forked the world
 * the reference was played on, it would meet the renders that play left on its bid log (a replay, not a
 * first visit).
 */
interface FirstVisitSet {
  readonly tasks: readonly Task[];
  readonly actions: ReadonlyArray<readonly WebAction[]>;
  readonly prepared: ReadonlyArray<PreparedTask<WebState>>;
}

function firstVisitSet(tasks: readonly Task[]): FirstVisitSet {
  const shared = createRuntimeCache(web);
  const prepared = tasks.map((task) => shared.prepare(task));
  // Made on first read and kept on the prepared task: per task, not per episode.
  for (const p of prepared) void p.solutionKeys;
  return { tasks, actions: tasks.map((task) => task.spec.solution.map((a) => toWebAction(a)).filter((a): a is WebAction => a !== undefined)), prepared };
}

/** The last page a first-visit play reached (kept, so that no step is optimised away). */
export let lastPage: PageState | undefined;

/** What one round of first visits played and the time its plays took by the round's clock (µs). */
interface FirstVisitRound {
  plays: number;
  steps: number;
  us: number;
}

/** This process's CPU time (user + system), µs. */
const cpuClock = (): number => {
  const used = process.cpuUsage();
  return used.user + used.system;
};
/** Wall time, µs (worker threads: `process.cpuUsage` counts every thread of the process). */
const wallClock = (): number => performance.now() * 1000;

/**
 * One round of first visits: `copies` plays of every task (those `mine` picks, by play number), each from
 * its own freshly built world, so nothing another play computed is reused: no render, no row of a table,
 * no label, no observation text. This is what an agent pays on states no episode of its task has met.
 * `steps`: the pure `step` over the reference actions from the world's initial page. `episodes`: full
 * runtime episodes (the episode made, reset, every action of the reference solution with its observation
 * text, feedback, and the grading at the end). Each play's world is built just before it, outside the
 * timed part, and the clock counts the play alone: built all at once up front, a round's 120 young worlds
 * were copied by the collections that ran during the steps (about a quarter of the time measured), a cost
 * of building worlds that an agent's step does not pay.
 */
function firstVisitRound(set: FirstVisitSet, kind: 'steps' | 'episodes', copies: number, clock: () => number, mine: (play: number) => boolean = () => true): FirstVisitRound {
  const out: FirstVisitRound = { plays: 0, steps: 0, us: 0 };
  const { tasks, actions, prepared } = set;
  let play = 0;
  for (let c = 0; c < copies; c++) {
    for (let t = 0; t < tasks.length; t++) {
      if (!mine(play++)) continue;
      const task = tasks[t]!;
      if (kind === 'steps') {
        let page = initialPage(task.spec.initialState);
        const before = clock();
        for (const action of actions[t]!) page = step(page, action).page;
        out.us += clock() - before;
        lastPage = page;
      } else {
        const cache = freshWorldCache(prepared[t]!, createWebState(task.spec.initialState));
        const before = clock();
        const episode = createEpisode(web, task, { cache });
        episode.reset({ seed: c });
        let ended = false;
        for (const action of task.spec.solution) if ((ended = episode.step(action).terminated)) break;
        out.us += clock() - before;
        // Checked outside the timing: the episode on the fresh world ended where the reference play did.
        if (!ended || episode.stateHash() !== prepared[t]!.referenceHash) throw new Error(`the reference solution of ${task.id} did not end its first-visit episode in the reference state`);
      }
      out.plays++;
      out.steps += actions[t]!.length;
    }
  }
  return out;
}

/**
 * Untimed rounds of first visits before the timed ones, per level and kind. The steady state of a long
 * training run is warm code: a level's first rounds run while V8 is still optimising the render path (at
 * level 1 the first few rounds read about half of what rounds 25 to 40 read, in one process at load 8).
 */
const FIRST_VISIT_WARMUP = 12;
/** Timed rounds of first visits (each 5 plays of every task). */
const FIRST_VISIT_ROUNDS = 10;

/**
 * First-visit steps and episodes per CPU-second of this process, one thread: after the warm-up, everything
 * the timed rounds played over the CPU time of their plays. A sum, not a median of rounds: a round is a few
 * milliseconds of CPU and a minor collection a few, so a median could pick rounds that ran none, while
 * the sum counts collections at the rate the plays cause them.
 */
function firstVisitsPerCpuSecond(tasks: readonly Task[], copies = 5, warmup = FIRST_VISIT_WARMUP, rounds = FIRST_VISIT_ROUNDS): { steps: number; episodes: number } {
  const set = firstVisitSet(tasks);
  for (let round = 0; round < warmup; round++) {
    firstVisitRound(set, 'steps', copies, cpuClock);
    firstVisitRound(set, 'episodes', copies, cpuClock);
  }
  const steps: FirstVisitRound = { plays: 0, steps: 0, us: 0 };
  const episodes: FirstVisitRound = { plays: 0, steps: 0, us: 0 };
  for (let round = 0; round < rounds; round++) {
    add(steps, firstVisitRound(set, 'steps', copies, cpuClock));
    add(episodes, firstVisitRound(set, 'episodes', copies, cpuClock));
  }
  return { steps: steps.steps / (steps.us / 1e6), episodes: episodes.plays / (episodes.us / 1e6) };
}

function add(to: FirstVisitRound, round: FirstVisitRound): void {
  to.plays += round.plays;
  to.steps += round.steps;
  to.us += round.us;
}

/** A runtime cache that hands `prepared` with `base` as the world its episodes fork (same content, so the same base hash). */
function freshWorldCache(prepared: PreparedTask<WebState>, base: WebState): RuntimeCache<WebState> {
  const task: PreparedTask<WebState> = {
    task: prepared.task,
    base,
    baseHash: prepared.baseHash,
    referenceState: prepared.referenceState,
    referenceHash: prepared.referenceHash,
    tools: prepared.tools,
    toolSpecs: prepared.toolSpecs,
    budget: prepared.budget,
    confirm: prepared.confirm,
    forbidden: prepared.forbidden,
    faultRules: prepared.faultRules,
    hasStaleRule: prepared.hasStaleRule,
    solutionKeys: prepared.solutionKeys,
    // Served only to gate episodes (states of the reference play); these episodes play every call.
    replay: [],
  };
  return { domain: web, prepare: () => task, clear: () => undefined, stats: { states: 1, tasks: 1, statesBuilt: 1, tasksPrepared: 0 } };
}

/** What a first-visit thread is asked to play (`workerData`). */
interface ThreadJob {
  readonly webFirstVisits: true;
  readonly level: number;
  readonly kind: 'steps' | 'episodes';
  readonly index: number;
  readonly threads: number;
  readonly copies: number;
  readonly warmup: number;
  readonly rounds: number;
  /** One counter all threads of a run add to at the start of each round (a barrier: rounds run side by side). */
  readonly barrier: SharedArrayBuffer;
}

/**
 * The same first visits split across `threads` worker threads (play i of a round goes to thread i mod
 * threads): everything the timed rounds played over the sum, per round, of the slowest thread's time.
 */
export async function firstVisitsOnThreads(level: number, kind: 'steps' | 'episodes', threads: number, copies = 5, warmup = FIRST_VISIT_WARMUP, rounds = FIRST_VISIT_ROUNDS): Promise<number> {
  const barrier = new SharedArrayBuffer(4);
  const results = await Promise.all(
    Array.from({ length: threads }, (_, index) => {
      const job: ThreadJob = { webFirstVisits: true, level, kind, index, threads, copies, warmup, rounds, barrier };
      const worker = new Worker(THREAD_SOURCE, { eval: true, workerData: { job, tsx: import.meta.resolve('tsx/esm/api'), file: import.meta.url } });
      return new Promise<FirstVisitRound[]>((resolve, reject) => {
        worker.once('message', (rounds: FirstVisitRound[]) => resolve(rounds));
        worker.once('error', reject);
        worker.once('exit', (code) => (code === 0 ? undefined : reject(new Error(`first-visit thread exited with ${code}`))));
      });
    }),
  );
  let done = 0;
  let us = 0;
  for (let r = 0; r < rounds; r++) {
    let slowest = 0;
    for (const thread of results) {
      done += kind === 'steps' ? thread[r]!.steps : thread[r]!.plays;
      slowest = Math.max(slowest, thread[r]!.us);
    }
    us += slowest;
  }
  return done / (us / 1e6);
}

/**
 * A first-visit thread: warm-up rounds of every play (a thread is a fresh V8 isolate, as warm as the
 * one-thread run after them), then `rounds` rounds of its share timed by the wall clock, each started
 * with the other threads.
 */
function runThreadJob(job: ThreadJob): FirstVisitRound[] {
  const set = firstVisitSet(webBenchTasks(job.level));
  for (let r = 0; r < job.warmup; r++) firstVisitRound(set, job.kind, job.copies, wallClock);
  const mine = (play: number): boolean => play % job.threads === job.index;
  const counter = new Int32Array(job.barrier);
  const out: FirstVisitRound[] = [];
  for (let r = 0; r < job.rounds; r++) {
    Atomics.add(counter, 0, 1);
    Atomics.notify(counter, 0);
    for (;;) {
      const arrived = Atomics.load(counter, 0);
      if (arrived >= job.threads * (r + 1)) break;
      Atomics.wait(counter, 0, arrived, 100);
    }
    out.push(firstVisitRound(set, job.kind, job.copies, wallClock, mine));
  }
  return out;
}

/**
 * A thread's entry: Node 20 does not run the `--import` hooks tsx gave this process in its worker threads,
 * so the thread registers tsx itself and then loads this file, which plays the job it finds.
 */
const THREAD_SOURCE = `
const { workerData } = require('node:worker_threads');
import(workerData.tsx).then((tsx) => { tsx.register(); return import(workerData.file); });
`;

const threadJob = isMainThread ? undefined : (workerData as { job?: Partial<ThreadJob> } | null)?.job;
if (threadJob?.webFirstVisits === true) parentPort!.postMessage(runThreadJob(threadJob as ThreadJob));

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
      'first-visit episodes per CPU-s': fmt(m.firstVisitEpisodesPerCpuSec),
    });
  }
  const loadThreads = loadavg()[0]!;
  const threadRows = [];
  for (let level = 1; level <= 5; level++) {
    const steps1 = await firstVisitsOnThreads(level, 'steps', 1);
    const steps2 = await firstVisitsOnThreads(level, 'steps', 2);
    const episodes1 = await firstVisitsOnThreads(level, 'episodes', 1);
    const episodes2 = await firstVisitsOnThreads(level, 'episodes', 2);
    threadRows.push({
      level,
      'first-visit steps/s, 1 thread': fmt(steps1),
      'first-visit steps/s, 2 threads': fmt(steps2),
      'first-visit episodes/s, 1 thread': fmt(episodes1),
      'first-visit episodes/s, 2 threads': fmt(episodes2),
      'speed-up (steps, episodes)': `${(steps2 / steps1).toFixed(2)}x, ${(episodes2 / episodes1).toFixed(2)}x`,
    });
  }
  return [
    {
      title: 'Web domain: simulated page',
      description:
        'Per level, 24 tasks (8 templates x 3 seeds). Simulated steps/s: the pure `step(page, action)` over the reference actions from built initial pages (no observation text). ' +
        'Oracle episodes/s: full episodes through the runtime (reset, every reference action with its accessibility-tree observation, feedback and grading). Targets: 100k steps/s, 5,000 episodes/s. ' +
        'Both replay the same tasks, so after the first play of a task they mostly meet page states an earlier episode rendered (kept per bid log and reused). ' +
        'First visits: each play from its own freshly built world and initial page, so nothing is reused; each world is built just before its play and only the CPU time of the play is counted. A round is 5 plays of every task; after 12 untimed rounds (warm code, as in a long training run), the figure is everything 10 rounds played over their CPU time. ' +
        'First-visit steps: the pure `step` over the reference actions. First-visit episodes: full runtime episodes as above (the episode made, reset, every reference action with its observation, feedback, grading), each forking its own fresh world; the task is prepared once beforehand (its reference solution played for the reference hash, on a world of its own), a cost per task and not counted.',
      rows,
      notes: [`load average at start ${load.toFixed(2)}, at end ${loadThreads.toFixed(2)} on this machine's cores; the per-CPU-second columns divide by this process's user + system CPU time (medians of 5 runs; first visits: totals of 10 rounds after 12 untimed ones)`, 'The Chromium half (same episodes, ratio) is bench/web-chromium.bench.ts, from the web-browser helper.', 'First visits since 2026-12-05 (third pass) time each play alone, its world built just before it: earlier runs built a round\'s 120 worlds up front and also counted the collector copying them during the steps (about a quarter of their time), so their first-visit figures are not like for like with these. Since the fourth pass the first-visit columns are totals over 10 rounds after 12 untimed ones, where they were medians of 7 rounds with no warm-up (rounds of a few milliseconds, read while V8 was still optimising the render path: at level 1 about half the steady rate).'],
    },
    {
      title: 'Web domain: first visits on 2 threads',
      description:
        'The first-visit workload of the section above (per level, 5 plays of each of 24 tasks a round, each play from its own freshly built world) played by worker threads of this process: each thread first plays 12 untimed rounds of every play (a thread is a fresh V8 isolate), then play i of a round goes to thread i mod N and the threads start each of 10 timed rounds together. ' +
        'As in the one-thread columns above, each world is built just before its play and outside the timing: a thread sums the wall time of its plays alone, and the figure is everything the threads played over the sum, per round, of the slower thread\'s time. ' +
        'Wall time, not CPU time (a worker thread cannot read its own CPU time in Node 20), so these figures fall with the machine\'s load; the one-thread per-CPU-second columns above are the primary reading, these a supplementary one of what this 2-core machine does with both cores.',
      rows: threadRows,
      notes: [`load average at start ${loadThreads.toFixed(2)}, at end ${loadavg()[0]!.toFixed(2)} on this machine's cores (with the load at or above 2, the second thread competes with other jobs for the second core)`],
    },
  ];
}
