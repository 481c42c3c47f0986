/** The storage contract. SQLite implements it now, PostgreSQL later; both run test/conformance/store.ts. */
import type { Batch, BatchManifest, GateName, GenerationLogEntry } from './batch.js';
import type { EpisodeRecord, EpisodeStatus, Transition } from './episode.js';
import type { JsonValue } from './json.js';
import type { RunEvent, RunRecord } from './run.js';
import type { Snapshot } from './snapshot.js';
import type { Split, Task } from './template.js';

export type TaskStatus = 'active' | 'pending_review' | 'rejected';

/** A task as the store holds it: the task plus where it sits in the pool. */
export interface StoredTask extends Task {
  split: Split;
  status: TaskStatus;
  batchId: string;
  /** Insertion order; stable across export/import. */
  seq: number;
}

/** The columns of a task the pool and the curriculum need, without its content. */
export interface TaskIndexEntry {
  id: string;
  seq: number;
  template: string;
  domain: string;
  taskType: string;
  level: number;
  split: Split;
  status: TaskStatus;
}

/**
 * A cheap summary of the tasks table that changes whenever its rows do: `rows` is the number of task rows
 * (any status), `changes` counts every update or removal of one. Rows are only ever added otherwise, so a
 * reader that has read `rows` distinct tasks and seen the same `changes` holds every task committed before
 * the watermark was read (the draw pool syncs on it instead of re-reading the index).
 */
export interface TaskWatermark {
  rows: number;
  changes: number;
}

export interface TaskFilter {
  split?: Split;
  status?: TaskStatus;
  template?: string;
  taskType?: string;
  level?: number;
  batchId?: string;
  limit?: number;
  /** Only tasks with seq greater than this (for paging). */
  afterSeq?: number;
}

export type ReviewStatus = 'pending' | 'approved' | 'rejected';

export interface ReviewItem {
  taskId: string;
  batchId: string;
  status: ReviewStatus;
  reviewer?: string;
  note?: string;
  decidedAt?: string;
}

/** One line of the review audit trail. */
export interface ReviewDecision {
  taskId: string;
  decision: 'approved' | 'rejected';
  reviewer: string;
  note: string;
  at: string;
}

/**
 * One write of `Store.applyWrites`, as plain data: the arguments of the single-call method it names.
 * (A list of data rather than a callback, so that every store, local or remote, can apply it in one
 * transaction.)
 */
export type StoreWrite =
  | { op: 'saveBatch'; batch: Batch; review?: readonly string[] }
  | { op: 'putTasks'; tasks: readonly StoredTask[] }
  | { op: 'decideReview'; decision: ReviewDecision }
  | { op: 'saveEpisode'; episode: EpisodeRecord }
  | { op: 'saveSnapshot'; snapshot: Snapshot }
  | { op: 'saveRun'; run: RunRecord }
  | { op: 'appendRunEvents'; events: readonly RunEvent[] }
  | { op: 'setMeta'; key: string; value: JsonValue }
  /** Deletes these episode records and their transitions (ids not stored are skipped). Only as a write. */
  | { op: 'discardEpisodes'; ids: readonly string[] }
  /** Deletes the run's events with seq >= `fromSeq`. Only as a write. */
  | { op: 'discardRunEvents'; runId: string; fromSeq: number };

/** Everything a snapshot export holds of the pool, as one consistent view (see `Store.readPool`). */
export interface PoolContent {
  /** In save order. */
  batches: BatchManifest[];
  /** In batch order, then index order. */
  log: GenerationLogEntry[];
  /** Every task, any split or status, in seq order. */
  tasks: StoredTask[];
  /** Review items, in task seq order. */
  reviews: ReviewItem[];
  /** The review audit trail, in the order decided. */
  audit: ReviewDecision[];
}

/** What `Store.recover` repaired. Empty lists when there was nothing to repair. */
export interface RecoveryReport {
  /** Episodes whose record lagged behind their stored transitions, and what the record said before. */
  episodes: Array<{ id: string; steps: { from: number; to: number }; status: { from: EpisodeStatus; to: EpisodeStatus } }>;
  /** Runs that were `running` with no live owner, now `interrupted`, with the seq of their last event (-1: none). */
  runs: Array<{ id: string; lastEventSeq: number; lastEventKind?: string }>;
}

/** A storage failure that makes a store refuse writes until it clears (see `Store.fault`). */
export interface StoreFault {
  /** What failed: `checkpoint` (WAL into the database file, with its fsync), `write`, `sync`... */
  operation: string;
  /** The driver's code, e.g. SQLITE_IOERR_FSYNC or SQLITE_FULL. */
  code: string;
  message: string;
  /** ISO time of the first failure of this episode of trouble. */
  since: string;
}

export interface LogFilter {
  batchId?: string;
  accepted?: boolean;
  gate?: GateName;
  limit?: number;
}

/**
 * Every method is atomic. Writes that return have been committed (durable across a process crash).
 * Implementations throw EnvHarnessError('STORE_FAILED') for I/O failures and STORE_CONFLICT for writes
 * that contradict what is stored (duplicate step, task or event); they never partially apply a call.
 * Saving an identical batch again is a no-op; saving an episode, run or snapshot again updates it in
 * place and keeps its seq; `countTasks(f)` equals `listTasks(f).length` (limit and afterSeq included);
 * a review may be decided again: the audit trail keeps both and the latest applies.
 */
export interface Store {
  readonly kind: string;
  /** Where the data lives (a file path, a URL without credentials, or ':memory:'). */
  readonly location: string;
  close(): Promise<void>;

  /** Saves a batch's manifest, accepted tasks and log in one transaction. `review` tasks start pending. */
  saveBatch(batch: Batch, options?: { review?: readonly string[] }): Promise<void>;
  getBatch(id: string): Promise<BatchManifest | undefined>;
  listBatches(): Promise<BatchManifest[]>;
  listGenerationLog(filter?: LogFilter): Promise<GenerationLogEntry[]>;

  getTask(id: string): Promise<StoredTask | undefined>;
  /** Which of these ids are already stored (any split, any status). */
  findExistingTaskIds(ids: readonly string[]): Promise<Set<string>>;
  listTasks(filter?: TaskFilter): Promise<StoredTask[]>;
  countTasks(filter?: TaskFilter): Promise<number>;
  /** The index columns of matching tasks in seq order: cheap enough to load a million-task pool. */
  listTaskIndex(filter?: TaskFilter): Promise<TaskIndexEntry[]>;
  /** Imports tasks as they are (snapshot import, tau-bench import); ids must match content. */
  putTasks(tasks: readonly StoredTask[]): Promise<void>;
  /**
   * The tasks table's watermark, kept by the database itself (triggers) in the transaction of every task
   * write, whoever writes. Optional: without it, a draw re-reads what was stored since the last one.
   */
  taskWatermark?(): Promise<TaskWatermark>;

  listReviews(status?: ReviewStatus): Promise<ReviewItem[]>;
  /** Records a decision in the audit trail; a rejection takes the task out of the pool. */
  decideReview(decision: ReviewDecision): Promise<ReviewItem>;
  listReviewAudit(taskId?: string): Promise<ReviewDecision[]>;

  saveEpisode(episode: EpisodeRecord): Promise<void>;
  getEpisode(id: string): Promise<EpisodeRecord | undefined>;
  listEpisodes(filter?: { runId?: string; taskId?: string; limit?: number }): Promise<EpisodeRecord[]>;
  /**
   * Appends transitions, and saves the given episode records, in one transaction (group commit), so a
   * step counter never disagrees with its transitions. A duplicate (episode, step) is refused with
   * STORE_CONFLICT and nothing of the call is written.
   */
  appendTransitions(transitions: readonly Transition[], options?: { episodes?: readonly EpisodeRecord[] }): Promise<void>;
  listTransitions(episodeId: string): Promise<Transition[]>;

  saveSnapshot(snapshot: Snapshot): Promise<void>;
  getSnapshot(id: string): Promise<Snapshot | undefined>;
  listSnapshots(): Promise<Snapshot[]>;

  saveRun(run: RunRecord): Promise<void>;
  getRun(id: string): Promise<RunRecord | undefined>;
  listRuns(): Promise<RunRecord[]>;
  appendRunEvents(events: readonly RunEvent[]): Promise<void>;
  listRunEvents(runId: string, kind?: string): Promise<RunEvent[]>;

  getMeta(key: string): Promise<JsonValue | undefined>;
  setMeta(key: string, value: JsonValue): Promise<void>;

  /**
   * Applies `writes` in order in ONE transaction: either every write commits, or (when any of them
   * throws) none does and the store is exactly as before; the error of the first failing write
   * propagates with its code and details, plus `details.write` = its index in the list. Each write has exactly the
   * checks and effects of the single-call method it names (`saveBatch` refuses a review id outside the
   * batch, `decideReview` throws REVIEW_NOT_FOUND, a duplicate event is STORE_CONFLICT, ...), and later
   * writes see the effects of earlier ones (a `decideReview` may decide a task saved by an earlier
   * `saveBatch` of the same list). An empty list writes nothing. Used for every multi-step write:
   * snapshot import, split freeze, run finalisation. `discardEpisodes` and `discardRunEvents` exist only
   * as writes: `train --resume` rewinds a run to its last checkpoint with them, in the same transaction
   * that marks it running again.
   */
  applyWrites(writes: readonly StoreWrite[]): Promise<void>;

  /**
   * Reads every batch, log entry, task, review item and audit line from ONE read transaction, so the
   * parts agree with each other even while another connection or process writes (snapshot export).
   */
  readPool(): Promise<PoolContent>;

  /**
   * Repairs what a crash can leave behind, in one transaction, and says what it changed (called when a
   * harness opens the store; safe to call any time, and again: a second call finds nothing).
   * - An episode whose `steps` is below its number of stored transitions gets `steps` = that number,
   *   `reward` = the sum of their rewards and `updatedAt` = now; when its last transition terminated or
   *   truncated it, `status` follows (`terminated`/`truncated`) with `outcome`, `endReason` and
   *   `excludeFromStats` from that transition's info. Nothing else of the record changes, and
   *   an episode whose record is ahead of or equal to its transitions is left alone.
   * - A `running` run for which `isLive(run)` is false becomes `interrupted`, with `interrupted` set to
   *   the seq and kind of its last event (-1 when it has none) and `updatedAt` = now.
   */
  recover(options: { isLive: (run: RunRecord) => boolean; now: string }): Promise<RecoveryReport>;

  /**
   * The storage failure the store is refusing writes for, or undefined when healthy. After an I/O error
   * (a failed fsync, a full disk) the store never acknowledges another write until a probe of the same
   * operation succeeds: every write meanwhile throws STORE_FAILED naming the fault, reads still work.
   * Optional: a store without this never reports a fault (its writes fail or succeed on their own).
   */
  fault?(): StoreFault | undefined;
}

/**
 * An `appendTransitions` call filled transition by transition (a store's optional `stage()`, used by the
 * runtime's store recorder): each transition is read, and may be serialised, when it is added, so the
 * caller holds no transition objects until the commit. `commit` then writes what was added and the given
 * episode records as one `appendTransitions` call would: one transaction, the same rows, checks and errors
 * (a transition that could not be serialised makes the whole call fail).
 */
export interface StagedTransitions {
  /** Takes one transition (its data is read now). Never throws: a failure is kept for `commit` to reject with. */
  add(transition: Transition): void;
  /** Commits the added transitions and these records; settles as `appendTransitions` would. Called once. */
  commit(episodes: readonly EpisodeRecord[]): Promise<void>;
}
