/** createHarness(): the single composition root, a small facade over generation, sampling, evaluation, training and snapshots. */
import {
  createRng,
  digest,
  EnvHarnessError,
  type Agent,
  type BatchRequest,
  type Domain,
  type Feedback,
  type JsonValue,
  type Observation,
  type RecoveryReport,
  type RegisteredTemplate,
  type ReviewItem,
  type Snapshot,
  type Split,
  type Store,
  type StoredTask,
  type Task,
} from '../core/index.js';
import { createTemplateRegistry, type GeneratedBatch, type TaskPool, type TemplateRegistry } from '../generation/index.js';
import type { Curriculum, CurriculumConfigInput, CurriculumUpdate, EpisodeResult, StrategyName } from '../curriculum/index.js';
import type { Episode } from '../runtime/index.js';
import type { EpisodeOutcome } from '../runtime/rollout.js';
import type { Clock } from './clock.js';
import { replayingStore } from './replaying-store.js';
import { EpisodeRunner, type OpenEpisodeOptions, type RunEpisodeOptions } from './episode-runner.js';
import { evaluateAgent, type EvaluateOptions, type EvaluationResult } from './evaluation.js';
import { ExternalTransitions } from './external-transitions.js';
import type { LockCheck, Lockfile } from './lockfile.js';
import { defaultDomains, fillPools, poolStats, type FillOptions, type PoolStats } from './pool-fill.js';
import { prebuiltDir } from './prebuilt.js';
import { createRegressionInstaller, type InstalledSet, type RegressionInstaller } from './regression-sets.js';
import { RegressionSplit } from './regression-split.js';
import { isRunLive, recoverStore, runOwner } from './run-owner.js';
import { RunIds } from './run-ids.js';
import { META_INIT, Sampling, type DrawOptions } from './sampling.js';
import { SnapshotBook } from './snapshot-book.js';
import type { SnapshotDiff } from './snapshots.js';
import { openStore } from './store-location.js';
import { StorePool } from './store-pool.js';
import { TaskGenerator, type GenerateOptions } from './task-generator.js';
import { trainLoop, type TrainDeps, type TrainOptions, type TrainSummary } from './train.js';
import { planResume, type ResumeTrainOptions } from './train-resume.js';

export interface HarnessOptions {
  /** A Store, or `sqlite:<path>`, a file path, or `:memory:`. Default: `.envharness/envharness.db`. */
  store?: Store | string;
  domains?: readonly Domain<any>[];
  /** Templates beyond the domains' own (e.g. declarative ones). */
  templates?: readonly RegisteredTemplate<any>[];
  /**
   * Timestamps for records (required: the library reads no clock of its own). Pass `systemClock` for wall
   * time, a fixed clock for reproducible records. Never used for generation, sampling, faults or replay.
   */
  clock: Clock;
  /**
   * The folder of the build's prebuilt files (shipped regression sets), or false for none. Default:
   * `dist/prebuilt` when running compiled, none from the sources. src/harness/prebuilt.ts.
   */
  prebuilt?: string | false;
  /**
   * How episodes run by the harness (training, evaluation, `runEpisode`) on tasks of its store are recorded:
   * `inputs` (the default) keeps each episode's actions and final state hash in its record and rebuilds its
   * transitions by replay when they are read (`store.listTransitions`), at a fraction of the cost of writing them;
   * `transitions` writes every step's transition. Interactive episodes (HTTP, MCP) are always recorded as transitions.
   * docs/storage.md, "Recording episodes as their inputs".
   */
  recordAs?: 'inputs' | 'transitions';
}

export type { GenerateOptions } from './task-generator.js';
export type { EvaluateOptions, EvaluationResult } from './evaluation.js';
export { DEFAULT_FILL_PER_LEVEL, type PoolStats } from './pool-fill.js';
export { isRunLive, runOwner } from './run-owner.js';
export { openStore } from './store-location.js';

export { META_RECOVERY } from './run-owner.js';

/**
 * The harness: every verb of EnvHarness hangs off it. Its state lives in the parts it delegates to; the
 * draw pool and the split indexes are derived from the store and synced before use, so nothing depends
 * on the order of the calls.
 * @example
 * const harness = await createHarness({ store: 'sqlite:.envharness/envharness.db', domains: [retail], clock }); // clock: () => an ISO timestamp (README)
 * await harness.initialize({ seed: 42 });
 */
export class Harness {
  readonly store: Store;
  readonly registry: TemplateRegistry;
  readonly domains: ReadonlyMap<string, Domain<any>>;
  /**
   * What opening this store repaired (crash leftovers; see `Store.recover`). Also kept in the store's meta
   * (`store.recovery`, the last non-empty report) for `doctor`.
   */
  recovery: RecoveryReport = { episodes: [], runs: [] };
  private readonly clock: Clock;
  /** The draw pool, synced from the store before each draw. */
  private readonly tasks: StorePool;
  private readonly generator: TaskGenerator;
  private readonly sampling: Sampling;
  private readonly snapshots: SnapshotBook;
  private readonly episodes: EpisodeRunner;
  private readonly split: RegressionSplit;
  private readonly runIds: RunIds;
  private readonly external: ExternalTransitions;
  private readonly regressionSets: RegressionInstaller;

  constructor(
    store: Store,
    domains: readonly Domain<any>[],
    templates: readonly RegisteredTemplate<any>[],
    clock: Clock,
    prebuilt: string | false | undefined = undefined,
    private readonly recordAs: 'inputs' | 'transitions' = 'inputs',
  ) {
    this.clock = clock;
    const byName = new Map<string, Domain<any>>();
    for (const domain of domains) {
      if (byName.has(domain.name)) throw new EnvHarnessError('REGISTRATION_CONFLICT', `domain ${domain.name} is registered twice`);
      byName.set(domain.name, domain);
    }
    this.domains = byName;
    // Every reader of transitions (server, reports, exports) gets those of episodes recorded as their inputs too.
    store = replayingStore(store, byName);
    this.store = store;
    this.registry = createTemplateRegistry();
    for (const domain of domains) for (const t of domain.templates) this.registry.register(t as RegisteredTemplate<any>);
    for (const t of templates) this.registry.register(t);
    this.tasks = new StorePool(store);
    this.generator = new TaskGenerator(store, this.registry, this.domains);
    this.sampling = new Sampling(this.registry, this.tasks);
    this.snapshots = new SnapshotBook(store, this.registry, this.sampling, clock, () => this.tasks.reload());
    this.episodes = new EpisodeRunner(store, this.domains, clock, recordAs);
    this.split = new RegressionSplit(store, this.domains);
    this.runIds = new RunIds(store);
    this.external = new ExternalTransitions(store);
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
        freeze: async () => void (await this.split.lock()),
      },
      { prebuilt: prebuilt === false ? undefined : (prebuilt ?? prebuiltDir()) },
    );
  }

  /** Records the environment version and parameters, and loads the pool. Call once after creating. */
  async initialize(options: { seed?: number; config?: JsonValue } = {}): Promise<{ seed: number; templates: number; pool: number }> {
    const s = this.sampling;
    await s.initialize(this.store, options);
    await this.store.setMeta(META_INIT, { seed: s.seed, config: s.config, templates: this.registry.list().map((t) => ({ id: t.id, sourceDigest: t.sourceDigest })) });
    // Tasks may need what the store does not hold (a world imported from files): each domain restores its own.
    for (const domain of this.domains.values()) await domain.restore?.(this.store);
    await this.tasks.reload();
    return { seed: s.seed, templates: this.registry.list().length, pool: this.tasks.pool.size() };
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

  // ---- generation and the pool --------------------------------------------------------------

  /** Generates a batch through the gates and stores it (accepted tasks enter the pool of its split). */
  async generate(request: BatchRequest, options: GenerateOptions = {}): Promise<GeneratedBatch> {
    const domains = request.templates.map((t) => this.registry.get(t.id).domain);
    // The leakage gate checks against the regression set: the domains' sets go in first.
    if (request.split === 'regression') await this.split.refuseFrozen('/split');
    else await this.installRegressionSets(domains);
    const batch = await this.generator.generate(request, options);
    // The pool takes the batch's tasks from the batch itself (not read back from the store).
    await this.tasks.syncSaved(batch, batch.review);
    return batch;
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

  /** The domains a default fill (and `train` without `--domain`) covers (src/harness/pool-fill.ts). */
  defaultDomains(): string[] {
    return defaultDomains(this.domains, this.registry);
  }

  /**
   * Generates `perLevel` tasks per level for every template of `domains` whose split lacks them:
   * training templates into `dynamic`, held-out templates into `heldout` (never trained on). Every entry
   * point calls this on a fresh store (train, serve at start-up, the first draw from an empty pool), so a
   * new store gives a working episode with the built-in defaults. Returns what was added per split.
   */
  async fillPools(options: FillOptions = {}): Promise<{ dynamic: number; heldout: number }> {
    const deps = { store: this.store, registry: this.registry, generate: (r: BatchRequest, o: GenerateOptions) => this.generate(r, o) };
    return fillPools(deps, { ...options, domains: options.domains ?? this.defaultDomains(), seed: options.seed ?? this.sampling.seed });
  }

  /** Pool counts by split, slice and level. */
  async poolStats(): Promise<PoolStats> {
    return poolStats(this.store);
  }

  // ---- sampling -----------------------------------------------------------------------------

  /**
   * Draws a task from the dynamic pool: of `taskType` at `level` when given, otherwise uniformly over
   * the slices and levels that have tasks (the curriculum replaces this default). A seeded draw is a
   * function of the seed and the pool; an unseeded one moves (and saves) the harness's sampler.
   */
  async generateTask(options: DrawOptions = {}): Promise<StoredTask> {
    const split = options.split ?? 'dynamic';
    if (split === 'regression') await this.installRegressionSets(options.domain === undefined ? undefined : [options.domain]);
    await this.tasks.sync();
    if (split !== 'regression' && !this.sampling.hasSlice(split, options)) {
      // A fresh store: the first draw fills the pools of the domains it may draw from (built-in defaults).
      const candidates = options.domain !== undefined ? [options.domain] : this.defaultDomains();
      const empty = candidates.filter((d) => this.domains.has(d) && !this.sampling.hasSlice(split, { domain: d }));
      if (empty.length > 0) await this.fillPools({ domains: empty });
    }
    const id = this.sampling.draw(options);
    if (options.seed === undefined) await this.saveSampler();
    const task = await this.store.getTask(id);
    if (task === undefined) throw new EnvHarnessError('TASK_NOT_FOUND', `task ${id} is in the pool index but not in the store`);
    return task;
  }

  async getTask(id: string): Promise<StoredTask> {
    const task = await this.store.getTask(id);
    if (task === undefined) throw new EnvHarnessError('TASK_NOT_FOUND', `no task ${id}; ids are sha256 hex, see \`envharness pool stats\``);
    return task;
  }

  /** Starts (or replaces) the curriculum over the dynamic pool's slices; generateTask then follows it. */
  useCurriculum(strategy: StrategyName, config?: CurriculumConfigInput): Curriculum {
    return this.sampling.useCurriculum(strategy, config);
  }

  /** The active curriculum, if any. */
  get activeCurriculum(): Curriculum | undefined {
    return this.sampling.curriculum;
  }

  /** Per-slice results -> levels (and weights) move. Returns what moved and why. */
  async adjustDifficulty(performance: readonly EpisodeResult[]): Promise<CurriculumUpdate> {
    return this.sampling.update(performance);
  }

  /** Per-slice results -> slice weights move toward weak spots; levels stay where they are. */
  async updateDistribution(feedback: readonly EpisodeResult[]): Promise<CurriculumUpdate> {
    return this.sampling.update(feedback, true);
  }

  /** Slices (domain, task type) with active dynamic tasks, with level bounds from their templates. */
  dynamicSlices() {
    return this.sampling.dynamicSlices();
  }

  /** Sets the curriculum state that snapshots carry (the curriculum owns its content). */
  setCurriculumState(state: JsonValue): void {
    this.sampling.curriculumState = state;
  }

  // ---- episodes, training, evaluation -------------------------------------------------------

  /** Opens an episode of a stored task (or one sampled from the pool), recorded to the store. */
  async openEpisode(options: OpenEpisodeOptions = {}): Promise<{ episode: Episode; task: StoredTask }> {
    const task = options.taskId ? await this.getTask(options.taskId) : await this.generateTask({ taskType: options.taskType, level: options.level, split: options.split });
    return { episode: this.episodes.open(task, options), task };
  }

  /**
   * Runs one episode of a task with an agent. It returns once the episode is durable, unless `flush: false`: then it
   * goes with the harness recorder's next group commit, and `flush()` makes every such episode durable at once.
   * @example
   * for (const [i, task] of tasks.entries()) await harness.runEpisode(task, agent, { seed: i, flush: false });
   * await harness.flush(); // one commit for all of them (or the recorder's groups of 1,024)
   */
  async runEpisode(task: StoredTask | Task, agent: Agent, options: RunEpisodeOptions): Promise<EpisodeOutcome> {
    return this.episodes.run(task, agent, options);
  }

  /** Resolves once every episode the harness has recorded so far is durable; rejects with the recorder's failure. */
  async flush(): Promise<void> {
    await this.episodes.flush();
  }

  /**
   * Records a transition of an episode run outside the harness and returns process feedback on it:
   * INVALID_ACTION (with the JSON pointer) for a malformed action, REDUNDANT_CALL for a repeated tool call.
   */
  async evaluateTransition(observation: Observation, action: unknown, reward: number, nextObservation: Observation, options: { episodeId?: string } = {}): Promise<{ feedback: Feedback[]; step: number }> {
    return this.external.record(observation, action, reward, nextObservation, options.episodeId ?? 'external');
  }

  /** Trains an agent under a curriculum: sample -> run -> record -> update, with a regression guard. */
  async train(options: TrainOptions): Promise<TrainSummary> {
    await this.installRegressionSets(options.domains);
    if (options.seed !== undefined) this.sampling.sampler = createRng([options.seed, 'train']);
    // The loop draws synchronously from the pool as it is now (explicitly synced with the store).
    await this.tasks.sync();
    const summary = await trainLoop(this.trainDeps(), { ...options, seed: options.seed ?? this.sampling.seed });
    await this.saveSampler();
    return summary;
  }

  /**
   * Continues an interrupted (or failed) training run from its last checkpoint, to the same end as an
   * uninterrupted run: same episodes, seeds, rewards, curriculum log and end snapshot (`train --resume`).
   */
  async resumeTrain(runId: string, options: ResumeTrainOptions): Promise<TrainSummary> {
    const plan = await planResume(this.store, runId, options, { isLive: isRunLive, templates: this.registry.list(), now: this.clock(), owner: runOwner() });
    this.sampling.sampler = createRng(plan.rng);
    await this.tasks.sync();
    const summary = await trainLoop({ ...this.trainDeps(), resume: plan.resume }, plan.options);
    await this.saveSampler();
    return summary;
  }

  /** What the training loop needs of this harness (its sampler as it is now). */
  private trainDeps(): TrainDeps {
    const adopt = (curriculum: Curriculum) => void (this.sampling.curriculum = curriculum);
    return {
      store: this.store,
      domains: this.domains,
      recordAs: this.recordAs,
      slices: this.dynamicSlices(),
      clock: this.clock,
      drawTask: (rng, slice, level) => this.tasks.pool.draw(rng, slice, level, 'dynamic').id,
      regressionTasks: () => this.store.listTasks({ split: 'regression', status: 'active' }),
      snapshot: async (curriculum, label) => (adopt(curriculum), this.snapshot({ label })),
      newRunId: () => this.runIds.next('train'),
      rng: this.sampling.sampler,
      ...(this.sampling.curriculum ? { curriculum: this.sampling.curriculum } : {}),
      buildSnapshot: async (curriculum, label) => (adopt(curriculum), this.buildSnapshot({ label })),
      owner: runOwner(),
    };
  }

  /**
   * Evaluates an agent on a split with the curriculum frozen: every task k times (seeds 0..k-1),
   * pass^1..pass^k per slice exactly as tau-bench computes it, with Wilson intervals.
   */
  async evaluate(options: EvaluateOptions): Promise<EvaluationResult> {
    if ((options.split ?? 'regression') === 'regression') await this.installRegressionSets(options.domains);
    const deps = {
      store: this.store,
      clock: this.clock,
      newRunId: () => this.runIds.next('eval'),
      snapshot: (label?: string) => this.snapshot({ label }),
      runEpisode: (task: StoredTask, episode: { seed: number; episodeId?: string; runId?: string; flush?: boolean }) => this.runEpisode(task, options.agent, episode),
      flush: () => this.flush(),
      owner: runOwner(),
    };
    return evaluateAgent(deps, options);
  }

  // ---- review and splits --------------------------------------------------------------------

  async pendingReviews(): Promise<ReviewItem[]> {
    return this.store.listReviews('pending');
  }

  async decideReview(taskId: string, decision: 'approved' | 'rejected', reviewer: string, note = ''): Promise<ReviewItem> {
    // Approving a pending regression task would change the frozen split's membership.
    const entry = (await this.store.listTaskIndex({ split: 'regression' })).find((e) => e.id === taskId);
    if (entry !== undefined) await this.split.refuseFrozen('/taskId');
    const item = await this.store.decideReview({ taskId, decision, reviewer, note, at: this.clock() });
    await this.tasks.reload();
    return item;
  }

  /** Freezes the regression split: returns the lockfile to write and refuses later changes. */
  async freezeRegression(): Promise<Lockfile> {
    await this.installRegressionSets();
    return this.split.lock();
  }

  async unfreezeRegression(): Promise<void> {
    await this.installRegressionSets();
    await this.split.unfreeze();
  }

  /** Whether writes to the regression split are refused (src/harness/regression-split.ts). */
  async isRegressionFrozen(): Promise<boolean> {
    return this.split.isFrozen();
  }

  /** Checks the store's regression split against a lockfile's text. */
  async verifyRegression(lockfileText: string, source?: string): Promise<LockCheck> {
    await this.installRegressionSets();
    return this.split.verify(lockfileText, source);
  }

  // ---- snapshots (src/harness/snapshot-book.ts) ---------------------------------------------

  /** The complete environment version now; its id is the digest of its body. */
  async snapshot(options: { label?: string } = {}): Promise<Snapshot> {
    return this.snapshots.snapshot(options);
  }

  /** The snapshot of the environment now, not saved (for callers that save it with other writes). */
  async buildSnapshot(options: { label?: string } = {}): Promise<Snapshot> {
    return this.snapshots.build(options);
  }

  async listSnapshots(): Promise<Snapshot[]> {
    return this.store.listSnapshots();
  }

  /** A snapshot by id or unique id prefix. */
  async getSnapshot(idOrPrefix: string): Promise<Snapshot> {
    return this.snapshots.get(idOrPrefix);
  }

  /** Restores a snapshot of this store (SNAPSHOT_MISMATCH when its pool differs from the store's). */
  async restore(idOrPrefix: string): Promise<Snapshot> {
    return this.snapshots.restore(idOrPrefix);
  }

  /** The snapshot and its pool as one JSONL file (text); the file's sha256 depends only on content. */
  async exportSnapshot(idOrPrefix?: string): Promise<{ snapshot: Snapshot; text: string }> {
    return this.snapshots.export(idOrPrefix);
  }

  /** Imports an export file into this store and restores it. */
  async importSnapshot(text: string, source?: string): Promise<Snapshot> {
    return this.snapshots.import(text, source);
  }

  async diffSnapshots(a: string, b: string): Promise<SnapshotDiff> {
    return this.snapshots.diff(a, b);
  }

  /** The environment version as a short digest of the registered templates (for run records). */
  templatesDigest(): string {
    return digest(this.registry.list().map((t) => [t.id, t.sourceDigest]));
  }

  // ---- the store ----------------------------------------------------------------------------

  /** Repairs what a crash left (lagging episode records, runs whose process died); createHarness calls it. */
  async recoverStore(): Promise<RecoveryReport> {
    this.recovery = await recoverStore(this.store, this.clock());
    return this.recovery;
  }

  /** Flushes the recorder, then closes the store, even when the flush fails: the failure is rethrown after. */
  async close(): Promise<void> {
    try {
      await this.episodes.close();
    } finally {
      await this.store.close();
    }
  }

  private async saveSampler(): Promise<void> {
    await this.store.setMeta('rng.sampler', [...this.sampling.sampler.getState()]);
  }
}

/** Creates a harness with the given store and domains (defaults: the SQLite file, no domains). */
export async function createHarness(options: HarnessOptions): Promise<Harness> {
  if (options.recordAs !== undefined && options.recordAs !== 'inputs' && options.recordAs !== 'transitions') {
    throw new EnvHarnessError('CONFIG_INVALID', `recordAs (--record-as, ENVHARNESS_RECORD_AS) must be inputs or transitions, got ${JSON.stringify(options.recordAs)}`, {
      details: { pointer: '/recordAs' },
    });
  }
  const clock = options.clock;
  const store = typeof options.store === 'object' ? options.store : await openStore(options.store, { clock });
  const harness = new Harness(store, options.domains ?? [], options.templates ?? [], clock, options.prebuilt, options.recordAs);
  await harness.recoverStore();
  return harness;
}

