/**
 * Issue 14 §3, `train --resume`: a training run SIGKILLed at a seeded point (a real child process, a real
 * SQLite file) and resumed ends exactly as the same run uninterrupted: the same episodes (ids, seeds,
 * rewards, transitions), the same run events (the curriculum log), the same summary, end snapshot and
 * learner state. Kills land before the first checkpoint, mid-run, and twice in one run.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalize, createRng, digest, type JsonValue } from '../../src/core/index.js';
import { math } from '../../src/domains/math/index.js';
import { createHarness } from '../../src/harness/harness.js';
import { createSqliteStore } from '../../src/storage/sqlite/index.js';
import { createAgent } from '../../src/index.js';
import { checkpointKey } from '../../src/harness/train-checkpoint.js';
import { systemClock } from '../../src/cli/clock.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const dir = mkdtempSync(join(tmpdir(), 'envharness-resume-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const SEED = 3;
const base = join(dir, 'base.db');

interface Child {
  signal: NodeJS.Signals | null;
  code: number | null;
  progress: number[];
  result?: { summary: { runId: string; snapshotEnd: string } & Record<string, JsonValue>; agent: string };
  err: string;
}

/** Runs the child; with `killAt`, SIGKILLs it as soon as it reports that many episodes done (or more). */
function child(args: string[], killAt?: number): Promise<Child> {
  return new Promise((done, fail) => {
    // With a kill point the child also stops there and waits for the kill (a parent reading late cannot miss it).
    const argv = killAt === undefined ? args : [...args, String(killAt)];
    const p = spawn(process.execPath, ['--import', 'tsx', join(here, 'train-resume-child.ts'), ...argv], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Child = { signal: null, code: null, progress: [], err: '' };
    let buffer = '';
    p.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (line.startsWith('progress ')) {
          const n = Number(line.slice(9));
          out.progress.push(n);
          if (killAt !== undefined && n >= killAt) p.kill('SIGKILL');
        } else if (line.startsWith('result ')) out.result = JSON.parse(line.slice(7));
      }
    });
    p.stderr.setEncoding('utf8').on('data', (c: string) => (out.err += c));
    p.on('error', fail);
    p.on('close', (code, signal) => done({ ...out, code, signal }));
  });
}

/** Everything a run left in a store, in a comparable form (timestamps of records excluded: wall time differs). */
async function runContent(file: string, runId: string): Promise<JsonValue> {
  const store = createSqliteStore(file, { now: systemClock });
  try {
    const episodes = await store.listEpisodes({ runId });
    const run = (await store.getRun(runId))!;
    return {
      status: run.status,
      summary: run.summary ?? null,
      snapshotEnd: run.snapshotEnd ?? null,
      end: run.snapshotEnd ? ((await store.getSnapshot(run.snapshotEnd))?.id ?? null) : null,
      events: (await store.listRunEvents(runId)) as unknown as JsonValue,
      episodes: await Promise.all(
        episodes.map(async (e) => {
          const { createdAt: _c, updatedAt: _u, ...rest } = e;
          return { ...rest, transitions: digest((await store.listTransitions(e.id)) as unknown as JsonValue) } as unknown as JsonValue;
        }),
      ),
      sampler: (await store.getMeta('rng.sampler')) ?? null,
      checkpoint: (await store.getMeta(checkpointKey(runId))) ?? null,
    };
  } finally {
    await store.close();
  }
}

let reference: { result: NonNullable<Child['result']>; content: JsonValue };

beforeAll(async () => {
  // One world for every run: a math pool and its regression set, copied file by file.
  const h = await createHarness({ clock: systemClock, store: base, domains: [math] });
  await h.initialize({ seed: 11 });
  await h.generate({ templates: [{ id: 'math/chain-sum@1' }], levels: [1, 2, 3, 4, 5], count: 300, seed: 1, split: 'dynamic' });
  await h.generate({ templates: [{ id: 'math/count-letters@1' }], levels: [1, 2, 3, 4], count: 160, seed: 2, split: 'dynamic' });
  await h.close();
  const file = join(dir, 'reference.db');
  copyFileSync(base, file);
  const run = await child(['train', file, String(SEED)]);
  expect(run.code, run.err).toBe(0);
  reference = { result: run.result!, content: await runContent(file, run.result!.summary.runId) };
}, 240_000);

describe('train --resume after SIGKILL', () => {
  // Seeded kill points: one before the first checkpoint (episode 20), two mid-run, one run killed twice.
  const rng = createRng(['t-resume', SEED]);
  const scenarios = [[8], [rng.int(30, 120)], [rng.int(20, 60), rng.int(80, 150)]];
  for (const kills of scenarios) {
    it(`killed at episode ${kills.join(' and again at ')}, resumed, ends identical to the uninterrupted run`, { timeout: 240_000 }, async () => {
      const file = join(dir, `killed-${kills.join('-')}.db`);
      copyFileSync(base, file);
      const first = await child(['train', file, String(SEED)], kills[0]);
      expect(first.signal, first.err).toBe('SIGKILL');
      const runId = reference.result.summary.runId;
      for (const at of kills.slice(1)) {
        const again = await child(['resume', file, runId], at);
        expect(again.signal, again.err).toBe('SIGKILL');
      }
      // What the kill left: a run still `running`, with episodes past its last checkpoint.
      const raw = createSqliteStore(file, { now: systemClock });
      expect((await raw.getRun(runId))?.status).toBe('running');
      const saved = (await raw.getMeta(checkpointKey(runId))) as { episodes: number };
      expect(saved.episodes).toBeLessThan(160);
      await raw.close();

      const resumed = await child(['resume', file, runId]);
      expect(resumed.code, resumed.err).toBe(0);
      // It continued from the checkpoint, not from the start: the first round it reports is past it.
      expect(resumed.progress[0]).toBeGreaterThan(saved.episodes);
      expect(resumed.result!.summary).toEqual(reference.result.summary);
      expect(resumed.result!.agent).toBe(reference.result.agent);
      const content = await runContent(file, runId);
      expect(canonicalize(content)).toBe(canonicalize(reference.content));
      const record = await (async () => {
        const s = createSqliteStore(file, { now: systemClock });
        const r = await s.getRun(runId);
        await s.close();
        return r!;
      })();
      expect(record.resumed?.map((r) => r.from)).toEqual(kills.map(() => 'interrupted'));
      expect(record.interrupted).toBeUndefined();
    });
  }
});

describe('train --resume refuses what it cannot continue', () => {
  it('an unknown run, a finished run, a different agent or option, a changed pool; each changes nothing', { timeout: 120_000 }, async () => {
    const file = join(dir, 'refusals.db');
    copyFileSync(base, file);
    const h = await createHarness({ clock: systemClock, store: file, domains: [math] });
    await h.initialize();
    const learner = (state: JsonValue) => createAgent('learner', { seed: SEED, ...(state === null ? {} : { state }) });
    await expect(h.resumeTrain('train-99', { agent: learner })).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
    const done = await h.train({ agent: createAgent('learner', { seed: SEED }), episodes: 16, concurrency: 8, seed: SEED });
    await expect(h.resumeTrain(done.runId, { agent: learner })).rejects.toMatchObject({ code: 'RUN_NOT_RESUMABLE', details: { status: 'finished' } });
    expect(await h.store.getMeta(checkpointKey(done.runId))).toBeNull();

    // A run whose agent threw at its 12th episode: `failed`, with its start checkpoint (checkpoints every 100).
    const real = createAgent('learner', { seed: SEED });
    let begun = 0;
    const flaky = { ...real, config: () => real.config(), getState: () => real.getState!(), begin: (ctx: Parameters<typeof real.begin>[0]) => {
      if (++begun === 12) throw new Error('agent crashed');
      return real.begin(ctx);
    } };
    await expect(h.train({ agent: flaky, episodes: 40, concurrency: 8, seed: SEED })).rejects.toThrow('agent crashed');
    const failed = (await h.store.listRuns()).at(-1)!;
    expect(failed.status).toBe('failed');
    const before = await runContent(file, failed.id);
    await expect(h.resumeTrain(failed.id, { agent: learner, given: { episodes: 50, seed: SEED }, flag: (f) => `--${f}` })).rejects.toMatchObject({
      code: 'PARAMS_INVALID',
      details: { pointer: '/episodes', given: 50, recorded: 40 },
      message: expect.stringContaining('drop --episodes'),
    });
    await expect(h.resumeTrain(failed.id, { agent: (state) => createAgent('learner', { seed: SEED + 1, ...(state === null ? {} : { state }) }) })).rejects.toMatchObject({
      code: 'PARAMS_INVALID',
      details: { pointer: '/agent' },
    });
    await expect(h.resumeTrain(failed.id, { agent: () => createAgent('random', { seed: SEED }) })).rejects.toMatchObject({ code: 'PARAMS_INVALID', details: { pointer: '/agent' } });
    expect(await runContent(file, failed.id)).toEqual(before);

    // The failed run continues from its checkpoint and finishes; then a changed pool is refused for the next one.
    const resumed = await h.resumeTrain(failed.id, { agent: learner, given: { episodes: 40 } });
    expect(resumed.episodes).toBe(40);
    expect((await h.store.listEpisodes({ runId: failed.id })).length).toBe(40);
    expect((await h.store.getRun(failed.id))?.resumed).toEqual([expect.objectContaining({ fromEpisode: 0, from: 'failed' })]);
    begun = 0;
    await expect(h.train({ agent: flaky, episodes: 40, concurrency: 8, seed: SEED })).rejects.toThrow('agent crashed');
    const second = (await h.store.listRuns()).at(-1)!;
    await h.generate({ templates: [{ id: 'math/chain-sum@1' }], levels: [1], count: 10, seed: 99, split: 'dynamic' });
    await expect(h.resumeTrain(second.id, { agent: learner })).rejects.toMatchObject({ code: 'SNAPSHOT_MISMATCH', details: { splits: ['dynamic'] } });
    await h.close();
  });
});
