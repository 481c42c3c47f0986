// `envharness serve --refill-low-water` on PostgreSQL: a real serve process queues a refill, a real worker fills it.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { builtinDomains } from '../../src/builtins.js';
import { createHarness, type Harness } from '../../src/index.js';
import { createTestDatabase, PG_SKIP_MESSAGE, PG_TEST_URL, type TestDatabase } from '../support/postgres.js';
import { systemClock } from '../../src/cli/clock.js';

const TOKEN = 'serve-refill-test-token-0123456789';
const LOW_WATER = 5;
const BATCH_SIZE = 16;

interface Proc {
  child: ChildProcess;
  out: string[];
  err: string[];
}

function start(args: string[]): Proc {
  const child = spawn(process.execPath, ['bin/envharness.js', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const proc: Proc = { child, out: [], err: [] };
  const lines = (into: string[]) => {
    let rest = '';
    return (d: Buffer) => {
      const parts = (rest + String(d)).split('\n');
      rest = parts.pop()!;
      into.push(...parts);
    };
  };
  child.stdout!.on('data', lines(proc.out));
  child.stderr!.on('data', lines(proc.err));
  return proc;
}

async function stop(proc: Proc | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  if (proc === undefined) return null;
  const { child } = proc;
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  child.kill(signal);
  return exited;
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, proc?: Proc, timeoutMs = 40_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (proc !== undefined && proc.child.exitCode !== null) throw new Error(`${what}: the process exited ${proc.child.exitCode}: ${proc.err.join('\n')}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${proc ? `; stderr: ${proc.err.join('\n')}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('envharness serve --refill-low-water on a SQLite store', () => {
  it('is refused with CONFIG_INVALID and creates nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'envh-refill-'));
    try {
      const file = join(dir, 'store.db');
      const proc = start(['--store', file, '--json', 'serve', '--port', '0', '--refill-low-water', '5']);
      const code = await new Promise<number | null>((done) => proc.child.once('exit', (c) => done(c)));
      expect(code).toBe(2);
      const text = [...proc.out, ...proc.err].join('\n');
      expect(text).toContain('CONFIG_INVALID');
      expect(text).toContain('--refill-low-water needs a postgres:// store');
      expect(existsSync(file)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});

if (PG_TEST_URL === undefined) {
  describe('envharness serve --refill-low-water on PostgreSQL', () => {
    it.skip(PG_SKIP_MESSAGE, () => undefined);
  });
} else {
  describe('envharness serve --refill-low-water on PostgreSQL', () => {
    let db: TestDatabase | undefined;
    let harness: Harness | undefined;
    let serve: Proc | undefined;
    let worker: Proc | undefined;
    let client: pg.Client | undefined;

    afterAll(async () => {
      await stop(worker, 'SIGKILL');
      await stop(serve, 'SIGKILL');
      await client?.end().catch(() => undefined);
      await harness?.close();
      await db?.drop();
    });

    it('a draw below the low-water mark queues one link without waiting; a worker fills it; the serve pool grows by that batch', async () => {
      db = await createTestDatabase('envh_srefill');
      const url = db.schemaUrl();
      const schema = new URL(url).searchParams.get('schema')!;
      // A store whose math/arithmetic slice has levels 1 and 2 only: level 3 is below any low-water mark.
      harness = await createHarness({ clock: systemClock, store: url, domains: builtinDomains() });
      await harness.initialize({ seed: 7 });
      await harness.generate({ templates: [{ id: 'math/chain-sum@1' }], levels: [1, 2], count: 20, seed: 1, split: 'dynamic' }, { workers: 1 });

      serve = start(['--store', url, '--json', 'serve', '--port', '0', '--token', TOKEN, '--no-mcp', '--no-openenv', '--no-fill', '--refill-low-water', String(LOW_WATER), '--refill-batch-size', String(BATCH_SIZE)]);
      const started = JSON.parse(await until('serve to listen', () => serve!.out[0], serve)) as { url: string };
      const api = async (path: string) => {
        const res = await fetch(`${started.url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
        expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
        return (await res.json()) as any;
      };
      const sample = async () => (await api('/v1/tasks/sample?taskType=arithmetic&level=3')).task as { id: string; level: number };
      const links = async () => (await client!.query<{ seq: number; batch_id: string | null }>(`SELECT seq, batch_id FROM ${schema}.refill_links ORDER BY seq`)).rows;
      const storedAtLevel3 = async () => {
        const stats = await api('/v1/pool');
        return (stats.slices as Array<{ slice: string; split: string; levels: Record<string, number> }>).find((s) => s.split === 'dynamic' && s.slice === 'math/arithmetic')?.levels['3'] ?? 0;
      };
      expect(await storedAtLevel3()).toBe(0);

      // Hold the chain's advisory lock from another session: the enqueue the draws start blocks on it.
      client = new pg.Client({ connectionString: db.url });
      await client.connect();
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`${schema}:refill:dynamic:math/arithmetic:3`]);
      for (let i = 0; i < 5; i++) {
        // Answered from the pool (the nearest level) while the enqueue is still waiting.
        expect((await sample()).level).toBe(2);
      }
      expect(await links()).toEqual([]);
      await client.query('COMMIT');
      const open = await until('the refill link', async () => ((await links()).length > 0 ? await links() : undefined), serve);
      expect(open).toEqual([{ seq: 1, batch_id: null }]);
      // No worker exists yet: this draw cannot be waiting for the batch.
      expect((await sample()).level).toBe(2);
      expect(await storedAtLevel3()).toBe(0);

      worker = start(['--store', url, '--json', 'worker', '--poll', '1']);
      const added = await until(
        "the worker's batch in the serve pool",
        () => serve!.err.map((l) => (l.startsWith('{"refill"') ? (JSON.parse(l) as { refill: { batch: string; added: number } }).refill : undefined)).find((r) => r !== undefined),
        serve,
      );
      const closed = await links();
      expect(closed).toEqual([{ seq: 1, batch_id: added.batch }]);
      expect(worker.out.map((l) => JSON.parse(l) as { batch?: string }).filter((l) => l.batch !== undefined).map((l) => l.batch)).toEqual([added.batch]);
      // The pool grew by exactly the batch: every active task of it, all at level 3, and nothing else.
      const batchTasks = await harness.store.listTasks({ batchId: added.batch });
      const active = batchTasks.filter((t) => t.status === 'active');
      expect(active.length).toBeGreaterThanOrEqual(LOW_WATER);
      expect(added.added).toBe(active.length);
      expect(active.every((t) => t.level === 3 && t.template.startsWith('math/'))).toBe(true);
      expect(await storedAtLevel3()).toBe(active.length);
      // Draws at level 3 now come from that batch (no fallback), and the slice is above the mark: no second link.
      const ids = new Set(active.map((t) => t.id));
      for (let i = 0; i < 8; i++) {
        const task = await sample();
        expect(task.level).toBe(3);
        expect(ids.has(task.id)).toBe(true);
      }
      expect(await links()).toEqual(closed);

      expect(await stop(worker)).toBe(0);
      expect(await stop(serve)).toBe(0);
    }, 90_000);
  });
}
