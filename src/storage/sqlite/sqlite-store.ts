/** The SQLite `Store`: better-sqlite3, WAL, one `BEGIN IMMEDIATE` transaction per write call. */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import type { Database, Statement, Transaction } from 'better-sqlite3';
import {
  canonicalize,
  computeTaskId,
  EnvHarnessError,
  isEnvHarnessError,
  DEFAULT_SQLITE_BUSY_TIMEOUT_MS,
  type Batch,
  type BatchManifest,
  type BatchTaskRow,
  type EpisodeRecord,
  type StagedTransitions,
  type GateName,
  type GenerationLogEntry,
  type JsonValue,
  type LogFilter,
  type ReviewDecision,
  type ReviewItem,
  type ReviewStatus,
  type EpisodeStatus,
  type PoolContent,
  type RecoveryReport,
  type StoreWrite,
  type StoreFault,
  type RunEvent,
  type RunRecord,
  type Snapshot,
  type Split,
  type Store,
  type StoredTask,
  type Task,
  type TaskFilter,
  type TaskIndexEntry,
  type TaskWatermark,
  type TaskStatus,
  type Transition,
} from '../../core/index.js';
import { autocheckpointPages, CHECKPOINT_INTERVAL_MS, CHECKPOINTER_AFTER_WRITES, FALLBACK_AUTOCHECKPOINT_BYTES, INLINE_AUTOCHECKPOINT_BYTES, startCheckpointer, type Checkpointer, type CheckpointReport } from './checkpointer.js';
import { migrate, SCHEMA_VERSION, userVersion } from './schema.js';
import { segmentOf, stageTexts, TRANSITION_SQL, TransitionInserter } from './transitions.js';
import { DEFAULT_WAL_LIMIT_BYTES, fileBytes, truncateMark, WalPressure } from './wal-pressure.js';
import { CallBuffers, serialiseCall, WriterCallBuilder, WriterThread, type JournalReply, type WriterCall, type WriterReply } from './transition-writer.js';
import { readGenerationLog, writeGenerationLog } from './generation-log.js';
import { decodeBatch, JOURNAL_META_PREFIX, replayStepJournal, StepJournal, type JournalBatch, type JournalEntry } from './step-journal.js';
import { batchTaskRows, limitClause as sharedLimitClause, questionMark, reviewFromRow, storedTaskFromRow, taskBody, taskQuery as sharedTaskQuery, type ReviewRow, type TaskRow } from '../rows.js';

/** Milliseconds a write waits for another connection's lock before it fails with STORE_FAILED. */
const DEFAULT_BUSY_TIMEOUT_MS = DEFAULT_SQLITE_BUSY_TIMEOUT_MS;
/** Committed segment keys remembered per store (`episode_keys` rows never change); the map starts over past this many episodes. */
const EPISODE_KEY_CACHE_SIZE = 65_536;
/** The WAL file is truncated back to this size after a checkpoint (bounds disk use after big writes). */
const JOURNAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;
/**
 * Changed pages a write transaction keeps in memory before it spills them to the WAL mid-transaction
 * (`cache_spill`; docs/storage.md, "Settings"). Above the 2 MB page cache a big batch otherwise writes
 * its index pages to the WAL, reads them back and writes them again at commit.
 */
const SPILL_AFTER_BYTES = 64 * 1024 * 1024;
/**
 * The page size of a store this creates (docs/storage.md, "Page size"). A store keeps the page size it was
 * created with: SQLite ignores the pragma once a table exists (and a WAL file cannot change it, even by VACUUM).
 */
export const NEW_STORE_PAGE_SIZE = 4096;

export interface SqliteStoreOptions {
  /**
   * `NORMAL` (default): a call that returned survives a process crash; an OS crash or power loss may roll
   * back the last commits (never corrupts). `FULL`: also survives power loss, at about 4x the cost per commit.
   */
  synchronous?: 'NORMAL' | 'FULL';
  /** How long a write waits for another process's write lock (default 5000 ms). */
  busyTimeoutMs?: number;
  /** Testing aid: makes SQLite return rows of unordered queries in reverse, to flush out order dependence. */
  reverseUnorderedSelects?: boolean;
  /**
   * When WAL checkpoints move to a worker thread (docs/storage.md): after `afterWrites` write transactions
   * (default 256; `Infinity` keeps them inline), every `intervalMs` (default 500). For tests and tuning.
   */
  checkpoints?: { afterWrites?: number; intervalMs?: number };
  /**
   * The bound on the `-wal` file (bytes, default 64 MiB) that writer backpressure keeps while a reader pins
   * the WAL (docs/storage.md, "WAL size"): bulk writes are slowed past 3/8 of it and wait for the reader past
   * 3/4, at most 10 s each. `Infinity` turns backpressure off.
   */
  walLimitBytes?: number;
  /**
   * The wall clock (an ISO timestamp, as the harness's `Clock`) for what the store stamps or paces in real
   * time: the storage fault's `since`, the probe interval and the `store.probe` meta row. Required: the
   * library reads no clock of its own (`systemClock` for wall time; `createHarness` passes its clock).
   */
  now: () => string;
}

/** What the store runs with, for `doctor` and for snapshot metadata. */
export interface SqliteStoreInfo {
  location: string;
  schemaVersion: number;
  journalMode: string;
  synchronous: 'OFF' | 'NORMAL' | 'FULL' | 'EXTRA';
  foreignKeys: boolean;
  busyTimeoutMs: number;
  sqliteVersion: string;
  /** Where WAL checkpoints run: `inline` (in the committing write, SQLite's default) or `background` (a worker thread, once the store is busy). */
  checkpoints: 'inline' | 'background';
  /** The `-wal` file as the checkpointer thread last reported it (absent until its first report): its size, and whether writes are being held back. */
  wal?: { bytes: number; backpressure: boolean };
}

/**
 * `appendTransitions` through the store's writer thread (`SqliteStore.openTransitionWriter`): the texts are
 * made and handed over during the call, and its promise settles once the thread's transaction has committed
 * (or failed). Calls commit in the order they are made. After a call fails, every later call of the same
 * writer fails too and writes nothing (as a recorder needs: nothing recorded after a lost commit).
 */
export interface TransitionWriter extends Pick<Store, 'appendTransitions'> {
  /** Calls are taken in call order and committed in that order (a recorder may hand over without waiting). */
  readonly ordered: true;
  /**
   * A call filled transition by transition (what `createStoreRecorder` uses when offered): each transition is
   * serialised as it is added, and `commit(episodes)` hands the call over as `appendTransitions` would, in
   * the order of the `commit` calls. Absent for a `:memory:` store (its writer commits in-thread).
   */
  readonly stage?: () => StagedTransitions | undefined;
}

/**
 * Opens (creating it and its folder if needed) an EnvHarness database and brings its schema up to date.
 * `location` is a file path or `':memory:'`.
 * @example
 * const store = createSqliteStore('.envharness/envharness.db', { now: clock }); // clock: () => an ISO timestamp
 * await store.saveBatch(batch);
 * await store.close();
 */
export function createSqliteStore(location: string, options: SqliteStoreOptions): SqliteStore {
  return new SqliteStore(location, options);
}

/**
 * A `Store` over one better-sqlite3 connection. Calls run synchronously underneath; every write is one
 * `BEGIN IMMEDIATE` transaction, so a call that returned is committed and a call that threw wrote nothing.
 */
export class SqliteStore implements Store {
  readonly kind = 'sqlite';
  readonly location: string;
  private readonly db: Database;
  private readonly statements = new Map<string, Statement>();
  private readonly plucked = new Map<string, Statement>();
  private readonly rawStatements = new Map<string, Statement>();
  private readonly busyTimeoutMs: number;
  private readonly transaction: Transaction<(fn: () => unknown) => unknown>;
  private readonly synchronous: 'NORMAL' | 'FULL';
  private readonly isMemory: boolean;
  /** Write transactions so far, until the checkpointer starts. */
  private writes = 0;
  private readonly checkpointAfterWrites: number;
  private readonly checkpointIntervalMs: number;
  private checkpointer: Checkpointer | undefined;
  private readonly walLimitBytes: number;
  /** The WAL's size as the checkpointer reports it, once checkpoints run on the worker (undefined before). */
  private wal: WalPressure | undefined;
  /**
   * Episode id -> the key (`episode_keys.seq`) of one of its segments, the latest one used, for keys known
   * to be committed. A key never changes once committed, so a cached one stays right; keys created by a
   * transaction join only after it commits.
   */
  private readonly episodeKeys = new Map<string, SegmentKey>();
  /** The storage failure writes are refused for (docs/storage.md, "Storage errors"). */
  private storeFault: StoreFault | undefined;
  /** When a write may next probe whether the fault has cleared (ms since epoch). */
  private nextProbe = 0;
  /** Multi-row transition INSERTs, prepared on first use. */
  private transitionInserter: TransitionInserter | undefined;
  /** The thread behind `openTransitionWriter`, started by its first call. */
  private writerThread: WriterThread | undefined;
  /** The byte buffers of writer-thread calls, reused once the thread has answered their call. */
  private readonly callBuffers = new CallBuffers();
  private writerStreams = 0;
  /** The step journal this store handed out last (`openStepJournal`): reads through the store wait for its feed. */
  private stepJournal: StepJournal | undefined;
  private readonly now: () => string;

  constructor(location: string, options: SqliteStoreOptions) {
    const isMemory = location === ':memory:';
    this.location = isMemory ? location : resolve(location);
    this.busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
    const synchronous = options.synchronous ?? 'NORMAL';
    this.synchronous = synchronous;
    this.isMemory = isMemory;
    this.checkpointAfterWrites = options.checkpoints?.afterWrites ?? CHECKPOINTER_AFTER_WRITES;
    this.checkpointIntervalMs = options.checkpoints?.intervalMs ?? CHECKPOINT_INTERVAL_MS;
    this.walLimitBytes = options.walLimitBytes ?? DEFAULT_WAL_LIMIT_BYTES;
    if (!(this.walLimitBytes >= 1024 * 1024)) {
      throw new EnvHarnessError('CONFIG_INVALID', `sqlite store: walLimitBytes must be at least 1 MiB (1048576) or Infinity, got ${String(options.walLimitBytes)}`, {
        details: { pointer: '/walLimitBytes' },
      });
    }
    this.now = options.now;
    if (!(this.checkpointAfterWrites >= 1) || !(this.checkpointIntervalMs >= 1 && Number.isFinite(this.checkpointIntervalMs))) {
      throw new EnvHarnessError('CONFIG_INVALID', 'sqlite store: checkpoints.afterWrites and checkpoints.intervalMs must be >= 1', {
        details: { pointer: '/checkpoints' },
      });
    }
    if (synchronous !== 'NORMAL' && synchronous !== 'FULL') {
      throw new EnvHarnessError('CONFIG_INVALID', `sqlite store: synchronous must be 'NORMAL' or 'FULL', got ${String(synchronous)}`, {
        details: { pointer: '/synchronous' },
      });
    }
    if (!Number.isInteger(this.busyTimeoutMs) || this.busyTimeoutMs < 0) {
      throw new EnvHarnessError('CONFIG_INVALID', `sqlite store: busyTimeoutMs must be a non-negative integer, got ${this.busyTimeoutMs}`, {
        details: { pointer: '/busyTimeoutMs' },
      });
    }
    let db: Database | undefined;
    try {
      if (!isMemory) mkdirSync(dirname(this.location), { recursive: true });
      db = new BetterSqlite3(this.location, { timeout: this.busyTimeoutMs });
      // WAL: readers never block the writer; with NORMAL, commits skip fsync (synced at checkpoint).
      // Before anything writes the file's first page: on an existing file, a no-op.
      db.pragma(`page_size = ${NEW_STORE_PAGE_SIZE}`);
      db.pragma('journal_mode = WAL');
      db.pragma(`synchronous = ${synchronous}`);
      db.pragma('foreign_keys = ON');
      db.pragma('trusted_schema = OFF');
      db.pragma(`journal_size_limit = ${JOURNAL_SIZE_LIMIT_BYTES}`);
      const pageSize = db.pragma('page_size', { simple: true }) as number;
      db.pragma(`wal_autocheckpoint = ${autocheckpointPages(INLINE_AUTOCHECKPOINT_BYTES, pageSize)}`);
      db.pragma(`cache_spill = ${Math.ceil(SPILL_AFTER_BYTES / pageSize)}`);
      if (options.reverseUnorderedSelects) db.pragma('reverse_unordered_selects = ON');
      migrate(db);
    } catch (error) {
      db?.close();
      if (error instanceof EnvHarnessError) throw error;
      throw new EnvHarnessError('STORE_FAILED', `sqlite store: cannot open ${this.location}: ${messageOf(error)}`, {
        cause: error,
        details: { operation: 'open', ...sqliteCode(error) },
      });
    }
    this.db = db;
    this.transaction = db.transaction((fn: () => unknown) => fn());
    // Steps a server acknowledged from its journal and SQLite did not get before it stopped (step-journal.ts).
    if (!isMemory) {
      try {
        replayStepJournal(this.location, (id, entries) => this.applyJournalNow(id, entries));
      } catch (error) {
        db.close();
        throw error;
      }
    }
  }

  async close(): Promise<void> {
    if (!this.db.open) return;
    const writer = this.writerThread;
    this.writerThread = undefined;
    // Calls already handed to the writer thread commit first.
    await writer?.close();
    const checkpointer = this.checkpointer;
    this.checkpointer = undefined;
    // The worker's connection goes first, so that this last close checkpoints and removes the WAL.
    await checkpointer?.close();
    if (!this.db.open) return;
    try {
      this.db.pragma('optimize');
    } catch {
      // Advisory only (refreshes planner statistics); never a reason to keep the file open.
    }
    this.statements.clear();
    this.plucked.clear();
    this.rawStatements.clear();
    this.db.close();
  }

  // ---- batches and the generation log ----

  async saveBatch(batch: Batch, options: { review?: readonly string[] } = {}): Promise<void> {
    if (this.wal?.due()) await this.wal.admit();
    this.guard('saveBatch', () => this.write(() => this.writeBatch(batch, reviewSet(batch, options.review))));
  }

  async getBatch(id: string): Promise<BatchManifest | undefined> {
    return this.guard('getBatch', () => {
      const text = this.pluck('SELECT manifest FROM batches WHERE id = ?').get(id) as string | undefined;
      return text === undefined ? undefined : (JSON.parse(text) as BatchManifest);
    });
  }

  async listBatches(): Promise<BatchManifest[]> {
    return this.guard('listBatches', () =>
      (this.pluck('SELECT manifest FROM batches ORDER BY seq').all() as string[]).map((t) => JSON.parse(t) as BatchManifest),
    );
  }

  async listGenerationLog(filter: LogFilter = {}): Promise<GenerationLogEntry[]> {
    return this.guard('listGenerationLog', () => {
      limitClause(filter.limit, []); // validates it
      return readGenerationLog((source) => this.sql(source), filter);
    });
  }

  // ---- tasks ----

  async getTask(id: string): Promise<StoredTask | undefined> {
    return this.guard('getTask', () => {
      const row = this.sql(`SELECT ${TASK_ROW_COLUMNS} FROM tasks WHERE id = ?`).get(id) as TaskRow | undefined;
      return row === undefined ? undefined : storedTaskFromRow(row);
    });
  }

  async findExistingTaskIds(ids: readonly string[]): Promise<Set<string>> {
    return this.guard('findExistingTaskIds', () => {
      if (ids.length === 0) return new Set<string>();
      // One statement for any number of ids: the list goes in as a JSON array and probes the id index.
      const found = this.pluck('SELECT t.id FROM json_each(?) j CROSS JOIN tasks t ON t.id = j.value')
        .all(JSON.stringify(ids)) as string[];
      return new Set(found);
    });
  }

  async listTasks(filter: TaskFilter = {}): Promise<StoredTask[]> {
    return this.guard('listTasks', () => {
      const { sql, params } = taskQuery(TASK_ROW_COLUMNS, filter, this.batchKeyFilter(filter));
      return (this.sql(sql).all(...params) as TaskRow[]).map(storedTaskFromRow);
    });
  }

  async countTasks(filter: TaskFilter = {}): Promise<number> {
    return this.guard('countTasks', () => {
      const { sql, params } = taskQuery('1', filter, this.batchKeyFilter(filter));
      return this.pluck(`SELECT count(*) FROM (${sql})`).get(...params) as number;
    });
  }

  async listTaskIndex(filter: TaskFilter = {}): Promise<TaskIndexEntry[]> {
    return this.guard('listTaskIndex', () => {
      const { sql, params } = taskQuery('id, seq, template, domain, task_type, level, split, status', filter, this.batchKeyFilter(filter));
      // Rows as arrays, then one object literal each: ~20% faster than driver-built objects on 100k rows.
      const rows = this.raw(sql).all(...params) as IndexRow[];
      return rows.map(([id, seq, template, domain, taskType, level, split, status]) => ({
        id,
        seq,
        template,
        domain,
        taskType,
        level,
        split,
        status,
      }));
    });
  }

  async taskWatermark(): Promise<TaskWatermark> {
    return this.guard('taskWatermark', () => this.sql('SELECT rows, changes FROM task_watermark WHERE id = 0').get() as TaskWatermark);
  }

  async putTasks(tasks: readonly StoredTask[]): Promise<void> {
    if (this.wal?.due()) await this.wal.admit();
    this.guard('putTasks', () => {
      if (tasks.length > 0) this.write(() => this.writeTasks(tasks));
    });
  }

  // ---- review ----

  async listReviews(status?: ReviewStatus): Promise<ReviewItem[]> {
    return this.guard('listReviews', () => {
      const base =
        'SELECT r.task_id, r.batch_id, r.status, r.reviewer, r.note, r.decided_at FROM reviews r JOIN tasks t ON t.id = r.task_id';
      const rows = (
        status === undefined
          ? this.sql(`${base} ORDER BY t.seq`).all()
          : this.sql(`${base} WHERE r.status = ? ORDER BY t.seq`).all(status)
      ) as ReviewRow[];
      return rows.map(reviewFromRow);
    });
  }

  async decideReview(decision: ReviewDecision): Promise<ReviewItem> {
    return this.guard('decideReview', () => this.write(() => this.writeDecision(decision)));
  }

  async listReviewAudit(taskId?: string): Promise<ReviewDecision[]> {
    return this.guard('listReviewAudit', () => {
      const base = 'SELECT task_id AS taskId, decision, reviewer, note, at FROM review_audit';
      return (
        taskId === undefined
          ? this.sql(`${base} ORDER BY seq`).all()
          : this.sql(`${base} WHERE task_id = ? ORDER BY seq`).all(taskId)
      ) as ReviewDecision[];
    });
  }

  // ---- episodes and transitions ----

  async saveEpisode(episode: EpisodeRecord): Promise<void> {
    this.guard('saveEpisode', () => this.write(() => this.writeEpisode(episode)));
  }

  async getEpisode(id: string): Promise<EpisodeRecord | undefined> {
    await this.journalFed();
    return this.guard('getEpisode', () => {
      const text = this.pluck('SELECT body FROM episodes WHERE id = ?').get(id) as string | undefined;
      return text === undefined ? undefined : (JSON.parse(text) as EpisodeRecord);
    });
  }

  async listEpisodes(filter: { runId?: string; taskId?: string; limit?: number } = {}): Promise<EpisodeRecord[]> {
    return this.guard('listEpisodes', () => {
      const conditions: string[] = [];
      const params: unknown[] = [];
      if (filter.runId !== undefined) {
        conditions.push('run_id = ?');
        params.push(filter.runId);
      }
      if (filter.taskId !== undefined) {
        // Through episodes_by_task's key, then the id itself (ids may share a key).
        conditions.push(`${TRANSITION_SQL.episodeTaskKey} = ${TRANSITION_SQL.episodeTaskKeyOf} AND task_id = ?`);
        params.push(filter.taskId, filter.taskId, filter.taskId);
      }
      const where = conditions.length === 0 ? '' : ` WHERE ${conditions.join(' AND ')}`;
      const limit = limitClause(filter.limit, params);
      const texts = this.pluck(`SELECT body FROM episodes${where} ORDER BY seq${limit}`)
        .all(...params) as string[];
      return texts.map((t) => JSON.parse(t) as EpisodeRecord);
    });
  }

  /**
   * Appends transitions in one transaction. Episode records in `options.episodes` are saved in the same
   * transaction, so an episode's step counter can never disagree with its transitions after a crash.
   */
  async appendTransitions(transitions: readonly Transition[], options: { episodes?: readonly EpisodeRecord[] } = {}): Promise<void> {
    const episodes = options.episodes ?? [];
    if (this.wal?.due()) await this.wal.admit();
    this.guard('appendTransitions', () => this.appendNow(transitions, episodes));
  }

  /**
   * A call filled transition by transition and committed on this connection (what `createStoreRecorder`
   * uses when given the store): each transition is serialised when it is added, so a recorder holds its
   * text rather than its objects until the commit. `commit(episodes)` is `appendTransitions(added, { episodes })`.
   * Undefined when this store's `appendTransitions` was replaced (a wrapper, a test's fault): recorders then call it.
   */
  stage(): StagedTransitions | undefined {
    if (this.appendTransitions !== SqliteStore.prototype.appendTransitions) return undefined;
    return stageTexts(async (rows, episodes) => {
      if (this.wal?.due()) await this.wal.admit();
      this.guard('appendTransitions', () => {
        if (rows.failure !== undefined) throw rows.failure;
        this.appendRows({ count: rows.texts.length, episodeId: (i) => rows.ids[i]!, step: (i) => rows.steps[i]!, body: (i) => rows.texts[i]! }, episodes);
      });
    });
  }

  /** appendTransitions on this connection, now (inside guard). */
  private appendNow(transitions: readonly Transition[], episodes: readonly EpisodeRecord[]): void {
    this.appendRows({ count: transitions.length, episodeId: (i) => transitions[i]!.episodeId, step: (i) => transitions[i]!.step, body: (i) => canonicalize(transitions[i]!) }, episodes);
  }

  /** Transition rows (bodies made on demand) and episode records in one transaction, now (inside guard). */
  private appendRows(rows: TransitionRows, episodes: readonly EpisodeRecord[]): void {
    if (rows.count === 0 && episodes.length === 0) return;
    const created: CreatedKeys = new Map();
    this.write(() => this.writeTransitions(rows, episodes, created));
    // Committed now: the keys this call created can be reused without a lookup (an episode's last segment).
    for (const [id, segments] of created) {
      let last: SegmentKey | undefined;
      for (const [segment, key] of segments) if (last === undefined || segment > last.segment) last = { segment, key };
      this.rememberEpisodeKey(id, last!);
    }
  }

  /** The error of a writer-thread call that did not commit. */
  private replyError(error: NonNullable<WriterReply['error']>, count: number, transitionAt: (index: number) => { episodeId: string; step: number }): EnvHarnessError {
    if (error.kind === 'conflict') {
      const { episodeId, step } = transitionAt(error.index);
      const message = `episode ${episodeId} already has step ${step}; none of the ${count} transitions of this call were written`;
      return conflict('appendTransitions', message, { conflict: 'duplicate_step', episodeId, step });
    }
    if (error.kind === 'earlier') return this.earlierFailure(error.message);
    if (isIoFailure(error.code)) this.setFault('write', error.code, error.message);
    return new EnvHarnessError('STORE_FAILED', `sqlite store ${this.location}: appendTransitions failed: ${error.message}`, {
      details: { operation: 'appendTransitions', sqliteCode: error.code },
    });
  }

  /** What a writer call that could not reach the thread (or whose thread died) rejects with. */
  private writerFailure(error: unknown): EnvHarnessError {
    return new EnvHarnessError('STORE_FAILED', `sqlite store ${this.location}: appendTransitions failed: the writer thread: ${messageOf(error)}`, {
      cause: error,
      details: { operation: 'appendTransitions' },
    });
  }

  /** What every call after a writer's failed one rejects with: the failure itself, or the thread's word for it. */
  private earlierFailure(first: EnvHarnessError | string): EnvHarnessError {
    const message = typeof first === 'string' ? first : first.message;
    return new EnvHarnessError('STORE_FAILED', `sqlite store ${this.location}: appendTransitions refused: an earlier call of this writer failed (${message}); nothing after it is written`, {
      ...(typeof first === 'string' ? {} : { cause: first }),
      details: { operation: 'appendTransitions' },
    });
  }

  /**
   * A writer whose `appendTransitions` commits on a worker thread with its own connection, so that the
   * caller's thread pays only serialising the call and handing it over (docs/storage.md, "Writer thread").
   * The same rows, checks and errors as `appendTransitions` (STORE_CONFLICT for a duplicate step, STORE_FAILED
   * with the storage fault rules); a promise that resolved means committed, as there. One writer per
   * recorder: a failed call makes every later call of that writer fail. `close()` commits what was handed
   * over first. A `:memory:` store has no second connection: its writer commits during the call.
   * @example
   * const recorder = createStoreRecorder(store.openTransitionWriter());
   */
  openTransitionWriter(): TransitionWriter {
    const stream = this.writerStreams++;
    let failed: EnvHarnessError | undefined;
    /** The calls waiting for WAL backpressure, so that later ones queue behind them. */
    let gate: Promise<unknown> | undefined;
    const sticky = (error: unknown): EnvHarnessError => {
      const wrapped = error instanceof EnvHarnessError ? error : this.writerFailure(error);
      failed ??= wrapped;
      return wrapped;
    };
    /**
     * Hands one call to the thread: `make` serialises it now (in the caller's turn, as the writer promises);
     * `count` and `transitionAt` name a duplicate step in the error.
     */
    const submit = (make: () => WriterCall, count: number, transitionAt: (index: number) => { episodeId: string; step: number }): Promise<void> => {
      let call: Parameters<WriterThread['post']>;
      try {
        call = this.guard('appendTransitions', () => {
          this.refuseWhileFaulted();
          return [stream, make()] as Parameters<WriterThread['post']>;
        });
      } catch (error) {
        return Promise.reject(sticky(error));
      }
      const send = (): Promise<void> => {
        let thread = this.writerThread;
        if (thread === undefined || thread.failure !== undefined) {
          if (!this.db.open) return Promise.reject(sticky(new EnvHarnessError('STORE_FAILED', `sqlite store ${this.location}: appendTransitions called after close()`, { details: { operation: 'appendTransitions' } })));
          thread = this.writerThread = new WriterThread(this.location, { synchronous: this.synchronous, busyTimeoutMs: this.busyTimeoutMs, autocheckpointBytes: this.autocheckpointBytes() });
        }
        let reply: Promise<WriterReply>;
        try {
          reply = thread.post(...call);
        } catch (error) {
          return Promise.reject(sticky(error));
        }
        return reply.then(
          (answer) => {
            if (answer.error === undefined) {
              this.countWrite(false);
              return;
            }
            throw sticky(this.replyError(answer.error, count, transitionAt));
          },
          (error) => {
            throw sticky(error);
          },
        );
      };
      // Asked once per call (asking counts the write): now when no call is waiting, else once those ahead have gone.
      const due = gate === undefined ? this.wal?.due() === true : undefined;
      if (due === false) return send();
      const run = (gate ?? Promise.resolve()).then(() => ((due ?? this.wal?.due()) ? this.wal?.admit() : undefined)).then(send);
      const mine = run.catch(() => undefined);
      gate = mine;
      void mine.then(() => {
        if (gate === mine) gate = undefined;
      });
      return run;
    };
    const appendTransitions = (transitions: readonly Transition[], options: { episodes?: readonly EpisodeRecord[] } = {}): Promise<void> => {
      const episodes = options.episodes ?? [];
      if (failed !== undefined) return Promise.reject(this.earlierFailure(failed));
      if (transitions.length === 0 && episodes.length === 0) return Promise.resolve();
      if (this.isMemory) {
        try {
          this.guard('appendTransitions', () => this.appendNow(transitions, episodes));
          return Promise.resolve();
        } catch (error) {
          return Promise.reject(sticky(error));
        }
      }
      return submit(() => serialiseCall(transitions, episodes, this.callBuffers), transitions.length, (index) => transitions[index]!);
    };
    if (this.isMemory) return { ordered: true, appendTransitions };
    const stage = (): StagedTransitions | undefined => {
      // A replaced appendTransitions (a wrapper, a test's fault) is never bypassed.
      if (writer.appendTransitions !== appendTransitions) return undefined;
      const builder = new WriterCallBuilder(this.callBuffers);
      return {
        add: (transition) => builder.add(transition),
        commit: (episodes) => {
          if (failed !== undefined) return Promise.reject(this.earlierFailure(failed));
          if (builder.size === 0 && episodes.length === 0 && builder.failure === undefined) return Promise.resolve();
          return submit(() => builder.finish(episodes), builder.size, (index) => builder.transition(index));
        },
      };
    };
    const writer: TransitionWriter = { ordered: true, appendTransitions, stage };
    return writer;
  }

  // ---- the step journal (step-journal.ts) ----

  /**
   * The step journal a server writes each commit group to before answering (docs/storage.md, "Step journal"),
   * or undefined: for `:memory:`, with `synchronous=FULL` (commit before answer keeps power-loss durability),
   * when `appendTransitions` was replaced (a wrapper is never bypassed), or when another live process holds it.
   */
  openStepJournal(): StepJournal | undefined {
    if (this.isMemory || this.synchronous !== 'NORMAL' || this.appendTransitions !== SqliteStore.prototype.appendTransitions || !this.db.open) return undefined;
    const journal = StepJournal.open(this.location, (id, entries) => this.applyJournalNow(id, entries), (id, batch) => this.feedJournal(id, batch));
    // The thread that feeds it starts now (its connection open before the first feed, `FEED_MS` after the first step).
    if (journal !== undefined) {
      this.feedThread();
      this.stepJournal = journal;
    }
    return journal;
  }

  /**
   * Waits until SQLite holds what this store's own step journal acknowledged, so that a read through this
   * store sees every answered step (as when the feed ran on this thread); if the feed fails, reads what
   * SQLite has.
   */
  private async journalFed(): Promise<void> {
    const journal = this.stepJournal;
    if (journal !== undefined && journal.unfed > 0) await journal.drain().catch(() => undefined);
  }

  /** The writer thread (started if need be), or undefined where no worker thread can start. */
  private feedThread(): WriterThread | undefined {
    let thread = this.writerThread;
    if (thread === undefined || thread.failure !== undefined) {
      try {
        thread = this.writerThread = new WriterThread(this.location, { synchronous: this.synchronous, busyTimeoutMs: this.busyTimeoutMs, autocheckpointBytes: this.autocheckpointBytes() });
      } catch {
        return undefined;
      }
    }
    return thread;
  }

  /**
   * The journal's feed: applied by the writer thread (the stepping thread only copies the records as written
   * and hands them over), with the same idempotent apply as `applyJournalNow` and `submit`'s admission, fault
   * and error rules; resolves once committed. On one connection when no thread can be started.
   */
  private async feedJournal(id: string, batch: JournalBatch): Promise<number> {
    if (this.wal?.due()) await this.wal.admit();
    // Refused after close() and while the store reports a fault, as every write.
    this.guard('applyJournal', () => this.refuseWhileFaulted());
    const thread = this.feedThread();
    // No worker threads here: the store's own connection applies it.
    if (thread === undefined) return this.applyJournalNow(id, decodeBatch(batch.bytes));
    let answer: JournalReply;
    try {
      answer = await thread.postJournal(`${JOURNAL_META_PREFIX}${id}`, batch.bytes);
    } catch (error) {
      throw new EnvHarnessError('STORE_FAILED', `sqlite store ${this.location}: applyJournal failed: the writer thread: ${messageOf(error)}`, { cause: error, details: { operation: 'applyJournal' } });
    }
    if (answer.error === undefined) {
      this.countWrite(false);
      return answer.applied;
    }
    const error = answer.error;
    if (error.kind === 'conflict') throw this.journalConflict(error.episodeId, error.step);
    if (isIoFailure(error.code)) this.setFault('write', error.code, error.message);
    throw new EnvHarnessError('STORE_FAILED', `sqlite store ${this.location}: applyJournal failed: ${error.message}`, { details: { operation: 'applyJournal', sqliteCode: error.code } });
  }

  /** A journal entry holds a step SQLite already has: nothing of that feed (or apply at open) was written. */
  private journalConflict(episodeId: string, step: number): EnvHarnessError {
    return conflict('applyJournal', `sqlite store ${this.location}: journal entry holds step ${step} of episode ${episodeId}, which SQLite already has; nothing of the feed was written`, { conflict: 'duplicate_step', episodeId, step });
  }

  /**
   * Applies the entries of journal `id` this store does not hold yet and records the last one in `meta`, in
   * one transaction: an entry is applied once, whoever applies it (the server's feed, or any process opening
   * the store). Returns how many entries it applied.
   */
  private applyJournalNow(id: string, entries: readonly JournalEntry[]): number {
    return this.guard('applyJournal', () => {
      const key = `${JOURNAL_META_PREFIX}${id}`;
      const created: CreatedKeys = new Map();
      let applied = 0;
      this.write(() => {
        const text = this.pluck('SELECT value FROM meta WHERE key = ?').get(key) as string | undefined;
        const done = text === undefined ? 0 : (JSON.parse(text) as number);
        let last = done;
        for (const e of entries) {
          if (e.seq <= last) continue;
          try {
            this.writeTransitions({ count: e.ids.length, episodeId: (i) => e.ids[i]!, step: (i) => e.steps[i]!, body: (i) => e.bodies[i]! }, e.episodes, created);
          } catch (error) {
            // The whole apply rolls back, not one call's transitions: said as the writer thread's feed says it.
            const details = isEnvHarnessError(error, 'STORE_CONFLICT') ? (error.details as { episodeId?: unknown; step?: unknown } | undefined) : undefined;
            if (typeof details?.episodeId === 'string' && typeof details.step === 'number') throw this.journalConflict(details.episodeId, details.step);
            throw error;
          }
          last = e.seq;
          applied++;
        }
        if (last > done) this.writeMeta(key, last);
      });
      for (const [episodeId, segments] of created) {
        let latest: SegmentKey | undefined;
        for (const [segment, k] of segments) if (latest === undefined || segment > latest.segment) latest = { segment, key: k };
        this.rememberEpisodeKey(episodeId, latest!);
      }
      return applied;
    });
  }

  async listTransitions(episodeId: string): Promise<Transition[]> {
    await this.journalFed();
    return this.guard('listTransitions', () => {
      const texts = this.pluck(
        // Segments in order and steps in order within each: step order, without a sort.
        'SELECT t.body FROM episode_keys k JOIN transitions t ON t.episode_seq = k.seq WHERE k.id = ? ORDER BY k.segment, t.step',
      ).all(episodeId) as string[];
      return texts.map((t) => JSON.parse(t) as Transition);
    });
  }

  // ---- snapshots ----

  async saveSnapshot(snapshot: Snapshot): Promise<void> {
    this.guard('saveSnapshot', () => this.write(() => this.writeSnapshot(snapshot)));
  }

  async getSnapshot(id: string): Promise<Snapshot | undefined> {
    return this.guard('getSnapshot', () => {
      const text = this.pluck('SELECT body FROM snapshots WHERE id = ?').get(id) as string | undefined;
      return text === undefined ? undefined : (JSON.parse(text) as Snapshot);
    });
  }

  async listSnapshots(): Promise<Snapshot[]> {
    return this.guard('listSnapshots', () =>
      (this.pluck('SELECT body FROM snapshots ORDER BY seq').all() as string[]).map((t) => JSON.parse(t) as Snapshot),
    );
  }

  // ---- runs ----

  async saveRun(run: RunRecord): Promise<void> {
    this.guard('saveRun', () => this.write(() => this.writeRun(run)));
  }

  async getRun(id: string): Promise<RunRecord | undefined> {
    return this.guard('getRun', () => {
      const text = this.pluck('SELECT body FROM runs WHERE id = ?').get(id) as string | undefined;
      return text === undefined ? undefined : (JSON.parse(text) as RunRecord);
    });
  }

  async listRuns(): Promise<RunRecord[]> {
    return this.guard('listRuns', () =>
      (this.pluck('SELECT body FROM runs ORDER BY seq').all() as string[]).map((t) => JSON.parse(t) as RunRecord),
    );
  }

  async appendRunEvents(events: readonly RunEvent[]): Promise<void> {
    this.guard('appendRunEvents', () => {
      if (events.length > 0) this.write(() => this.writeRunEvents(events));
    });
  }

  async listRunEvents(runId: string, kind?: string): Promise<RunEvent[]> {
    return this.guard('listRunEvents', () => {
      const rows = (
        kind === undefined
          ? this.sql('SELECT run_id, seq, kind, data FROM run_events WHERE run_id = ? ORDER BY seq').all(runId)
          : this.sql('SELECT run_id, seq, kind, data FROM run_events WHERE run_id = ? AND kind = ? ORDER BY seq').all(runId, kind)
      ) as RunEventRow[];
      return rows.map((r) => ({ runId: r.run_id, seq: r.seq, kind: r.kind, data: JSON.parse(r.data) as JsonValue }));
    });
  }

  // ---- meta ----

  async getMeta(key: string): Promise<JsonValue | undefined> {
    return this.guard('getMeta', () => {
      const text = this.pluck('SELECT value FROM meta WHERE key = ?').get(key) as string | undefined;
      return text === undefined ? undefined : (JSON.parse(text) as JsonValue);
    });
  }

  async setMeta(key: string, value: JsonValue): Promise<void> {
    this.guard('setMeta', () => this.write(() => this.writeMeta(key, value)));
  }

  // ---- multi-step writes, consistent reads, repair ----

  async applyWrites(writes: readonly StoreWrite[]): Promise<void> {
    if (this.wal?.due()) await this.wal.admit();
    this.guard('applyWrites', () => {
      if (writes.length === 0) return;
      this.write(() => {
        writes.forEach((w, i) => {
          try {
            this.applyWrite(w);
          } catch (error) {
            throw withWriteIndex(error, i, w.op);
          }
        });
      });
    });
  }

  async readPool(): Promise<PoolContent> {
    return this.guard('readPool', () =>
      // One read transaction (WAL snapshot): every part sees the same commit.
      this.db.transaction(() => {
        const batches = (this.pluck('SELECT manifest FROM batches ORDER BY seq').all() as string[]).map((t) => JSON.parse(t) as BatchManifest);
        const log = readGenerationLog((source) => this.sql(source), {});
        const tasks = (this.sql(`SELECT ${TASK_ROW_COLUMNS} FROM tasks ORDER BY seq`).all() as TaskRow[]).map(storedTaskFromRow);
        const reviews = (
          this.sql(
            'SELECT r.task_id, r.batch_id, r.status, r.reviewer, r.note, r.decided_at FROM reviews r JOIN tasks t ON t.id = r.task_id ORDER BY t.seq',
          ).all() as ReviewRow[]
        ).map(reviewFromRow);
        const audit = this.sql('SELECT task_id AS taskId, decision, reviewer, note, at FROM review_audit ORDER BY seq').all() as ReviewDecision[];
        return { batches, log, tasks, reviews, audit };
      }).deferred(),
    );
  }

  async recover(options: { isLive: (run: RunRecord) => boolean; now: string }): Promise<RecoveryReport> {
    return this.guard('recover', () => {
      // Most opens find nothing: look first, and take the write lock only when there is something to repair.
      const found = this.recoverIn(options, false);
      if (found.episodes.length === 0 && found.runs.length === 0) return found;
      return this.write(() => this.recoverIn(options, true));
    });
  }

  /** Finds (and with `repair`, fixes) what `recover` repairs. */
  private recoverIn(options: { isLive: (run: RunRecord) => boolean; now: string }, repair: boolean): RecoveryReport {
    {
      {
        const report: RecoveryReport = { episodes: [], runs: [] };
        // Only a `running` record can lag (the recorder writes the final record with the last transitions);
        // each count runs over the episode's segment keys (the (id, segment) index) and probes the
        // (episode_seq, step) index per key. An episode with no transitions counts 0 and cannot lag.
        const lagging = this.sql(
          'SELECT body, n, last FROM (SELECT e.body AS body, e.steps AS steps, ' +
            '(SELECT count(*) FROM episode_keys k JOIN transitions t ON t.episode_seq = k.seq WHERE k.id = e.id) AS n, ' +
            '(SELECT max(t.step) FROM episode_keys k JOIN transitions t ON t.episode_seq = k.seq WHERE k.id = e.id) AS last, e.seq AS seq ' +
            "FROM episodes e WHERE e.status = 'running') WHERE n > steps ORDER BY seq",
        ).all() as Array<{ body: string; n: number; last: number }>;
        for (const row of lagging) {
          const episode = JSON.parse(row.body) as EpisodeRecord;
          const lastText = this.pluck(
            'SELECT t.body FROM episode_keys k JOIN transitions t ON t.episode_seq = k.seq WHERE k.id = ? AND t.step = ?',
          ).get(episode.id, row.last) as string;
          const last = JSON.parse(lastText) as Transition;
          // Summed in step order, as the episode summed them.
          const rewards = this.pluck(
            "SELECT json_extract(t.body, '$.reward') FROM episode_keys k JOIN transitions t ON t.episode_seq = k.seq WHERE k.id = ? ORDER BY k.segment, t.step",
          ).all(episode.id) as number[];
          let reward = 0;
          for (const r of rewards) reward += r;
          const status: EpisodeStatus = last.terminated ? 'terminated' : last.truncated ? 'truncated' : episode.status;
          report.episodes.push({ id: episode.id, steps: { from: episode.steps, to: row.n }, status: { from: episode.status, to: status } });
          const ended = status !== episode.status
            ? {
                outcome: last.info.outcome,
                excludeFromStats: last.info.excludeFromStats === true,
                ...(last.info.endReason === undefined ? {} : { endReason: last.info.endReason }),
              }
            : {};
          if (repair) this.writeEpisode({ ...episode, ...ended, steps: row.n, reward, status, updatedAt: options.now });
        }
        const running = (this.pluck("SELECT body FROM runs WHERE status = 'running' ORDER BY seq").all() as string[]).map(
          (t) => JSON.parse(t) as RunRecord,
        );
        for (const run of running) {
          if (options.isLive(run)) continue;
          const last = this.sql('SELECT seq, kind FROM run_events WHERE run_id = ? ORDER BY seq DESC LIMIT 1').get(run.id) as
            | { seq: number; kind: string }
            | undefined;
          const interrupted = { lastEventSeq: last?.seq ?? -1, ...(last ? { lastEventKind: last.kind } : {}), at: options.now };
          report.runs.push({ id: run.id, lastEventSeq: interrupted.lastEventSeq, ...(last ? { lastEventKind: last.kind } : {}) });
          if (repair) this.writeRun({ ...run, status: 'interrupted', interrupted, updatedAt: options.now });
        }
        return report;
      }
    }
  }

  /** One write of applyWrites (inside its transaction). */
  private applyWrite(w: StoreWrite): void {
    switch (w.op) {
      case 'saveBatch':
        return this.writeBatch(w.batch, reviewSet(w.batch, w.review));
      case 'putTasks':
        return this.writeTasks(w.tasks);
      case 'decideReview':
        this.writeDecision(w.decision);
        return;
      case 'saveEpisode':
        return this.writeEpisode(w.episode);
      case 'saveSnapshot':
        return this.writeSnapshot(w.snapshot);
      case 'saveRun':
        return this.writeRun(w.run);
      case 'appendRunEvents':
        return this.writeRunEvents(w.events);
      case 'setMeta':
        return this.writeMeta(w.key, w.value);
      case 'discardEpisodes':
        return this.discardEpisodes(w.ids);
      case 'discardRunEvents':
        this.sql('DELETE FROM run_events WHERE run_id = ? AND seq >= ?').run(w.runId, w.fromSeq);
        return;
      default: {
        const op = (w as { op?: unknown }).op;
        throw new EnvHarnessError('PARAMS_INVALID', `applyWrites: unknown write op ${JSON.stringify(op)}`, { details: { pointer: '/op' } });
      }
    }
  }

  private writeSnapshot(snapshot: Snapshot): void {
    this.sql(
      'INSERT INTO snapshots (id, created_at, body) VALUES (?, ?, ?) ' +
        'ON CONFLICT (id) DO UPDATE SET created_at = excluded.created_at, body = excluded.body',
    ).run(snapshot.id, snapshot.createdAt, canonicalize(snapshot));
  }

  private writeRun(run: RunRecord): void {
    this.sql(
      'INSERT INTO runs (id, kind, status, snapshot_start, created_at, updated_at, body) VALUES (?, ?, ?, ?, ?, ?, ?) ' +
        'ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, status = excluded.status, ' +
        'snapshot_start = excluded.snapshot_start, created_at = excluded.created_at, ' +
        'updated_at = excluded.updated_at, body = excluded.body',
    ).run(run.id, run.kind, run.status, run.snapshotStart, run.createdAt, run.updatedAt, canonicalize(run));
  }

  /**
   * Deletes episode records and their transitions. The `episode_keys` rows stay: a key never changes once
   * committed (the key cache relies on it), and a rerun episode of the same id appends under its old key.
   */
  private discardEpisodes(ids: readonly string[]): void {
    if (ids.length === 0) return;
    const list = JSON.stringify(ids);
    this.sql('DELETE FROM transitions WHERE episode_seq IN (SELECT k.seq FROM json_each(?) j JOIN episode_keys k ON k.id = j.value)').run(list);
    this.sql('DELETE FROM episodes WHERE id IN (SELECT value FROM json_each(?))').run(list);
  }

  private writeMeta(key: string, value: JsonValue): void {
    this.sql('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(key, canonicalize(value));
  }

  // ---- SQLite-only operations ----

  /** The settings the connection runs with. */
  async getInfo(): Promise<SqliteStoreInfo> {
    return this.guard('getInfo', () => ({
      location: this.location,
      schemaVersion: userVersion(this.db),
      journalMode: this.db.pragma('journal_mode', { simple: true }) as string,
      synchronous: SYNCHRONOUS_NAMES[this.db.pragma('synchronous', { simple: true }) as number] ?? 'NORMAL',
      foreignKeys: this.db.pragma('foreign_keys', { simple: true }) === 1,
      busyTimeoutMs: this.busyTimeoutMs,
      sqliteVersion: this.pluck('SELECT sqlite_version()').get() as string,
      checkpoints: this.checkpointer === undefined ? 'inline' : 'background',
      ...(this.wal?.reported === true ? { wal: this.wal.state() } : {}),
    }));
  }

  /** Runs `PRAGMA integrity_check` and `foreign_key_check`; returns the problems found (empty when sound). */
  async checkIntegrity(): Promise<string[]> {
    return this.guard('checkIntegrity', () => {
      const integrity = (this.db.pragma('integrity_check') as Array<{ integrity_check: string }>).map((r) => r.integrity_check);
      const problems = integrity.length === 1 && integrity[0] === 'ok' ? [] : integrity;
      for (const fk of this.db.pragma('foreign_key_check') as Array<{ table: string; rowid: number; parent: string }>) {
        problems.push(`foreign key: ${fk.table} row ${fk.rowid} refers to a missing ${fk.parent} row`);
      }
      return problems;
    });
  }

  // ---- transaction bodies (run inside BEGIN IMMEDIATE) ----

  private writeBatch(batch: Batch, review: ReadonlySet<string>): void {
    const { manifest } = batch;
    const manifestText = canonicalize(manifest);
    const existing = this.pluck('SELECT manifest FROM batches WHERE id = ?').get(manifest.id) as string | undefined;
    if (existing !== undefined) {
      if (existing === manifestText) return; // the same batch again: already saved whole, by atomicity
      throw conflict('saveBatch', `batch ${manifest.id} is already stored with a different manifest`, {
        conflict: 'batch_exists',
        batchId: manifest.id,
      });
    }
    const batchSeq = Number(
      this.sql('INSERT INTO batches (id, split, manifest) VALUES (?, ?, ?)').run(manifest.id, manifest.split, manifestText).lastInsertRowid,
    );
    const insertReview = this.sql("INSERT INTO reviews (task_id, batch_id, status) VALUES (?, ?, 'pending')");
    const batchKey = this.batchKeyOf(manifest.id);
    const rows = batchTaskRows(batch);
    const taskSeqs: number[] = new Array(rows.length);
    // Task rows go in TASK_ROWS_PER_INSERT at a time (one statement step per group instead of per row: a
    // fifth less CPU per row). The group insert is OR ROLLBACK: a statement that can only fail whole needs no
    // statement journal (written per group, to a temp file: a fifth of the row cost); a failed group has
    // rolled the whole transaction back, so nothing of the batch stays, and the error names the task.
    // The batch's key and split, and its template columns when every row has the same, are literals of the
    // batch's own statement (prepared per batch, not kept): bound once, not once per row.
    // (A batch whose split no literal can hold has its rows inserted one by one, below.)
    const shared = rows.length >= TASK_ROWS_PER_INSERT ? sharedTemplateColumns(rows) : undefined;
    const source = rows.length >= TASK_ROWS_PER_INSERT ? taskGroupInsert(manifest.split, batchKey, shared) : undefined;
    const group = source !== undefined ? this.db.prepare(source) : undefined;
    const columns = shared !== undefined ? 4 : 7;
    const args: unknown[] = new Array(TASK_ROWS_PER_INSERT * columns);
    let k = 0;
    for (; group !== undefined && k + TASK_ROWS_PER_INSERT <= rows.length; k += TASK_ROWS_PER_INSERT) {
      for (let j = 0; j < TASK_ROWS_PER_INSERT; j++) {
        const row = rows[k + j]!;
        let at = j * columns;
        args[at++] = row.id;
        if (shared === undefined) {
          args[at++] = row.template;
          args[at++] = row.domain;
          args[at++] = row.taskType;
        }
        args[at++] = row.level;
        args[at++] = review.has(row.id) ? 'pending_review' : 'active';
        args[at] = row.body;
      }
      let last: number;
      try {
        last = Number(group.run(args).lastInsertRowid);
      } catch (error) {
        throw this.groupFailure(manifest, rows, k + TASK_ROWS_PER_INSERT, error);
      }
      // The rows of one statement take consecutive seqs (each new rowid is the largest so far plus one).
      for (let j = 0; j < TASK_ROWS_PER_INSERT; j++) {
        taskSeqs[k + j] = last - (TASK_ROWS_PER_INSERT - 1 - j);
        if (args[j * columns + columns - 2] === 'pending_review') insertReview.run(rows[k + j]!.id, manifest.id);
      }
    }
    this.insertTaskRows(manifest, batchKey, rows, k, rows.length, review, taskSeqs);
    writeGenerationLog((source) => this.sql(source), { seq: batchSeq, id: manifest.id }, batch.log, rows, taskSeqs);
    this.addTaskRows(rows.length);
  }

  /**
   * The error of a group insert that failed after rows [0, end) were tried (its transaction is rolled back
   * already): a unique id becomes the batch's conflict naming the first task that is stored or repeated.
   */
  private groupFailure(manifest: BatchManifest, rows: readonly BatchTaskRow[], end: number, error: unknown): unknown {
    if (!isUniqueViolation(error)) return error;
    const stored = this.pluck('SELECT 1 FROM tasks WHERE id = ?');
    const seen = new Set<string>();
    for (let k = 0; k < end; k++) {
      const id = rows[k]!.id;
      if (seen.has(id) || stored.get(id) !== undefined) {
        return conflict('saveBatch', `batch ${manifest.id}: task ${id} is already stored; nothing of the batch was saved`, {
          conflict: 'task_exists',
          batchId: manifest.id,
          taskId: id,
        });
      }
      seen.add(id);
    }
    return error;
  }

  /** Task rows [from, to) of a batch, one statement each: a unique id is reported as the batch's conflict. */
  private insertTaskRows(manifest: BatchManifest, batchKey: number, rows: readonly BatchTaskRow[], from: number, to: number, review: ReadonlySet<string>, taskSeqs: number[]): void {
    const insertTask = this.sql(TASK_ROW_INSERT);
    const insertReview = this.sql("INSERT INTO reviews (task_id, batch_id, status) VALUES (?, ?, 'pending')");
    for (let k = from; k < to; k++) {
      const row = rows[k]!;
      const status: TaskStatus = review.has(row.id) ? 'pending_review' : 'active';
      try {
        taskSeqs[k] = Number(insertTask.run(row.id, row.template, row.domain, row.taskType, row.level, manifest.split, status, batchKey, row.body).lastInsertRowid);
      } catch (error) {
        if (isUniqueViolation(error)) {
          throw conflict('saveBatch', `batch ${manifest.id}: task ${row.id} is already stored; nothing of the batch was saved`, {
            conflict: 'task_exists',
            batchId: manifest.id,
            taskId: row.id,
          });
        }
        throw error;
      }
      if (status === 'pending_review') insertReview.run(row.id, manifest.id);
    }
  }

  /** The `batch_keys` key of a batch id, given on its first use (in the caller's write transaction; schema.ts, version 7). */
  private batchKeyOf(batchId: string): number {
    const key = this.pluck('SELECT seq FROM batch_keys WHERE id = ?').get(batchId) as number | undefined;
    return key ?? Number(this.sql('INSERT INTO batch_keys (id) VALUES (?)').run(batchId).lastInsertRowid);
  }

  /** The key a task filter's batch id stands for: undefined without one, 0 (no key) for a batch no task names. */
  private batchKeyFilter(filter: TaskFilter): number | undefined {
    if (filter.batchId === undefined) return undefined;
    return (this.pluck('SELECT seq FROM batch_keys WHERE id = ?').get(filter.batchId) as number | undefined) ?? 0;
  }

  /** Counts inserted task rows in the task watermark (in the inserting transaction; see schema.ts, version 5). */
  private addTaskRows(n: number): void {
    if (n > 0) this.sql('UPDATE task_watermark SET rows = rows + ? WHERE id = 0').run(n);
  }

  private writeTasks(tasks: readonly StoredTask[]): void {
    const byId = this.sql(`SELECT ${TASK_ROW_COLUMNS} FROM tasks WHERE id = ?`);
    const bySeq = this.pluck('SELECT id FROM tasks WHERE seq = ?');
    const insert = this.sql(
      'INSERT INTO tasks (seq, id, template, domain, task_type, level, split, status, batch_key, body) ' +
        'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    const keys = new Map<string, number>();
    const insertReview = this.sql("INSERT OR IGNORE INTO reviews (task_id, batch_id, status) VALUES (?, ?, 'pending')");
    let inserted = 0;
    tasks.forEach((task, i) => {
      const expected = computeTaskId(task);
      if (expected !== task.id) {
        const message = `putTasks: task ${task.id} does not match its content (its content hashes to ${expected})`;
        throw new EnvHarnessError('IMPORT_INVALID', message, {
          details: { pointer: `/${i}/id`, taskId: task.id, expected },
        });
      }
      const body = taskBody(task);
      const row = byId.get(task.id) as TaskRow | undefined;
      if (row !== undefined) {
        const same =
          row.seq === task.seq &&
          row.split === task.split &&
          row.status === task.status &&
          row.batch_id === task.batchId &&
          row.body === body;
        if (same) return;
        const message = `putTasks: task ${task.id} is already stored with a different seq, split, status, batch or content`;
        throw new EnvHarnessError('IMPORT_INVALID', message, {
          details: {
            pointer: `/${i}`,
            taskId: task.id,
            stored: { seq: row.seq, split: row.split, status: row.status, batchId: row.batch_id },
          },
        });
      }
      const holder = bySeq.get(task.seq) as string | undefined;
      if (holder !== undefined) {
        throw new EnvHarnessError('IMPORT_INVALID', `putTasks: seq ${task.seq} of task ${task.id} is already taken by task ${holder}`, {
          details: { pointer: `/${i}/seq`, taskId: task.id, seq: task.seq, holder },
        });
      }
      let key = keys.get(task.batchId);
      if (key === undefined) {
        key = this.batchKeyOf(task.batchId);
        keys.set(task.batchId, key);
      }
      insert.run(task.seq, task.id, task.template, task.domain, task.taskType, task.level, task.split, task.status, key, body);
      inserted++;
      // Keeps the invariant "every pending_review task has a review item", so the task can be decided.
      if (task.status === 'pending_review') insertReview.run(task.id, task.batchId);
    });
    this.addTaskRows(inserted);
  }

  private writeDecision(decision: ReviewDecision): ReviewItem {
    const row = this.pluck('SELECT batch_id FROM reviews WHERE task_id = ?').get(decision.taskId) as string | undefined;
    if (row === undefined) {
      const message = `task ${decision.taskId} is not in the review queue; \`envharness review\` lists what is pending`;
      throw new EnvHarnessError('REVIEW_NOT_FOUND', message, {
        details: { taskId: decision.taskId },
      });
    }
    this.sql('INSERT INTO review_audit (task_id, decision, reviewer, note, at) VALUES (?, ?, ?, ?, ?)').run(
      decision.taskId,
      decision.decision,
      decision.reviewer,
      decision.note,
      decision.at,
    );
    this.sql('UPDATE reviews SET status = ?, reviewer = ?, note = ?, decided_at = ? WHERE task_id = ?').run(
      decision.decision,
      decision.reviewer,
      decision.note,
      decision.at,
      decision.taskId,
    );
    this.sql('UPDATE tasks SET status = ? WHERE id = ?').run(decision.decision === 'approved' ? 'active' : 'rejected', decision.taskId);
    return {
      taskId: decision.taskId,
      batchId: row,
      status: decision.decision,
      reviewer: decision.reviewer,
      note: decision.note,
      decidedAt: decision.at,
    };
  }

  private writeEpisode(episode: EpisodeRecord, likelyNew = false): void {
    const body = canonicalize(episode);
    // The usual save (a running episode's progress) changes no indexed column: updating only the others
    // rewrites just the row's page, where the upsert below would also rewrite its run and task index entries.
    if (!likelyNew) {
      const progressed = this.sql(TRANSITION_SQL.episodeProgress).run(episode.status, episode.steps, episode.createdAt, episode.updatedAt, body, episode.id, episode.taskId, episode.runId ?? null);
      if (progressed.changes > 0) return;
    }
    this.sql(TRANSITION_SQL.episodeUpsert).run(
      episode.id,
      episode.taskId,
      episode.runId ?? null,
      episode.status,
      episode.steps,
      episode.createdAt,
      episode.updatedAt,
      body,
    );
  }

  /**
   * Transitions are appended in write order (`seq`), keyed for uniqueness and reading by the integer key
   * of the episode's segment (64 steps), so the rows and index entries of one group commit share a few
   * pages (docs/storage.md). Keys this transaction creates go into `created`, for the caller to remember
   * once it has committed.
   */
  private writeTransitions(rows: TransitionRows, episodes: readonly EpisodeRecord[], created: CreatedKeys): void {
    (this.transitionInserter ??= new TransitionInserter(this.db)).insert(
      rows.count,
      (index, params, at) => {
        const step = rows.step(index);
        params[at] = this.segmentKey(rows.episodeId(index), step, created);
        params[at + 1] = step;
        params[at + 2] = rows.body(index);
      },
      (index) => {
        const episodeId = rows.episodeId(index);
        const step = rows.step(index);
        const message = `episode ${episodeId} already has step ${step}; none of the ${rows.count} transitions of this call were written`;
        throw conflict('appendTransitions', message, { conflict: 'duplicate_step', episodeId, step });
      },
      isUniqueViolation,
    );
    // An episode whose first segment's key is created by this call is most likely new to the episodes table too, and
    // so is an ended one recorded as its inputs (no transitions; its begin record is usually in the same commit):
    // its row goes straight to the upsert rather than first missing with the progress UPDATE.
    for (const episode of episodes) this.writeEpisode(episode, episode.inputs !== undefined || created.get(episode.id)?.has(0) === true);
  }

  /**
   * The integer key of the segment of `step` of an episode, created (into `created`) at the segment's first
   * transition. Inside a write transaction.
   */
  private segmentKey(episodeId: string, step: number, created: CreatedKeys): number {
    const segment = segmentOf(step);
    const known = this.episodeKeys.get(episodeId);
    if (known !== undefined && known.segment === segment) return known.key;
    const mine = created.get(episodeId)?.get(segment);
    if (mine !== undefined) return mine;
    // A segment not remembered is usually a new one: insert first, and look the key up only if it existed.
    const inserted = this.sql(TRANSITION_SQL.newEpisodeKey).run(episodeId, segment);
    if (inserted.changes === 0) {
      // Not created by this transaction (that would be in `created`), so committed already.
      const stored = this.pluck(TRANSITION_SQL.episodeKey).get(episodeId, segment) as number;
      this.rememberEpisodeKey(episodeId, { segment, key: stored });
      return stored;
    }
    const key = Number(inserted.lastInsertRowid);
    let segments = created.get(episodeId);
    if (segments === undefined) created.set(episodeId, (segments = new Map()));
    segments.set(segment, key);
    return key;
  }

  private rememberEpisodeKey(episodeId: string, key: SegmentKey): void {
    if (this.episodeKeys.size >= EPISODE_KEY_CACHE_SIZE) this.episodeKeys.clear();
    this.episodeKeys.set(episodeId, key);
  }

  private writeRunEvents(events: readonly RunEvent[]): void {
    const insert = this.sql('INSERT INTO run_events (run_id, seq, kind, data) VALUES (?, ?, ?, ?)');
    for (const e of events) {
      try {
        insert.run(e.runId, e.seq, e.kind, canonicalize(e.data));
      } catch (error) {
        if (isUniqueViolation(error)) {
          const message = `run ${e.runId} already has event ${e.seq}; none of the ${events.length} events of this call were written`;
          throw conflict('appendRunEvents', message, {
            conflict: 'duplicate_event',
            runId: e.runId,
            seq: e.seq,
          });
        }
        throw error;
      }
    }
  }

  // ---- plumbing ----

  /**
   * The standing storage fault, if any. At most every FAULT_PROBE_INTERVAL_MS, asking probes whether it
   * has cleared, with the operation that failed: a checkpoint after a failed checkpoint; after a failed
   * write, a real one-row write (meta key `store.probe`, the time), which commits whole or not at all.
   */
  fault(): StoreFault | undefined {
    const fault = this.storeFault;
    if (fault === undefined || !this.db.open) return fault;
    const now = this.now();
    if (Date.parse(now) < this.nextProbe) return fault;
    this.nextProbe = Date.parse(now) + FAULT_PROBE_INTERVAL_MS;
    try {
      if (fault.operation === 'checkpoint') {
        const [row] = this.db.pragma('wal_checkpoint(PASSIVE)') as Array<{ busy: number }>;
        if (row !== undefined && row.busy !== 0) return fault;
      } else {
        this.transaction.immediate(() => this.writeMeta('store.probe', now));
      }
      this.clearFault();
    } catch {
      // Still failing.
    }
    return this.storeFault;
  }

  /** Records an I/O failure: from now on writes are refused until a probe succeeds. */
  private setFault(operation: string, code: string, message: string): void {
    if (this.storeFault === undefined) {
      const since = this.now();
      this.storeFault = { operation, code, message, since };
      this.nextProbe = Date.parse(since) + FAULT_PROBE_INTERVAL_MS;
      // The operator's log: the one line that says why writes are refused (stderr, never swallowed).
      process.stderr.write(`envharness: storage fault on ${this.location}: ${operation} failed (${code}): ${message}; refusing writes until it clears\n`);
    }
  }

  private clearFault(): void {
    if (this.storeFault === undefined) return;
    process.stderr.write(`envharness: storage fault on ${this.location} cleared (${this.storeFault.operation} succeeds again); accepting writes\n`);
    this.storeFault = undefined;
  }

  /** Refuses the write while a fault stands (after probing whether it has cleared). */
  private refuseWhileFaulted(): void {
    const fault = this.fault();
    if (fault === undefined) return;
    throw new EnvHarnessError(
      'STORE_FAILED',
      `sqlite store ${this.location}: refusing writes since ${fault.since}: ${fault.operation} failed (${fault.code}: ${fault.message}); free disk space or fix the device, writes resume once it succeeds again`,
      { details: { operation: fault.operation, sqliteCode: fault.code, fault: true } },
    );
  }

  /** Runs `fn` in one BEGIN IMMEDIATE transaction: all of it commits, or (when it throws) none of it. */
  private write<T>(fn: () => T): T {
    this.refuseWhileFaulted();
    let result: T;
    try {
      result = this.transaction.immediate(fn) as T;
    } catch (error) {
      const code = sqliteCode(error).sqliteCode;
      if (code !== undefined && isIoFailure(code)) this.setFault('write', code, messageOf(error));
      throw error;
    }
    this.countWrite(true);
    return result;
  }

  /**
   * One more committed write transaction: the checkpointer (and writer backpressure) starts after
   * `checkpointAfterWrites` of them, or sooner when the `-wal` file says the store is busy: past the TRUNCATE
   * mark (a reader that pins the WAL from the start lets the first few hundred writes grow it without bound, T4:
   * 51 MiB of 64 at 4 KiB pages, 117 at 16 KiB), or, for a write on this connection, at the inline checkpoint's
   * mark after a second write (a bulk writer: large commits, such as episodes recorded as their inputs 512 to a
   * commit, fill a mark in a few writes, and each mark's worth was checkpointed inside a commit on the event
   * loop's thread; one big write then close, as a CLI `generate`, stays inline). The writer thread's commits
   * checkpoint inline off the event loop already: a third thread would only compete with it for the cores.
   * Until then each write reads the file's size (~1.5 µs).
   */
  private countWrite(onEventLoop: boolean): void {
    if (this.writes >= this.checkpointAfterWrites || this.isMemory || !this.db.open) return;
    this.writes += 1;
    if (Number.isFinite(this.checkpointAfterWrites)) {
      const walBytes = fileBytes(`${this.location}-wal`);
      const bulk = onEventLoop && this.writes >= 2 && walBytes >= INLINE_AUTOCHECKPOINT_BYTES;
      if (bulk || walBytes >= truncateMark(this.walLimitBytes)) this.writes = this.checkpointAfterWrites;
    }
    if (this.writes >= this.checkpointAfterWrites) this.moveCheckpoints();
  }

  /** Where the store's connections checkpoint automatically: inline until the checkpointer thread runs, then the far-off fallback. */
  private autocheckpointBytes(): number {
    return this.checkpointer === undefined ? INLINE_AUTOCHECKPOINT_BYTES : FALLBACK_AUTOCHECKPOINT_BYTES;
  }

  /**
   * Busy from now on: checkpoints run on a worker thread; this connection and the writer thread's keep a far-off
   * automatic one as a fallback.
   */
  private moveCheckpoints(): void {
    try {
      const pageSize = this.db.pragma('page_size', { simple: true }) as number;
      const wal = new WalPressure(`${this.location}-wal`, this.walLimitBytes);
      // A continuous writer outruns PASSIVE checkpoints even with no reader (the WAL is only reset when a write
      // begins with every frame copied back): the checkpointer truncates past a quarter of the limit.
      const truncate = { truncateAfterBytes: wal.truncateBytes, parkBytes: wal.hardBytes };
      const options = { synchronous: this.synchronous, busyTimeoutMs: this.busyTimeoutMs, intervalMs: this.checkpointIntervalMs, ...truncate };
      this.checkpointer = startCheckpointer(
        this.location,
        options,
        () => {
          this.checkpointer = undefined;
          if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${autocheckpointPages(INLINE_AUTOCHECKPOINT_BYTES, pageSize)}`);
          this.writerThread?.autocheckpoint(INLINE_AUTOCHECKPOINT_BYTES);
        },
        (report: CheckpointReport) => {
          if (report.kind === 'wal') {
            this.wal?.update(report.bytes);
          } else if (report.kind === 'fault') {
            if (isIoFailure(report.code)) this.setFault('checkpoint', report.code, report.message);
          } else if (this.storeFault?.operation === 'checkpoint') this.clearFault();
        },
      );
      this.db.pragma(`wal_autocheckpoint = ${autocheckpointPages(FALLBACK_AUTOCHECKPOINT_BYTES, pageSize)}`);
      this.writerThread?.autocheckpoint(FALLBACK_AUTOCHECKPOINT_BYTES);
      this.wal = wal;
    } catch {
      // No worker threads here: SQLite keeps checkpointing inline, as before.
      this.checkpointer = undefined;
    }
  }

  /** A prepared statement, prepared once per connection. */
  private sql(source: string): Statement {
    let statement = this.statements.get(source);
    if (statement === undefined) {
      statement = this.db.prepare(source);
      this.statements.set(source, statement);
    }
    return statement;
  }

  /** A prepared statement that returns rows as arrays of column values. */
  private raw(source: string): Statement {
    let statement = this.rawStatements.get(source);
    if (statement === undefined) {
      statement = this.db.prepare(source).raw();
      this.rawStatements.set(source, statement);
    }
    return statement;
  }

  /** A prepared statement that returns the first column's values instead of row objects. */
  private pluck(source: string): Statement {
    let statement = this.plucked.get(source);
    if (statement === undefined) {
      statement = this.db.prepare(source).pluck();
      this.plucked.set(source, statement);
    }
    return statement;
  }

  /** Runs one store operation, mapping driver errors to STORE_FAILED naming the operation. */
  private guard<T>(operation: string, fn: () => T): T {
    if (!this.db.open) {
      throw new EnvHarnessError('STORE_FAILED', `sqlite store ${this.location}: ${operation} called after close()`, {
        details: { operation },
      });
    }
    try {
      return fn();
    } catch (error) {
      if (error instanceof EnvHarnessError) throw error;
      throw new EnvHarnessError('STORE_FAILED', `sqlite store ${this.location}: ${operation} failed: ${messageOf(error)}`, {
        cause: error,
        details: { operation, ...sqliteCode(error) },
      });
    }
  }
}

// ---- rows and their mapping ----

/** The key (`episode_keys.seq`) of one segment of an episode. */
interface SegmentKey {
  segment: number;
  key: number;
}

/** Segment keys a write transaction created: episode id -> segment -> key. */
type CreatedKeys = Map<string, Map<number, number>>;

/** The transition rows of one write: row i's episode id, step and canonical JSON body. */
interface TransitionRows {
  count: number;
  episodeId(index: number): string;
  step(index: number): number;
  body(index: number): string;
}

type IndexRow = [string, number, string, string, string, number, Split, TaskStatus];

interface RunEventRow {
  run_id: string;
  seq: number;
  kind: string;
  data: string;
}

const SYNCHRONOUS_NAMES: Record<number, SqliteStoreInfo['synchronous']> = { 0: 'OFF', 1: 'NORMAL', 2: 'FULL', 3: 'EXTRA' };

/** SELECT over tasks honouring every TaskFilter field, in seq order (`?` parameters). */
function taskQuery(columns: string, filter: TaskFilter, batchKey: number | undefined): { sql: string; params: unknown[] } {
  // rows.ts's query (both stores' filter semantics and checks), with the batch condition on this schema's
  // batch_key (version 7) instead of a batch id column: added as the first condition.
  const { text, values } = sharedTaskQuery(columns, { ...filter, batchId: undefined }, questionMark);
  if (batchKey === undefined) return { sql: text, params: values };
  const from = `SELECT ${columns} FROM tasks`;
  if (!text.startsWith(from)) throw new EnvHarnessError('INTERNAL', `task query of unexpected form: ${text}`);
  const rest = text.slice(from.length);
  return { sql: `${from} WHERE batch_key = ?${rest.startsWith(' WHERE ') ? ` AND ${rest.slice(' WHERE '.length)}` : rest}`, params: [batchKey, ...values] };
}

function limitClause(limit: number | undefined, params: unknown[]): string {
  return sharedLimitClause(limit, params, questionMark);
}

/** The review ids of a save, each checked to be one of the batch's tasks. */
function reviewSet(batch: Batch, review: readonly string[] | undefined): Set<string> {
  const ids = new Set(review ?? []);
  if (ids.size === 0) return ids;
  const accepted = new Set(batchTaskRows(batch).map((t) => t.id));
  for (const id of ids) {
    if (!accepted.has(id)) {
      throw new EnvHarnessError('PARAMS_INVALID', `saveBatch ${batch.manifest.id}: review id ${id} is not one of the batch's tasks`, {
        details: { pointer: '/review', batchId: batch.manifest.id, taskId: id },
      });
    }
  }
  return ids;
}

/** The error of write `index` of applyWrites, with that index in its details (driver errors stay for guard to wrap). */
function withWriteIndex(error: unknown, index: number, op: string): unknown {
  if (!(error instanceof EnvHarnessError)) return error;
  return new EnvHarnessError(error.code, `applyWrites: write ${index} (${op}): ${error.message}`, {
    cause: error,
    details: { ...(error.details ?? {}), write: index },
  });
}

/** A write refused by a uniqueness rule (duplicate step, event or task). */
/** Task rows per INSERT statement in saveBatch. */
const TASK_ROWS_PER_INSERT = 32;
const TASK_ROW_INSERT = 'INSERT INTO tasks (id, template, domain, task_type, level, split, status, batch_key, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)';
/** A task row's columns as `TaskRow` reads them: the batch id through its key. */
const TASK_ROW_COLUMNS = 'seq, split, status, (SELECT k.id FROM batch_keys k WHERE k.seq = batch_key) AS batch_id, body';

/** A SQL string literal ('' for a quote); undefined for text a literal cannot hold (NUL). */
function sqlText(text: string): string | undefined {
  return text.includes('\u0000') ? undefined : `'${text.replaceAll("'", "''")}'`;
}

/** The template, domain and task type of every row, as literals, when all rows have the same. */
function sharedTemplateColumns(rows: readonly BatchTaskRow[]): string | undefined {
  const { template, domain, taskType } = rows[0]!;
  for (const row of rows) if (row.template !== template || row.domain !== domain || row.taskType !== taskType) return undefined;
  const literals = [sqlText(template), sqlText(domain), sqlText(taskType)];
  return literals.every((l) => l !== undefined) ? literals.join(', ') : undefined;
}

/**
 * The group insert of one batch: per row id, level, status and body (and template, domain, task type unless
 * `shared` holds them); the split and batch key are literals (undefined when the split cannot be). OR ROLLBACK: see writeBatch.
 */
function taskGroupInsert(splitName: string, batchKey: number, shared: string | undefined): string | undefined {
  const split = sqlText(splitName);
  if (split === undefined || !Number.isSafeInteger(batchKey)) return undefined;
  const batch = `${split}, ?, ${batchKey}`;
  const row = shared !== undefined ? `(?, ${shared}, ?, ${batch}, ?)` : `(?, ?, ?, ?, ?, ${batch}, ?)`;
  return `INSERT OR ROLLBACK INTO tasks (id, template, domain, task_type, level, split, status, batch_key, body) VALUES ${Array.from({ length: TASK_ROWS_PER_INSERT }, () => row).join(', ')}`;
}

function conflict(operation: string, message: string, details: Record<string, unknown>): EnvHarnessError {
  return new EnvHarnessError('STORE_CONFLICT', `${operation}: ${message}`, { details: { operation, ...details } });
}

/** How often a write retries the failed operation while a fault stands. */
const FAULT_PROBE_INTERVAL_MS = 1000;

/** Driver codes that mean the device failed (not a busy lock or a constraint): I/O error, disk full, corruption. */
function isIoFailure(code: string): boolean {
  return code.startsWith('SQLITE_IOERR') || code === 'SQLITE_FULL' || code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_CANTOPEN';
}

function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}

function sqliteCode(error: unknown): { sqliteCode?: string } {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? { sqliteCode: code } : {};
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
