import { spawn, type ChildProcess } from 'node:child_process';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinDomains } from '../builtins.js';
import { createHarness, type Harness } from '../index.js';
import { createTestDatabase, PG_SKIP_MESSAGE, PG_TEST_URL, type TestDatabase } from '../../test/support/postgres.js';
import { RefillQueue, startQueuedRefill, type RefillJob, type RefillLink } from './refill-queue.js';
import { systemClock } from '../cli/clock.js';

const CHAINS: Array<Omit<RefillJob, 'seq'>> = [
  { split: 'dynamic', slice: 'math/arithmetic', level: 3 },
  { split: 'dynamic', slice: 'math/arithmetic', level: 4 },
  { split: 'dynamic', slice: 'math/counting', level: 2 },
  { split: 'dynamic', slice: 'math/counting', level: 3 },
];
const LINKS_PER_CHAIN = 3;
const BATCH_SIZE = 24;
/** Large enough that a SIGKILL right after the job starts lands inside the generation. */
const KILL_BATCH_SIZE = 3_000;

/** A store with the same starting pool every time. */
async function prepare(url: string): Promise<Harness> {
  const harness = await createHarness({ clock: systemClock, store: url, domains: builtinDomains() });
  await harness.initialize({ seed: 7 });
  await harness.generate({ templates: [{ id: 'math/chain-sum@1' }, { id: 'math/count-letters@1' }], levels: [1, 2, 3, 4], count: 40, seed: 1, split: 'dynamic' }, { workers: 1 });
  return harness;
}

function startWorker(url: string, extra: string[] = []): ChildProcess {
  const child = spawn(process.execPath, ['bin/envharness.js', '--store', url, '--json', 'worker', '--poll', '1', ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.resume();
  let err = '';
  child.stderr!.on('data', (d) => (err += String(d)));
  child.on('exit', (code, signal) => {
    if (code !== 0 && signal === null) console.error(`worker exited ${code}: ${err}`);
  });
  return child;
}

async function stop(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((done) => child.once('exit', done));
  child.kill(signal);
  await exited;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Every chain's links created as the previous one closes, until each chain has LINKS_PER_CHAIN closed links. */
async function driveChains(harness: Harness, queue: RefillQueue): Promise<RefillLink[]> {
  // Link 1 of every chain first, before any worker result: each link's base is then the same in every run.
  for (const chain of CHAINS) await queue.enqueue(harness, chain);
  return until('all refill links closed', async () => {
    const links = await queue.links();
    for (const chain of CHAINS) {
      const mine = links.filter((l) => l.slice === chain.slice && l.level === chain.level);
      const last = mine[mine.length - 1]!;
      if (last.batchId !== null && mine.length < LINKS_PER_CHAIN) await queue.enqueue(harness, chain);
    }
    return links.length === CHAINS.length * LINKS_PER_CHAIN && links.every((l) => l.batchId !== null) ? links : undefined;
  }, 90_000);
}

/** What must not depend on the number of workers: each link's batch manifest and task ids. */
async function outcome(harness: Harness, links: RefillLink[]) {
  const manifests = new Map((await harness.store.listBatches()).map((m) => [m.id, m]));
  const rows = [];
  for (const link of links) {
    const tasks = await harness.store.listTasks({ batchId: link.batchId! });
    rows.push({ chain: `${link.slice}@${link.level}#${link.seq}`, base: link.base, manifest: manifests.get(link.batchId!), taskIds: tasks.map((t) => t.id) });
  }
  return rows;
}

if (PG_TEST_URL === undefined) {
  describe('pool refill as queue jobs', () => {
    it.skip(PG_SKIP_MESSAGE, () => undefined);
  });
} else {
  describe('pool refill as queue jobs', () => {
    let db: TestDatabase;
    let single: Awaited<ReturnType<typeof outcome>>;
    const children: ChildProcess[] = [];

    beforeAll(async () => {
      db = await createTestDatabase('envh_queue');
    });
    afterAll(async () => {
      for (const child of children) await stop(child, 'SIGKILL');
      await db?.drop();
    });

    async function runWith(workers: number) {
      const url = db.schemaUrl();
      const harness = await prepare(url);
      const queue = await RefillQueue.open({ url, batchSize: BATCH_SIZE });
      const started = Array.from({ length: workers }, () => startWorker(url));
      children.push(...started);
      try {
        const links = await driveChains(harness, queue);
        return await outcome(harness, links);
      } finally {
        for (const child of started) await stop(child);
        await queue.close();
        await harness.close();
      }
    }

    it('two `envharness worker` processes give the same batches, manifests and task ids as one', async () => {
      single = await runWith(1);
      const double = await runWith(2);
      expect(single).toHaveLength(CHAINS.length * LINKS_PER_CHAIN);
      expect(single.every((r) => r.manifest !== undefined && r.manifest.accepted > 0)).toBe(true);
      // Link n's base is link n-1's base plus link n-1's batch: the chain is ordered.
      for (const [i, row] of single.entries()) {
        if (row.chain.endsWith('#1')) continue;
        expect(row.base).toContain(single[i - 1]!.manifest!.id);
      }
      expect(double).toEqual(single);
    }, 150_000);

    it('a job whose worker is SIGKILLed mid-job is retried by another worker and stores its batch once', async () => {
      const chain = CHAINS[0]!;
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      // The reference: the same link run by a worker that is never killed, in a store prepared the same way.
      const refUrl = db.schemaUrl();
      const refHarness = await prepare(refUrl);
      const refQueue = await RefillQueue.open({ url: refUrl, batchSize: KILL_BATCH_SIZE, expireInSeconds: 2 });
      await refQueue.enqueue(refHarness, chain);
      const refWorker = startWorker(refUrl, ['--maintenance', '1']);
      children.push(refWorker);

      const url = db.schemaUrl();
      const schema = new URL(url).searchParams.get('schema')!;
      const harness = await prepare(url);
      const queue = await RefillQueue.open({ url, batchSize: KILL_BATCH_SIZE, expireInSeconds: 2 });
      try {
        const link = (await queue.enqueue(harness, chain))!;
        const victim = startWorker(url, ['--maintenance', '1']);
        children.push(victim);
        await until('the job to be active', async () => {
          const r = await client.query(`SELECT state FROM ${schema}_queue.job WHERE name = 'envharness-refill'`);
          return r.rows[0]?.state === 'active' ? true : undefined;
        });
        await stop(victim, 'SIGKILL');
        const open = await queue.links();
        const survivor = startWorker(url, ['--maintenance', '1']);
        children.push(survivor);
        const closed = await until('the link to close after the retry', async () => {
          const links = await queue.links();
          return links[0]?.batchId !== null ? links[0] : undefined;
        }, 90_000);
        await stop(survivor);
        const reference = await until('the reference link to close', async () => {
          const links = await refQueue.links();
          return links[0]?.batchId !== null ? links[0] : undefined;
        }, 90_000);
        await stop(refWorker);
        const job = await client.query(`SELECT retry_count FROM ${schema}_queue.job WHERE name = 'envharness-refill'`);
        expect(job.rows).toHaveLength(1);
        // Killed mid-job: the link was still open, and the job ran again.
        expect(open[0]!.batchId).toBeNull();
        expect(job.rows[0].retry_count).toBeGreaterThanOrEqual(1);
        // Stored once, and the same batch as the worker that was never killed.
        expect(closed.batchId).toBe(reference.batchId);
        expect(closed.base).toEqual(link.base);
        const batches = await harness.store.listBatches();
        expect(batches.filter((b) => b.id === closed.batchId)).toHaveLength(1);
        expect(batches).toHaveLength((await refHarness.store.listBatches()).length);
        const tasks = await harness.store.listTasks({ batchId: closed.batchId! });
        expect(tasks.map((t) => t.id)).toEqual((await refHarness.store.listTasks({ batchId: reference.batchId! })).map((t) => t.id));
        expect(new Set(tasks.map((t) => t.id)).size).toBe(tasks.length);
      } finally {
        await client.end();
        await queue.close();
        await refQueue.close();
        await harness.close();
        await refHarness.close();
      }
    }, 150_000);

    it('a link run again after its batch is stored gives the same batch (its base, not the store, is what it dedups against)', async () => {
      const url = db.schemaUrl();
      const harness = await prepare(url);
      const queue = await RefillQueue.open({ url, batchSize: BATCH_SIZE });
      try {
        const link = (await queue.enqueue(harness, CHAINS[0]!))!;
        const stored = await queue.runJob(harness, link);
        expect((await queue.links())[0]!.batchId).toBe(stored);
        // A second worker that started the same job before the first closed it: same batch, a no-op save.
        const again = await harness.generate(link.request, { base: link.base, workers: 1 });
        expect(again.manifest.id).toBe(stored);
        expect(again.manifest.accepted).toBeGreaterThan(0);
        expect((await harness.store.listBatches()).filter((b) => b.id === stored)).toHaveLength(1);
        // Against the whole store instead, its own tasks count as duplicates: another batch.
        await expect(harness.generate(link.request, { workers: 1 })).resolves.toMatchObject({ manifest: { accepted: 0 } });
      } finally {
        await queue.close();
        await harness.close();
      }
    }, 60_000);

    it('a replica enqueues refills when a slice runs low and its draws never wait for them', async () => {
      const url = db.schemaUrl();
      const harness = await prepare(url);
      const queue = await RefillQueue.open({ url, batchSize: BATCH_SIZE });
      const refill = startQueuedRefill(harness, queue, { lowWater: 1_000, pollMs: 200 });
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      const schema = new URL(url).searchParams.get('schema')!;
      try {
        // Block every enqueue: hold the chain's advisory lock from another session.
        await client.query('BEGIN');
        await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`${schema}:refill:dynamic:math/arithmetic:3`]);
        const before = refill.pool.size('math/arithmetic', 3, 'dynamic');
        for (let i = 0; i < 20; i++) {
          const task = await harness.generateTask({ taskType: 'arithmetic', level: 3 });
          expect(task.level).toBe(3);
        }
        // The draws returned while the enqueue they started is still waiting on the lock.
        expect(refill.pool.refilling()).toContainEqual({ slice: 'math/arithmetic', level: 3 });
        expect(await queue.links()).toEqual([]);
        await client.query('COMMIT');
        const link = await until('the refill link', async () => (await queue.links()).find((l) => l.slice === 'math/arithmetic' && l.level === 3));
        expect(link.batchId).toBeNull();
        // Draws go on with no worker at all; then a worker closes the link and the replica adds its batch.
        await harness.generateTask({ taskType: 'arithmetic', level: 3 });
        const worker = startWorker(url);
        children.push(worker);
        await until('the worker batch in the replica pool', async () => (refill.pool.size('math/arithmetic', 3, 'dynamic') > before ? true : undefined));
        await stop(worker);
        const closed = (await queue.links()).find((l) => l.seq === link.seq && l.slice === link.slice && l.level === 3)!;
        const added = await harness.store.countTasks({ batchId: closed.batchId!, status: 'active' });
        expect(refill.pool.size('math/arithmetic', 3, 'dynamic')).toBe(before + added);
      } finally {
        await client.query('ROLLBACK').catch(() => undefined);
        await client.end();
        await refill.stop();
        await queue.close();
        await harness.close();
      }
    }, 90_000);
  });
}
