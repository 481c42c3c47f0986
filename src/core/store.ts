/** The storage contract. SQLite implements it now, PostgreSQL later; both run test/conformance/store.ts. */
import type { Batch, BatchManifest, GateName, GenerationLogEntry } from './batch.js';
import type { EpisodeRecord, Transition } from './episode.js';
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
}
