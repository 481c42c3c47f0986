/** What a harness draws with: its seed and config, the sampler, the curriculum and its state, over the draw pool. */
import { createRng, EnvHarnessError, type JsonValue, type Rng, type RngState, type Split, type Store } from '../core/index.js';
import type { TemplateRegistry } from '../generation/index.js';
import {
  createCurriculum,
  slicesFromTemplates,
  type Curriculum,
  type CurriculumConfigInput,
  type CurriculumUpdate,
  type EpisodeResult,
  type StrategyName,
} from '../curriculum/index.js';
import type { StorePool } from './store-pool.js';

/** The meta key of what `initialize` recorded: seed, config and template versions. */
export const META_INIT = 'harness.init';

/** Which tasks a draw may give (see `Harness.generateTask`). */
export interface DrawOptions {
  taskType?: string;
  level?: number;
  domain?: string;
  split?: Split;
  seed?: number;
}

/** The curriculum as snapshots carry it, so a fresh harness can rebuild it. */
interface SavedCurriculum {
  strategy?: StrategyName;
  slices?: unknown;
  state?: JsonValue;
}

/**
 * The sampling state of a harness. A seeded draw is a function of the seed and the pool (and the
 * curriculum's state): the same seed gives the same task (Gymnasium's reset(seed=...)), and the sampler
 * does not move; an unseeded draw moves the sampler, which the caller then saves.
 */
export class Sampling {
  seed = 0;
  config: JsonValue = {};
  sampler: Rng = createRng([0, 'sampler']);
  curriculum: Curriculum | undefined;
  /** The curriculum state that snapshots carry (the curriculum owns its content). */
  curriculumState: JsonValue = null;

  constructor(
    private readonly registry: TemplateRegistry,
    private readonly tasks: StorePool,
  ) {}

  /** Seed and config from `options`, else from what the store recorded; the sampler as saved unless a seed is given. */
  async initialize(store: Store, options: { seed?: number; config?: JsonValue }): Promise<void> {
    const previous = await store.getMeta(META_INIT);
    this.seed = options.seed ?? (isObject(previous) && typeof previous.seed === 'number' ? previous.seed : 0);
    this.config = options.config ?? (isObject(previous) ? (previous.config ?? {}) : {});
    const saved = await store.getMeta('rng.sampler');
    this.sampler = createRng(options.seed === undefined && isRngStateJson(saved) ? saved : [this.seed, 'sampler']);
  }

  /** Slices (domain, task type) with active dynamic tasks, with level bounds from their templates. */
  dynamicSlices() {
    const present = new Set(this.tasks.pool.slices('dynamic'));
    return slicesFromTemplates(this.registry.list()).filter((s) => present.has(`${s.domain}/${s.taskType}`));
  }

  /** The pool's slices of `split` that match the draw's domain and task type. */
  matchingSlices(split: Split, options: { taskType?: string; domain?: string }): string[] {
    return this.tasks.pool.slices(split).filter((s) => {
      const [domain, type] = s.split('/');
      return (options.domain === undefined || domain === options.domain) && (options.taskType === undefined || type === options.taskType);
    });
  }

  hasSlice(split: Split, options: { taskType?: string; domain?: string }): boolean {
    return this.matchingSlices(split, options).length > 0;
  }

  /**
   * The id of a task drawn from the pool as it is now (the caller synced it): by the curriculum when one
   * is active and the draw is unconstrained, else uniformly over the matching slices and levels.
   */
  draw(options: DrawOptions): string {
    const split = options.split ?? 'dynamic';
    const rng = options.seed === undefined ? this.sampler : createRng([options.seed, 'task']);
    if (this.curriculum && split === 'dynamic' && options.taskType === undefined && options.level === undefined && options.domain === undefined) {
      const draw = this.curriculum.draw(rng);
      return draw.replay && draw.taskId ? draw.taskId : this.tasks.pool.draw(rng, draw.slice, draw.level, 'dynamic').id;
    }
    const slices = this.matchingSlices(split, options);
    if (slices.length === 0) {
      throw new EnvHarnessError('POOL_EMPTY', `no active ${split} tasks${options.taskType ? ` of type ${options.taskType}` : ''}; run \`envharness pool fill\` or \`envharness generate\``);
    }
    const slice = slices[rng.int(0, slices.length - 1)]!;
    const level = options.level ?? rng.pick(this.tasks.pool.levels(slice, split));
    return this.tasks.pool.draw(rng, slice, level, split).id;
  }

  /** Starts (or replaces) the curriculum over the dynamic pool's slices. */
  useCurriculum(strategy: StrategyName, config?: CurriculumConfigInput): Curriculum {
    const slices = this.dynamicSlices();
    if (slices.length === 0) throw new EnvHarnessError('POOL_EMPTY', 'no dynamic tasks to build a curriculum over; run `envharness pool fill` first');
    this.curriculum = createCurriculum({ strategy, slices, ...(config ? { config } : {}) });
    this.syncCurriculumState();
    return this.curriculum;
  }

  /** Snapshots carry the curriculum as { strategy, slices, state } so a fresh harness can rebuild it. */
  syncCurriculumState(): void {
    const c = this.curriculum;
    this.curriculumState = c ? { strategy: c.strategy, slices: this.dynamicSlices() as unknown as JsonValue, state: c.getState() } : null;
  }

  /** Per-slice results -> levels (and weights) move; with `holdLevels`, only the weights. */
  update(results: readonly EpisodeResult[], holdLevels = false): CurriculumUpdate {
    const curriculum = this.curriculum;
    if (!curriculum) throw new EnvHarnessError('CONFIG_INVALID', 'no curriculum: call harness.useCurriculum(strategy) first');
    const held = curriculum.isHoldingLevels;
    if (holdLevels) curriculum.holdLevels(true);
    try {
      return curriculum.update(results);
    } finally {
      curriculum.holdLevels(held);
      this.syncCurriculumState();
    }
  }

  /** Takes over a snapshot's sampling state: its sampler, config and curriculum (built by `curriculumFrom`). */
  adopt(saved: { config: JsonValue; curriculum: JsonValue }, sampler: RngState, curriculum: Curriculum | undefined): void {
    const config = saved.config as { seed?: number; config?: JsonValue };
    this.seed = config.seed ?? 0;
    this.config = config.config ?? {};
    this.sampler = createRng(sampler);
    this.curriculumState = saved.curriculum;
    this.curriculum = curriculum;
  }
}

/** The curriculum a snapshot carries, rebuilt (throws on a state that cannot be restored). */
export function curriculumFrom(saved: JsonValue): Curriculum | undefined {
  const c = saved as SavedCurriculum | null;
  return c && c.strategy && c.state !== undefined
    ? createCurriculum({ strategy: c.strategy, slices: c.slices as ReturnType<Sampling['dynamicSlices']>, state: c.state })
    : undefined;
}

function isObject(value: unknown): value is Record<string, JsonValue> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isRngStateJson(value: unknown): value is RngState {
  return Array.isArray(value) && value.length === 4 && value.every((x) => Number.isInteger(x));
}
