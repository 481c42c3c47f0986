/** createHarness(): the single composition root that wires store, domains, templates, gates and pool. */
import {
  createRng,
  digest,
  EnvHarnessError,
  REGRESSION_FROZEN_META,
  type Agent,
  type BatchRequest,
  type Domain,
  type JsonValue,
  type RegisteredTemplate,
  type ReviewDecision,
  type ReviewItem,
  type RecoveryReport,
  type RunRecord,
  type Rng,
  type RngState,
  type Snapshot,
  type Split,
  type Store,
  type StoredTask,
  type Task,
} from '../core/index.js';
import { createTemplateRegistry, type GeneratedBatch, type TaskPool, type TemplateRegistry } from '../generation/index.js';
import {
  createCurriculum,
  slicesFromTemplates,
  type Curriculum,
  type CurriculumConfigInput,
  type CurriculumUpdate,
  type EpisodeResult,
  type StrategyName,
} from '../curriculum/index.js';
import {
  createEpisode,
  createStoreRecorder,
  type DynamicsOptions,
  type Episode,
  type Recorder,
  type StoreRecorder,
} from '../runtime/index.js';
import type { Feedback, Observation } from '../core/index.js';
import { hostname } from 'node:os';
import { systemClock, type Clock } from './clock.js';
import { buildLockfile, checkLockfile, parseLockfile, type LockCheck, type Lockfile } from './lockfile.js';
import { prebuiltDir } from './prebuilt.js';
import { createRegressionInstaller, type InstalledSet, type RegressionInstaller } from './regression-sets.js';
import { runEpisode, type EpisodeOutcome } from '../runtime/rollout.js';
import { evaluateAgent, type EvaluateOptions, type EvaluationResult } from './evaluation.js';
import { ExternalTransitions } from './external-transitions.js';
import { RunIds } from './run-ids.js';
import { StorePool } from './store-pool.js';
import { TaskGenerator, type GenerateOptions } from './task-generator.js';
import { trainLoop, type TrainDeps, type TrainOptions, type TrainSummary } from './train.js';
import { planResume, type ResumeTrainOptions } from './train-resume.js';
import {
  buildSnapshotBody,
  diffSnapshots,
  exportSnapshot,
  importExport,
  parseExport,
  snapshotId,
  type SnapshotDiff,
} from './snapshots.js';

export interface HarnessOptions {
  /** A Store, or `sqlite:<path>`, a file path, or `:memory:`. Default: `.envharness/envharness.db`. */
  store?: Store | string;
  domains?: readonly Domain<any>[];
  /** Templates beyond the domains' own (e.g. declarative ones). */
  templates?: readonly RegisteredTemplate<any>[];
  /** Timestamps for records; never used for generation or sampling. */
  clock?: Clock;
  /**
   * The folder of the build's prebuilt files (shipped regression sets), or false for none. Default:
   * `dist/prebuilt` when running compiled, none from the sources. src/harness/prebuilt.ts.
   */
  prebuilt?: string | false;
}

export type { GenerateOptions } from './task-generator.js';
export type { EvaluateOptions, EvaluationResult } from './evaluation.js';

export interface PoolStats {
  total: number;
  bySplit: Record<Split, number>;
  pendingReview: number;
  rejected: number;
  slices: Array<{ slice: string; split: Split; levels: Record<string, number> }>;
}

const META_INIT = 'harness.init';
/** Tasks per template and level that a default fill generates (`train --per-level`, `serve --fill-per-level`). */
export const DEFAULT_FILL_PER_LEVEL = 60;
const META_FROZEN = REGRESSION_FROZEN_META;
/** The last non-empty crash repair (`Store.recover`), for `doctor`. */
export const META_RECOVERY = 'store.recovery';

/**
 * The harness: every verb of EnvHarness hangs off it.
 * @example
 * const harness = await createHarness({ store: 'sqlite:.envharness/envharness.db', domains: [retail] });
 * await harness.initialize({ seed: 42 });
 */
export class Harness {
  readonly store: Store;
  readonly registry: TemplateRegistry;
  readonly domains: ReadonlyMap<string, Domain<any>>;
  private readonly clock: Clock;
  /** The draw pool, synced from the store before each draw. */
  private readonly tasks: StorePool;
  private readonly generator: TaskGenerator;
  private readonly runIds: RunIds;
  private readonly external: ExternalTransitions;
  private sampler: Rng;
  private seed = 0;
  private config: JsonValue = {};
  private curriculumState: JsonValue = null;
  private curriculum: Curriculum | undefined;
  private recorder: StoreRecorder | undefined;
  private readonly regressionSets: RegressionInstaller;

  constructor(store: Store, domains: readonly Domain<any>[], templates: readonly RegisteredTemplate<any>[], clock: Clock, prebuilt: string | false | undefined = undefined) {
    this.store = store;
    this.clock = clock;
    const byName = new Map<string, Domain<any>>();
    for (const domain of domains) {
      if (byName.has(domain.name)) throw new EnvHarnessError('REGISTRATION_CONFLICT', `domain ${domain.name} is registered twice`);
      byName.set(domain.name, domain);
    }
    this.domains = byName;
    this.registry = createTemplateRegistry();
    for (const domain of domains) for (const t of domain.templates) this.registry.register(t as RegisteredTemplate<any>);
    for (const t of templates) this.registry.register(t);
    this.tasks = new StorePool(store);
    this.generator = new TaskGenerator(store, this.registry, this.domains);
    this.runIds = new RunIds(store);
    this.external = new ExternalTransitions(store);
    this.sampler = createRng([0, 'sampler']);
    this.regressionSets = createRegressionInstaller(
      {
        store,
        registry: this.registry,
        domains: this.domains,
        generate: (request) => this.generator.generate(request),
        save: async (batch) => {
          await this.store.saveBatch(batch, { review: batch.review });
          await this.tasks.sync();
        },
        freeze: async () => void (await this.lockRegression()),
      },
      { prebuilt: prebuilt === false ? undefined : (prebuilt ?? prebuiltDir()) },
    );
  }

  /** Records the environment version and parameters, and loads the pool. Call once after creating. */
  async initialize(options: { seed?: number; config?: JsonValue } = {}): Promise<{ seed: number; templates: number; pool: number }> {
    const previous = await this.store.getMeta(META_INIT);
    this.seed = options.seed ?? (isObject(previous) && typeof previous.seed === 'number' ? previous.seed : 0);
    this.config = options.config ?? (isObject(previous) ? (previous.config ?? {}) : {});
    const saved = await this.store.getMeta('rng.sampler');
    this.sampler = createRng(options.seed === undefined && isRngStateJson(saved) ? saved : [this.seed, 'sampler']);
    await this.store.setMeta(META_INIT, {
      seed: this.seed,
      config: this.config,
      templates: this.registry.list().map((t) => ({ id: t.id, sourceDigest: t.sourceDigest })),
    });
    // Tasks may need what the store does not hold (a world imported from files): each domain restores its own.
    for (const domain of this.domains.values()) await domain.restore?.(this.store);
    await this.tasks.reload();
    return { seed: this.seed, templates: this.registry.list().length, pool: this.tasks.pool.size() };
  }

  /**
   * Installs the shipped regression set of each of `domains` (default: every registered domain) that the
   * store lacks, and freezes the split: the shipped set is hash-locked from the moment it exists. The
   * verbs that use a domain call this for it first, so a store holds only the sets of the domains it was
   * used with (src/harness/regression-sets.ts).
   */
  async installRegressionSets(domains?: readonly string[]): Promise<InstalledSet[]> {
    const installed = await this.regressionSets.install(domains);
    if (installed.length > 0) await this.tasks.sync();
    return installed;
  }

  /** Generates a batch through the gates and stores it (accepted tasks enter the pool of its split). */
  async generate(request: BatchRequest, options: GenerateOptions = {}): Promise<GeneratedBatch> {
    const domains = request.templates.map((t) => this.registry.get(t.id).domain);
    // The leakage gate checks against the regression set: the domains' sets go in first.
    if (request.split === 'regression') await this.refuseFrozen('/split');
    else await this.installRegressionSets(domains);
    const batch = await this.generator.generate(request, options);
    await this.tasks.sync();
    return batch;
  }

  /** SPLIT_FROZEN when the regression split is frozen: writes to it are refused and change nothing. */
  private async refuseFrozen(pointer: string): Promise<void> {
    if (!(await this.isRegressionFrozen())) return;
    throw new EnvHarnessError(
      'SPLIT_FROZEN',
      'the regression split is frozen (the shipped set is hash-locked when installed); generate into dynamic or heldout, or unfreeze deliberately with `envharness split unfreeze` and re-freeze with `envharness split freeze`',
      { details: { pointer } },
    );
  }

  /**
   * Replaces the in-memory pool by a wrapper of it (e.g. `createRefillingPool({ pool, ... })`, which
   * starts refills when draws leave a slice low). The wrapper must keep the wrapped pool's contents.
   */
  wrapPool(wrap: (pool: TaskPool) => TaskPool): void {
    this.tasks.wrap(wrap);
  }

  /** Adds a stored batch's active tasks to the in-memory pool (a batch another process generated); returns how many were new. */
  async addBatchToPool(batchId: string): Promise<number> {
    return this.tasks.addBatch(batchId);
  }

  /**
   * The domains a default fill (and `train` without `--domain`) covers: those with templates that
   * declare `defaults.train`, else every domain with templates.
   */
  defaultDomains(): string[] {
    const withTemplates = [...this.domains.values()].filter((d) => this.registry.list().some((t) => t.domain === d.name));
    const preferred = withTemplates.filter((d) => d.defaults?.train === true);
    return (preferred.length > 0 ? preferred : withTemplates).map((d) => d.name);
  }

  /**
   * Generates `perLevel` tasks per level for every template of `domains` whose split lacks them:
   * training templates into `dynamic`, held-out templates into `heldout` (never trained on). Every entry
   * point calls this on a fresh store (train, serve at start-up, the first draw from an empty pool), so a
   * new store gives a working episode with the built-in defaults. Returns what was added per split.
   */
  async fillPools(options: { domains?: readonly string[]; perLevel?: number; seed?: number; onProgress?: (done: number, total: number) => void } = {}): Promise<{ dynamic: number; heldout: number }> {
    const domains = options.domains ?? this.defaultDomains();
    const perLevel = options.perLevel ?? DEFAULT_FILL_PER_LEVEL;
    const index = await this.store.listTaskIndex({ status: 'active' });
    const have = new Set(index.filter((e) => e.split !== 'regression').map((e) => `${e.split} ${e.template}`));
    const missing = this.registry.list().filter((t) => domains.includes(t.domain) && !have.has(`${t.heldout ? 'heldout' : 'dynamic'} ${t.id}`));
    const added = { dynamic: 0, heldout: 0 };
    const total = missing.reduce((sum, t) => sum + t.levels.length * perLevel, 0);
    let done = 0;
    for (const t of missing) {
      const levels = t.levels.map((_, i) => i + 1);
      const split = t.heldout ? 'heldout' : 'dynamic';
      const batch = await this.generate(
        { templates: [{ id: t.id }], levels, count: levels.length * perLevel, seed: options.seed ?? this.seed, split },
        { onProgress: (d) => options.onProgress?.(done + d, total) },
      );
      done += levels.length * perLevel;
      added[split] += batch.manifest.accepted;
    }
    return added;
  }

  /** Pool counts by split, slice and level. */
  async poolStats(): Promise<PoolStats> {
    const all = await this.store.listTaskIndex();
    const bySplit: Record<Split, number> = { regression: 0, dynamic: 0, heldout: 0 };
    const slices = new Map<string, { slice: string; split: Split; levels: Record<string, number> }>();
    let pendingReview = 0;
    let rejected = 0;
    for (const e of all) {
      if (e.status === 'pending_review') pendingReview++;
      if (e.status === 'rejected') rejected++;
      if (e.status !== 'active') continue;
      bySplit[e.split]++;
      const key = `${e.split} ${e.domain}/${e.taskType}`;
      const row = slices.get(key) ?? { slice: `${e.domain}/${e.taskType}`, split: e.split, levels: {} };
      row.levels[e.level] = (row.levels[e.level] ?? 0) + 1;
      slices.set(key, row);
    }
    return {
      total: bySplit.regression + bySplit.dynamic + bySplit.heldout,
      bySplit,
      pendingReview,
      rejected,
      slices: [...slices.values()].sort((a, b) => (a.split + a.slice < b.split + b.slice ? -1 : 1)),
    };
  }

  /**
   * Draws a task from the dynamic pool: of `taskType` at `level` when given, otherwise uniformly over
   * the slices and levels that have tasks (the curriculum replaces this default).
   */
  async generateTask(options: { taskType?: string; level?: number; domain?: string; split?: Split; seed?: number } = {}): Promise<StoredTask> {
    const split = options.split ?? 'dynamic';
    if (split === 'regression') await this.installRegressionSets(options.domain === undefined ? undefined : [options.domain]);
    await this.tasks.sync();
    if (split !== 'regression' && !this.hasSlice(split, options)) {
      // A fresh store: the first draw fills the pools of the domains it may draw from (built-in defaults).
      const candidates = options.domain !== undefined ? [options.domain] : this.defaultDomains();
      const empty = candidates.filter((d) => this.domains.has(d) && !this.hasSlice(split, { domain: d }));
      if (empty.length > 0) await this.fillPools({ domains: empty });
    }
    // A seeded draw is a function of the seed and the pool (and the curriculum's state): the same seed
    // gives the same task (Gymnasium's reset(seed=...)), and the harness's own sampler does not move.
    const rng = options.seed === undefined ? this.sampler : createRng([options.seed, 'task']);
    const advance = async () => {
      if (options.seed === undefined) await this.store.setMeta('rng.sampler', [...this.sampler.getState()]);
    };
    if (this.curriculum && split === 'dynamic' && options.taskType === undefined && options.level === undefined && options.domain === undefined) {
      const draw = this.curriculum.draw(rng);
      const id = draw.replay && draw.taskId ? draw.taskId : this.tasks.pool.draw(rng, draw.slice, draw.level, 'dynamic').id;
      await advance();
      return this.getTask(id);
    }
    const slices = this.matchingSlices(split, options);
    if (slices.length === 0) {
      throw new EnvHarnessError('POOL_EMPTY', `no active ${split} tasks${options.taskType ? ` of type ${options.taskType}` : ''}; run \`envharness pool fill\` or \`envharness generate\``);
    }
    const slice = slices[rng.int(0, slices.length - 1)]!;
    const level = options.level ?? rng.pick(this.tasks.pool.levels(slice, split));
    const { id } = this.tasks.pool.draw(rng, slice, level, split);
    await advance();
    const task = await this.store.getTask(id);
    if (task === undefined) throw new EnvHarnessError('TASK_NOT_FOUND', `task ${id} is in the pool index but not in the store`);
    return task;
  }

  private matchingSlices(split: Split, options: { taskType?: string; domain?: string }): string[] {
    return this.tasks.pool.slices(split).filter((s) => {
      const [domain, type] = s.split('/');
      return (options.domain === undefined || domain === options.domain) && (options.taskType === undefined || type === options.taskType);
    });
  }

  private hasSlice(split: Split, options: { taskType?: string; domain?: string }): boolean {
    return this.matchingSlices(split, options).length > 0;
  }

  async getTask(id: string): Promise<StoredTask> {
    const task = await this.store.getTask(id);
    if (task === undefined) throw new EnvHarnessError('TASK_NOT_FOUND', `no task ${id}; ids are sha256 hex, see \`envharness pool stats\``);
    return task;
  }

  // ---- curriculum: the facade verbs ---------------------------------------------------------

  /** Starts (or replaces) the curriculum over the dynamic pool's slices; generateTask then follows it. */
  useCurriculum(strategy: StrategyName, config?: CurriculumConfigInput): Curriculum {
    const slices = this.dynamicSlices();
    if (slices.length === 0) throw new EnvHarnessError('POOL_EMPTY', 'no dynamic tasks to build a curriculum over; run `envharness pool fill` first');
    this.curriculum = createCurriculum({ strategy, slices, ...(config ? { config } : {}) });
    this.syncCurriculumState();
    return this.curriculum;
  }

  /** Snapshots carry the curriculum as { strategy, slices, state } so a fresh harness can rebuild it. */
  private syncCurriculumState(): void {
    const c = this.curriculum;
    this.curriculumState = c ? { strategy: c.strategy, slices: this.dynamicSlices() as unknown as JsonValue, state: c.getState() } : null;
  }

  /** The active curriculum, if any. */
  get activeCurriculum(): Curriculum | undefined {
    return this.curriculum;
  }

  private requireCurriculum(): Curriculum {
    if (!this.curriculum) throw new EnvHarnessError('CONFIG_INVALID', 'no curriculum: call harness.useCurriculum(strategy) first');
    return this.curriculum;
  }

  /** Per-slice results -> levels (and weights) move. Returns what moved and why. */
  async adjustDifficulty(performance: readonly EpisodeResult[]): Promise<CurriculumUpdate> {
    const curriculum = this.requireCurriculum();
    const update = curriculum.update(performance);
    this.syncCurriculumState();
    return update;
  }

  /** Per-slice results -> slice weights move toward weak spots; levels stay where they are. */
  async updateDistribution(feedback: readonly EpisodeResult[]): Promise<CurriculumUpdate> {
    const curriculum = this.requireCurriculum();
    const held = curriculum.isHoldingLevels;
    curriculum.holdLevels(true);
    try {
      return curriculum.update(feedback);
    } finally {
      curriculum.holdLevels(held);
      this.syncCurriculumState();
    }
  }

  /**
   * Records a transition of an episode run outside the harness and returns process feedback on it:
   * INVALID_ACTION (with the JSON pointer) for a malformed action, REDUNDANT_CALL for a repeated tool call.
   */
  async evaluateTransition(
    observation: Observation,
    action: unknown,
    reward: number,
    nextObservation: Observation,
    options: { episodeId?: string } = {},
  ): Promise<{ feedback: Feedback[]; step: number }> {
    return this.external.record(observation, action, reward, nextObservation, options.episodeId ?? 'external');
  }

  /** Slices (domain, task type) with active dynamic tasks, with level bounds from their templates. */
  dynamicSlices() {
    const present = new Set(this.tasks.pool.slices('dynamic'));
    return slicesFromTemplates(this.registry.list()).filter((s) => present.has(`${s.domain}/${s.taskType}`));
  }

  // ---- episodes, training, evaluation -------------------------------------------------------

  private storeRecorder(): StoreRecorder {
    // A failed recorder stays failed for the episodes it recorded (their steps may be missing); episodes
    // opened after the store recovered get a fresh one.
    if (this.recorder?.failure !== undefined && this.store.fault?.() === undefined) this.recorder = undefined;
    this.recorder ??= createStoreRecorder(this.store, { maxBatch: 1024, maxDelayMs: 20 });
    return this.recorder;
  }

  /** Opens an episode of a stored task (or one sampled from the pool), recorded to the store. */
  async openEpisode(options: { taskId?: string; taskType?: string; level?: number; split?: Split; episodeId?: string; runId?: string; agent?: string; record?: boolean; recorder?: Recorder; dynamics?: DynamicsOptions } = {}): Promise<{ episode: Episode; task: StoredTask }> {
    const task = options.taskId ? await this.getTask(options.taskId) : await this.generateTask({ taskType: options.taskType, level: options.level, split: options.split });
    const domain = this.domains.get(task.domain);
    if (!domain) throw new EnvHarnessError('DOMAIN_NOT_FOUND', `task ${task.id} needs domain ${task.domain}, which is not registered`);
    const clock = this.clock;
    const episode = createEpisode(domain, task, {
      ...options.dynamics,
      // Interactive episodes (HTTP, MCP) live in wall time: the harness clock drives their time budget
      // and stamps their records. (Training and evaluation episodes run without one, so they replay exactly.)
      clock: () => Date.parse(clock()),
      // `recorder`: a recorder of the caller's own (serve replicas give each episode one).
      ...(options.recorder !== undefined ? { recorder: options.recorder } : options.record === false ? {} : { recorder: this.storeRecorder() }),
      ...(options.episodeId ? { episodeId: () => options.episodeId! } : {}),
      ...(options.runId ? { runId: options.runId } : {}),
      ...(options.agent ? { agent: options.agent } : {}),
    });
    return { episode, task };
  }

  /** Runs one episode of a task with an agent. */
  async runEpisode(task: StoredTask | Task, agent: Agent, options: { seed: number; episodeId?: string; runId?: string; record?: boolean; dynamics?: DynamicsOptions }): Promise<EpisodeOutcome> {
    const domain = this.domains.get(task.domain);
    if (!domain) throw new EnvHarnessError('DOMAIN_NOT_FOUND', `task ${task.id} needs domain ${task.domain}, which is not registered`);
    return runEpisode(domain, task, agent, {
      ...options.dynamics,
      seed: options.seed,
      ...(options.record === false ? {} : { recorder: this.storeRecorder() }),
      ...(options.episodeId ? { episodeId: options.episodeId } : {}),
      ...(options.runId ? { runId: options.runId } : {}),
    });
  }

  /** Trains an agent under a curriculum: sample -> run -> record -> update, with a regression guard. */
  async train(options: TrainOptions): Promise<TrainSummary> {
    await this.installRegressionSets(options.domains);
    if (options.seed !== undefined) this.sampler = createRng([options.seed, 'train']);
    // The loop draws synchronously from the pool as it is now (explicitly synced with the store).
    await this.tasks.sync();
    const summary = await trainLoop(this.trainDeps(), { ...options, seed: options.seed ?? this.seed });
    await this.store.setMeta('rng.sampler', [...this.sampler.getState()]);
    return summary;
  }

  /**
   * Continues an interrupted (or failed) training run from its last checkpoint, to the same end as an
   * uninterrupted run: same episodes, seeds, rewards, curriculum log and end snapshot (`train --resume`).
   */
  async resumeTrain(runId: string, options: ResumeTrainOptions): Promise<TrainSummary> {
    const plan = await planResume(this.store, runId, options, { isLive: isRunLive, templates: this.registry.list(), now: this.clock(), owner: runOwner() });
    this.sampler = createRng(plan.rng);
    await this.tasks.sync();
    const summary = await trainLoop({ ...this.trainDeps(), resume: plan.resume }, plan.options);
    await this.store.setMeta('rng.sampler', [...this.sampler.getState()]);
    return summary;
  }

  /** What the training loop needs of this harness (its sampler as it is now). */
  private trainDeps(): TrainDeps {
    return {
      store: this.store,
      domains: this.domains,
      slices: this.dynamicSlices(),
      clock: this.clock,
      drawTask: (rng, slice, level) => this.tasks.pool.draw(rng, slice, level, 'dynamic').id,
      regressionTasks: () => this.store.listTasks({ split: 'regression', status: 'active' }),
      snapshot: async (curriculum, label) => {
        this.curriculum = curriculum;
        return this.snapshot({ label });
      },
      newRunId: () => this.runIds.next('train'),
      rng: this.sampler,
      ...(this.curriculum ? { curriculum: this.curriculum } : {}),
      buildSnapshot: async (curriculum, label) => {
        this.curriculum = curriculum;
        return this.buildSnapshot({ label });
      },
      owner: runOwner(),
    };
  }

  /**
   * Evaluates an agent on a split with the curriculum frozen: every task k times (seeds 0..k-1),
   * pass^1..pass^k per slice exactly as tau-bench computes it, with Wilson intervals.
   */
  async evaluate(options: EvaluateOptions): Promise<EvaluationResult> {
    if ((options.split ?? 'regression') === 'regression') await this.installRegressionSets(options.domains);
    return evaluateAgent(
      {
        store: this.store,
        clock: this.clock,
        newRunId: () => this.runIds.next('eval'),
        snapshot: (label) => this.snapshot({ label }),
        runEpisode: (task, episode) => this.runEpisode(task, options.agent, episode),
        flush: async () => this.recorder?.flush(),
        owner: runOwner(),
      },
      options,
    );
  }

  // ---- review -------------------------------------------------------------------------------

  async pendingReviews(): Promise<ReviewItem[]> {
    return this.store.listReviews('pending');
  }

  async decideReview(taskId: string, decision: 'approved' | 'rejected', reviewer: string, note = ''): Promise<ReviewItem> {
    // Approving a pending regression task would change the frozen split's membership.
    const entry = (await this.store.listTaskIndex({ split: 'regression' })).find((e) => e.id === taskId);
    if (entry !== undefined) await this.refuseFrozen('/taskId');
    const full: ReviewDecision = { taskId, decision, reviewer, note, at: this.clock() };
    const item = await this.store.decideReview(full);
    await this.tasks.reload();
    return item;
  }

  // ---- splits -------------------------------------------------------------------------------

  /** Freezes the regression split: returns the lockfile to write and refuses later changes. */
  async freezeRegression(): Promise<Lockfile> {
    await this.installRegressionSets();
    return this.lockRegression();
  }

  private async lockRegression(): Promise<Lockfile> {
    const lock = await buildLockfile(this.store);
    await this.store.applyWrites([
      { op: 'setMeta', key: META_FROZEN, value: true },
      { op: 'setMeta', key: 'split.regression.lock', value: { digest: lock.digest, count: lock.count } },
    ]);
    return lock;
  }

  async unfreezeRegression(): Promise<void> {
    await this.installRegressionSets();
    await this.store.setMeta(META_FROZEN, false);
  }

  /**
   * Whether writes to the regression split are refused. Frozen unless unfrozen deliberately: a store
   * whose domains ship sets not installed yet counts as frozen too (installing them freezes it), so a
   * refusal needs no install and changes nothing.
   */
  async isRegressionFrozen(): Promise<boolean> {
    const frozen = await this.store.getMeta(META_FROZEN);
    return frozen === true || (frozen !== false && [...this.domains.values()].some((d) => d.regressionSet !== undefined));
  }

  /** Checks the store's regression split against a lockfile's text. */
  async verifyRegression(lockfileText: string, source?: string): Promise<LockCheck> {
    await this.installRegressionSets();
    return checkLockfile(this.store, parseLockfile(lockfileText, source));
  }

  // ---- snapshots ----------------------------------------------------------------------------

  /** Sets the curriculum state that snapshots carry (the curriculum owns its content). */
  setCurriculumState(state: JsonValue): void {
    this.curriculumState = state;
  }

  /** The complete environment version now; its id is the digest of its body. */
  async snapshot(options: { label?: string } = {}): Promise<Snapshot> {
    const snapshot = await this.buildSnapshot(options);
    const existing = await this.store.getSnapshot(snapshot.id);
    if (existing !== undefined) return existing;
    await this.store.saveSnapshot(snapshot);
    return snapshot;
  }

  /** The snapshot of the environment now, not saved (for callers that save it with other writes). */
  async buildSnapshot(options: { label?: string } = {}): Promise<Snapshot> {
    if (this.curriculum) this.syncCurriculumState();
    const body = await buildSnapshotBody({
      store: this.store,
      templates: this.registry.list().map((t) => ({ id: t.id, sourceDigest: t.sourceDigest })),
      curriculum: this.curriculumState,
      rng: { sampler: this.sampler.getState() },
      config: { seed: this.seed, config: this.config },
    });
    return { ...body, id: snapshotId(body), createdAt: this.clock(), ...(options.label ? { label: options.label } : {}) };
  }

  async listSnapshots(): Promise<Snapshot[]> {
    return this.store.listSnapshots();
  }

  /** A snapshot by id or unique id prefix. */
  async getSnapshot(idOrPrefix: string): Promise<Snapshot> {
    const exact = await this.store.getSnapshot(idOrPrefix);
    if (exact !== undefined) return exact;
    const matches = (await this.store.listSnapshots()).filter((s) => s.id.startsWith(idOrPrefix));
    if (matches.length === 1) return matches[0]!;
    throw new EnvHarnessError(
      'SNAPSHOT_NOT_FOUND',
      matches.length === 0 ? `no snapshot ${idOrPrefix}; see \`envharness snapshot list\`` : `snapshot prefix ${idOrPrefix} is ambiguous (${matches.length} match); give more characters`,
      { details: { id: idOrPrefix } },
    );
  }

  /**
   * Restores a snapshot of this store: sampler state, curriculum state and config. The pool must be
   * the snapshot's (same membership digests); otherwise SNAPSHOT_MISMATCH says which split differs.
   */
  async restore(idOrPrefix: string): Promise<Snapshot> {
    const snap = await this.getSnapshot(idOrPrefix);
    this.checkTemplates(snap);
    const now = await buildSnapshotBody({ store: this.store, templates: [], curriculum: null, rng: {}, config: {} });
    const differing = (Object.keys(snap.pool) as Split[]).filter((s) => snap.pool[s].digest !== now.pool[s].digest);
    if (differing.length > 0) {
      throw new EnvHarnessError(
        'SNAPSHOT_MISMATCH',
        `the pool has changed since snapshot ${snap.id.slice(0, 12)} (splits: ${differing.join(', ')}); import the snapshot's export into a fresh store to go back to it`,
        { details: { splits: differing } },
      );
    }
    await this.adopt(snap);
    return snap;
  }

  /** SNAPSHOT_MISMATCH unless every template version the snapshot names is registered. */
  private checkTemplates(snap: Snapshot): void {
    const known = new Map(this.registry.list().map((t) => [t.id, t.sourceDigest]));
    const missing = snap.templates.filter((t) => known.get(t.id) !== t.sourceDigest);
    if (missing.length > 0) {
      throw new EnvHarnessError(
        'SNAPSHOT_MISMATCH',
        `snapshot ${snap.id.slice(0, 12)} needs template versions this harness does not have: ${missing.map((t) => t.id).join(', ')}`,
        { details: { templates: missing.map((t) => t.id) } },
      );
    }
  }

  /** The sampler state a snapshot restores (what `rng.sampler` is set to). */
  private samplerOf(snap: Snapshot): RngState {
    const seed = (snap.config as { seed?: number }).seed ?? 0;
    return createRng(snap.rng.sampler ?? [seed, 'sampler']).getState();
  }

  /**
   * Takes over a snapshot's state in memory; its one write (`rng.sampler`) is skipped when the caller
   * already wrote it in its own transaction (`written`).
   */
  private async adopt(snap: Snapshot, written = false): Promise<void> {
    const config = snap.config as { seed?: number; config?: JsonValue };
    // Everything that can throw comes before the in-memory state changes.
    const saved = snap.curriculum as { strategy?: StrategyName; slices?: unknown; state?: JsonValue } | null;
    const curriculum = saved && saved.strategy && saved.state !== undefined
      ? createCurriculum({ strategy: saved.strategy, slices: saved.slices as ReturnType<Harness['dynamicSlices']>, state: saved.state })
      : undefined;
    const sampler = this.samplerOf(snap);
    if (!written) await this.store.setMeta('rng.sampler', [...sampler]);
    this.seed = config.seed ?? 0;
    this.config = config.config ?? {};
    this.sampler = createRng(sampler);
    this.curriculumState = snap.curriculum;
    this.curriculum = curriculum;
    await this.tasks.reload();
  }

  /** The snapshot and its pool as one JSONL file (text); the file's sha256 depends only on content. */
  async exportSnapshot(idOrPrefix?: string): Promise<{ snapshot: Snapshot; text: string }> {
    const snap = idOrPrefix === undefined ? await this.snapshot() : await this.getSnapshot(idOrPrefix);
    return { snapshot: snap, text: await exportSnapshot(this.store, snap) };
  }

  /** Imports an export file into this store and restores it. */
  async importSnapshot(text: string, source?: string): Promise<Snapshot> {
    // Everything is checked before anything is written, and everything is written in one transaction:
    // a refused or failed import leaves the store as it was.
    const parsed = parseExport(text, source);
    this.checkTemplates(parsed.snapshot);
    const snapshot = await importExport(this.store, parsed, [{ op: 'setMeta', key: 'rng.sampler', value: [...this.samplerOf(parsed.snapshot)] }]);
    await this.adopt(snapshot, true);
    return snapshot;
  }

  async diffSnapshots(a: string, b: string): Promise<SnapshotDiff> {
    return diffSnapshots(await this.getSnapshot(a), await this.getSnapshot(b));
  }

  /** The environment version as a short digest of the registered templates (for run records). */
  templatesDigest(): string {
    return digest(this.registry.list().map((t) => [t.id, t.sourceDigest]));
  }

  /**
   * What opening this store repaired (crash leftovers; see `Store.recover`). Also kept in the store's meta
   * (`store.recovery`, the last non-empty report) for `doctor`.
   */
  recovery: RecoveryReport = { episodes: [], runs: [] };

  /** Repairs what a crash left (lagging episode records, runs whose process died); createHarness calls it. */
  async recoverStore(): Promise<RecoveryReport> {
    const at = this.clock();
    const report = await this.store.recover({ isLive: isRunLive, now: at });
    this.recovery = report;
    if (report.episodes.length > 0 || report.runs.length > 0) {
      await this.store.setMeta(META_RECOVERY, {
        at,
        episodes: report.episodes.length,
        episodeIds: report.episodes.slice(0, 20).map((e) => e.id),
        runs: report.runs.map((r) => r.id),
      });
    }
    return report;
  }

  async close(): Promise<void> {
    await this.recorder?.close();
    await this.store.close();
  }
}

/** Creates a harness with the given store and domains (defaults: the SQLite file, no domains). */
export async function createHarness(options: HarnessOptions = {}): Promise<Harness> {
  const clock = options.clock ?? systemClock;
  const store = typeof options.store === 'object' ? options.store : await openStore(options.store, { clock });
  const harness = new Harness(store, options.domains ?? [], options.templates ?? [], clock, options.prebuilt);
  await harness.recoverStore();
  return harness;
}

/** This process, as the owner recorded on the runs it starts. */
export function runOwner(): { host: string; pid: number } {
  return { host: hostname(), pid: process.pid };
}

/**
 * Whether the process that owns a running run may still be running it: a run without an owner, or
 * owned by a process of this host that no longer exists, is not live. (Runs of other hosts are left
 * alone: their process cannot be checked from here.)
 */
export function isRunLive(run: RunRecord): boolean {
  if (run.owner === undefined) return false;
  if (run.owner.host !== hostname()) return true;
  if (run.owner.pid === process.pid) return true;
  try {
    process.kill(run.owner.pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Opens a store from a location string: `postgres://...` (or `postgresql://`), `sqlite:<path>`, `<path>`
 * or `:memory:`. Each driver is loaded here, on first use (dynamic import), so that importing `envharness`
 * loads no native module or PostgreSQL driver; pass a `Store` object (`createSqliteStore` from
 * `envharness/sqlite`, `createPostgresStore` from `envharness/postgres`) to choose the adapter yourself.
 */
export async function openStore(location = 'sqlite:.envharness/envharness.db', options: { clock?: Clock } = {}): Promise<Store> {
  if (location.startsWith('postgres://') || location.startsWith('postgresql://')) {
    // Loaded only when asked for, so SQLite users never load the PostgreSQL driver.
    const { createPostgresStore } = await import('../storage/postgres/index.js');
    return createPostgresStore(location);
  }
  // A scheme this build does not know is refused, never taken as a file name (`mysql://...` would
  // make a SQLite file named `mysql:`). One letter before the colon is a Windows drive, not a scheme.
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]+):/.exec(location)?.[1];
  if (scheme !== undefined && scheme !== 'sqlite' && location !== ':memory:') {
    throw new EnvHarnessError('CONFIG_INVALID', `unknown store scheme "${scheme}:" in ${location.split('@').pop()}; use sqlite:<path>, a file path, :memory:, or postgres://user@host:port/db`, { details: { pointer: '/store' } });
  }
  const path = location.startsWith('sqlite:') ? location.slice('sqlite:'.length) : location;
  if (path === '') throw new EnvHarnessError('CONFIG_INVALID', 'store location is empty; use sqlite:<path> or :memory:');
  const { createSqliteStore } = await import('../storage/sqlite/index.js');
  return createSqliteStore(path, options.clock ? { now: options.clock } : {});
}

function isObject(value: unknown): value is Record<string, JsonValue> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isRngStateJson(value: unknown): value is RngState {
  return Array.isArray(value) && value.length === 4 && value.every((x) => Number.isInteger(x));
}
