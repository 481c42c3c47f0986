/** Synthetic agents with known skill curves, for curriculum tests and benches (not part of the public API). */
import { createRng, type Rng } from '../core/index.js';
import type { Curriculum, CurriculumUpdate, Draw, EpisodeResult, Slice } from './types.js';

export function sigmoid(x: number): number {
  return 1 / (1 + Math.exp(-x));
}

/** `count` slices `d/t0`, `d/t1`, … with levels [1, maxLevel]. */
export function makeSlices(count: number, maxLevel = 5): Slice[] {
  return Array.from({ length: count }, (_, i) => ({ domain: 'd', taskType: `t${i}`, minLevel: 1, maxLevel }));
}

export interface SimulationOptions {
  episodes: number;
  /** Results fed back per update. */
  batch?: number;
  seed: number | string;
  /** The agent's skill on a slice after `episode` episodes in all. */
  skill: (slice: string, episode: number) => number;
  /** Success probability = sigmoid(steepness · (skill − level − taskOffset)). */
  steepness?: number;
  /** Spread of a task's hidden difficulty offset around 0 (uniform in ±spread/2). */
  taskSpread?: number;
  /** Share of episodes lost to injected faults (marked excluded). */
  faultShare?: number;
  /** Called after every update. */
  onUpdate?: (update: CurriculumUpdate, episode: number) => void;
}

export interface Simulation {
  draws: Draw[];
  results: EpisodeResult[];
  updates: CurriculumUpdate[];
}

/** Runs a synthetic agent under a curriculum: draw → Bernoulli outcome → update, in batches. */
export function simulate(curriculum: Curriculum, options: SimulationOptions): Simulation {
  const batch = options.batch ?? 8;
  const steepness = options.steepness ?? 2;
  const spread = options.taskSpread ?? 0;
  const rng = createRng(['curriculum', options.seed]);
  const outcomes = createRng(['agent', options.seed]);
  const out: Simulation = { draws: [], results: [], updates: [] };
  let pending: EpisodeResult[] = [];
  let newTasks = 0;
  for (let episode = 0; episode < options.episodes; episode++) {
    const draw = curriculum.draw(rng);
    out.draws.push(draw);
    const taskId = draw.taskId ?? `${draw.slice}#${draw.level}#${newTasks++}`;
    const offset = spread === 0 ? 0 : (createRng(['task', taskId]).next() - 0.5) * spread;
    const p = sigmoid(steepness * (options.skill(draw.slice, episode) - draw.level - offset));
    const result: EpisodeResult = { slice: draw.slice, level: draw.level, success: outcomes.chance(p) ? 1 : 0, taskId };
    if (options.faultShare && outcomes.chance(options.faultShare)) result.excluded = true;
    pending.push(result);
    out.results.push(result);
    if (pending.length === batch || episode === options.episodes - 1) {
      const update = curriculum.update(pending);
      out.updates.push(update);
      options.onUpdate?.(update, episode);
      pending = [];
    }
  }
  return out;
}

/** Mean success of the last `count` counted results of a slice (optionally only non-rehearsal draws). */
export function recentSuccess(sim: Simulation, slice: string, count: number, filter?: (draw: Draw) => boolean): number {
  let sum = 0;
  let n = 0;
  for (let k = sim.results.length - 1; k >= 0 && n < count; k--) {
    const r = sim.results[k]!;
    if (r.slice !== slice || r.excluded) continue;
    if (filter && !filter(sim.draws[k]!)) continue;
    sum += r.success;
    n++;
  }
  return n > 0 ? sum / n : NaN;
}

/** A fresh generator for tests. */
export function testRng(...parts: unknown[]): Rng {
  return createRng(['test', ...parts]);
}
