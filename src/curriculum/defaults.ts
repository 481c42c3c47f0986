/**
 * Curriculum defaults and their sources (see docs/curriculum.md). Proposed to move to core/defaults.ts;
 * kept here while src/core is frozen.
 */
import type { CurriculumConfig, LevelRuleName, StrategyName, WeightRuleName } from './types.js';

/** What each strategy preset combines. The joint controller takes any level rule with any weight rule. */
export const STRATEGY_PRESETS: Readonly<
  Record<StrategyName, { levels: LevelRuleName; weights: WeightRuleName; replay: boolean }>
> = {
  uniform: { levels: 'fixed', weights: 'uniform', replay: false },
  threshold: { levels: 'threshold', weights: 'uniform', replay: false },
  'learning-progress': { levels: 'threshold', weights: 'learning-progress', replay: false },
  'prioritized-replay': { levels: 'threshold', weights: 'uniform', replay: true },
  learnability: { levels: 'target', weights: 'learnability', replay: false },
};

/** Defaults shared by every strategy (the preset then sets `levels`, `weights`, `replay`). */
export const CURRICULUM_DEFAULTS: Omit<CurriculumConfig, 'levels' | 'weights' | 'replay'> = {
  initialLevel: 'min',
  // llm-curriculum-anchors §4: "a window of about 50–300 episodes".
  window: 50,
  // No slice starves; ALP-GMM's 0.2 random share over 10 slices is 0.02 each.
  floor: 0.02,
  temperature: 1,
  // Overridden per level rule by `defaultLowerLevelShare`.
  lowerLevelShare: 0,
  threshold: {
    // reasoning-gym ray_grpo_trainer: success_threshold 0.70, failure_threshold 0.10–0.30.
    upper: 0.7,
    lower: 0.3,
    // Half the window: a level moves on at least 25 results at that level.
    minSamples: 25,
    // The window is cleared after every move, which already gives hysteresis.
    patience: 1,
  },
  target: {
    // AdaRFT (limenlp/verl): beta 0.5, alpha 2, eta 50 on d in [0, 100].
    target: 0.5,
    alpha: 2,
    eta: 0.5,
    // Ours: per-slice batches are small (16, not AdaRFT's 1024), so R̄ is noisy; half a level per step.
    maxStep: 0.5,
    batch: 16,
  },
  learningProgress: {
    half: 20,
    minHalf: 5,
    // TeachMyAgent alp_gmm.py random_task_ratio.
    randomShare: 0.2,
  },
  learnability: {
    // DUMP curriculum_learning.py: mean|Â| + sqrt(2 ln(N+1)/(n+1)), softmax(score / 0.1).
    signal: 'abs-advantage',
    c: Math.SQRT2,
    tau: 0.1,
  },
  replayConfig: {
    // level-replay README recipe: rank transform, temperature 0.1, staleness_coef 0.1, alpha 1.0.
    beta: 0.1,
    rho: 0.1,
    // Ours: LLM-agent runs see hundreds of tasks per slice, not Procgen's millions of levels.
    capacity: 128,
    // jaxued minimum_fill_ratio.
    minFill: 0.5,
    schedule: 'fixed',
    // level-replay nu = 0.5 (probability of a new level).
    replayProb: 0.5,
    score: 'abs-advantage',
    alpha: 1,
  },
};

/** Share of rehearsal draws below the current level, per level rule. */
export function defaultLowerLevelShare(levels: LevelRuleName): number {
  return levels === 'threshold' ? 0.2 : 0;
}

/** Untouched learnability bonuses are refreshed when ln(N+1) has grown by this factor since the last refresh. */
export const LEARNABILITY_REFRESH_GROWTH = 1.01;

/** z for a two-sided 95% interval (with the Wilson interval, in core). */
export { Z95 } from '../core/index.js';
