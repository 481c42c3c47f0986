/** Pool refill as queue jobs: ordered refill chains in PostgreSQL, carried as pg-boss jobs to `envharness worker`s. */
import pg from 'pg';
import PgBoss from 'pg-boss';
import { canonicalize, digest, EnvHarnessError, type BatchRequest, type Split } from '../core/index.js';
import { createRefillingPool, type RefillingPool } from '../generation/index.js';
import type { Harness } from './harness.js';

/** The pg-boss queue that carries refill jobs. */
export const REFILL_QUEUE = 'envharness-refill';

/** Where the queue lives: the store's PostgreSQL URL (`?schema=` as for the store). */
export interface RefillQueueOptions {
  /** The store URL (`postgres://…[?schema=name]`); refill links live in the store's schema, jobs in `<schema>_queue`. */
  url: string;
  /** Candidates per refill job (default 64). */
  batchSize?: number;
  /** Folded into every job's seed, so two deployments can draw different refills (default 0). */
  seed?: number;
  /** Seconds a job may run before pg-boss takes its worker as lost and retries it; set on each job by the enqueuer (default 300). */
  expireInSeconds?: number;
  /** How often expired jobs are looked for (pg-boss maintenance; default 60 s). */
  maintenanceIntervalSeconds?: number;
  /** Retries of a failed or lost job (default 5). */
  retryLimit?: number;
  /** Hears pg-boss's background errors (lost connections, failed maintenance); default: ignored. */
  onError?: (error: Error) => void;
}

/** One link of a refill chain: the job's identity; its request and base are in `refill_links`. */
export interface RefillJob {
  split: Split;
  slice: string;
  level: number;
  seq: number;
}

/** A stored link. */
export interface RefillLink extends RefillJob {
  request: BatchRequest;
  /** Batch ids the job deduplicates against, sorted. */
  base: string[];
  batchId: string | null;
}

/**
 * The seed of link `seq` of a chain: a function of the chain and the position only, so the job's batch
 * does not depend on which worker runs it, or when.
 */
export function refillSeed(job: RefillJob, seed: number): number {
  return parseInt(digest(['refill', seed, job.split, job.slice, job.level, job.seq]).slice(0, 12), 16);
}

/**
 * The batch request of a link: every non-heldout template of the slice that declares the level, in id
 * order, `count` candidates, the link's seed.
 */
export function refillRequest(harness: Harness, job: RefillJob, count: number, seed: number): BatchRequest {
  const templates = harness.registry
    .list()
    .filter((t) => !t.heldout && `${t.domain}/${t.taskType}` === job.slice && t.levels.length >= job.level)
    .map((t) => t.id)
    .sort();
  if (templates.length === 0) {
    throw new EnvHarnessError('PARAMS_INVALID', `no template of slice ${job.slice} declares level ${job.level}; refill jobs need one`, { details: { pointer: '/slice' } });
  }
  return { templates: templates.map((id) => ({ id })), levels: [job.level], count, seed: refillSeed(job, seed), split: job.split };
}

/** The queue: enqueue on replicas, `work` on workers. */
export class RefillQueue {
  private readonly pool: pg.Pool;
  private readonly boss: PgBoss;
  private readonly schema: string;
  private readonly options: Required<Omit<RefillQueueOptions, 'url' | 'onError'>>;

  private constructor(pool: pg.Pool, boss: PgBoss, schema: string, options: RefillQueueOptions) {
    this.pool = pool;
    this.boss = boss;
    this.schema = schema;
    this.options = {
      batchSize: options.batchSize ?? 64,
      seed: options.seed ?? 0,
      expireInSeconds: options.expireInSeconds ?? 300,
      maintenanceIntervalSeconds: options.maintenanceIntervalSeconds ?? 60,
      retryLimit: options.retryLimit ?? 5,
    };
  }

  /** Connects and prepares pg-boss's schema and the queue. The store must have been opened once (migrations). */
  static async open(options: RefillQueueOptions): Promise<RefillQueue> {
    const { connectionString, schema } = parseQueueUrl(options.url);
    const pool = new pg.Pool({ connectionString, max: 4 });
    pool.on('error', () => undefined);
    const boss = new PgBoss({
      connectionString,
      schema: `${schema}_queue`,
      max: 4,
      schedule: false,
      maintenanceIntervalSeconds: options.maintenanceIntervalSeconds ?? 60,
    });
    boss.on('error', (error: Error) => options.onError?.(error));
    try {
      await boss.start();
      // 'standard': several links of different chains run at once; a chain has one open link at a time (enqueue).
      if ((await boss.getQueue(REFILL_QUEUE)) === null) await boss.createQueue(REFILL_QUEUE, { name: REFILL_QUEUE, policy: 'standard' });
    } catch (error) {
      await boss.stop({ graceful: false, wait: false }).catch(() => undefined);
      await pool.end().catch(() => undefined);
      throw new EnvHarnessError('STORE_FAILED', `refill queue: cannot start pg-boss in schema ${schema}_queue: ${(error as Error).message}`, { details: { operation: 'open' } });
    }
    return new RefillQueue(pool, boss, schema, options);
  }

  /**
   * Creates the next link of the (split, slice, level) chain and its job, unless the chain's last link is
   * still open (then returns undefined: one open link per chain keeps each link's base fixed and complete).
   * Link 1's base is every batch of the split stored now; link n's is link n-1's base plus its batch.
   */
  async enqueue(harness: Harness, chain: Omit<RefillJob, 'seq'>): Promise<RefillLink | undefined> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`${this.schema}:refill:${chain.split}:${chain.slice}:${chain.level}`]);
      const last = await client.query<{ seq: number; base: string; batch_id: string | null }>(
        `SELECT seq, base, batch_id FROM ${this.schema}.refill_links WHERE split = $1 AND slice = $2 AND level = $3 ORDER BY seq DESC LIMIT 1`,
        [chain.split, chain.slice, chain.level],
      );
      const previous = last.rows[0];
      if (previous !== undefined && previous.batch_id === null) {
        await client.query('ROLLBACK');
        return undefined;
      }
      const base =
        previous === undefined
          ? (await client.query<{ id: string }>(`SELECT id FROM ${this.schema}.batches WHERE split = $1`, [chain.split])).rows.map((r) => r.id)
          : [...(JSON.parse(previous.base) as string[]), previous.batch_id!];
      base.sort();
      const job: RefillJob = { ...chain, seq: (previous?.seq ?? 0) + 1 };
      const request = refillRequest(harness, job, this.options.batchSize, this.options.seed);
      await client.query(
        `INSERT INTO ${this.schema}.refill_links (split, slice, level, seq, request, base) VALUES ($1, $2, $3, $4, $5, $6)`,
        [job.split, job.slice, job.level, job.seq, canonicalize(request), canonicalize(base)],
      );
      // The job is sent in the same transaction as its link: both exist, or neither.
      const id = await this.boss.send(REFILL_QUEUE, job, {
        retryLimit: this.options.retryLimit,
        retryDelay: 1,
        expireInSeconds: this.options.expireInSeconds,
        singletonKey: `${job.split}:${job.slice}:${job.level}:${job.seq}`,
        db: { executeSql: (text: string, values: unknown[]) => client.query(text, values) },
      });
      await client.query(`UPDATE ${this.schema}.refill_links SET job_id = $5 WHERE split = $1 AND slice = $2 AND level = $3 AND seq = $4`, [
        job.split,
        job.slice,
        job.level,
        job.seq,
        id,
      ]);
      await client.query('COMMIT');
      return { ...job, request, base, batchId: null };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /** The links of every chain, in (split, slice, level, seq) order. */
  async links(): Promise<RefillLink[]> {
    const rows = await this.pool.query<{ split: Split; slice: string; level: number; seq: number; request: string; base: string; batch_id: string | null }>(
      `SELECT split, slice, level, seq, request, base, batch_id FROM ${this.schema}.refill_links ORDER BY split, slice, level, seq`,
    );
    return rows.rows.map((r) => ({
      split: r.split,
      slice: r.slice,
      level: r.level,
      seq: r.seq,
      request: JSON.parse(r.request) as BatchRequest,
      base: JSON.parse(r.base) as string[],
      batchId: r.batch_id,
    }));
  }

  /**
   * Runs one link: generates its batch against its base and stores it, then closes the link. Running a link
   * twice (a worker lost mid-job, then retried) stores the same batch, which the store takes as a no-op.
   */
  async runJob(harness: Harness, job: RefillJob): Promise<string> {
    const row = await this.pool.query<{ request: string; base: string; batch_id: string | null }>(
      `SELECT request, base, batch_id FROM ${this.schema}.refill_links WHERE split = $1 AND slice = $2 AND level = $3 AND seq = $4`,
      [job.split, job.slice, job.level, job.seq],
    );
    const link = row.rows[0];
    if (link === undefined) throw new EnvHarnessError('PARAMS_INVALID', `refill job ${job.slice} level ${job.level} #${job.seq} has no link in ${this.schema}.refill_links`);
    if (link.batch_id !== null) return link.batch_id;
    const batch = await harness.generate(JSON.parse(link.request) as BatchRequest, { base: JSON.parse(link.base) as string[], workers: 1 });
    await this.pool.query(
      `UPDATE ${this.schema}.refill_links SET batch_id = $5 WHERE split = $1 AND slice = $2 AND level = $3 AND seq = $4 AND batch_id IS NULL`,
      [job.split, job.slice, job.level, job.seq, batch.manifest.id],
    );
    return batch.manifest.id;
  }

  /** Consumes jobs until `close`, one at a time per call; `onJob` hears each finished link. */
  async work(harness: Harness, options: { pollingIntervalSeconds?: number; onJob?: (job: RefillJob, batchId: string) => void } = {}): Promise<void> {
    await this.boss.work<RefillJob>(REFILL_QUEUE, { batchSize: 1, pollingIntervalSeconds: options.pollingIntervalSeconds ?? 2 }, async (jobs) => {
      for (const job of jobs) {
        const batchId = await this.runJob(harness, job.data);
        options.onJob?.(job.data, batchId);
      }
    });
  }

  /** Batch ids of closed links not in `seen` (a replica adds them to its pool). */
  async closedBatches(seen: ReadonlySet<string>): Promise<string[]> {
    const rows = await this.pool.query<{ batch_id: string }>(`SELECT batch_id FROM ${this.schema}.refill_links WHERE batch_id IS NOT NULL ORDER BY split, slice, level, seq`);
    return rows.rows.map((r) => r.batch_id).filter((id) => !seen.has(id));
  }

  async close(): Promise<void> {
    await this.boss.stop({ graceful: true, wait: true, timeout: 5_000 }).catch(() => undefined);
    await this.pool.end().catch(() => undefined);
  }
}

/** Options of a replica's queued refill. */
export interface QueuedRefillOptions {
  /** A (slice, level) of the dynamic pool with fewer tasks than this gets a refill job. */
  lowWater: number;
  /** How often closed links are looked for and their batches added to the pool (default 1000 ms). */
  pollMs?: number;
  onError?: (error: unknown) => void;
  /** Hears each closed link's batch as the poller takes it, with how many of its tasks were new to the pool. */
  onBatch?: (batchId: string, added: number) => void;
}

/**
 * Makes a serving harness enqueue refill jobs when a draw leaves a (slice, level) of the dynamic pool
 * below `lowWater`, and add the batches workers store. A draw never waits for either: the enqueue runs
 * in the background (createRefillingPool) and the draw uses what the pool holds.
 */
export function startQueuedRefill(harness: Harness, queue: RefillQueue, options: QueuedRefillOptions): { pool: RefillingPool; stop(): Promise<void> } {
  let refilling: RefillingPool | undefined;
  harness.wrapPool((pool) => {
    refilling = createRefillingPool({
      pool,
      lowWater: options.lowWater,
      batchSize: 0,
      refill: async (slice, level) => {
        await queue.enqueue(harness, { split: 'dynamic', slice, level });
        // Nothing now: the worker's batch arrives through the poll below (add() lifts the pause).
        return [];
      },
      ...(options.onError ? { onRefillError: (error: unknown) => options.onError!(error) } : {}),
    });
    return refilling;
  });
  const seen = new Set<string>();
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  const poll = (): void => {
    running = (async () => {
      try {
        for (const id of await queue.closedBatches(seen)) {
          const added = await harness.addBatchToPool(id);
          seen.add(id);
          options.onBatch?.(id, added);
        }
      } catch (error) {
        options.onError?.(error);
      }
    })();
  };
  const timer = setInterval(() => {
    if (!stopped) poll();
  }, options.pollMs ?? 1_000);
  timer.unref();
  return {
    pool: refilling!,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
      await refilling!.idle();
    },
  };
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

function parseQueueUrl(url: string): { connectionString: string; schema: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new EnvHarnessError('CONFIG_INVALID', 'refill queue: the store is not a URL; workers need --store postgres://user@host:port/database', { details: { pointer: '/store' } });
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new EnvHarnessError('CONFIG_INVALID', `refill queue: needs a postgres:// store, got ${parsed.protocol}//; the queue lives in PostgreSQL`, { details: { pointer: '/store' } });
  }
  const schema = parsed.searchParams.get('schema') ?? 'envharness';
  if (!SCHEMA_NAME.test(schema) || schema.length > 56) {
    throw new EnvHarnessError('CONFIG_INVALID', `refill queue: schema ${JSON.stringify(schema)} must be lower-case letters, digits and _ (at most 56)`, { details: { pointer: '/store/schema' } });
  }
  parsed.searchParams.delete('schema');
  return { connectionString: parsed.toString(), schema };
}
