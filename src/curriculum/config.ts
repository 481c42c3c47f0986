/** Resolves a strategy preset plus partial settings into a checked `CurriculumConfig`. */
import { EnvHarnessError } from '../core/index.js';
import { CURRICULUM_DEFAULTS, defaultLowerLevelShare, STRATEGY_PRESETS } from './defaults.js';
import {
  LEVEL_RULES,
  STRATEGY_NAMES,
  WEIGHT_RULES,
  type CurriculumConfig,
  type CurriculumConfigInput,
  type StrategyName,
} from './types.js';

/** The full configuration of a strategy with `input` laid over its defaults; throws CONFIG_INVALID. */
export function resolveCurriculumConfig(strategy: StrategyName, input: CurriculumConfigInput = {}): CurriculumConfig {
  if (!STRATEGY_NAMES.includes(strategy)) {
    invalid('/strategy', `unknown strategy "${String(strategy)}"; known: ${STRATEGY_NAMES.join(', ')}`);
  }
  const preset = STRATEGY_PRESETS[strategy];
  const levels = input.levels ?? preset.levels;
  const d = CURRICULUM_DEFAULTS;
  const config: CurriculumConfig = {
    levels,
    weights: input.weights ?? preset.weights,
    replay: input.replay ?? preset.replay,
    initialLevel: input.initialLevel ?? d.initialLevel,
    window: input.window ?? d.window,
    floor: input.floor ?? d.floor,
    temperature: input.temperature ?? d.temperature,
    lowerLevelShare: input.lowerLevelShare ?? defaultLowerLevelShare(levels),
    threshold: { ...d.threshold, ...input.threshold },
    target: { ...d.target, ...input.target },
    learningProgress: { ...d.learningProgress, ...input.learningProgress },
    learnability: { ...d.learnability, ...input.learnability },
    replayConfig: { ...d.replayConfig, ...input.replayConfig },
  };
  checkConfig(config);
  return deepFreeze(config);
}

function deepFreeze<T extends object>(value: T): T {
  for (const child of Object.values(value)) if (typeof child === 'object' && child !== null) deepFreeze(child as object);
  return Object.freeze(value);
}

function checkConfig(c: CurriculumConfig): void {
  oneOf('/levels', c.levels, LEVEL_RULES);
  oneOf('/weights', c.weights, WEIGHT_RULES);
  if (typeof c.replay !== 'boolean') invalid('/replay', 'must be a boolean');
  if (!(c.initialLevel === 'min' || c.initialLevel === 'max' || Number.isInteger(c.initialLevel))) {
    invalid('/initialLevel', `must be "min", "max" or an integer, got ${JSON.stringify(c.initialLevel)}`);
  }
  integer('/window', c.window, 1, 1_000_000);
  range('/floor', c.floor, 0, 1);
  positive('/temperature', c.temperature);
  range('/lowerLevelShare', c.lowerLevelShare, 0, 1);

  const t = c.threshold;
  range('/threshold/upper', t.upper, 0, 1);
  range('/threshold/lower', t.lower, 0, 1);
  if (!(t.lower < t.upper)) invalid('/threshold', `lower (${t.lower}) must be below upper (${t.upper})`);
  integer('/threshold/minSamples', t.minSamples, 1, c.window);
  integer('/threshold/patience', t.patience, 1, 1_000_000);

  const g = c.target;
  range('/target/target', g.target, 0, 1);
  positive('/target/alpha', g.alpha);
  positive('/target/eta', g.eta);
  positive('/target/maxStep', g.maxStep);
  integer('/target/batch', g.batch, 1, 1_000_000);

  const lp = c.learningProgress;
  integer('/learningProgress/half', lp.half, 1, 100_000);
  integer('/learningProgress/minHalf', lp.minHalf, 1, lp.half);
  range('/learningProgress/randomShare', lp.randomShare, 0, 1);

  const l = c.learnability;
  oneOf('/learnability/signal', l.signal, ['abs-advantage', 'variance'] as const);
  range('/learnability/c', l.c, 0, Number.MAX_VALUE);
  positive('/learnability/tau', l.tau);

  const r = c.replayConfig;
  positive('/replayConfig/beta', r.beta);
  range('/replayConfig/rho', r.rho, 0, 1);
  integer('/replayConfig/capacity', r.capacity, 1, 1_000_000);
  range('/replayConfig/minFill', r.minFill, 0, 1);
  oneOf('/replayConfig/schedule', r.schedule, ['fixed', 'proportionate'] as const);
  range('/replayConfig/replayProb', r.replayProb, 0, 1);
  oneOf('/replayConfig/score', r.score, ['abs-advantage', 'failure'] as const);
  if (!(r.alpha > 0 && r.alpha <= 1)) invalid('/replayConfig/alpha', `must be in (0, 1], got ${r.alpha}`);
}

function invalid(pointer: string, message: string): never {
  throw new EnvHarnessError('CONFIG_INVALID', `curriculum config ${pointer}: ${message}`, { details: { pointer } });
}

function range(pointer: string, value: number, min: number, max: number): void {
  if (typeof value !== 'number' || !(value >= min && value <= max)) {
    invalid(pointer, `must be a number in [${min}, ${max}], got ${JSON.stringify(value)}`);
  }
}

function positive(pointer: string, value: number): void {
  if (typeof value !== 'number' || !(value > 0 && Number.isFinite(value))) {
    invalid(pointer, `must be a finite number above 0, got ${JSON.stringify(value)}`);
  }
}

function integer(pointer: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    invalid(pointer, `must be an integer in [${min}, ${max}], got ${JSON.stringify(value)}`);
  }
}

function oneOf<T extends string>(pointer: string, value: string, allowed: readonly T[]): void {
  if (!(allowed as readonly string[]).includes(value)) {
    invalid(pointer, `must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`);
  }
}
