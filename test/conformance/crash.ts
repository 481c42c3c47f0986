/**
 * What the stores' SIGKILL crash tests share (reliability plan T1, process-crash part): starting the child
 * (bundled once), killing it at a delay after `ready`, counting its acknowledged writes, and checking that
 * a reopened store holds exactly the effect of a prefix of the seeded workload, whole.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect } from 'vitest';
import type { EpisodeRecord, Store, Transition } from '../../src/core/index.js';
import { crashWorkload, type CrashOp } from '../../src/storage/sqlite/crash-workload.js';

/**
 * The node arguments that start `childScript`. `node --import tsx child.ts` spends ~0.4 s per start
 * transpiling; bundling the child once with the esbuild that tsx brings makes each start ~2x cheaper. The
 * drivers named by `external` stay outside the bundle (native or CommonJS code that requires Node built-ins
 * at run time), imported from where they are installed. Same code either way.
 */
export async function childCommand(childScript: string, dir: string, external: RegExp): Promise<string[]> {
  try {
    const { build } = await import('esbuild');
    const require = createRequire(import.meta.url);
    const outfile = join(dir, 'crash-child.mjs');
    await build({
      entryPoints: [childScript],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      logLevel: 'error',
      plugins: [
        { name: 'drivers', setup: (b) => b.onResolve({ filter: external }, (args) => ({ path: pathToFileURL(require.resolve(args.path)).href, external: true })) },
      ],
    });
    return [outfile];
  } catch {
    // No esbuild next to tsx: run the TypeScript child through tsx, only slower.
    return ['--import', 'tsx', childScript];
  }
}

/** What one killed child did. */
export interface ChildResult {
  acked: number;
  signal: NodeJS.Signals | null;
  code: number | null;
  stderr: string;
}

/** Runs the child and SIGKILLs it `delayMs` after it printed `ready`; counts the complete `ack` lines. */
export function runChild(command: readonly string[], args: readonly string[], cwd: string, delayMs: number): Promise<ChildResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [...command, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
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

/** The first `count` ops of the seed's workload. */
export function firstOps(seed: number, count: number): CrashOp[] {
  const ops: CrashOp[] = [];
  for (const op of crashWorkload(seed)) {
    if (ops.length === count) break;
    ops.push(op);
  }
  return ops;
}

/** Whether the op's write is in the store (its batch, or its first transition). */
export async function isPresent(store: Store, op: CrashOp): Promise<boolean> {
  if (op.kind === 'batch') return (await store.getBatch(op.batch.manifest.id)) !== undefined;
  const first = op.transitions[0]!;
  return (await store.listTransitions(first.episodeId)).some((t) => t.step === first.step);
}

/** Checks that the store holds exactly the effect of `ops` (in workload order) for this seed, whole. */
export async function expectExactly(store: Store, seed: number, ops: readonly CrashOp[]): Promise<void> {
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

/** Checks that no episode of the seed's run has a step counter that disagrees with its transitions. */
export async function expectStepCounters(store: Store, seed: number, label: string): Promise<void> {
  for (const episode of await store.listEpisodes({ runId: `crash-${seed}` })) {
    expect((await store.listTransitions(episode.id)).length, `${label}: episode ${episode.id}`).toBe(episode.steps);
  }
}
