/** Curriculum: per-slice levels and weights, prioritized replay, a regression guard and GRPO group stats. */
export { createCurriculum, effectiveFloor } from './curriculum.js';
export { resolveCurriculumConfig } from './config.js';
export { CURRICULUM_DEFAULTS, STRATEGY_PRESETS } from './defaults.js';
export { createRegressionGuard } from './guard.js';
export type { GuardAction, GuardEvent, GuardVerdict, RegressionGuard, RegressionGuardOptions } from './guard.js';
export { createGroupTracker, groupStats } from './groups.js';
export type { GroupShare, GroupStats, GroupTracker } from './groups.js';
export { sliceKey, slicesFromTemplates } from './slices.js';
export { wilsonInterval } from './wilson.js';
export { LEVEL_RULES, STRATEGY_NAMES, WEIGHT_RULES } from './types.js';
export type {
  Curriculum,
  CurriculumConfig,
  CurriculumConfigInput,
  CurriculumOptions,
  CurriculumUpdate,
  Draw,
  EpisodeResult,
  LearnabilityConfig,
  LearningProgressConfig,
  LevelMove,
  LevelRuleName,
  MoveReason,
  ReplayConfig,
  ReplayEntry,
  Slice,
  SliceStats,
  StrategyName,
  TargetConfig,
  ThresholdConfig,
  WeightChange,
  WeightRuleName,
  WindowStats,
} from './types.js';
