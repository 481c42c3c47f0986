/** Weight rules: how slices share draws (`uniform`, `learning-progress` as in ALP-GMM, `learnability` as in DUMP). */
import type { JsonValue } from '../core/index.js';
import { LEARNABILITY_REFRESH_GROWTH } from './defaults.js';
import { asNumber, asObject } from './state-io.js';
import { SuccessWindows } from './success-window.js';
import type { CurriculumConfig } from './types.js';

/** What a weight rule reads: current-level windows and how many results each slice and all slices counted. */
export interface WeightContext {
  readonly window: SuccessWindows;
  readonly counted: Float64Array;
  readonly total: number;
}

export interface WeightRule {
  /** Share of draws spread uniformly by the rule itself (before the controller's floor). */
  readonly uniformShare: number;
  /** A counted result of slice i (any level). */
  observe(i: number, success: number): void;
  /** Natural log of slice i's weight before temperature and normalisation; −Infinity for weight 0. */
  logWeight(i: number, ctx: WeightContext): number;
  /** Called once per update before weights are recomputed: true when every slice's weight is stale. */
  refreshAll(ctx: WeightContext): boolean;
  /** Learning progress of slice i, null while unknown (`learning-progress` only). */
  progress?(i: number): number | null;
  getState(): JsonValue;
  setState(state: JsonValue, pointer: string): void;
}

export function createWeightRule(config: CurriculumConfig, n: number): WeightRule {
  switch (config.weights) {
    case 'uniform':
      return { uniformShare: 0, observe: () => {}, logWeight: () => 0, refreshAll: () => false, getState: () => null, setState: () => {} };
    case 'learning-progress':
      return learningProgressRule(config, n);
    case 'learnability':
      return learnabilityRule(config);
    case 'failure':
      return failureRule();
  }
}

/**
 * ALP (TeachMyAgent alp_gmm.py: ALP = |r − r_old|) per slice: the absolute difference between the mean
 * success of the newest `half` results and the `half` before them (fewer while filling, split evenly).
 * A slice with fewer than 2·minHalf results counts as maximal progress (1), like ALP-GMM's bootstrap of
 * random draws; `randomShare` of all draws stay uniform (ALP-GMM random_task_ratio 0.2).
 */
function learningProgressRule(config: CurriculumConfig, n: number): WeightRule {
  const { half, minHalf, randomShare } = config.learningProgress;
  const recent = new SuccessWindows(n, 2 * half);
  const progress = (i: number): number | null => {
    const k = recent.count(i);
    if (k < 2 * minHalf) return null;
    const h = k >> 1;
    let newer = 0;
    let older = 0;
    for (let back = 0; back < h; back++) newer += recent.recent(i, back);
    for (let back = h; back < 2 * h; back++) older += recent.recent(i, back);
    return Math.abs(newer - older) / h;
  };
  return {
    uniformShare: randomShare,
    observe: (i, success) => recent.push(i, success),
    logWeight: (i) => Math.log(progress(i) ?? 1),
    refreshAll: () => false,
    progress,
    getState: () => recent.getState(),
    setState: (state, pointer) => recent.setState(state, pointer),
  };
}

/**
 * DUMP (arXiv 2504.09710, verl/utils/curriculum_learning.py): score = L(p̂) + c·√(ln(N+1)/(n+1)), weights
 * softmax(score/τ). L is GRPO's E|Â| for binary rewards, 2√(p̂(1−p̂)) (or p̂(1−p̂)); p̂ is the current-level
 * window with a Laplace prior, so an empty window reads 0.5. N moves every slice's bonus, so untouched
 * slices are recomputed only when ln(N+1) has grown by 1% since the last full refresh.
 */
function learnabilityRule(config: CurriculumConfig): WeightRule {
  const { signal, c, tau } = config.learnability;
  let refreshedLog = 0;
  const score = (i: number, ctx: WeightContext): number => {
    const p = (ctx.window.sum(i) + 1) / (ctx.window.count(i) + 2);
    const learnability = signal === 'abs-advantage' ? 2 * Math.sqrt(p * (1 - p)) : p * (1 - p);
    return learnability + c * Math.sqrt(Math.log(ctx.total + 1) / (ctx.counted[i]! + 1));
  };
  return {
    uniformShare: 0,
    observe: () => {},
    logWeight: (i, ctx) => score(i, ctx) / tau,
    refreshAll(ctx) {
      const log = Math.log(ctx.total + 1);
      if (!(log > refreshedLog * LEARNABILITY_REFRESH_GROWTH)) return false;
      refreshedLog = log;
      return true;
    },
    getState: () => ({ refreshedLog }),
    setState(state, pointer) {
      refreshedLog = asNumber(asObject(state, pointer).refreshedLog, `${pointer}/refreshedLog`);
    },
  };
}

/**
 * Weight ∝ the failure rate at the slice's current level, with a Laplace prior (an empty window reads
 * 0.5): the slices the agent fails most are drawn most. Used by the safety layer, where a failure is
 * an attack that worked.
 */
function failureRule(): WeightRule {
  return {
    uniformShare: 0,
    observe: () => {},
    logWeight: (i, ctx) => Math.log((ctx.window.count(i) - ctx.window.sum(i) + 1) / (ctx.window.count(i) + 2)),
    refreshAll: () => false,
    getState: () => null,
    setState: () => {},
  };
}
