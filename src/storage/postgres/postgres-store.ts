/** The PostgreSQL `Store`: a `pg` pool, one transaction per write call, group-committed transitions. */
import pg from 'pg';
import type { PoolClient, PoolConfig } from 'pg';
import {
  canonicalize,
  computeTaskId,
  EnvHarnessError,
  type Batch,
  type BatchManifest,
  type EpisodeRecord,
  type GenerationLogEntry,
  type JsonValue,
  type LogFilter,
  type ReviewDecision,
  type ReviewItem,
  type ReviewStatus,
  type RunEvent,
  type RunRecord,
  type Snapshot,
  type Split,
  type Store,
  type StoredTask,
  type TaskFilter,
  type TaskIndexEntry,
  type TaskWatermark,
  type TaskStatus,
  type Transition,
  type EpisodeStatus,
  type PoolContent,
  type RecoveryReport,
  type StoreWrite,
} from '../../core/index.js';
import {
  conflict,
  isUniqueViolation,
  limitClause,
  logEntryFromRow,
  messageOf,
  reviewFromRow,
  storedTaskFromRow,
  batchTaskRows,
  taskBody,
  taskQuery,
  whereOf,
  type LogRow,
  type ReviewRow,
  type TaskRow,
} from './rows.js';
import { migrate, SCHEMA_VERSION, schemaVersionOf } from './schema.js';
import { PostgresCurriculumLog } from './curriculum-log.js';
import { PostgresSharedEpisodes } from './shared-episodes.js';
import { TransitionWriter, upsertEpisodes, type StepKeyRow } from './transition-writer.js';

/** The schema EnvHarness's tables live in unless the URL or the options name another. */
export const DEFAULT_SCHEMA = 'envharness';
/** Connections per store (per replica): the transition writer holds one while it commits. */
export const DEFAULT_POOL_SIZE = 8;

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
const INT8_OID = 20;

export interface PostgresStoreOptions {
  /** Schema for EnvHarness's tables (default `envharness`, or the URL's `?schema=`); created if missing. */
  schema?: string;
  /** Connections in the pool (default 8). */
  poolSize?: number;
}

/** What the store runs with, for `doctor` and for tests. */
export interface PostgresStoreInfo {
  location: string;
  schema: string;
  schemaVersion: number;
  serverVersion: string;
  synchronousCommit: string;
  poolSize: number;
}

/**
 * Connects to PostgreSQL, creates the schema if needed and brings it to the current version.
 * `url` is a `postgres://` or `postgresql://` URL; `?schema=name` picks the schema.
 * @example
 * const store = await createPostgresStore('postgres://envharness@127.0.0.1:5432/envharness');
 * await store.saveBatch(batch);
 * await store.close();
 */
export async function createPostgresStore(url: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
  const { config, schema, location } = parseLocation(url, options);
  const pool = new pg.Pool({ ...config, max: options.poolSize ?? DEFAULT_POOL_SIZE, options: `-c search_path=${schema}` });
  // An idle connection that dies (server restart) must not crash the process: the next query reconnects.
  pool.on('error', () => undefined);
  let client: PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw new EnvHarnessError(
      'STORE_FAILED',
      `postgres store ${location}: cannot connect: ${messageOf(error)}; check that the server runs and the URL (host, port, user, database) is right`,
      { cause: error, details: { operation: 'open' } },
    );
  }
  try {
    await migrate(client, schema, location);
  } catch (error) {
    client.release();
    await pool.end().catch(() => undefined);
    if (error instanceof EnvHarnessError) throw error;
    throw new EnvHarnessError('STORE_FAILED', `postgres store ${location}: cannot prepare schema ${schema}: ${messageOf(error)}`, {
      cause: error,
      details: { operation: 'migrate' },
    });
  }
  client.release();
  return new PostgresStore(pool, location, schema, options.poolSize ?? DEFAULT_POOL_SIZE);
}

/**
 * A `Store` over a `pg` pool. Every write call is one transaction (READ COMMITTED; unique keys and
 * `ON CONFLICT` make concurrent writers from several replicas safe). Transitions go through one
 * `TransitionWriter`, which commits the calls that queue up during a commit together.
 */
export class PostgresStore implements Store {
  readonly kind = 'postgres';
  readonly location: string;
  /** The schema holding the tables. */
  readonly schema: string;
  private readonly pool: pg.Pool;
  private readonly poolSize: number;
  private readonly writer: TransitionWriter;
  /** Idempotency-Key rows waiting for their transition's commit (replicas). */
  private readonly stepKeys = new Map<string, StepKeyRow>();
  private closed = false;

  constructor(pool: pg.Pool, location: string, schema: string, poolSize: number) {
    this.pool = pool;
    this.location = location;
    this.schema = schema;
    this.poolSize = poolSize;
    this.writer = new TransitionWriter((fn) => this.transaction(fn), this.stepKeys);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.writer.idle();
    await this.pool.end();
  }

  // ---- batches and the generation log ----

  async saveBatch(batch: Batch, options: { review?: readonly string[] } = {}): Promise<void> {
    return this.guard('saveBatch', async () => {
      const review = new Set(options.review ?? []);
      const accepted = new Set(batchTaskRows(batch).map((t) => t.id));
      for (const id of review) {
        if (!accepted.has(id)) {
          throw new EnvHarnessError('PARAMS_INVALID', `saveBatch ${batch.manifest.id}: review id ${id} is not one of the batch's tasks`, {
            details: { pointer: '/review', batchId: batch.manifest.id, taskId: id },
          });
        }
      }
      await this.transaction((client) => writeBatch(client, batch, review));
    });
  }

  async getBatch(id: string): Promise<BatchManifest | undefined> {
    return this.guard('getBatch', async () => {
      const text = await this.one<string>('SELECT manifest AS v FROM batches WHERE id = $1', [id]);
      return text === undefined ? undefined : (JSON.parse(text) as BatchManifest);
    });
  }

  async listBatches(): Promise<BatchManifest[]> {
    return this.guard('listBatches', async () => (await this.column<string>('SELECT manifest AS v FROM batches ORDER BY seq')).map((t) => JSON.parse(t) as BatchManifest));
  }

  async listGenerationLog(filter: LogFilter = {}): Promise<GenerationLogEntry[]> {
    return this.guard('listGenerationLog', async () => {
      const { where, values } = whereOf([
        ['g.batch_id', filter.batchId],
        ['g.accepted', filter.accepted],
        ['g.gate', filter.gate],
      ]);
      const limit = limitClause(filter.limit, values);
      const rows = await this.rows<LogRow>(
        'SELECT g.batch_id, g.idx, g.task_id, g.template, g.level, g.accepted, g.gate, g.reason, g.details, g.code, g.pointer ' +
          `FROM generation_log g JOIN batches b ON b.id = g.batch_id${where} ORDER BY b.seq, g.idx, g.seq${limit}`,
        values,
      );
      return rows.map(logEntryFromRow);
    });
  }

  // ---- tasks ----

  async getTask(id: string): Promise<StoredTask | undefined> {
    return this.guard('getTask', async () => {
      const [row] = await this.rows<TaskRow>('SELECT seq, split, status, batch_id, body FROM tasks WHERE id = $1', [id]);
      return row === undefined ? undefined : storedTaskFromRow(row);
    });
  }

  async findExistingTaskIds(ids: readonly string[]): Promise<Set<string>> {
    return this.guard('findExistingTaskIds', async () => {
      if (ids.length === 0) return new Set<string>();
      return new Set(await this.column<string>('SELECT id AS v FROM tasks WHERE id = ANY($1::text[])', [ids]));
    });
  }

  async listTasks(filter: TaskFilter = {}): Promise<StoredTask[]> {
    return this.guard('listTasks', async () => {
      const { text, values } = taskQuery('seq, split, status, batch_id, body', filter);
      return (await this.rows<TaskRow>(text, values)).map(storedTaskFromRow);
    });
  }

  async countTasks(filter: TaskFilter = {}): Promise<number> {
    return this.guard('countTasks', async () => {
      const { text, values } = taskQuery('1', filter);
      return (await this.one<number>(`SELECT count(*) AS v FROM (${text}) AS matching`, values)) ?? 0;
    });
  }

  async listTaskIndex(filter: TaskFilter = {}): Promise<TaskIndexEntry[]> {
    return this.guard('listTaskIndex', async () => {
      const { text, values } = taskQuery('id, seq, template, domain, task_type, level, split, status', filter);
      const result = await this.pool.query<[string, number, string, string, string, number, Split, TaskStatus]>({ text, values, rowMode: 'array' });
      return result.rows.map(([id, seq, template, domain, taskType, level, split, status]) => ({ id, seq, template, domain, taskType, level, split, status }));
    });
  }

  async taskWatermark(): Promise<TaskWatermark> {
    return this.guard('taskWatermark', async () => {
      const [row] = await this.rows<{ rows: number; changes: number }>('SELECT rows::float8 AS rows, changes::float8 AS changes FROM task_watermark WHERE id = 0');
      return { rows: row!.rows, changes: row!.changes };
    });
  }

  async putTasks(tasks: readonly StoredTask[]): Promise<void> {
    return this.guard('putTasks', async () => {
      if (tasks.length > 0) await this.transaction((client) => writeTasks(client, tasks));
    });
  }

  // ---- review ----

  async listReviews(status?: ReviewStatus): Promise<ReviewItem[]> {
    return this.guard('listReviews', async () => {
      const base = 'SELECT r.task_id, r.batch_id, r.status, r.reviewer, r.note, r.decided_at FROM reviews r JOIN tasks t ON t.id = r.task_id';
      const rows = status === undefined ? await this.rows<ReviewRow>(`${base} ORDER BY t.seq`) : await this.rows<ReviewRow>(`${base} WHERE r.status = $1 ORDER BY t.seq`, [status]);
      return rows.map(reviewFromRow);
    });
  }

  async decideReview(decision: ReviewDecision): Promise<ReviewItem> {
    return this.guard('decideReview', () => this.transaction((client) => writeDecision(client, decision)));
  }

  async listReviewAudit(taskId?: string): Promise<ReviewDecision[]> {
    return this.guard('listReviewAudit', async () => {
      const base = 'SELECT task_id AS "taskId", decision, reviewer, note, at FROM review_audit';
      return taskId === undefined
        ? await this.rows<ReviewDecision>(`${base} ORDER BY seq`)
        : await this.rows<ReviewDecision>(`${base} WHERE task_id = $1 ORDER BY seq`, [taskId]);
    });
  }

  // ---- episodes and transitions ----

  async saveEpisode(episode: EpisodeRecord): Promise<void> {
    return this.guard('saveEpisode', () => this.transaction((client) => upsertEpisodes(client, [episode])));
  }

  async getEpisode(id: string): Promise<EpisodeRecord | undefined> {
    return this.guard('getEpisode', async () => {
      const text = await this.one<string>('SELECT body AS v FROM episodes WHERE id = $1', [id]);
      return text === undefined ? undefined : (JSON.parse(text) as EpisodeRecord);
    });
  }

  async listEpisodes(filter: { runId?: string; taskId?: string; limit?: number } = {}): Promise<EpisodeRecord[]> {
    return this.guard('listEpisodes', async () => {
      const { where, values } = whereOf([
        ['run_id', filter.runId],
        ['task_id', filter.taskId],
      ]);
      const limit = limitClause(filter.limit, values);
      return (await this.column<string>(`SELECT body AS v FROM episodes${where} ORDER BY seq${limit}`, values)).map((t) => JSON.parse(t) as EpisodeRecord);
    });
  }

  /**
   * Appends transitions and saves the given episode records in one transaction, shared with the calls
   * that queued up meanwhile (group commit); a refused call writes nothing and fails no other call.
   */
  async appendTransitions(transitions: readonly Transition[], options: { episodes?: readonly EpisodeRecord[] } = {}): Promise<void> {
    const episodes = options.episodes ?? [];
    return this.guard('appendTransitions', async () => {
      if (transitions.length === 0 && episodes.length === 0) return;
      await this.writer.append(transitions, episodes);
    });
  }

  async listTransitions(episodeId: string): Promise<Transition[]> {
    return this.guard('listTransitions', async () =>
      (await this.column<string>('SELECT body AS v FROM transitions WHERE episode_id = $1 ORDER BY step', [episodeId])).map((t) => JSON.parse(t) as Transition),
    );
  }

  // ---- snapshots ----

  async saveSnapshot(snapshot: Snapshot): Promise<void> {
    return this.guard('saveSnapshot', async () => {
      await this.pool.query(
        'INSERT INTO snapshots (id, created_at, body) VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE SET created_at = excluded.created_at, body = excluded.body',
        [snapshot.id, snapshot.createdAt, canonicalize(snapshot)],
      );
    });
  }

  async getSnapshot(id: string): Promise<Snapshot | undefined> {
    return this.guard('getSnapshot', async () => {
      const text = await this.one<string>('SELECT body AS v FROM snapshots WHERE id = $1', [id]);
      return text === undefined ? undefined : (JSON.parse(text) as Snapshot);
    });
  }

  async listSnapshots(): Promise<Snapshot[]> {
    return this.guard('listSnapshots', async () => (await this.column<string>('SELECT body AS v FROM snapshots ORDER BY seq')).map((t) => JSON.parse(t) as Snapshot));
  }

  // ---- runs ----

  async saveRun(run: RunRecord): Promise<void> {
    return this.guard('saveRun', async () => {
      await this.pool.query(
        'INSERT INTO runs (id, kind, status, snapshot_start, created_at, updated_at, body) VALUES ($1, $2, $3, $4, $5, $6, $7) ' +
          'ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, status = excluded.status, snapshot_start = excluded.snapshot_start, ' +
          'created_at = excluded.created_at, updated_at = excluded.updated_at, body = excluded.body',
        [run.id, run.kind, run.status, run.snapshotStart, run.createdAt, run.updatedAt, canonicalize(run)],
      );
    });
  }

  async getRun(id: string): Promise<RunRecord | undefined> {
    return this.guard('getRun', async () => {
      const text = await this.one<string>('SELECT body AS v FROM runs WHERE id = $1', [id]);
      return text === undefined ? undefined : (JSON.parse(text) as RunRecord);
    });
  }

  async listRuns(): Promise<RunRecord[]> {
    return this.guard('listRuns', async () => (await this.column<string>('SELECT body AS v FROM runs ORDER BY seq')).map((t) => JSON.parse(t) as RunRecord));
  }

  async appendRunEvents(events: readonly RunEvent[]): Promise<void> {
    return this.guard('appendRunEvents', async () => {
      if (events.length > 0) await this.transaction((client) => writeRunEvents(client, events));
    });
  }

  async listRunEvents(runId: string, kind?: string): Promise<RunEvent[]> {
    return this.guard('listRunEvents', async () => {
      const rows =
        kind === undefined
          ? await this.rows<{ seq: number; kind: string; data: string }>('SELECT seq, kind, data FROM run_events WHERE run_id = $1 ORDER BY seq', [runId])
          : await this.rows<{ seq: number; kind: string; data: string }>('SELECT seq, kind, data FROM run_events WHERE run_id = $1 AND kind = $2 ORDER BY seq', [runId, kind]);
      return rows.map((r) => ({ runId, seq: r.seq, kind: r.kind, data: JSON.parse(r.data) as JsonValue }));
    });
  }

  // ---- meta ----

  async getMeta(key: string): Promise<JsonValue | undefined> {
    return this.guard('getMeta', async () => {
      const text = await this.one<string>('SELECT value AS v FROM meta WHERE key = $1', [key]);
      return text === undefined ? undefined : (JSON.parse(text) as JsonValue);
    });
  }

  async setMeta(key: string, value: JsonValue): Promise<void> {
    return this.guard('setMeta', async () => {
      await this.pool.query('INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [key, canonicalize(value)]);
    });
  }

  // ---- multi-step writes, consistent reads, repair (added by the reliability helper for issue 14;
  //      the conformance suite checks them; the postgres owner may reshape them) ----

  async applyWrites(writes: readonly StoreWrite[]): Promise<void> {
    return this.guard('applyWrites', async () => {
      if (writes.length === 0) return;
      await this.transaction(async (client) => {
        for (let i = 0; i < writes.length; i++) {
          const w = writes[i]!;
          try {
            await applyWrite(client, w);
          } catch (error) {
            if (!(error instanceof EnvHarnessError)) throw error;
            throw new EnvHarnessError(error.code, `applyWrites: write ${i} (${w.op}): ${error.message}`, { cause: error, details: { ...(error.details ?? {}), write: i } });
          }
        }
      });
    });
  }

  async readPool(): Promise<PoolContent> {
    return this.guard('readPool', async () => {
      const client = await this.pool.connect();
      try {
        // One snapshot for every part: REPEATABLE READ, read only.
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
        const q = async <R extends object>(text: string): Promise<R[]> => (await client.query<R>(text)).rows;
        const batches = (await q<{ v: string }>('SELECT manifest AS v FROM batches ORDER BY seq')).map((r) => JSON.parse(r.v) as BatchManifest);
        const log = (
          await q<LogRow>(
            'SELECT g.batch_id, g.idx, g.task_id, g.template, g.level, g.accepted, g.gate, g.reason, g.details, g.code, g.pointer FROM generation_log g JOIN batches b ON b.id = g.batch_id ORDER BY b.seq, g.idx, g.seq',
          )
        ).map(logEntryFromRow);
        const tasks = (await q<TaskRow>('SELECT seq, split, status, batch_id, body FROM tasks ORDER BY seq')).map(storedTaskFromRow);
        const reviews = (await q<ReviewRow>('SELECT r.task_id, r.batch_id, r.status, r.reviewer, r.note, r.decided_at FROM reviews r JOIN tasks t ON t.id = r.task_id ORDER BY t.seq')).map(reviewFromRow);
        const audit = await q<ReviewDecision>('SELECT task_id AS "taskId", decision, reviewer, note, at FROM review_audit ORDER BY seq');
        await client.query('COMMIT');
        return { batches, log, tasks, reviews, audit };
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    });
  }

  async recover(options: { isLive: (run: RunRecord) => boolean; now: string }): Promise<RecoveryReport> {
    return this.guard('recover', () =>
      this.transaction(async (client) => {
        const report: RecoveryReport = { episodes: [], runs: [] };
        const lagging = (
          await client.query<{ body: string; n: string }>(
            "SELECT e.body, (SELECT count(*) FROM transitions t WHERE t.episode_id = e.id) AS n FROM episodes e WHERE e.status = 'running' ORDER BY e.seq FOR UPDATE",
          )
        ).rows.filter((r) => Number(r.n) > (JSON.parse(r.body) as EpisodeRecord).steps);
        for (const row of lagging) {
          const episode = JSON.parse(row.body) as EpisodeRecord;
          const bodies = (await client.query<{ body: string }>('SELECT body FROM transitions WHERE episode_id = $1 ORDER BY step', [episode.id])).rows.map((r) => JSON.parse(r.body) as Transition);
          let reward = 0;
          for (const t of bodies) reward += t.reward;
          const last = bodies[bodies.length - 1]!;
          const status: EpisodeStatus = last.terminated ? 'terminated' : last.truncated ? 'truncated' : episode.status;
          const ended = status !== episode.status
            ? { outcome: last.info.outcome, excludeFromStats: last.info.excludeFromStats === true, ...(last.info.endReason === undefined ? {} : { endReason: last.info.endReason }) }
            : {};
          report.episodes.push({ id: episode.id, steps: { from: episode.steps, to: bodies.length }, status: { from: episode.status, to: status } });
          await upsertEpisodes(client, [{ ...episode, ...ended, steps: bodies.length, reward, status, updatedAt: options.now }]);
        }
        const running = (await client.query<{ body: string }>("SELECT body FROM runs WHERE status = 'running' ORDER BY seq FOR UPDATE")).rows.map((r) => JSON.parse(r.body) as RunRecord);
        for (const run of running) {
          if (options.isLive(run)) continue;
          const [last] = (await client.query<{ seq: number; kind: string }>('SELECT seq, kind FROM run_events WHERE run_id = $1 ORDER BY seq DESC LIMIT 1', [run.id])).rows;
          const interrupted = { lastEventSeq: last?.seq ?? -1, ...(last ? { lastEventKind: last.kind } : {}), at: options.now };
          report.runs.push({ id: run.id, lastEventSeq: interrupted.lastEventSeq, ...(last ? { lastEventKind: last.kind } : {}) });
          await writeRun(client, { ...run, status: 'interrupted', interrupted, updatedAt: options.now });
        }
        return report;
      }),
    );
  }

  // ---- PostgreSQL-only operations ----

  /** The settings the store runs with. */
  async getInfo(): Promise<PostgresStoreInfo> {
    return this.guard('getInfo', async () => ({
      location: this.location,
      schema: this.schema,
      schemaVersion: await schemaVersionOf(this.pool, this.schema),
      serverVersion: (await this.one<string>('SHOW server_version')) ?? '',
      synchronousCommit: (await this.one<string>('SHOW synchronous_commit')) ?? '',
      poolSize: this.poolSize,
    }));
  }

  /** Server episodes shared with the other `serve` replicas on this database, as replica `replica`. */
  sharedEpisodes(replica: string): PostgresSharedEpisodes {
    return new PostgresSharedEpisodes(this.pool, replica, this.stepKeys);
  }

  /** The curriculum log shared with the other replicas on this database, appended to as replica `replica`. */
  curriculumLog(replica: string): PostgresCurriculumLog {
    return new PostgresCurriculumLog(this.pool, this.schema, replica);
  }

  /** Group commits of transitions so far (for tests and benchmarks). */
  get transitionCommits(): number {
    return this.writer.commits;
  }

  /**
   * Runs `fn` in one transaction on one pooled connection: commits when it returns, rolls back when it
   * throws (and rethrows the error unchanged). For modules of this store that need several statements.
   */
  async transaction<T>(fn: (client: PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken = false;
    try {
      await client.query('BEGIN');
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      try {
        await client.query('ROLLBACK');
      } catch {
        broken = true;
      }
      throw error;
    } finally {
      // A connection whose ROLLBACK failed is in an unknown state: destroy it rather than reuse it.
      client.release(broken);
    }
  }

  // ---- plumbing ----

  private async rows<R extends object>(text: string, values: unknown[] = []): Promise<R[]> {
    return (await this.pool.query<R>(text, values)).rows;
  }

  /** The `v` column of every row. */
  private async column<V>(text: string, values: unknown[] = []): Promise<V[]> {
    return (await this.rows<{ v: V }>(text, values)).map((r) => r.v);
  }

  /** The first column of the first row (SHOW's column, or `v`), or undefined when there is no row. */
  private async one<V>(text: string, values: unknown[] = []): Promise<V | undefined> {
    const result = await this.pool.query<Record<string, V>>(text, values);
    const row = result.rows[0];
    return row === undefined ? undefined : Object.values(row)[0];
  }

  /** Runs one store operation, mapping driver errors to STORE_FAILED naming the operation. */
  private async guard<T>(operation: string, fn: () => Promise<T>): Promise<T> {
    if (this.closed) {
      throw new EnvHarnessError('STORE_FAILED', `postgres store ${this.location}: ${operation} called after close()`, { details: { operation } });
    }
    try {
      return await fn();
    } catch (error) {
      if (error instanceof EnvHarnessError) throw error;
      const code = (error as { code?: unknown } | null)?.code;
      throw new EnvHarnessError('STORE_FAILED', `postgres store ${this.location}: ${operation} failed: ${messageOf(error)}`, {
        cause: error,
        details: { operation, ...(typeof code === 'string' ? { sqlState: code } : {}) },
      });
    }
  }
}

// ---- transaction bodies ----

async function writeBatch(client: PoolClient, batch: Batch, review: ReadonlySet<string>): Promise<void> {
  const { manifest } = batch;
  const manifestText = canonicalize(manifest);
  // ON CONFLICT waits for a concurrent writer of the same batch: two workers saving it is not an error.
  const inserted = await client.query('INSERT INTO batches (id, split, manifest) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING', [
    manifest.id,
    manifest.split,
    manifestText,
  ]);
  if (inserted.rowCount === 0) {
    const existing = await client.query<{ manifest: string }>('SELECT manifest FROM batches WHERE id = $1', [manifest.id]);
    if (existing.rows[0]?.manifest === manifestText) return; // the same batch again: saved whole already
    throw conflict('saveBatch', `batch ${manifest.id} is already stored with a different manifest`, { conflict: 'batch_exists', batchId: manifest.id });
  }
  const cols: [string[], string[], string[], string[], number[], string[], string[]] = [[], [], [], [], [], [], []];
  const rows = batchTaskRows(batch);
  for (const task of rows) {
    cols[0].push(task.id);
    cols[1].push(task.template);
    cols[2].push(task.domain);
    cols[3].push(task.taskType);
    cols[4].push(task.level);
    cols[5].push(review.has(task.id) ? 'pending_review' : 'active');
    cols[6].push(task.body);
  }
  if (rows.length > 0) {
    const tasks = await client.query<{ id: string }>(
      'INSERT INTO tasks (id, template, domain, task_type, level, split, status, batch_id, body) ' +
        'SELECT id, template, domain, task_type, level::int, $8, status, $9, body FROM ROWS FROM ' +
        '(json_array_elements_text($1::json), json_array_elements_text($2::json), json_array_elements_text($3::json), json_array_elements_text($4::json), ' +
        'json_array_elements_text($5::json), json_array_elements_text($6::json), json_array_elements_text($7::json)) ' +
        'WITH ORDINALITY AS u (id, template, domain, task_type, level, status, body, n) ORDER BY n ' +
        'ON CONFLICT DO NOTHING RETURNING id',
      // JSON arrays rather than text[]: see transition-writer.ts (pg escapes array literals in JavaScript).
      [...cols.map((c) => JSON.stringify(c)), manifest.split, manifest.id],
    );
    if (tasks.rowCount !== rows.length) {
      const written = new Set(tasks.rows.map((r) => r.id));
      const taskId = rows.find((t) => !written.has(t.id))!.id;
      throw conflict('saveBatch', `batch ${manifest.id}: task ${taskId} is already stored; nothing of the batch was saved`, {
        conflict: 'task_exists',
        batchId: manifest.id,
        taskId,
      });
    }
  }
  if (review.size > 0) {
    await client.query("INSERT INTO reviews (task_id, batch_id, status) SELECT unnest($1::text[]), $2, 'pending'", [
      rows.filter((t) => review.has(t.id)).map((t) => t.id),
      manifest.id,
    ]);
  }
  if (batch.log.length > 0) {
    const log = batch.log;
    await client.query(
      'INSERT INTO generation_log (batch_id, idx, task_id, template, level, accepted, gate, reason, details, code, pointer) ' +
        'SELECT batch_id, idx, task_id, template, level, accepted, gate, reason, details, code, pointer FROM ' +
        'unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::int[], $6::boolean[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[]) ' +
        'WITH ORDINALITY AS u (batch_id, idx, task_id, template, level, accepted, gate, reason, details, code, pointer, n) ORDER BY n',
      [
        log.map((e) => e.batchId),
        log.map((e) => e.index),
        log.map((e) => e.taskId),
        log.map((e) => e.template),
        log.map((e) => e.level),
        log.map((e) => e.accepted),
        log.map((e) => e.gate ?? null),
        log.map((e) => e.reason ?? null),
        log.map((e) => (e.details === undefined ? null : canonicalize(e.details))),
        log.map((e) => e.problem?.code ?? null),
        log.map((e) => e.problem?.pointer ?? null),
      ],
    );
  }
}

async function writeTasks(client: PoolClient, tasks: readonly StoredTask[]): Promise<void> {
  for (const [i, task] of tasks.entries()) {
    const expected = computeTaskId(task);
    if (expected !== task.id) {
      throw new EnvHarnessError('IMPORT_INVALID', `putTasks: task ${task.id} does not match its content (its content hashes to ${expected})`, {
        details: { pointer: `/${i}/id`, taskId: task.id, expected },
      });
    }
  }
  for (const [i, task] of tasks.entries()) {
    const body = taskBody(task);
    // Idempotent by content address: an identical row (from another worker, or an earlier import) is fine.
    const inserted = await client.query(
      'INSERT INTO tasks (seq, id, template, domain, task_type, level, split, status, batch_id, body) ' +
        'VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING',
      [task.seq, task.id, task.template, task.domain, task.taskType, task.level, task.split, task.status, task.batchId, body],
    );
    if (inserted.rowCount === 1) {
      // Keeps the invariant "every pending_review task has a review item", so the task can be decided.
      if (task.status === 'pending_review') {
        await client.query("INSERT INTO reviews (task_id, batch_id, status) VALUES ($1, $2, 'pending') ON CONFLICT DO NOTHING", [task.id, task.batchId]);
      }
      continue;
    }
    const [row] = (await client.query<TaskRow>('SELECT seq, split, status, batch_id, body FROM tasks WHERE id = $1', [task.id])).rows;
    if (row === undefined) {
      const holder = (await client.query<{ id: string }>('SELECT id FROM tasks WHERE seq = $1', [task.seq])).rows[0]?.id;
      throw new EnvHarnessError('IMPORT_INVALID', `putTasks: seq ${task.seq} of task ${task.id} is already taken by task ${holder}`, {
        details: { pointer: `/${i}/seq`, taskId: task.id, seq: task.seq, holder },
      });
    }
    const same = row.seq === task.seq && row.split === task.split && row.status === task.status && row.batch_id === task.batchId && row.body === body;
    if (!same) {
      throw new EnvHarnessError('IMPORT_INVALID', `putTasks: task ${task.id} is already stored with a different seq, split, status, batch or content`, {
        details: { pointer: `/${i}`, taskId: task.id, stored: { seq: row.seq, split: row.split, status: row.status, batchId: row.batch_id } },
      });
    }
  }
  // Later saveBatch calls continue after the imported seqs (the sequence never moves backwards).
  await client.query(
    "SELECT setval(s, greatest((SELECT max(seq) FROM tasks), pg_sequence_last_value(s::regclass))) FROM pg_get_serial_sequence('tasks', 'seq') AS s",
  );
}

async function writeDecision(client: PoolClient, decision: ReviewDecision): Promise<ReviewItem> {
  const [row] = (await client.query<{ batch_id: string }>('SELECT batch_id FROM reviews WHERE task_id = $1 FOR UPDATE', [decision.taskId])).rows;
  if (row === undefined) {
    throw new EnvHarnessError('REVIEW_NOT_FOUND', `task ${decision.taskId} is not in the review queue; \`envharness review\` lists what is pending`, {
      details: { taskId: decision.taskId },
    });
  }
  await client.query('INSERT INTO review_audit (task_id, decision, reviewer, note, at) VALUES ($1, $2, $3, $4, $5)', [
    decision.taskId,
    decision.decision,
    decision.reviewer,
    decision.note,
    decision.at,
  ]);
  await client.query('UPDATE reviews SET status = $1, reviewer = $2, note = $3, decided_at = $4 WHERE task_id = $5', [
    decision.decision,
    decision.reviewer,
    decision.note,
    decision.at,
    decision.taskId,
  ]);
  await client.query('UPDATE tasks SET status = $1 WHERE id = $2', [decision.decision === 'approved' ? 'active' : 'rejected', decision.taskId]);
  return { taskId: decision.taskId, batchId: row.batch_id, status: decision.decision, reviewer: decision.reviewer, note: decision.note, decidedAt: decision.at };
}

async function writeRunEvents(client: PoolClient, events: readonly RunEvent[]): Promise<void> {
  const seen = new Set<string>();
  const refuse = (e: RunEvent) =>
    conflict('appendRunEvents', `run ${e.runId} already has event ${e.seq}; none of the ${events.length} events of this call were written`, {
      conflict: 'duplicate_event',
      runId: e.runId,
      seq: e.seq,
    });
  for (const e of events) {
    const key = JSON.stringify([e.runId, e.seq]);
    if (seen.has(key)) throw refuse(e);
    seen.add(key);
  }
  const inserted = await client.query<{ run_id: string; seq: number }>(
    'INSERT INTO run_events (run_id, seq, kind, data) SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::text[]) ' +
      'ON CONFLICT DO NOTHING RETURNING run_id, seq',
    [events.map((e) => e.runId), events.map((e) => e.seq), events.map((e) => e.kind), events.map((e) => canonicalize(e.data))],
  );
  if (inserted.rowCount !== events.length) {
    const written = new Set(inserted.rows.map((r) => JSON.stringify([r.run_id, r.seq])));
    throw refuse(events.find((e) => !written.has(JSON.stringify([e.runId, e.seq])))!);
  }
}

// ---- location ----

/** Splits a URL into pool settings, the schema and a location without credentials. */
function parseLocation(url: string, options: PostgresStoreOptions): { config: PoolConfig; schema: string; location: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new EnvHarnessError('CONFIG_INVALID', `postgres store: ${JSON.stringify(redact(url))} is not a URL; use postgres://user@host:port/database`, {
      details: { pointer: '/store' },
    });
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new EnvHarnessError('CONFIG_INVALID', `postgres store: the URL must start with postgres:// or postgresql://, got ${parsed.protocol}//`, {
      details: { pointer: '/store' },
    });
  }
  const schema = options.schema ?? parsed.searchParams.get('schema') ?? DEFAULT_SCHEMA;
  if (!SCHEMA_NAME.test(schema)) {
    throw new EnvHarnessError('CONFIG_INVALID', `postgres store: schema ${JSON.stringify(schema)} must be lower-case letters, digits and _ (at most 63), starting with a letter or _`, {
      details: { pointer: '/store/schema' },
    });
  }
  parsed.searchParams.delete('schema');
  const config: PoolConfig = {
    connectionString: parsed.toString(),
    // bigint columns (seq) come back as numbers: every seq EnvHarness writes is far below 2^53.
    types: { getTypeParser: ((oid: number, format?: 'text' | 'binary') => (oid === INT8_OID ? Number : pg.types.getTypeParser(oid, format))) as typeof pg.types.getTypeParser },
  };
  const shown = new URL(parsed.toString());
  shown.password = '';
  shown.username = '';
  shown.searchParams.set('schema', schema);
  return { config, schema, location: shown.toString() };
}

function redact(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}

/** One write of applyWrites, on the transaction's connection (the same statements as the single-call methods). */
async function applyWrite(client: PoolClient, w: StoreWrite): Promise<void> {
  switch (w.op) {
    case 'saveBatch': {
      const review = new Set(w.review ?? []);
      const accepted = new Set(batchTaskRows(w.batch).map((t) => t.id));
      for (const id of review) {
        if (!accepted.has(id)) {
          throw new EnvHarnessError('PARAMS_INVALID', `saveBatch ${w.batch.manifest.id}: review id ${id} is not one of the batch's tasks`, {
            details: { pointer: '/review', batchId: w.batch.manifest.id, taskId: id },
          });
        }
      }
      return writeBatch(client, w.batch, review);
    }
    case 'putTasks':
      return w.tasks.length > 0 ? writeTasks(client, w.tasks) : undefined;
    case 'decideReview':
      await writeDecision(client, w.decision);
      return;
    case 'saveEpisode':
      return upsertEpisodes(client, [w.episode]);
    case 'saveSnapshot':
      await client.query(
        'INSERT INTO snapshots (id, created_at, body) VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE SET created_at = excluded.created_at, body = excluded.body',
        [w.snapshot.id, w.snapshot.createdAt, canonicalize(w.snapshot)],
      );
      return;
    case 'saveRun':
      return writeRun(client, w.run);
    case 'appendRunEvents':
      return w.events.length > 0 ? writeRunEvents(client, w.events) : undefined;
    case 'setMeta':
      await client.query('INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [w.key, canonicalize(w.value)]);
      return;
    case 'discardEpisodes':
      if (w.ids.length === 0) return;
      await client.query('DELETE FROM transitions WHERE episode_id = ANY($1::text[])', [w.ids]);
      await client.query('DELETE FROM episodes WHERE id = ANY($1::text[])', [w.ids]);
      return;
    case 'discardRunEvents':
      await client.query('DELETE FROM run_events WHERE run_id = $1 AND seq >= $2', [w.runId, w.fromSeq]);
      return;
    default:
      throw new EnvHarnessError('PARAMS_INVALID', `applyWrites: unknown write op ${JSON.stringify((w as { op?: unknown }).op)}`, { details: { pointer: '/op' } });
  }
}

async function writeRun(client: PoolClient, run: RunRecord): Promise<void> {
  await client.query(
    'INSERT INTO runs (id, kind, status, snapshot_start, created_at, updated_at, body) VALUES ($1, $2, $3, $4, $5, $6, $7) ' +
      'ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, status = excluded.status, snapshot_start = excluded.snapshot_start, ' +
      'created_at = excluded.created_at, updated_at = excluded.updated_at, body = excluded.body',
    [run.id, run.kind, run.status, run.snapshotStart, run.createdAt, run.updatedAt, canonicalize(run)],
  );
}
