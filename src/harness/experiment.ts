/**
 * The core claim, measured: train the same learner twice with the same budget and seeds — uniformly on a
 * fixed task set (the static baseline) and under an adaptive curriculum over generated tasks — and
 * evaluate both on the frozen regression set and on held-out templates.
 */
import { createRng, EnvHarnessError, type Agent, type StoredTask } from '../core/index.js';
import { wilsonInterval, type StrategyName } from '../curriculum/index.js';
import type { Harness } from './harness.js';

export interface ArmCurve {
  arm: string;
  /** Success on the evaluation sets after each checkpoint (episodes trained so far). */
  points: Array<{ episodes: number; heldout: number; regression: number }>;
}

export interface ExperimentResult {
  episodes: number;
  evalEvery: number;
  seed: number;
  heldoutTasks: number;
  regressionTasks: number;
  arms: ArmCurve[];
  /** Per arm: final scores with Wilson 95% intervals. */
  final: Array<{ arm: string; heldout: number; heldoutLow: number; heldoutHigh: number; regression: number; regressionLow: number; regressionHigh: number }>;
  /**
   * Per adaptive arm: the first checkpoint whose held-out success reaches the static arm's final
   * held-out success, as a share of the budget (null: never within the budget).
   */
  reachStaticFinal: Array<{ arm: string; episodes: number | null; share: number | null }>;
}

export interface ExperimentOptions {
  /** Builds a fresh harness (its own store) with the same domains and the pool already filled. */
  harness: () => Promise<Harness>;
  /** A fresh, untrained agent with the given seed. */
  agent: (seed: number) => Agent;
  episodes: number;
  evalEvery: number;
  seed: number;
  strategies: StrategyName[];
  /** Tasks per slice in the static arm's fixed set (spread evenly over levels). */
  fixedPerSlice: number;
  /** At most this many held-out / regression tasks per evaluation. */
  evalLimit?: number;
  domains?: string[];
  concurrency?: number;
  onProgress?: (arm: string, episodes: number, total: number) => void;
}

async function evaluateOn(h: Harness, agent: Agent, tasks: readonly StoredTask[]): Promise<number> {
  agent.setTraining?.(false);
  let sum = 0;
  for (const [i, task] of tasks.entries()) {
    sum += (await h.runEpisode(task, agent, { seed: i, record: false })).outcome;
  }
  agent.setTraining?.(true);
  return tasks.length === 0 ? 0 : sum / tasks.length;
}

async function evalSets(h: Harness, options: ExperimentOptions): Promise<{ heldout: StoredTask[]; regression: StoredTask[] }> {
  const pick = (tasks: StoredTask[]) => {
    const mine = options.domains ? tasks.filter((t) => options.domains!.includes(t.domain)) : tasks;
    return options.evalLimit ? createRng([options.seed, 'eval-subset']).sample(mine, options.evalLimit) : mine;
  };
  return {
    heldout: pick(await h.store.listTasks({ split: 'heldout', status: 'active' })),
    regression: pick(await h.store.listTasks({ split: 'regression', status: 'active' })),
  };
}

/** Runs the static arm and one adaptive arm per strategy; every arm gets the same budget and seeds. */
export async function runStaticVsAdaptive(options: ExperimentOptions): Promise<ExperimentResult> {
  const arms: ArmCurve[] = [];
  let sets: { heldout: StoredTask[]; regression: StoredTask[] } | undefined;

  // Static arm: uniform over a fixed task set, cycled in a seeded shuffled order.
  {
    const h = await options.harness();
    sets = await evalSets(h, options);
    if (sets.heldout.length === 0) throw new EnvHarnessError('POOL_EMPTY', 'the experiment needs held-out tasks (generate held-out templates into the heldout split)');
    const agent = options.agent(options.seed);
    const rng = createRng([options.seed, 'static']);
    const fixed: StoredTask[] = [];
    for (const slice of h.dynamicSlices()) {
      if (options.domains && !options.domains.includes(slice.domain)) continue;
      for (let i = 0; i < options.fixedPerSlice; i++) {
        const level = slice.minLevel + (i % (slice.maxLevel - slice.minLevel + 1));
        fixed.push(await h.generateTask({ domain: slice.domain, taskType: slice.taskType, level }));
      }
    }
    const curve: ArmCurve = { arm: 'static', points: [] };
    let order: StoredTask[] = [];
    for (let done = 0; done < options.episodes; ) {
      const chunk = Math.min(options.evalEvery, options.episodes - done);
      for (let i = 0; i < chunk; i++) {
        if (order.length === 0) order = rng.shuffle(fixed);
        await h.runEpisode(order.pop()!, agent, { seed: rng.nextUint32(), record: false });
      }
      done += chunk;
      curve.points.push({ episodes: done, heldout: await evaluateOn(h, agent, sets.heldout), regression: await evaluateOn(h, agent, sets.regression) });
      options.onProgress?.('static', done, options.episodes);
    }
    arms.push(curve);
    await h.close();
  }

  for (const strategy of options.strategies) {
    const h = await options.harness();
    const agent = options.agent(options.seed);
    h.useCurriculum(strategy);
    const curve: ArmCurve = { arm: strategy, points: [] };
    for (let done = 0; done < options.episodes; ) {
      const chunk = Math.min(options.evalEvery, options.episodes - done);
      await h.train({ agent, episodes: chunk, strategy, record: false, concurrency: options.concurrency ?? 8, ...(options.domains ? { domains: options.domains } : {}), ...(done === 0 ? { seed: options.seed } : {}) });
      done += chunk;
      curve.points.push({ episodes: done, heldout: await evaluateOn(h, agent, sets.heldout), regression: await evaluateOn(h, agent, sets.regression) });
      options.onProgress?.(strategy, done, options.episodes);
    }
    arms.push(curve);
    await h.close();
  }

  const final = arms.map((a) => {
    const last = a.points[a.points.length - 1]!;
    const hi = wilsonInterval(Math.round(last.heldout * sets!.heldout.length), sets!.heldout.length);
    const ri = wilsonInterval(Math.round(last.regression * sets!.regression.length), sets!.regression.length);
    return { arm: a.arm, heldout: last.heldout, heldoutLow: hi.low, heldoutHigh: hi.high, regression: last.regression, regressionLow: ri.low, regressionHigh: ri.high };
  });
  const staticFinal = final[0]!.heldout;
  const reachStaticFinal = arms.slice(1).map((a) => {
    const hit = a.points.find((p) => p.heldout >= staticFinal);
    return { arm: a.arm, episodes: hit ? hit.episodes : null, share: hit ? hit.episodes / options.episodes : null };
  });
  return {
    episodes: options.episodes,
    evalEvery: options.evalEvery,
    seed: options.seed,
    heldoutTasks: sets!.heldout.length,
    regressionTasks: sets!.regression.length,
    arms,
    final,
    reachStaticFinal,
  };
}
