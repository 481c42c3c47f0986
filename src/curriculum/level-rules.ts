/** Level rules: how a slice's level moves (`fixed`, `threshold` as in reasoning-gym, `target` as in AdaRFT). */
import type { JsonValue } from '../core/index.js';
import { asNumbers, asObject } from './state-io.js';
import type { SuccessWindows } from './success-window.js';
import type { CurriculumConfig, MoveReason } from './types.js';

/** What a level rule reads: the slices' levels and bounds, the current-level windows, the guard's hold. */
export interface LevelContext {
  readonly level: Int32Array;
  readonly minLevel: Int32Array;
  readonly maxLevel: Int32Array;
  readonly window: SuccessWindows;
  readonly held: boolean;
}

export type LevelDecision =
  | { to: number; reason: MoveReason; successRate: number; n: number }
  | 'blocked'
  | undefined;

export interface LevelRule {
  /** A counted result at slice i's current level, already in its window. Returns a move, a block, or nothing. */
  observe(i: number, success: number, ctx: LevelContext): LevelDecision;
  /** Slice i moved to `level`: per-level counters restart. */
  moved(i: number, level: number): void;
  /** The continuous target difficulty of slice i (`target` only). */
  target?(i: number): number;
  getState(): JsonValue;
  setState(state: JsonValue, pointer: string): void;
}

export function createLevelRule(config: CurriculumConfig, initialLevels: Int32Array): LevelRule {
  switch (config.levels) {
    case 'fixed':
      return fixedRule();
    case 'threshold':
      return thresholdRule(config, initialLevels.length);
    case 'target':
      return targetRule(config, initialLevels);
  }
}

function fixedRule(): LevelRule {
  return {
    observe: () => undefined,
    moved: () => {},
    getState: () => null,
    setState: () => {},
  };
}

/**
 * reasoning-gym's controller (training/trainers/ray_grpo_trainer.py), per slice: once the window holds
 * `minSamples` results, a mean above `upper` for `patience` evaluations raises the level by one, below
 * `lower` lowers it; the window restarts after each move (hysteresis).
 */
function thresholdRule(config: CurriculumConfig, n: number): LevelRule {
  const { upper, lower, minSamples, patience } = config.threshold;
  const up = new Int32Array(n);
  const down = new Int32Array(n);
  return {
    observe(i, _success, ctx) {
      const count = ctx.window.count(i);
      if (count < minSamples) return undefined;
      const mean = ctx.window.mean(i);
      const level = ctx.level[i]!;
      if (mean > upper) {
        down[i] = 0;
        up[i]!++;
        if (up[i]! < patience || level >= ctx.maxLevel[i]!) return undefined;
        if (ctx.held) return 'blocked';
        return { to: level + 1, reason: 'above-band', successRate: mean, n: count };
      }
      if (mean < lower) {
        up[i] = 0;
        down[i]!++;
        if (down[i]! < patience || level <= ctx.minLevel[i]!) return undefined;
        return { to: level - 1, reason: 'below-band', successRate: mean, n: count };
      }
      up[i] = 0;
      down[i] = 0;
      return undefined;
    },
    moved(i) {
      up[i] = 0;
      down[i] = 0;
    },
    getState: () => ({ up: Array.from(up), down: Array.from(down) }),
    setState(state, pointer) {
      const o = asObject(state, pointer);
      up.set(asNumbers(o.up, `${pointer}/up`, n));
      down.set(asNumbers(o.down, `${pointer}/down`, n));
    },
  };
}

/**
 * AdaRFT (arXiv 2504.05520, limenlp/verl): every `batch` results at the current level, with R̄ their mean,
 * T ← clip(T + clip(η·range·tanh(α(R̄ − β)), ±maxStep), min, max); the level is T rounded. While levels are
 * held, T may not round above the current level.
 */
function targetRule(config: CurriculumConfig, initialLevels: Int32Array): LevelRule {
  const { target: beta, alpha, eta, maxStep, batch } = config.target;
  const n = initialLevels.length;
  const targets = Float64Array.from(initialLevels);
  const sums = new Float64Array(n);
  const counts = new Int32Array(n);
  return {
    observe(i, success, ctx) {
      sums[i]! += success;
      counts[i]!++;
      if (counts[i]! < batch) return undefined;
      const mean = sums[i]! / counts[i]!;
      const count = counts[i]!;
      sums[i] = 0;
      counts[i] = 0;
      const min = ctx.minLevel[i]!;
      const max = ctx.maxLevel[i]!;
      const level = ctx.level[i]!;
      const step = clamp(eta * (max - min) * Math.tanh(alpha * (mean - beta)), -maxStep, maxStep);
      let next = clamp(targets[i]! + step, min, max);
      let to = clamp(Math.round(next), min, max);
      let blocked = false;
      if (ctx.held && to > level) {
        next = level;
        to = level;
        blocked = true;
      }
      targets[i] = next;
      if (blocked) return 'blocked';
      if (to === level) return undefined;
      return { to, reason: to > level ? 'target-rose' : 'target-fell', successRate: mean, n: count };
    },
    moved(i) {
      sums[i] = 0;
      counts[i] = 0;
    },
    target: (i) => targets[i]!,
    getState: () => ({ targets: Array.from(targets), sums: Array.from(sums), counts: Array.from(counts) }),
    setState(state, pointer) {
      const o = asObject(state, pointer);
      targets.set(asNumbers(o.targets, `${pointer}/targets`, n));
      sums.set(asNumbers(o.sums, `${pointer}/sums`, n));
      counts.set(asNumbers(o.counts, `${pointer}/counts`, n));
    },
  };
}

function clamp(x: number, min: number, max: number): number {
  return x < min ? min : x > max ? max : x;
}
