/**
 * The store contract for `serve` replicas sharing one store (docs/design/021-replicas.md): server episodes
 * owned under a fencing epoch, the Idempotency-Keys of applied steps, and the append-only curriculum log.
 * Core owns it so that the server (which uses it) and storage (which implements it) share one declaration.
 */
import type { JsonObject, JsonValue } from './json.js';
import type { Store } from './store.js';

/** A server episode as every replica sees it. */
export interface SharedEpisodeRow {
  id: string;
  tokenHash: Buffer;
  /** The episode's creation parameters (source, resample, options, createdAt), as JSON. */
  body: JsonObject;
  taskId: string;
  /** Attempts started so far (0 before the first reset). */
  attempt: number;
  seed: number | undefined;
  closed: boolean;
  /** The fencing epoch: bumped by every takeover. */
  epoch: number;
}

/** An applied step's Idempotency-Key, found only when the step's transition is stored. */
export interface SharedStepKey {
  fingerprint: string;
  reply: string;
}

/**
 * What a store shared by replicas provides (PostgreSQL: `PostgresStore.sharedEpisodes`). Every write that
 * names an epoch fails with STORE_CONFLICT when another replica has taken the episode over since.
 */
export interface SharedEpisodes {
  /** This replica's name in ownership rows. */
  readonly replica: string;
  /** Records a new episode, owned by this replica at epoch 1. */
  create(row: Omit<SharedEpisodeRow, 'epoch' | 'closed'>): Promise<void>;
  load(id: string): Promise<SharedEpisodeRow | undefined>;
  /** Takes the episode over: owner := this replica, epoch + 1. Returns the row as of the takeover. */
  claim(id: string): Promise<SharedEpisodeRow | undefined>;
  /** The current epoch (undefined when the episode is gone or closed): one indexed read. */
  epochOf(id: string): Promise<number | undefined>;
  /** Saves a new attempt, if this replica still owns the episode at `epoch`. */
  saveAttempt(id: string, epoch: number, attempt: { taskId: string; attempt: number; seed: number }): Promise<void>;
  /** Marks the episode closed for every replica, if this replica still owns it at `epoch`. */
  close(id: string, epoch: number): Promise<void>;
  /** The reply of the step applied with this key, when that step's transition is stored. */
  findKey(episodeId: string, key: string): Promise<SharedStepKey | undefined>;
  /** Attaches the key to the step's buffered transition: it commits with it, or not at all. Synchronous. */
  attachKey(episodeId: string, key: string, value: SharedStepKey & { attemptId: string; step: number }): void;
}

/** One change of the shared curriculum, as the log holds it. */
export interface CurriculumLogEntry {
  seq: number;
  kind: 'use' | 'adjust' | 'distribution';
  body: JsonValue;
}

/** The append-only curriculum log (PostgreSQL: `PostgresStore.curriculumLog`); seq order is commit order. */
export interface CurriculumLog {
  append(kind: CurriculumLogEntry['kind'], body: JsonValue): Promise<number>;
  after(seq: number): Promise<CurriculumLogEntry[]>;
}

/** A store that can share server episodes and the curriculum between replicas. */
export interface ReplicaStore extends Store {
  sharedEpisodes(replica: string): SharedEpisodes;
  curriculumLog(replica: string): CurriculumLog;
}

export function isReplicaStore(store: Store): store is ReplicaStore {
  return typeof (store as Partial<ReplicaStore>).sharedEpisodes === 'function';
}
