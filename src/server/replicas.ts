/**
 * Serve replicas sharing one store (docs/design/021-replicas.md): the contract a store offers for shared
 * server episodes, and rebuilding an episode on the replica that takes it over by replaying its transitions.
 */
import { createStoreRecorder, EnvHarnessError, sentInput, type Action, type Episode, type EpisodeRecord, type JsonObject, type JsonValue, type Recorder, type Store, type Transition } from '../index.js';

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

/**
 * A recorder of one episode, muted while it is rebuilt: replayed steps are already stored. Each episode
 * has its own (the harness's shared recorder stays failed after one conflict, and a lost takeover race is
 * a conflict of one episode, not of the replica); the store's writer still commits them in groups.
 */
export interface EpisodeRecorder extends Recorder {
  muted: boolean;
}

export function createEpisodeRecorder(store: Store): EpisodeRecorder {
  const inner = createStoreRecorder(store, { maxBatch: 1024, maxDelayMs: 20 });
  const recorder: EpisodeRecorder = {
    muted: false,
    begin: (episode: EpisodeRecord) => {
      if (!recorder.muted) inner.begin(episode);
    },
    record: (transition: Transition) => {
      if (!recorder.muted) inner.record(transition);
    },
    end: (episode: EpisodeRecord) => {
      if (!recorder.muted) inner.end(episode);
    },
    flush: () => inner.flush(),
  };
  return recorder;
}

/**
 * Brings a freshly reset-able episode to where its recorded transitions left it: reset with the recorded
 * seed, then each recorded action, checking every step's state hash and reward against the recording (the
 * runtime is deterministic, so a difference means different code or data: refused rather than served).
 */
export function replayInto(episode: Episode, recorder: EpisodeRecorder, seed: number, transitions: readonly Transition[]): void {
  recorder.muted = true;
  try {
    episode.reset({ seed });
    for (const t of transitions) {
      const result = episode.step(sentInput(t.action as Action));
      if (result.info.stateHash !== t.info.stateHash || result.reward !== t.reward || result.info.step !== t.info.step) {
        throw new EnvHarnessError(
          'STORE_CONFLICT',
          `episode ${t.episodeId}: replaying step ${t.step} gives state ${result.info.stateHash.slice(0, 12)}, reward ${result.reward}; ` +
            `the recording has ${t.info.stateHash.slice(0, 12)}, ${t.reward}. Every replica must run the same EnvHarness version and templates`,
          { details: { episodeId: t.episodeId, step: t.step } },
        );
      }
    }
  } finally {
    recorder.muted = false;
  }
}
