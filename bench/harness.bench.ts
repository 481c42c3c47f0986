/** Harness draw cost: a seeded `generateTask` (sync with the store, pool draw, task read) with the task watermark and with the re-read it replaced. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Store } from '../src/core/index.js';
import { math } from '../src/domains/math/index.js';
import { createHarness, openStore, type Harness } from '../src/harness/harness.js';
import { fmt, median, type BenchRow, type BenchSection } from './lib.js';

const CLOCK = () => '2026-01-01T00:00:00.000Z';
const DRAWS = 2000;
const RUNS = 5;

/** The same store without `taskWatermark`: the harness then syncs as before it existed (index and review audit re-read per draw). */
function withoutWatermark(store: Store): Store {
  return new Proxy(store, {
    get(target, key) {
      if (key === 'taskWatermark') return undefined;
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** Median wall and CPU µs per seeded draw over RUNS runs of DRAWS draws. */
async function timeDraws(h: Harness): Promise<{ wall: number; cpu: number }> {
  for (let seed = 0; seed < 200; seed++) await h.generateTask({ seed });
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    for (let seed = 0; seed < DRAWS; seed++) await h.generateTask({ seed: run * DRAWS + seed });
    wall.push(((performance.now() - t0) * 1000) / DRAWS);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / DRAWS);
  }
  return { wall: median(wall), cpu: median(cpu) };
}

async function measureStore(label: string, location: string, rows: BenchRow[]): Promise<void> {
  const open = async (store: Store) => {
    const h = await createHarness({ store, domains: [math], clock: CLOCK, prebuilt: false });
    await h.initialize({ seed: 1 });
    return h;
  };
  const writer = await open(await openStore(location, { clock: CLOCK }));
  const batch = await writer.generate({
    templates: [{ id: 'math/chain-sum@1' }, { id: 'math/count-letters@1' }],
    levels: [1, 2, 3, 4, 5],
    count: 6_000,
    seed: 1,
    split: 'dynamic',
    reviewShare: 0.02,
  });
  for (const id of batch.review.slice(0, 60)) await writer.decideReview(id, 'approved', 'bench');
  const tasks = await writer.store.countTasks();
  const watermark = await open(await openStore(location, { clock: CLOCK }));
  const previous = await open(withoutWatermark(await openStore(location, { clock: CLOCK })));
  const task = batch.tasks[0]!.id;
  const getTask = await (async () => {
    for (let k = 0; k < 200; k++) await watermark.store.getTask(task);
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    for (let k = 0; k < DRAWS; k++) await watermark.store.getTask(task);
    const c = process.cpuUsage(c0);
    return { wall: ((performance.now() - t0) * 1000) / DRAWS, cpu: (c.user + c.system) / DRAWS };
  })();
  // Alternated, so both see the same load.
  const before = await timeDraws(previous);
  const after = await timeDraws(watermark);
  const before2 = await timeDraws(previous);
  const after2 = await timeDraws(watermark);
  const workload = `${label}, ${fmt(tasks)} tasks, 60 review decisions`;
  const row = (what: string, m: { wall: number; cpu: number }): BenchRow => ({ store: workload, what, 'wall µs': fmt(m.wall), 'CPU µs': fmt(m.cpu) });
  const best = (a: { wall: number; cpu: number }, b: { wall: number; cpu: number }) => ({ wall: Math.min(a.wall, b.wall), cpu: Math.min(a.cpu, b.cpu) });
  const b = best(before, before2);
  const a = best(after, after2);
  rows.push(
    row('seeded draw, previous sync (index read after the last seq + review audit, per draw)', b),
    row('seeded draw, watermark sync (one row read per draw)', a),
    row('floor: the draw\'s task read alone (store.getTask)', getTask),
    { store: workload, what: 'previous / watermark', 'wall µs': `${fmt(b.wall / a.wall)}x`, 'CPU µs': `${fmt(b.cpu / a.cpu)}x` },
  );
  await Promise.all([writer.close(), watermark.close(), previous.close()]);
}

export async function run(): Promise<BenchSection[]> {
  const rows: BenchRow[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'envharness-bench-draw-'));
  const notes: string[] = [];
  try {
    await measureStore('SQLite file', join(dir, 'draw.db'), rows);
    const pg = process.env.ENVHARNESS_TEST_PG || undefined;
    if (pg !== undefined) {
      const url = new URL(pg);
      url.searchParams.set('schema', `envh_bench_draw_${process.pid}`);
      await measureStore('PostgreSQL (loopback)', url.toString(), rows);
    } else {
      notes.push('PostgreSQL not measured: set ENVHARNESS_TEST_PG (e.g. `.ci/postgres.sh start DIR`) to add its rows.');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return [
    {
      title: 'Harness: seeded draw',
      description:
        `Median µs per \`harness.generateTask({ seed })\` (sync the pool with the store, draw, read the task) over ${RUNS} runs of ${DRAWS} draws, ` +
        'with the store\'s task watermark and, in the same run on the same store, with the store\'s watermark hidden (the sync that re-read the index after the last seq and the whole review audit per draw). ' +
        'Both alternate twice; the better of each is shown. CPU is the process\'s user + system time.',
      rows,
      notes: [...notes, 'The watermark is a one-row table kept by triggers on the tasks table (every writer, every process): a draw with nothing new stored reads that row and the task.'],
    },
  ];
}
