/** The joint controller: per-slice levels from a level rule, weights from a weight rule, PLR replay, a floor. */
import { canonicalize, EnvHarnessError, type JsonValue, type Rng } from '../core/index.js';
import { resolveCurriculumConfig } from './config.js';
import { createLevelRule, type LevelContext, type LevelRule } from './level-rules.js';
import { RankTable, ReplayBuffers } from './replay.js';
import { checkSlices } from './slices.js';
import { asArray, asBoolean, asNumber, asNumbers, asObject, asString } from './state-io.js';
import { SuccessWindows } from './success-window.js';
import { SumTree } from './sum-tree.js';
import type {
  Curriculum,
  CurriculumConfig,
  CurriculumConfigInput,
  CurriculumOptions,
  CurriculumUpdate,
  Draw,
  EpisodeResult,
  LevelMove,
  ReplayEntry,
  SliceStats,
  StrategyName,
  WeightChange,
} from './types.js';
import { createWeightRule, type WeightContext, type WeightRule } from './weight-rules.js';
import { wilsonInterval } from './wilson.js';

const STATE_FORMAT = 'envharness.curriculum/1';
/** A tree weight may reach e^MAX_EXPONENT before the offset is re-centred (sums stay far below 1e308). */
const MAX_EXPONENT = 200;
/** Below this total the weights have drifted toward underflow and are re-centred. */
const MIN_TOTAL = 1e-100;

/** The least draw probability of any slice: `floor`, capped at 0.5/n so it never takes over half the mass. */
export function effectiveFloor(floor: number, slices: number): number {
  return Math.min(floor, 0.5 / slices);
}

/**
 * Creates a curriculum over `slices`, or restores one from `state` (then `config` may be omitted; if given it
 * must match the state's).
 * @example
 * const curriculum = createCurriculum({ strategy: 'threshold', slices: slicesFromTemplates(retail.templates) });
 * const { slice, level } = curriculum.draw(rng);
 * curriculum.update([{ slice, level, success: 1, taskId }]);
 */
export function createCurriculum(options: CurriculumOptions): Curriculum {
  const keys = checkSlices(options.slices);
  if (options.state === undefined) return new Controller(options.strategy, resolveCurriculumConfig(options.strategy, options.config), options.slices, keys);
  const saved = asObject(options.state, '');
  if (asString(saved.format, '/format') !== STATE_FORMAT) {
    throw new EnvHarnessError('IMPORT_INVALID', `curriculum state has format "${String(saved.format)}"; expected ${STATE_FORMAT}`);
  }
  const strategy = asString(saved.strategy, '/strategy');
  if (strategy !== options.strategy) {
    mismatch(`the state is of strategy "${strategy}", not "${options.strategy}"; restore with strategy "${strategy}"`);
  }
  const savedConfig = asObject(saved.config, '/config') as unknown as CurriculumConfigInput;
  const config = resolveCurriculumConfig(options.strategy, options.config ?? savedConfig);
  if (canonicalize(config) !== canonicalize(saved.config)) {
    mismatch('the given config differs from the state\'s; omit `config` to continue with the saved one');
  }
  const controller = new Controller(options.strategy, config, options.slices, keys);
  controller.load(saved, keys);
  return controller;
}

function mismatch(message: string): never {
  throw new EnvHarnessError('SNAPSHOT_MISMATCH', `cannot restore the curriculum: ${message}`);
}

class Controller implements Curriculum {
  readonly strategy: StrategyName;
  readonly config: Readonly<CurriculumConfig>;
  private readonly n: number;
  private readonly keys: string[];
  private readonly index = new Map<string, number>();
  private readonly minLevel: Int32Array;
  private readonly maxLevel: Int32Array;
  private readonly level: Int32Array;
  private readonly counted: Float64Array;
  private readonly excluded: Float64Array;
  private readonly window: SuccessWindows;
  private readonly levelRule: LevelRule;
  private readonly weightRule: WeightRule;
  private tree: SumTree;
  /** Share of draws made uniformly: the floor plus the weight rule's own random share. */
  private readonly uniformShare: number;
  private readonly inverseTemperature: number;
  /** Tree weights are exp(logWeight/T − offset): the offset keeps the largest near 1, clear of under/overflow. */
  private offset = 0;
  /** Slices with a weight above 0 (a finite log-weight). */
  private readonly positive: Uint8Array;
  private positiveCount = 0;
  private readonly replay: ReplayBuffers;
  private readonly minReplaySize: number;
  private total = 0;
  private frozen = false;
  private held = false;
  private readonly touchedAt: Int32Array;
  private epoch = 0;
  /**
   * Reused by every update: the slice of each result and the slices touched. Allocations in `update` are
   * kept to its reply, whose objects V8 may allocate straight into the old generation once a caller keeps
   * replies (pretenuring); each one then costs a full collection's share.
   */
  private sliceOf = new Int32Array(64);
  private readonly touched: Int32Array;
  private readonly levelCtx: { -readonly [K in keyof LevelContext]: LevelContext[K] };
  private readonly weightCtx: { -readonly [K in keyof WeightContext]: WeightContext[K] };

  constructor(strategy: StrategyName, config: CurriculumConfig, slices: CurriculumOptions['slices'], keys: string[]) {
    this.strategy = strategy;
    this.config = config;
    const n = (this.n = keys.length);
    this.keys = keys;
    keys.forEach((key, i) => this.index.set(key, i));
    this.minLevel = Int32Array.from(slices, (s) => s.minLevel);
    this.maxLevel = Int32Array.from(slices, (s) => s.maxLevel);
    this.level = Int32Array.from(slices, (s) => initialLevel(s, config.initialLevel));
    this.counted = new Float64Array(n);
    this.excluded = new Float64Array(n);
    this.window = new SuccessWindows(n, config.window);
    this.levelRule = createLevelRule(config, this.level);
    this.weightRule = createWeightRule(config, n);
    const floorShare = n * effectiveFloor(config.floor, n);
    this.uniformShare = 1 - (1 - floorShare) * (1 - this.weightRule.uniformShare);
    this.inverseTemperature = 1 / config.temperature;
    this.replay = new ReplayBuffers(n, config.replayConfig.capacity, new RankTable(config.replayConfig.beta));
    this.minReplaySize = Math.max(1, Math.ceil(config.replayConfig.minFill * config.replayConfig.capacity));
    this.touchedAt = new Int32Array(n);
    this.touched = new Int32Array(n);
    this.levelCtx = { level: this.level, minLevel: this.minLevel, maxLevel: this.maxLevel, window: this.window, held: false };
    this.weightCtx = { window: this.window, counted: this.counted, total: 0 };
    this.positive = new Uint8Array(n);
    this.tree = new SumTree(n);
    const ctx = this.weightContext();
    this.weightRule.refreshAll(ctx);
    this.rebuildWeights(ctx);
  }

  get isFrozen(): boolean {
    return this.frozen;
  }

  get isHoldingLevels(): boolean {
    return this.held;
  }

  freeze(): void {
    this.frozen = true;
  }

  unfreeze(): void {
    this.frozen = false;
  }

  holdLevels(hold: boolean): void {
    this.held = hold;
  }

  draw(rng: Rng): Draw {
    const n = this.n;
    const total = this.tree.total;
    const share = total > 0 ? this.uniformShare : 1;
    // One uniform number picks both the branch and the slice.
    const u = rng.next();
    const i = u < share ? Math.min(n - 1, Math.floor((u / share) * n)) : this.tree.find(((u - share) / (1 - share)) * total);
    const slice = this.keys[i]!;
    const replay = this.replay;
    if (this.config.replay && replay.has(i)) {
      if (replay.size(i) >= this.minReplaySize && rng.next() < this.replayProbability(replay.size(i))) {
        const slot = replay.sample(i, rng, this.config.replayConfig.rho);
        if (!this.frozen) replay.touch(i, slot);
        return { slice, level: replay.level(i, slot), replay: true, taskId: replay.taskId(i, slot) };
      }
      if (!this.frozen) replay.tick(i);
    }
    const level = this.level[i]!;
    const min = this.minLevel[i]!;
    if (level > min && this.config.lowerLevelShare > 0 && rng.next() < this.config.lowerLevelShare) {
      return { slice, level: rng.int(min, level - 1), replay: false, rehearsal: true };
    }
    return { slice, level, replay: false };
  }

  update(results: readonly EpisodeResult[]): CurriculumUpdate {
    if (this.frozen) return { counted: 0, excluded: 0, ignored: results.length, moves: [], blocked: [], weights: [] };
    // Checked first so that a bad result leaves the curriculum untouched. (Loops, not closures: hot path.)
    if (this.sliceOf.length < results.length) this.sliceOf = new Int32Array(2 * results.length);
    const slices = this.sliceOf;
    for (let k = 0; k < results.length; k++) slices[k] = this.checkResult(results[k]!, k);
    const epoch = ++this.epoch;
    const touched = this.touched;
    let touchedCount = 0;
    const moves: LevelMove[] = [];
    const blocked: string[] = [];
    const levelCtx = this.levelCtx;
    levelCtx.held = this.held;
    let counted = 0;
    let excluded = 0;
    for (let k = 0; k < results.length; k++) {
      const result = results[k]!;
      const i = slices[k]!;
      if (result.excluded === true) {
        this.excluded[i]!++;
        excluded++;
        continue;
      }
      counted++;
      this.counted[i]!++;
      this.total++;
      if (this.touchedAt[i] !== epoch) {
        this.touchedAt[i] = epoch;
        touched[touchedCount++] = i;
      }
      const success = result.success;
      this.weightRule.observe(i, success);
      if (this.config.replay && result.taskId !== undefined) this.score(i, result);
      if (result.level !== this.level[i]) continue;
      this.window.push(i, success);
      const decision = this.levelRule.observe(i, success, levelCtx);
      if (decision === undefined) continue;
      if (decision === 'blocked') {
        if (!blocked.includes(this.keys[i]!)) blocked.push(this.keys[i]!);
        continue;
      }
      moves.push({ slice: this.keys[i]!, from: this.level[i]!, ...decision });
      this.level[i] = decision.to;
      this.window.clear(i);
      this.levelRule.moved(i, decision.to);
    }
    const ctx = this.weightContext();
    let rebuild = this.weightRule.refreshAll(ctx);
    for (let k = 0; k < touchedCount && !rebuild; k++) rebuild = !this.setWeight(touched[k]!, ctx);
    // Every weight underflowed relative to the offset: re-centre.
    if (!rebuild && this.positiveCount > 0 && !(this.tree.total > MIN_TOTAL)) rebuild = true;
    if (rebuild) this.rebuildWeights(ctx);
    // An array, not a record: adding thousands of distinct keys to fresh objects is slow in V8.
    const weights: WeightChange[] = [];
    for (let k = 0; k < touchedCount; k++) weights.push({ slice: this.keys[touched[k]!]!, weight: this.probability(touched[k]!) });
    return { counted, excluded, ignored: 0, moves, blocked, weights };
  }

  levels(): Record<string, number> {
    const out: Record<string, number> = {};
    for (let i = 0; i < this.n; i++) out[this.keys[i]!] = this.level[i]!;
    return out;
  }

  weights(): Record<string, number> {
    const out: Record<string, number> = {};
    for (let i = 0; i < this.n; i++) out[this.keys[i]!] = this.probability(i);
    return out;
  }

  stats(): Record<string, SliceStats> {
    const out: Record<string, SliceStats> = {};
    for (let i = 0; i < this.n; i++) {
      const count = this.window.count(i);
      const sum = this.window.sum(i);
      const stats: SliceStats = {
        level: this.level[i]!,
        minLevel: this.minLevel[i]!,
        maxLevel: this.maxLevel[i]!,
        weight: this.probability(i),
        window: { n: count, successRate: count > 0 ? sum / count : null, ...wilsonInterval(sum, count) },
        counted: this.counted[i]!,
        excluded: this.excluded[i]!,
      };
      if (this.weightRule.progress) stats.progress = this.weightRule.progress(i);
      if (this.levelRule.target) stats.target = this.levelRule.target(i);
      if (this.config.replay) stats.replaySize = this.replay.size(i);
      out[this.keys[i]!] = stats;
    }
    return out;
  }

  replayDistribution(slice: string): ReplayEntry[] {
    const i = this.index.get(slice);
    if (i === undefined) throw unknownSlice(slice, '', this.keys);
    return this.replay.distribution(i, this.config.replayConfig.rho);
  }

  getState(): JsonValue {
    return {
      format: STATE_FORMAT,
      strategy: this.strategy,
      config: this.config as unknown as JsonValue,
      slices: this.keys.map((key, i) => [key, this.minLevel[i]!, this.maxLevel[i]!]),
      frozen: this.frozen,
      held: this.held,
      total: this.total,
      level: Array.from(this.level),
      counted: Array.from(this.counted),
      excluded: Array.from(this.excluded),
      window: this.window.getState(),
      // The tree's leaves, not the rules' inputs: a lazily refreshed weight is restored as it was.
      weights: Array.from({ length: this.n }, (_, i) => this.tree.get(i)),
      positive: Array.from(this.positive),
      offset: this.offset,
      levelRule: this.levelRule.getState(),
      weightRule: this.weightRule.getState(),
      replay: Array.from({ length: this.n }, (_, i) => this.replay.getState(i)),
    };
  }

  /** Loads a saved state into this freshly built controller (same strategy and config). */
  load(saved: { [key: string]: JsonValue }, keys: string[]): void {
    const n = this.n;
    const savedSlices = asArray(saved.slices, '/slices');
    const described = savedSlices.map((s, i) => {
      const [key, min, max] = asArray(s, `/slices/${i}`, 3);
      return `${asString(key, `/slices/${i}/0`)}[${asNumber(min, `/slices/${i}/1`)},${asNumber(max, `/slices/${i}/2`)}]`;
    });
    const current = keys.map((key, i) => `${key}[${this.minLevel[i]},${this.maxLevel[i]}]`);
    if (described.join() !== current.join()) {
      const missing = described.filter((d) => !current.includes(d));
      const extra = current.filter((d) => !described.includes(d));
      mismatch(
        `its slices differ from the given ones (in the state only: ${missing.join(', ') || 'none'}; ` +
          `given only: ${extra.join(', ') || 'none'}; order must match too)`,
      );
    }
    this.frozen = asBoolean(saved.frozen, '/frozen');
    this.held = asBoolean(saved.held, '/held');
    this.total = asNumber(saved.total, '/total');
    const levels = asNumbers(saved.level, '/level', n);
    levels.forEach((level, i) => {
      if (!Number.isInteger(level) || level < this.minLevel[i]! || level > this.maxLevel[i]!) {
        mismatch(`slice ${keys[i]} is at level ${level}, outside [${this.minLevel[i]}, ${this.maxLevel[i]}]`);
      }
    });
    this.level.set(levels);
    this.counted.set(asNumbers(saved.counted, '/counted', n));
    this.excluded.set(asNumbers(saved.excluded, '/excluded', n));
    this.window.setState(saved.window!, '/window');
    this.levelRule.setState(saved.levelRule!, '/levelRule');
    this.weightRule.setState(saved.weightRule!, '/weightRule');
    this.tree = SumTree.from(asNumbers(saved.weights, '/weights', n));
    this.positive.set(asNumbers(saved.positive, '/positive', n));
    this.positiveCount = this.positive.reduce((a, b) => a + b, 0);
    this.offset = asNumber(saved.offset, '/offset');
    asArray(saved.replay, '/replay', n).forEach((b, i) => {
      if (b !== null) this.replay.setState(i, b, `/replay/${i}`);
    });
  }

  private checkResult(result: EpisodeResult, k: number): number {
    const i = this.index.get(result.slice);
    if (i === undefined) throw unknownSlice(result.slice, `/${k}/slice`, this.keys);
    if (!Number.isInteger(result.level) || result.level < this.minLevel[i]! || result.level > this.maxLevel[i]!) {
      throw badResult(result, k, 'level', `level ${result.level} is outside [${this.minLevel[i]}, ${this.maxLevel[i]}]`);
    }
    if (typeof result.success !== 'number' || !(result.success >= 0 && result.success <= 1)) {
      throw badResult(result, k, 'success', `success must be a number in [0, 1], got ${result.success}`);
    }
    if (result.score !== undefined && !Number.isFinite(result.score)) {
      throw badResult(result, k, 'score', `score must be finite, got ${result.score}`);
    }
    return i;
  }

  /** Scores a replayable task (before its result enters the window, so the baseline excludes it). */
  private score(i: number, result: EpisodeResult): void {
    const r = this.config.replayConfig;
    let score = result.score;
    if (score === undefined) {
      if (r.score === 'failure') score = 1 - result.success;
      else {
        // PLR's value_l1 = |return − V|; the slice's windowed success plays V.
        const baseline = this.window.count(i) > 0 ? this.window.mean(i) : 0.5;
        score = Math.abs(result.success - baseline);
      }
    }
    this.replay.observe(i, result.taskId!, result.level, score, r.alpha);
  }

  /** The chance that a draw of a slice whose buffer holds `size` tasks replays one. */
  private replayProbability(size: number): number {
    const r = this.config.replayConfig;
    return r.schedule === 'fixed' ? r.replayProb : Math.min(size / r.capacity, r.replayProb);
  }

  private weightContext(): WeightContext {
    this.weightCtx.total = this.total;
    return this.weightCtx;
  }

  /** Sets slice i's tree weight; false when it would stray too far above the offset (re-centre instead). */
  private setWeight(i: number, ctx: WeightContext): boolean {
    const scaled = this.weightRule.logWeight(i, ctx) * this.inverseTemperature;
    if (scaled - this.offset > MAX_EXPONENT) return false;
    const isPositive = scaled > -Infinity ? 1 : 0;
    this.positiveCount += isPositive - this.positive[i]!;
    this.positive[i] = isPositive;
    this.tree.set(i, Math.exp(scaled - this.offset));
    return true;
  }

  /** Recomputes every weight with the offset at the largest scaled log-weight, O(n). */
  private rebuildWeights(ctx: WeightContext): void {
    const scaled = new Float64Array(this.n);
    let max = -Infinity;
    this.positiveCount = 0;
    for (let i = 0; i < this.n; i++) {
      const s = this.weightRule.logWeight(i, ctx) * this.inverseTemperature;
      scaled[i] = s;
      this.positive[i] = s > -Infinity ? 1 : 0;
      this.positiveCount += this.positive[i]!;
      if (s > max) max = s;
    }
    this.offset = max > -Infinity ? max : 0;
    for (let i = 0; i < this.n; i++) scaled[i] = Math.exp(scaled[i]! - this.offset);
    this.tree = SumTree.from(scaled);
  }

  private probability(i: number): number {
    const total = this.tree.total;
    if (!(total > 0)) return 1 / this.n;
    return this.uniformShare / this.n + ((1 - this.uniformShare) * this.tree.get(i)) / total;
  }
}

function initialLevel(slice: CurriculumOptions['slices'][number], initial: CurriculumConfig['initialLevel']): number {
  if (slice.initialLevel !== undefined) return slice.initialLevel;
  if (initial === 'min') return slice.minLevel;
  if (initial === 'max') return slice.maxLevel;
  return Math.min(slice.maxLevel, Math.max(slice.minLevel, initial));
}

function badResult(result: EpisodeResult, k: number, field: string, message: string): EnvHarnessError {
  return new EnvHarnessError('PARAMS_INVALID', `result ${k} (${result.slice}): ${message}`, {
    details: { pointer: `/${k}/${field}` },
  });
}

function unknownSlice(slice: string, pointer: string, keys: string[]): EnvHarnessError {
  const known = keys.length <= 10 ? keys.join(', ') : `${keys.slice(0, 10).join(', ')}, … (${keys.length} in all)`;
  return new EnvHarnessError('PARAMS_INVALID', `no slice "${slice}" in this curriculum; known: ${known}`, {
    details: { pointer, slice },
  });
}
