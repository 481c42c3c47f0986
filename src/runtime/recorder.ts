/** Recording episodes: the Recorder contract, an in-memory recorder and a group-committing store recorder. */
import { EnvHarnessError, shareCanonical, toEnvHarnessError } from '../core/index.js';
import type { EpisodeRecord, StagedTransitions, Store, Transition } from '../core/index.js';
import { DEFAULT_RECORDER_MAX_BATCH, DEFAULT_RECORDER_MAX_DELAY_MS } from './defaults.js';

/**
 * Where an episode's record and transitions go. `begin`, `record` and `end` are synchronous and never
 * block a step; `flush` resolves once everything handed over before the call is durable.
 */
export interface Recorder {
  /** A new episode started (its record has status `running`). */
  begin(episode: EpisodeRecord): void;
  /** One step's transition, in step order. */
  record(transition: Transition): void;
  /** The episode's final record (terminated, truncated, or closed when abandoned by a new reset). */
  end(episode: EpisodeRecord): void;
  /** Resolves when everything recorded so far is durable; rejects with STORE_FAILED (or STORE_CONFLICT) if it cannot be. */
  flush(): Promise<void>;
}

/** A recorder that keeps everything in memory (tests, benchmarks, short-lived evaluation). */
export interface MemoryRecorder extends Recorder {
  /** Episode records in the order they began (latest version of each). */
  episodes(): EpisodeRecord[];
  episode(id: string): EpisodeRecord | undefined;
  /** The transitions of one episode, in step order. */
  transitions(episodeId: string): Transition[];
  clear(): void;
}

/**
 * Creates an in-memory recorder. It keeps references (no copies): treat recorded values as immutable.
 * @example
 * const recorder = createMemoryRecorder();
 * const episode = createEpisode(domain, task, { recorder });
 */
export function createMemoryRecorder(): MemoryRecorder {
  let records = new Map<string, EpisodeRecord>();
  let transitions = new Map<string, Transition[]>();
  let currentId: string | undefined;
  let current: Transition[] | undefined;
  return {
    begin(episode) {
      records.set(episode.id, episode);
      current = [];
      currentId = episode.id;
      transitions.set(episode.id, current);
    },
    record(transition) {
      // The common case (one episode at a time) skips the map lookup.
      const list = transition.episodeId === currentId ? current : transitions.get(transition.episodeId);
      if (list === undefined) transitions.set(transition.episodeId, [transition]);
      else list.push(transition);
    },
    end(episode) {
      records.set(episode.id, episode);
    },
    flush: () => Promise.resolve(),
    episodes: () => [...records.values()],
    episode: (id) => records.get(id),
    transitions: (id) => transitions.get(id)?.slice() ?? [],
    clear() {
      // New maps rather than Map#clear(): V8's cleared table stays reachable from old space until the next
      // full GC, so young transitions it referenced get promoted (measured: recording 4x slower per step).
      records = new Map();
      transitions = new Map();
      currentId = undefined;
      current = undefined;
    },
  };
}

/** When a store recorder starts a group commit. */
export interface StoreRecorderOptions {
  /** A group commit starts as soon as this many transitions are buffered, or this many episode records (counted as episodes end). */
  maxBatch?: number;
  /** A buffered transition waits at most this long before a group commit starts. */
  maxDelayMs?: number;
}

/**
 * Where a store recorder commits: a `Store`, or a writer that commits elsewhere (a SQLite store's writer
 * thread, `SqliteStore.openTransitionWriter()`). An `ordered` target takes each call's data during the call and
 * commits calls in call order, never one after a failed one: the recorder then hands a commit over as soon as
 * it starts instead of after the previous commit settled, so the stepping thread never waits for one.
 */
export type RecordingTarget = Pick<Store, 'appendTransitions'> & {
  readonly ordered?: boolean;
  /**
   * Starts a call that takes transitions as they are recorded (optional). A target that offers it serialises
   * each transition during `record`, while its objects are young, so the recorder holds no transition objects
   * until the commit: measured, that retention (every buffered transition surviving young-generation GCs)
   * cost more than serialising them. Undefined means "record through `appendTransitions`" (a store returns it
   * when its `appendTransitions` was replaced, so that a wrapper is never bypassed).
   */
  stage?(): StagedCall | undefined;
};

/** A commit being filled transition by transition (`RecordingTarget.stage`): core's `StagedTransitions`. */
export type StagedCall = StagedTransitions;

/** A recorder that group-commits to a `Store`. */
export interface StoreRecorder extends Recorder {
  /** Transitions and episode records buffered and not yet handed to the store. */
  readonly pending: number;
  /** Commits the store has been asked for so far (for tests and benchmarks). */
  readonly commits: number;
  /** The sticky failure, once a commit failed (every later flush rejects with it). */
  readonly failure: EnvHarnessError | undefined;
  /** Flushes, then refuses further records. Does not close the store. */
  close(): Promise<void>;
}

/**
 * Creates a recorder that buffers transitions and group-commits them with `store.appendTransitions`:
 * one transaction per commit, holding the buffered transitions and the latest record of every episode
 * that began or ended since the last commit.
 * A commit starts when `maxBatch` transitions or `maxBatch` episode records are buffered, `maxDelayMs` after the first buffered one,
 * or when `flush()` is called (an episode's end calls it); flushes requested while a commit runs are
 * merged into the next one. The first store failure is sticky: that flush and every later one reject (STORE_FAILED, or
 * STORE_CONFLICT for a duplicate step).
 * @example
 * const recorder = createStoreRecorder(store, { maxBatch: 512, maxDelayMs: 50 });
 * const episode = createEpisode(domain, task, { recorder });
 * // ... steps ...
 * await episode.flush(); // durable
 */
export function createStoreRecorder(store: RecordingTarget, options: StoreRecorderOptions = {}): StoreRecorder {
  const maxBatch = options.maxBatch ?? DEFAULT_RECORDER_MAX_BATCH;
  const maxDelayMs = options.maxDelayMs ?? DEFAULT_RECORDER_MAX_DELAY_MS;
  if (!(Number.isInteger(maxBatch) && maxBatch >= 1)) {
    throw new EnvHarnessError('CONFIG_INVALID', `store recorder: maxBatch must be an integer >= 1, got ${maxBatch}`, { details: { pointer: '/maxBatch' } });
  }
  if (!(maxDelayMs >= 0 && Number.isFinite(maxDelayMs))) {
    throw new EnvHarnessError('CONFIG_INVALID', `store recorder: maxDelayMs must be a non-negative number, got ${maxDelayMs}`, { details: { pointer: '/maxDelayMs' } });
  }

  let buffer: Transition[] = [];
  /** With a staging target: the call taking this commit's transitions (instead of `buffer`), and how many it took. */
  let staged: StagedCall | undefined;
  let stagedCount = 0;
  let episodes = new Map<string, EpisodeRecord>();
  /** The tail of the commit chain: commits run one after another, in order. */
  let chain: Promise<void> = Promise.resolve();
  /** The commit that will take the current buffer, when one is already scheduled. */
  let scheduled: Promise<void> | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let failure: EnvHarnessError | undefined;
  let closed = false;
  let commits = 0;

  function guardOpen(): void {
    if (closed) throw new EnvHarnessError('STORE_FAILED', 'store recorder is closed; create a new recorder to record more episodes');
  }

  async function commit(transitions: Transition[], call: StagedCall | undefined, records: EpisodeRecord[]): Promise<void> {
    if (failure !== undefined) throw failure;
    if (call === undefined && transitions.length === 0 && records.length === 0) return;
    try {
      commits++;
      await (call !== undefined ? call.commit(records) : store.appendTransitions(transitions, { episodes: records }));
    } catch (error) {
      const wrapped = toEnvHarnessError(error);
      failure =
        wrapped.code === 'STORE_FAILED' || wrapped.code === 'STORE_CONFLICT'
          ? wrapped
          : new EnvHarnessError('STORE_FAILED', `recording failed: ${wrapped.message}`, { cause: error });
      throw failure;
    }
  }

  /** Takes the buffer now and chains its commit; returns the promise of that commit. */
  function startCommit(): Promise<void> {
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    scheduled = undefined;
    const transitions = buffer;
    const call = staged;
    const records = [...episodes.values()];
    buffer = [];
    staged = undefined;
    stagedCount = 0;
    episodes = new Map();
    // An ordered target keeps the order itself: hand over now, while the steps go on.
    const run =
      store.ordered === true
        ? Promise.all([commit(transitions, call, records), chain]).then(() => {
            if (failure !== undefined) throw failure;
          })
        : chain.then(() => commit(transitions, call, records));
    // The chain itself never rejects, so one failed commit does not leave an unhandled rejection behind.
    chain = run.catch(() => undefined);
    return run;
  }

  /** A commit a little later (after the current synchronous work), shared by every flush asked for meanwhile. */
  function scheduleCommit(): Promise<void> {
    if (scheduled === undefined) {
      scheduled = new Promise<void>((resolve, reject) => {
        queueMicrotask(() => {
          if (scheduled === undefined) {
            // Taken by a size-triggered commit in the meantime: wait for what is already chained.
            chain.then(() => (failure === undefined ? resolve() : reject(failure)), reject);
            return;
          }
          startCommit().then(resolve, reject);
        });
      });
      // Callers may drop a background flush; its failure still surfaces on the next flush().
      scheduled.catch(() => undefined);
    }
    return scheduled;
  }

  /**
   * After an episode's end is buffered: episodes recorded as their inputs record no transitions, so their records
   * alone fill a commit. Without this, a loop that never yields would buffer every record until its flush (memory
   * without bound), and a writer thread would get nothing to write while the episodes step. Counted at an end, not
   * a begin, so an episode's two records usually share a commit (one row write, not two).
   */
  function ended(): void {
    if (episodes.size >= maxBatch) void startCommit().catch(() => undefined);
    else armTimer();
  }

  function armTimer(): void {
    if (timer !== undefined || maxDelayMs === Infinity) return;
    timer = setTimeout(() => {
      timer = undefined;
      if (buffer.length > 0 || stagedCount > 0 || episodes.size > 0) void startCommit().catch(() => undefined);
    }, maxDelayMs);
    timer.unref?.();
  }

  return {
    begin(episode) {
      guardOpen();
      episodes.set(episode.id, episode);
      armTimer();
    },
    record(transition) {
      guardOpen();
      let count: number;
      // Staged or buffered is decided at the first transition of each commit, and holds until it starts.
      if (staged === undefined && buffer.length === 0 && store.stage !== undefined) staged = store.stage();
      if (staged !== undefined) {
        // The staged call writes the transition now: the text of an observation with a tool's output (the bulk of
        // a step's bytes) is kept for the step's reply (takeCanonical). Without one there is nothing worth reusing.
        const observation = transition.observation;
        if (typeof observation.output === 'object' && observation.output !== null) shareCanonical(observation);
        staged.add(transition);
        count = ++stagedCount;
      } else count = buffer.push(transition);
      if (count >= maxBatch) void startCommit().catch(() => undefined);
      else armTimer();
    },
    end(episode) {
      guardOpen();
      episodes.set(episode.id, episode);
      ended();
    },
    flush() {
      if (failure !== undefined) return Promise.reject(failure);
      if (buffer.length === 0 && stagedCount === 0 && episodes.size === 0) {
        return chain.then(() => {
          if (failure !== undefined) throw failure;
        });
      }
      return scheduleCommit();
    },
    async close() {
      if (closed) return;
      try {
        await this.flush();
      } finally {
        closed = true;
        if (timer !== undefined) clearTimeout(timer);
      }
    },
    get pending() {
      return buffer.length + stagedCount + episodes.size;
    },
    get commits() {
      return commits;
    },
    get failure() {
      return failure;
    },
  };
}
