/**
 * Harness costs: a seeded `generateTask` (sync with the store, pool draw, task read) with the task watermark and with
 * the re-read it replaced; and what recording costs the episodes the harness runs itself (evaluation, training).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { StoredTask, Store } from '../src/core/index.js';
import { createOracleAgent } from '../src/agents/index.js';
import { builtinDomains } from '../src/builtins.js';
import { math } from '../src/domains/math/index.js';
import { createHarness, openStore, type Harness } from '../src/harness/harness.js';
import { runEpisode } from '../src/runtime/index.js';
import { costPct, fmt, interleavedRounds, median, serialisingRecorder, type BenchRow, type BenchSection, type BenchTarget } from './lib.js';

const CLOCK = () => '2026-01-01T00:00:00.000Z';

/** Issue 18's bound on what recording may cost the episodes the harness runs (a share of the unrecorded episodes/s). */
const RECORDING_BOUND = 0.3;

/**
 * What run `i` of interleaved rounds costs against run 0 (the unrecorded one): the median of each round's ratio to
 * that round's unrecorded run, and the spread of those ratios.
 */
function roundCosts(rates: readonly number[][], i: number): { cost: number; spread: string } {
  const costs = rates[i]!.map((rate, r) => 1 - rate / rates[0]![r]!);
  return { cost: median(costs), spread: `${costPct(Math.min(...costs))}-${costPct(Math.max(...costs))}` };
}

/** The targets-table row of the harness recording the episodes of `set` as inputs, one flush a round. */
function recordingTarget(set: string, wall: { cost: number; spread: string }, cpuCost: number, reference: string): BenchTarget {
  return {
    source: 'issue 18',
    workload: `the harness recording the episodes it runs (${set}, oracle agent, as inputs, one flush a round)`,
    target: `≤ ${costPct(RECORDING_BOUND)} of the episodes/s not recorded`,
    figure: `${costPct(wall.cost)} (rounds ${wall.spread}; CPU ${costPct(cpuCost)})`,
    reference,
    met: wall.cost <= RECORDING_BOUND,
  };
}
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
    await recordingSection(),
    await otherDomainsSection(),
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

/**
 * Episodes per round of the recording section: every retail regression task this many times (seeds 0..k-1).
 * 20 (2,000 episodes, 60-85 ms a round): with 4 (400 episodes, 14-23 ms) one collection or checkpoint decided a
 * round, and the section's cost read 21-29% over three runs of the same code.
 */
const TRIALS = 20;
/** 21: at 2,000 episodes a round the rounds' costs still spread over 40 points on this host (-5% to 38% in one run). */
const ROUNDS = 21;

/**
 * What recording costs the episodes a harness runs itself: the retail regression set with the oracle agent through
 * `harness.runEpisode` (what `evaluate` and a training round run), not recorded, recorded with one flush per round
 * (`flush: false`, then `harness.flush()`: what `evaluate` and `train` do since 2026-12-06), and recorded with each
 * episode awaited until durable (what they did before). Rows interleaved round by round; the wall cost is the median
 * of each round's ratio to that round's unrecorded run, the CPU the process's (every thread) over all rounds.
 */
async function recordingSection(): Promise<BenchSection> {
  const dir = mkdtempSync(join(tmpdir(), 'envharness-bench-record-'));
  const rows: BenchRow[] = [];
  let episodes = 0;
  let evaluateFigures: { perSec: number; cpuUs: number } | undefined;
  const targets: BenchTarget[] = [];
  try {
    const h = await createHarness({ clock: CLOCK, store: join(dir, 'record.db'), domains: builtinDomains() });
    await h.initialize();
    const agent = createOracleAgent();
    await h.evaluate({ agent, domains: ['retail'], k: 1 }); // installs the retail regression set; warms up
    const tasks = (await h.store.listTasks({ split: 'regression', status: 'active' })).filter((t) => t.domain === 'retail');
    let counter = 0;
    const round = (mode: 'off' | 'grouped' | 'each') => async (): Promise<void> => {
      for (const task of tasks) {
        for (let seed = 0; seed < TRIALS; seed++) {
          if (mode === 'off') await h.runEpisode(task as StoredTask, agent, { seed, record: false });
          else await h.runEpisode(task as StoredTask, agent, { seed, runId: 'bench', episodeId: `bench:${counter++}`, ...(mode === 'grouped' ? { flush: false } : {}) });
        }
      }
      if (mode === 'grouped') await h.flush();
    };
    const modes = ['off', 'grouped', 'each'] as const;
    const runs = modes.map((mode) => round(mode));
    for (const run of runs) await run(); // warm-up
    episodes = tasks.length * TRIALS;
    const measured = await interleavedRounds(runs, ROUNDS, episodes);
    const rates = measured.map((m) => m.rates);
    const cpuUs = measured.map((m) => m.cpuUs);
    const names = {
      off: 'not recorded (`record: false`)',
      grouped: 'recorded as inputs, one flush per round (`flush: false`, then `harness.flush()`: evaluate and train)',
      each: 'recorded as inputs, each episode awaited until durable (the default `runEpisode`)',
    };
    modes.forEach((mode, i) => {
      const wall = roundCosts(rates, i);
      const { cost, spread } = wall;
      const cpuCost = 1 - cpuUs[0]! / cpuUs[i]!;
      rows.push({
        episodes: names[mode],
        'episodes/s (wall)': fmt(median(rates[i]!)),
        'cost vs not recorded (wall)': i === 0 ? '—' : costPct(cost),
        'rounds\' costs (min-max)': i === 0 ? '—' : spread,
        'µs/episode (CPU, process)': cpuUs[i]!.toFixed(1),
        'cost vs not recorded (CPU)': i === 0 ? '—' : costPct(cpuCost),
        target: mode === 'grouped' ? `≤ ${costPct(RECORDING_BOUND)}` : '',
      });
      if (mode === 'grouped') targets.push(recordingTarget('retail regression set', wall, cpuCost, ''));
    });
    const before = process.cpuUsage();
    const t0 = performance.now();
    const result = await h.evaluate({ agent, domains: ['retail'], k: TRIALS });
    const used = process.cpuUsage(before);
    evaluateFigures = { perSec: (result.outcomes.length * 1000) / (performance.now() - t0), cpuUs: (used.user + used.system) / result.outcomes.length };
    await h.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    title: 'Harness: recording the episodes it runs',
    description:
      `The retail regression set (${fmt(episodes / TRIALS)} tasks, each with seeds 0-${TRIALS - 1}: ${fmt(episodes)} episodes a round) played by the oracle agent ` +
      'through `harness.runEpisode` on a SQLite file store, as `evaluate` and a training round play them: not recorded, recorded with one flush ' +
      'for the round, and recorded with each episode awaited until durable (a commit per episode). ' +
      `Interleaved, ${ROUNDS} rounds; wall cost: the median of each round's ratio to that round's unrecorded run; CPU: the process's over all rounds.`,
    rows,
    targets,
    notes: [
      ...(evaluateFigures === undefined
        ? []
        : [`\`harness.evaluate\` on the same set with k = ${TRIALS} (its snapshot, run record and events included), once after the rounds: ${fmt(evaluateFigures.perSec)} episodes/s, ${evaluateFigures.cpuUs.toFixed(1)} µs of CPU per episode.`]),
      'Before 2026-12-06 evaluate and each training round awaited every episode until durable: each episode\'s end asked the recorder for a commit of its own. They now run their episodes with `flush: false` (no commit asked for at the end, `EpisodeOptions.flushOnEnd`) and flush once: the evaluation before its run record, a training round before its events and checkpoint.',
    ],
  };
}

/** The built-in domains besides retail, and the tasks the per-domain rows play (math has no regression set). */
const OTHER_DOMAINS = ['api-workflows', 'library', 'math', 'safety', 'web'] as const;
/** Interleaved rounds of the per-domain rows. */
const DOMAIN_ROUNDS = 15;
/** Unrecorded work a round of a per-domain row aims at (its seeds per task are chosen for it, 1 to 250). */
const DOMAIN_ROUND_MS = 300;

/**
 * The same measurement as the retail section, on every other built-in domain: its regression set (math: 200
 * generated training tasks, it ships none) played by the oracle agent through `harness.runEpisode`, not recorded
 * and recorded as inputs with one flush per round, interleaved. Each domain gets as many seeds per task as make
 * a round about DOMAIN_ROUND_MS of unrecorded episodes, so that one collection or commit does not decide a round.
 */
async function otherDomainsSection(): Promise<BenchSection> {
  const dir = mkdtempSync(join(tmpdir(), 'envharness-bench-record-domains-'));
  const rows: BenchRow[] = [];
  const targets: BenchTarget[] = [];
  try {
    const h = await createHarness({ clock: CLOCK, store: join(dir, 'record.db'), domains: builtinDomains() });
    await h.initialize();
    const agent = createOracleAgent();
    let counter = 0;
    for (const domain of OTHER_DOMAINS) {
      let set: string;
      let tasks: StoredTask[];
      if (domain === 'math') {
        await h.generate({ templates: [{ id: 'math/chain-sum@1' }, { id: 'math/count-letters@1' }], levels: [1, 2, 3, 4, 5], count: 200, seed: 1, split: 'dynamic' });
        tasks = (await h.store.listTasks({ split: 'dynamic', status: 'active' })).filter((t) => t.domain === domain);
        set = `${tasks.length} generated training tasks`;
      } else {
        await h.evaluate({ agent, domains: [domain], k: 1 }); // installs the domain's regression set; warms up
        tasks = (await h.store.listTasks({ split: 'regression', status: 'active' })).filter((t) => t.domain === domain);
        set = `regression set, ${tasks.length} tasks`;
      }
      const domainOf = h.domains.get(domain)!;
      const serialising = serialisingRecorder();
      const round = (mode: 'off' | 'grouped' | 'serialising', trials: number) => async (): Promise<void> => {
        for (const task of tasks) {
          for (let seed = 0; seed < trials; seed++) {
            if (mode === 'off') await h.runEpisode(task, agent, { seed, record: false });
            else if (mode === 'grouped') await h.runEpisode(task, agent, { seed, runId: 'bench', episodeId: `bench:${counter++}`, flush: false });
            // What the harness's runEpisode runs, with a recorder that only serialises each record (nothing kept or written).
            else await runEpisode(domainOf, task, agent, { seed, recorder: serialising, recordAs: 'inputs', runId: 'bench', episodeId: `bench:${counter++}`, flush: false });
          }
        }
        if (mode === 'grouped') await h.flush();
      };
      // Warm-up, and the unrecorded cost that sets the seeds per task.
      await round('grouped', 1)();
      const w0 = performance.now();
      await round('off', 1)();
      const trials = Math.max(1, Math.min(250, Math.round(DOMAIN_ROUND_MS / (performance.now() - w0))));
      const runs = [round('off', trials), round('grouped', trials), round('serialising', trials)];
      for (const run of runs) await run();
      const episodes = tasks.length * trials;
      const measured = await interleavedRounds(runs, DOMAIN_ROUNDS, episodes);
      const rates = measured.map((m) => m.rates);
      const [offUs, recordedUs] = measured.map((m) => m.cpuUs) as [number, number];
      const wall = roundCosts(rates, 1);
      const { cost, spread } = wall;
      const serialisingCost = roundCosts(rates, 2).cost;
      const cpuCost = 1 - offUs / recordedUs;
      rows.push({
        domain,
        'tasks (seeds each)': `${set} (${trials})`,
        'episodes/s not recorded (wall)': fmt(median(rates[0]!)),
        'episodes/s recorded (wall)': fmt(median(rates[1]!)),
        'cost (wall)': costPct(cost),
        'rounds\' costs (min-max)': spread,
        'µs/episode not recorded (CPU)': offUs.toFixed(1),
        'µs/episode recorded (CPU)': recordedUs.toFixed(1),
        'cost (CPU)': costPct(cpuCost),
        'serialising only (wall)': costPct(serialisingCost),
      });
      const floor = `serialising only (each record's canonical JSON): ${costPct(serialisingCost)}${serialisingCost <= RECORDING_BOUND ? '' : ' (over the target alone)'}`;
      targets.push(
        recordingTarget(`${domain}, ${domain === 'math' ? 'generated training tasks' : 'regression set'}`, wall, cpuCost, `an unrecorded episode: ${offUs.toFixed(1)} µs of CPU, recorded ${recordedUs.toFixed(1)}; ${floor}`),
      );
    }
    await h.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    title: 'Harness: recording the episodes it runs, every other domain',
    description:
      'What the retail section above measures, on each other built-in domain: its regression set (math ships none: 200 generated training tasks of `math/chain-sum` and `math/count-letters`, levels 1-5) ' +
      'played by the oracle agent through `harness.runEpisode` on a SQLite file store, not recorded and recorded as inputs with one flush per round (`flush: false`, then `harness.flush()`: what `evaluate` and `train` do), ' +
      'and, as the last column, the same episodes with a recorder that only serialises each episode\'s final record (canonical JSON, nothing kept or written): the least any recorder of those records pays on the stepping thread, where the records are made. ' +
      `Each task is played with as many seeds as make a round about ${DOMAIN_ROUND_MS} ms of unrecorded episodes (1 to 250). Interleaved, ${DOMAIN_ROUNDS} rounds; wall cost: the median of each round's ratio to that round's unrecorded run; CPU: the process's over all rounds.`,
    rows,
    targets,
    notes: [
      'Recording an episode as its inputs costs about the same whatever the domain (its final record: canonical JSON, one row in the episodes table with its indexes, a share of a commit): the cost is that against what an episode costs unrecorded. A domain whose episodes cost about as much as that row (math: a question and an answer) pays more than half its throughput; one whose episodes cost hundreds of µs (safety) a few percent.',
      'The last column is a floor, not an estimate: the records are made and serialised on the thread that steps the episodes, whatever store or thread then writes them, so no recorder of them costs less; one that writes its rows on that thread also pays each row (raw better-sqlite3, the episodes table with its indexes: ~5 µs a row, "Runtime: recording transitions to SQLite").',
    ],
  };
}
