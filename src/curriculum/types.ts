/** Public types of the curriculum: slices, results, draws, updates, statistics and configuration. */
import type { JsonValue } from '../core/index.js';
import type { Rng } from '../core/index.js';

/** A (domain, task type) pair with the level bounds its templates declare. Its key is `domain/taskType`. */
export interface Slice {
  domain: string;
  taskType: string;
  /** Lowest level (templates number levels from 1). */
  minLevel: number;
  maxLevel: number;
  /** Where this slice starts; default from `config.initialLevel`. */
  initialLevel?: number;
}

/** The outcome of one episode as the curriculum sees it. */
export interface EpisodeResult {
  /** Slice key, `domain/taskType`. */
  slice: string;
  /** The level the task was generated at. */
  level: number;
  /** Task success in [0, 1] (the outcome reward, without shaping). */
  success: number;
  /** The task's id; needed for prioritized replay. */
  taskId?: string;
  /**
   * Lost to an unrecoverable injected fault or a simulator error: never counted in difficulty
   * statistics, only in the slice's `excluded` count.
   */
  excluded?: boolean;
  /** A caller-computed replay score (e.g. PLR's positive value loss); overrides the built-in score. */
  score?: number;
}

/** What to run next. */
export interface Draw {
  slice: string;
  level: number;
  /** True when `taskId` is a task to replay from the slice's buffer; false means "a new task". */
  replay: boolean;
  taskId?: string;
  /** True when the level was drawn below the slice's level to prevent forgetting. */
  rehearsal?: boolean;
}

export type MoveReason = 'above-band' | 'below-band' | 'target-rose' | 'target-fell';

/** A level change and the evidence for it. */
export interface LevelMove {
  slice: string;
  from: number;
  to: number;
  reason: MoveReason;
  /** The success rate that decided the move (window mean for `threshold`, batch mean for `target`). */
  successRate: number;
  /** How many results that rate is over. */
  n: number;
}

/** What one `update` changed. */
export interface CurriculumUpdate {
  /** Results that entered the statistics. */
  counted: number;
  /** Results marked `excluded` (counted apart, never in difficulty statistics). */
  excluded: number;
  /** Results ignored because the curriculum is frozen. */
  ignored: number;
  moves: LevelMove[];
  /** Slices whose level would have risen but levels are held (regression guard). */
  blocked: string[];
  /** The new draw probability of every slice that received results in this update. */
  weights: WeightChange[];
}

export interface WeightChange {
  slice: string;
  /** Draw probability after the update. */
  weight: number;
}

/** Windowed success at a slice's current level, with a Wilson 95% interval. */
export interface WindowStats {
  n: number;
  /** null until the window holds a result. */
  successRate: number | null;
  low: number;
  high: number;
}

export interface SliceStats {
  level: number;
  minLevel: number;
  maxLevel: number;
  /** Draw probability. */
  weight: number;
  window: WindowStats;
  /** Results counted over the curriculum's life (all levels). */
  counted: number;
  /** Results excluded over the curriculum's life (faults, simulator errors). */
  excluded: number;
  /** `learning-progress` weights: |recent − older| success, or null while unknown. */
  progress?: number | null;
  /** `target` levels: the continuous target difficulty T. */
  target?: number;
  /** `prioritized-replay`: tasks in the slice's replay buffer. */
  replaySize?: number;
}

export const STRATEGY_NAMES = ['uniform', 'threshold', 'learning-progress', 'prioritized-replay', 'learnability'] as const;
/** A preset that picks a level rule, a weight rule and whether to replay tasks. */
export type StrategyName = (typeof STRATEGY_NAMES)[number];

export const LEVEL_RULES = ['fixed', 'threshold', 'target'] as const;
/** How levels move: not at all, by a success band (reasoning-gym), or toward a target success (AdaRFT). */
export type LevelRuleName = (typeof LEVEL_RULES)[number];

export const WEIGHT_RULES = ['uniform', 'learning-progress', 'learnability', 'failure'] as const;
/**
 * How slice weights are set: equal, by learning progress (ALP), by learnability + UCB (DUMP), or by
 * failure rate at the current level (red-teaming: draws go where the agent fails, e.g. the attack kinds
 * it falls for).
 */
export type WeightRuleName = (typeof WEIGHT_RULES)[number];

export interface ThresholdConfig {
  /** Raise the level when windowed success is above this (reasoning-gym `success_threshold` 0.70). */
  upper: number;
  /** Lower it when below this (reasoning-gym `failure_threshold` 0.10–0.30). */
  lower: number;
  /** Results needed in the window before the level may move. */
  minSamples: number;
  /** Consecutive evaluations beyond the band needed to move (hysteresis, with the window reset). */
  patience: number;
}

export interface TargetConfig {
  /** Target success β (AdaRFT 0.5). */
  target: number;
  /** Sensitivity α in tanh(α(R̄ − β)) (AdaRFT 2). */
  alpha: number;
  /** Step size η as a share of the level range (AdaRFT η = 50 on [0, 100]: 0.5). */
  eta: number;
  /** Largest change of T per step, in levels. */
  maxStep: number;
  /** Results at the current level per step (the batch R̄ is taken over). */
  batch: number;
}

export interface LearningProgressConfig {
  /** Results in each half (recent, older) of the progress window. */
  half: number;
  /** Results needed in each half before progress is known; unknown slices count as most promising. */
  minHalf: number;
  /** Share of draws spread uniformly (ALP-GMM `random_task_ratio` 0.2). */
  randomShare: number;
}

export interface LearnabilityConfig {
  /** Learnability signal from p̂: `abs-advantage` 2√(p̂(1−p̂)) (GRPO's E|Â|, DUMP) or `variance` p̂(1−p̂). */
  signal: 'abs-advantage' | 'variance';
  /** UCB coefficient c in c·√(ln(N+1)/(n+1)) (DUMP: √2). */
  c: number;
  /** Softmax temperature τ over scores (DUMP 0.1). */
  tau: number;
}

export interface ReplayConfig {
  /** Rank temperature β: P_S ∝ (1/rank)^(1/β) (PLR 0.1). */
  beta: number;
  /** Staleness mixing ρ: P = (1−ρ)P_S + ρP_C (PLR `staleness_coef` 0.1). */
  rho: number;
  /** Tasks kept per slice; a new task replaces the lowest-scored one only if it scores higher. */
  capacity: number;
  /** Buffer fill (size / capacity) needed before replaying (jaxued `minimum_fill_ratio` 0.5). */
  minFill: number;
  /** `fixed`: replay with `replayProb`; `proportionate`: with min(fill, replayProb) (level-replay). */
  schedule: 'fixed' | 'proportionate';
  /** Replay probability once the buffer is filled enough (level-replay 1 − ν = 0.5). */
  replayProb: number;
  /** Task score: EWA of |success − slice success| (`abs-advantage`, PLR value_l1) or 1 − success. */
  score: 'abs-advantage' | 'failure';
  /** Score EWA smoothing α (level-replay 1.0: the latest score replaces the old one). */
  alpha: number;
}

/** Every setting of a curriculum, resolved. */
export interface CurriculumConfig {
  levels: LevelRuleName;
  weights: WeightRuleName;
  replay: boolean;
  /** Where slices start unless a slice says otherwise. */
  initialLevel: 'min' | 'max' | number;
  /** Results kept per slice at its current level for statistics and the `threshold` rule. */
  window: number;
  /** Least draw probability of any slice; capped at 0.5/n so the floor never takes over half the mass. */
  floor: number;
  /** Weights are raised to 1/temperature before normalisation (1: as the rule says; → 0: argmax). */
  temperature: number;
  /** Share of draws at a uniformly drawn lower level, to prevent forgetting. */
  lowerLevelShare: number;
  threshold: ThresholdConfig;
  target: TargetConfig;
  learningProgress: LearningProgressConfig;
  learnability: LearnabilityConfig;
  replayConfig: ReplayConfig;
}

/** Partial settings: anything left out takes the strategy's default. */
export type CurriculumConfigInput = Partial<
  Omit<CurriculumConfig, 'threshold' | 'target' | 'learningProgress' | 'learnability' | 'replayConfig'>
> & {
  threshold?: Partial<ThresholdConfig>;
  target?: Partial<TargetConfig>;
  learningProgress?: Partial<LearningProgressConfig>;
  learnability?: Partial<LearnabilityConfig>;
  replayConfig?: Partial<ReplayConfig>;
};

export interface CurriculumOptions {
  strategy: StrategyName;
  slices: readonly Slice[];
  config?: CurriculumConfigInput;
  /** A state from `getState()`: the curriculum continues exactly where that one was. */
  state?: JsonValue;
}

/** One replayable task and its current replay probability (see `replayDistribution`). */
export interface ReplayEntry {
  taskId: string;
  level: number;
  score: number;
  staleness: number;
  probability: number;
}

/** The controller that sets each slice's level and weight, and draws what to run next. */
export interface Curriculum {
  readonly strategy: StrategyName;
  readonly config: Readonly<CurriculumConfig>;
  /** Picks a slice, a level and (when replaying) a task. O(log n) in the number of slices. */
  draw(rng: Rng): Draw;
  /** Feeds episode results; levels and weights move. Does nothing while frozen. */
  update(results: readonly EpisodeResult[]): CurriculumUpdate;
  levels(): Record<string, number>;
  /** Draw probabilities; they sum to 1 and none is below the effective floor. */
  weights(): Record<string, number>;
  stats(): Record<string, SliceStats>;
  /** For evaluation runs: draws still work (and change nothing), updates record nothing. */
  freeze(): void;
  unfreeze(): void;
  readonly isFrozen: boolean;
  /** While held (regression guard), levels may fall but never rise. */
  holdLevels(hold: boolean): void;
  readonly isHoldingLevels: boolean;
  /** The replay buffer of a slice with each task's probability of being picked when replaying. */
  replayDistribution(slice: string): ReplayEntry[];
  /** Everything needed to continue identically, as plain JSON. */
  getState(): JsonValue;
}
