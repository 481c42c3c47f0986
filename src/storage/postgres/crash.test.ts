/**
 * Crash must-show for PostgreSQL (reliability plan T1, process-crash part, as for SQLite): a child writes a
 * burst of batches and transitions and is SIGKILLed at a seeded point; afterwards every acknowledged write
 * is present and whole, the writes in flight are each whole or absent, nothing later is present, and no
 * episode's step counter disagrees with its transitions. Odd seeds keep 4 writes in flight (group commits).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRng, type EpisodeRecord, type Store, type Transition } from '../../core/index.js';
import { createTestDatabase, PG_SKIP_MESSAGE, PG_TEST_URL, type TestDatabase } from '../../../test/support/postgres.js';
import { crashWorkload, type CrashOp } from '../sqlite/crash-workload.js';
import { createPostgresStore } from './index.js';

const RUNS = Number(process.env.RUNS ?? 30);
const BASE_SEED = 5000;
const MAX_KILL_DELAY_MS = 400;
/** Writes the child may have in flight beyond its last ack (see crash-child.ts). */
const windowOf = (seed: number) => (seed % 2 === 0 ? 1 : 4);

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../../..');
const childScript = join(here, 'crash-child.ts');

if (PG_TEST_URL === undefined) {
  describe('postgres store: SIGKILL during a write burst', () => {
    it.skip(PG_SKIP_MESSAGE, () => undefined);
  });
} else {
  const dir = mkdtempSync(join(tmpdir(), 'envharness-pgcrash-'));
  let db: TestDatabase;
  let childArgs: string[] = ['--import', 'tsx', childScript];
  beforeAll(async () => {
    db = await createTestDatabase('envh_crash');
    try {
      // Bundled once (esbuild from tsx): each child start is ~2x cheaper than transpiling through tsx.
      const { build } = await import('esbuild');
      const driver = pathToFileURL(createRequire(import.meta.url).resolve('pg')).href;
      const outfile = join(dir, 'crash-child.mjs');
      await build({
        entryPoints: [childScript],
        outfile,
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node20',
        logLevel: 'error',
        plugins: [{ name: 'driver', setup: (b) => b.onResolve({ filter: /^pg$/ }, () => ({ path: driver, external: true })) }],
      });
      childArgs = [outfile];
    } catch {
      // No esbuild: run the TypeScript child through tsx, only slower.
    }
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await db?.drop();
  });

  describe('postgres store: SIGKILL during a write burst', () => {
    it(`loses no acknowledged write and leaves whole writes only (${RUNS} runs)`, { timeout: 60_000 + RUNS * 3_000 }, async () => {
      const url = db.schemaUrl();
      (await createPostgresStore(url)).close(); // migrate before the first child, so kills land among writes
      let totalAcked = 0;
      let inFlightPresent = 0;
      for (let run = 0; run < RUNS; run++) {
        const seed = BASE_SEED + run;
        const delayMs = createRng(['pg-crash-kill-delay', run]).int(0, MAX_KILL_DELAY_MS);
        const result = await runChild(childArgs, url, seed, delayMs);
        expect(result.signal, `run ${run}: child did not die by SIGKILL (code ${result.code}): ${result.stderr}`).toBe('SIGKILL');
        totalAcked += result.acked;
        const store = await createPostgresStore(url);
        try {
          const window = windowOf(seed);
          const ops = firstOps(seed, result.acked + window + 1);
          const present = ops.slice(0, result.acked);
          for (const op of ops.slice(result.acked, result.acked + window)) {
            if (await isPresent(store, op)) {
              present.push(op);
              inFlightPresent += 1;
            }
          }
          await expectExactly(store, seed, present);
          expect(await isPresent(store, ops[result.acked + window]!), `run ${run}: a write after the in-flight window is present`).toBe(false);
          for (const episode of await store.listEpisodes({ runId: `crash-${seed}` })) {
            expect((await store.listTransitions(episode.id)).length, `run ${run}: episode ${episode.id}`).toBe(episode.steps);
          }
        } finally {
          await store.close();
        }
      }
      expect(totalAcked).toBeGreaterThan(RUNS);
      console.info(`postgres crash test: ${RUNS} runs, ${totalAcked} acknowledged writes, ${inFlightPresent} in-flight writes committed`);
    });
  });
}

interface ChildResult {
  acked: number;
  signal: NodeJS.Signals | null;
  code: number | null;
  stderr: string;
}

/** Runs the child and SIGKILLs it `delayMs` after it printed `ready`; counts the complete `ack` lines. */
function runChild(childArgs: string[], url: string, seed: number, delayMs: number): Promise<ChildResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [...childArgs, url, String(seed)], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let stderr = '';
    let timer: NodeJS.Timeout | undefined;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      if (timer === undefined && out.startsWith('ready\n')) timer = setTimeout(() => child.kill('SIGKILL'), delayMs);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const lines = out.split('\n').slice(0, -1);
      let acked = 0;
      for (const line of lines.slice(1)) {
        if (line === 'done') break;
        if (line !== `ack ${acked}`) return reject(new Error(`unexpected child output line ${JSON.stringify(line)}`));
        acked += 1;
      }
      resolvePromise({ acked, signal, code, stderr });
    });
  });
}

function firstOps(seed: number, count: number): CrashOp[] {
  const ops: CrashOp[] = [];
  for (const op of crashWorkload(seed)) {
    if (ops.length === count) break;
    ops.push(op);
  }
  return ops;
}

async function isPresent(store: Store, op: CrashOp): Promise<boolean> {
  if (op.kind === 'batch') return (await store.getBatch(op.batch.manifest.id)) !== undefined;
  const first = op.transitions[0]!;
  return (await store.listTransitions(first.episodeId)).some((t) => t.step === first.step);
}

/** Checks that the store holds exactly the effect of `ops` (in workload order) for this seed, whole. */
async function expectExactly(store: Store, seed: number, ops: readonly CrashOp[]): Promise<void> {
  const episodes = new Map<string, EpisodeRecord>();
  const transitions = new Map<string, Transition[]>();
  for (const op of ops) {
    if (op.kind === 'batch') {
      const { manifest } = op.batch;
      expect(await store.getBatch(manifest.id)).toEqual(manifest);
      const tasks = await store.listTasks({ batchId: manifest.id });
      expect(tasks.map((t) => t.id)).toEqual(op.batch.tasks.map((t) => t.id));
      expect(tasks.map((t) => t.status)).toEqual(op.batch.tasks.map((t) => (op.review.includes(t.id) ? 'pending_review' : 'active')));
      expect(await store.listGenerationLog({ batchId: manifest.id })).toEqual(op.batch.log);
    } else {
      episodes.set(op.episode.id, op.episode);
      transitions.set(op.episode.id, [...(transitions.get(op.episode.id) ?? []), ...op.transitions]);
    }
  }
  const stored = await store.listEpisodes({ runId: `crash-${seed}` });
  expect(stored.map((e) => e.id).sort()).toEqual([...episodes.keys()].sort());
  for (const [id, episode] of episodes) {
    expect(await store.getEpisode(id)).toEqual(episode);
    expect(await store.listTransitions(id)).toEqual(transitions.get(id));
  }
}
