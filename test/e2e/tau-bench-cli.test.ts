import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { Io } from '../../src/cli/output.js';
import { createSqliteStore } from '../../src/storage/sqlite/index.js';
import { skipWithoutTauBenchData, TAU_BENCH_DATA_DIR } from '../support/tau-bench-data.js';
import { digest } from '../../src/core/index.js';
import { writeTauBenchFixture } from '../../src/domains/retail/tau-bench/fixtures.js';
import { importTauBench } from '../../src/domains/retail/tau-bench/import.js';
import { systemClock } from '../../src/cli/clock.js';

const dataDir = TAU_BENCH_DATA_DIR;

function capture(): Io & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { out: (s) => stdout.push(s), err: (s) => stderr.push(s), isTTY: false, stdout, stderr };
}

describe.skipIf(skipWithoutTauBenchData())('envharness import tau-bench, tau-bench eval and episode state', { timeout: 120_000 }, () => {
  let dir: string;
  let store: string;
  const run = async (...args: string[]) => {
    const io = capture();
    const code = await main(['node', 'envharness', '--store', store, ...args], io, {});
    return { code, out: io.stdout.join('\n'), err: io.stderr.join('\n') };
  };

  beforeAll(() => {
    if (!existsSync(dataDir)) throw new Error(`tau-bench retail data not found at ${dataDir}: put shared/ beside the clone or set TAU_BENCH_DATA`);
    dir = mkdtempSync(path.join(tmpdir(), 'envharness-tau-bench-cli-'));
    store = `sqlite:${path.join(dir, 'store.db')}`;
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('imports train as dynamic and dev as regression, recorded as batches, and again as a no-op', async () => {
    const first = await run('--json', 'import', 'tau-bench', '--data', dataDir);
    expect(first.code).toBe(0);
    const body = JSON.parse(first.out) as { world: string; batches: Array<{ id: string; split: string; accepted: number; status: string; templates: Array<{ id: string; sourceDigest: string }> }> };
    expect(body.batches.map((b) => [b.templates[0]!.id, b.split, b.accepted, b.status])).toEqual([
      ['retail/tau-bench-train@1', 'dynamic', 500, 'imported'],
      ['retail/tau-bench-dev@1', 'regression', 20, 'imported'],
    ]);
    const fileDigest = createHash('sha256').update(readFileSync(path.join(dataDir, 'tasks_dev.json'))).digest('hex');
    expect(body.batches[1]!.templates[0]!.sourceDigest).toBe(fileDigest);

    const second = await run('--json', 'import', 'tau-bench', '--data', dataDir);
    expect((JSON.parse(second.out) as typeof body).batches.map((b) => [b.id, b.status])).toEqual(body.batches.map((b) => [b.id, 'already imported']));

    const s = createSqliteStore(path.join(dir, 'store.db'), { now: systemClock });
    try {
      expect(await s.countTasks({ split: 'dynamic', template: 'retail/tau-bench-train@1' })).toBe(500);
      expect(await s.countTasks({ split: 'regression', template: 'retail/tau-bench-dev@1' })).toBe(20);
      expect((await s.listBatches()).map((m) => m.id)).toEqual(body.batches.map((b) => b.id));
      expect(await s.listGenerationLog({ batchId: body.batches[1]!.id })).toHaveLength(20);
    } finally {
      await s.close();
    }
  });

  it("runs the oracle on the dev set (pass^k = 1) and writes each episode's world byte for byte as tau-bench's", async () => {
    const evaluated = await run('--json', 'tau-bench', 'eval', '--set', 'dev', '--agent', 'oracle', '-k', '2');
    expect(evaluated.code).toBe(0);
    const result = JSON.parse(evaluated.out) as { runId: string; passK: number[]; disagreements: string[] };
    expect(result.passK).toEqual([1, 1]);
    expect(result.disagreements).toEqual([]);

    const gold = JSON.parse(readFileSync(path.join(dataDir, 'gold_final_states.json'), 'utf8')) as { dev: Array<{ index: number; sha256: string }> };
    for (const index of [0, 3, 19]) {
      const out = path.join(dir, `state-${index}.json`);
      const exported = await run('episode', 'state', '--episode', `${result.runId}:${index}:1`, '--format', 'tau-bench', '--out', out);
      expect(exported.code).toBe(0);
      expect(createHash('sha256').update(readFileSync(out)).digest('hex')).toBe(gold.dev[index]!.sha256);
    }
    const json = await run('episode', 'state', '--episode', `${result.runId}:3:0`, '--format', 'json');
    expect(Object.keys(JSON.parse(json.out) as object).sort()).toEqual(['orders', 'products', 'users']);
  });

  it('says clearly what is wrong', async () => {
    const missing = await run('episode', 'state', '--episode', 'nope');
    expect(missing.code).toBe(3);
    expect(missing.err).toContain('EPISODE_NOT_FOUND');
    const badFormat = await run('episode', 'state', '--episode', 'nope', '--format', 'xml');
    expect(badFormat.code).toBe(2);
    const noData = await run('import', 'tau-bench', '--data', path.join(dir, 'absent'));
    expect(noData.code).toBe(2);
    expect(noData.err).toContain('IMPORT_INVALID');
  });
});

describe('envharness import tau-bench over an import made by an earlier importer version', { timeout: 120_000 }, () => {
  let dir: string;
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('counts sets whose tasks are all stored as already imported, even into a frozen regression split', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'envharness-tau-bench-reimport-'));
    const data = writeTauBenchFixture(path.join(dir, 'data'));
    const file = path.join(dir, 'store.db');
    // The same tasks under another generatorVersion: another batch id, as envharness-import-tau-bench/1 wrote.
    const s = createSqliteStore(file, { now: systemClock });
    try {
      for (const set of importTauBench({ dir: data }).sets) {
        const { id: _id, ...body } = set.batch.manifest;
        const old = { ...body, generatorVersion: 'envharness-import-tau-bench/1' };
        const manifest = { id: digest(old), ...old };
        await s.saveBatch({ manifest, tasks: set.batch.tasks, log: set.batch.log.map((l) => ({ ...l, batchId: manifest.id })) });
      }
    } finally {
      await s.close();
    }
    const run = async (...args: string[]) => {
      const io = capture();
      const code = await main(['node', 'envharness', '--store', file, ...args], io, {});
      return { code, out: io.stdout.join('\n'), err: io.stderr.join('\n') };
    };
    expect((await run('split', 'freeze', '--lockfile', path.join(dir, 'envharness.lock.json'))).code).toBe(0);
    const again = await run('--json', 'import', 'tau-bench', '--data', data);
    expect(again.err).toBe('');
    expect(again.code).toBe(0);
    expect((JSON.parse(again.out) as { batches: Array<{ status: string }> }).batches.map((b) => b.status)).toEqual(['already imported', 'already imported']);
    const after = createSqliteStore(file, { now: systemClock });
    try {
      // No new batch: only the two of the earlier version (beside the store's shipped regression set).
      expect((await after.listBatches()).filter((m) => m.generatorVersion.startsWith('envharness-import-tau-bench/')).map((m) => m.generatorVersion)).toEqual([
        'envharness-import-tau-bench/1',
        'envharness-import-tau-bench/1',
      ]);
    } finally {
      await after.close();
    }
  });
});
