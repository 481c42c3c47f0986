/**
 * Crash must-show (reliability plan T1, process-crash part): a child writes a burst of batches and
 * transitions and is SIGKILLed at a seeded point; after reopening, every acknowledged write is present
 * and whole, at most the one write in flight is also present (whole), the file passes integrity_check,
 * and no episode's step counter disagrees with its transitions. RUNS=200 for the long variant. Children of
 * even seeds checkpoint from a worker thread (continuously), so kills also land in the middle of a checkpoint.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRng, type EpisodeRecord, type Transition } from '../../core/index.js';
import { crashWorkload, type CrashOp } from './crash-workload.js';
import { createSqliteStore, type SqliteStore } from './index.js';

const RUNS = Number(process.env.RUNS ?? 50);
const BASE_SEED = 1000;
/** Kill delays, in ms after the child reports it has opened the store. */
const MAX_KILL_DELAY_MS = 100;

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../../..');
const childScript = join(here, 'crash-child.ts');
const dir = mkdtempSync(join(tmpdir(), 'envharness-crash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * How to start the child. `node --import tsx crash-child.ts` spends ~0.4 s per start transpiling; bundling
 * the child once with the esbuild that tsx brings makes each start ~2x cheaper. Same code either way.
 */
let childArgs: string[] = ['--import', 'tsx', childScript];
beforeAll(async () => {
  try {
    const { build } = await import('esbuild');
    const driver = pathToFileURL(createRequire(import.meta.url).resolve('better-sqlite3')).href;
    const outfile = join(dir, 'crash-child.mjs');
    await build({
      entryPoints: [childScript],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      logLevel: 'error',
      // The native driver stays outside the bundle, imported from where it is installed.
      plugins: [{ name: 'driver', setup: (b) => b.onResolve({ filter: /^better-sqlite3$/ }, () => ({ path: driver, external: true })) }],
    });
    childArgs = [outfile];
  } catch {
    // No esbuild next to tsx: run the TypeScript child through tsx, only slower.
  }
});

interface ChildResult {
  acked: number;
  signal: NodeJS.Signals | null;
  code: number | null;
  stderr: string;
}

/** Runs the child and SIGKILLs it `delayMs` after it printed `ready`; counts the complete `ack` lines. */
function runChild(file: string, seed: number, delayMs: number): Promise<ChildResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [...childArgs, file, String(seed)], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
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
      // Only whole lines count: a line cut by the kill was not acknowledged.
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

/** The ops the child performed, as many as `count` (plus the one after, which may be in flight). */
function firstOps(seed: number, count: number): CrashOp[] {
  const ops: CrashOp[] = [];
  for (const op of crashWorkload(seed)) {
    if (ops.length === count) break;
    ops.push(op);
  }
  return ops;
}

async function isPresent(store: SqliteStore, op: CrashOp): Promise<boolean> {
  if (op.kind === 'batch') return (await store.getBatch(op.batch.manifest.id)) !== undefined;
  const first = op.transitions[0]!;
  return (await store.listTransitions(first.episodeId)).some((t) => t.step === first.step);
}

/** Checks that the store holds exactly the effect of `ops` for this seed, whole. */
async function expectExactly(store: SqliteStore, seed: number, ops: readonly CrashOp[], next: CrashOp): Promise<void> {
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
  expect(await isPresent(store, next)).toBe(false);
}

describe('sqlite store: SIGKILL during a write burst', () => {
  it(`loses no acknowledged write and leaves a sound file (${RUNS} runs)`, { timeout: 60_000 + RUNS * 2_000 }, async () => {
    const file = join(dir, 'crash.db');
    let totalAcked = 0;
    let inFlightPresent = 0;
    for (let run = 0; run < RUNS; run++) {
      const seed = BASE_SEED + run;
      const delayMs = createRng(['crash-kill-delay', run]).int(0, MAX_KILL_DELAY_MS);
      const result = await runChild(file, seed, delayMs);
      expect(result.signal, `run ${run}: child did not die by SIGKILL (code ${result.code}): ${result.stderr}`).toBe('SIGKILL');
      totalAcked += result.acked;

      const store = createSqliteStore(file);
      try {
        const ops = firstOps(seed, result.acked + 2);
        // The write after the last ack may have committed before the kill (its ack line was not printed).
        const present = (await isPresent(store, ops[result.acked]!)) ? result.acked + 1 : result.acked;
        if (present > result.acked) inFlightPresent += 1;
        await expectExactly(store, seed, ops.slice(0, present), ops[present]!);
        expect(await store.checkIntegrity(), `run ${run}`).toEqual([]);
        for (const episode of await store.listEpisodes()) {
          expect((await store.listTransitions(episode.id)).length, `run ${run}: episode ${episode.id}`).toBe(episode.steps);
        }
      } finally {
        await store.close();
      }
    }
    // The burst really ran: the kills landed among acknowledged writes, not before the first one.
    expect(totalAcked).toBeGreaterThan(RUNS);
    const mode = childArgs[0] === '--import' ? 'tsx' : 'bundled';
    console.info(
      `crash test (${mode} child): ${RUNS} runs, ${totalAcked} acknowledged writes, ` +
        `in-flight write committed in ${inFlightPresent} runs`,
    );
  });
});
