/** Runtime benchmarks: framework cost per step, reset time against state size, and the cost of recording to SQLite. */
import BetterSqlite3 from 'better-sqlite3';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { computeTaskId } from '../src/core/index.js';
import type { Action, EpisodeRecord, Task, Transition } from '../src/core/index.js';
import { retail as retailDomain, retailTemplates } from '../src/domains/retail/index.js';
import { instantiateTask } from '../src/generation/index.js';
import { createEpisode, createMemoryRecorder, createRuntimeCache, createStoreRecorder } from '../src/runtime/index.js';
import type { Episode, Recorder } from '../src/runtime/index.js';
import { createInventoryDomain, createNullDomain, createNullTask, inventoryWorld, makeInventoryTask } from '../src/runtime/testing/index.js';
import { createSqliteStore } from '../src/storage/sqlite/index.js';
import { costPct, fmt, interleavedRounds, measure, measureAsync, median, serialisingRecorder, spreadCostBound } from './lib.js';
import type { BenchRow, BenchSection, BenchTarget } from './lib.js';
import { systemClock } from '../src/cli/clock.js';

const NOOP: Action = { type: 'tool', tool: 'noop', args: {} };

/**
 * Wall-clock median (bench/lib `measure`) plus the median CPU time per operation of this process
 * (`process.cpuUsage`, user + system, GC threads included): on a shared machine, CPU time is the steadier figure.
 */
function measureBoth(fn: (n: number) => void, runs = 7): { wallNs: number; cpuNs: number } {
  const wall = measure(fn, { runs });
  const n = Math.max(1, Math.round(2e8 / wall.nsPerOp));
  const cpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    const before = process.cpuUsage();
    fn(n);
    const used = process.cpuUsage(before);
    cpu.push(((used.user + used.system) * 1000) / n);
  }
  return { wallNs: wall.nsPerOp, cpuNs: median(cpu) };
}

/** Steps `n` times, resetting whenever the episode ends (every 1,000 steps: the task's step budget). */
function stepper(episode: Episode, action: Action, onReset?: () => void): (n: number) => void {
  return (n) => {
    for (let i = 0; i < n; i++) {
      if (episode.status !== 'running') {
        onReset?.();
        episode.reset({ seed: 0 });
      }
      episode.step(action);
    }
  };
}

/** The floor on this machine: a Gymnasium-shaped step that does nothing but build its result. */
function bareStep(): (n: number) => void {
  const env = {
    t: 0,
    step(action: unknown) {
      this.t++;
      return { observation: action, reward: 0, terminated: false, truncated: this.t % 1000 === 0, info: { step: this.t } };
    },
  };
  let sink = 0;
  return (n) => {
    for (let i = 0; i < n; i++) sink += env.step(NOOP).reward;
    if (sink === -1) console.log(sink);
  };
}

/** CPU time of the calling thread in µs (Linux `/proc/thread-self/stat`, 10 ms ticks), or undefined elsewhere. */
function threadCpuUs(): number | undefined {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * (1e6 / 100);
  } catch {
    return undefined;
  }
}

function stepSection(): BenchSection {
  const domain = createNullDomain();
  const task = createNullTask({ steps: 1000, consecutiveErrors: 1000 });
  const rows: BenchRow[] = [];
  const row = (what: string, m: { wallNs: number; cpuNs: number }, target: string) =>
    rows.push({ workload: what, 'ns/step (wall)': Math.round(m.wallNs), 'ns/step (CPU)': Math.round(m.cpuNs), 'steps/s (wall)': fmt(1e9 / m.wallNs), target });

  row('bare JS step (object literal result; machine floor)', measureBoth(bareStep(), 5), '—');
  const plain = createEpisode(domain, task);
  plain.reset({ seed: 0 });
  const noRecording = measureBoth(stepper(plain, NOOP));
  row('null-domain tool step, no recording', noRecording, '≤ 500 ns');
  const recorder = createMemoryRecorder();
  const recorded = createEpisode(domain, task, { recorder });
  recorded.reset({ seed: 0 });
  const withRecording = measureBoth(stepper(recorded, NOOP, () => recorder.clear()));
  row('null-domain tool step, in-memory recording', withRecording, '≤ 1,000 ns');
  const message: Action = { type: 'message', text: 'hello' };
  row('null-domain message step, in-memory recording', measureBoth(stepper(recorded, message, () => recorder.clear()), 5), '—');
  return {
    title: 'Runtime: framework cost per step (null domain)',
    description:
      'One `step()` through the whole runtime on a domain whose tool does nothing: action validation, zod argument ' +
      'parsing, constraint and policy checks, REDUNDANT_CALL/OFF_PATH/NO_PROGRESS bookkeeping, budgets, the StepResult, ' +
      'and (when on) the transition handed to an in-memory recorder. Episodes of 1,000 steps, reset in between. ' +
      "Peer: Gymnasium's `gym.make` step is 252 ns on this machine kind (104 ns bare).",
    rows,
    targets: [
      {
        source: 'issue 18',
        workload: 'null-domain tool step, in-memory recording',
        target: '≤ 1,000 ns of CPU',
        figure: `${Math.round(withRecording.cpuNs)} ns`,
        reference: `no recording: ${Math.round(noRecording.cpuNs)} ns`,
        met: withRecording.cpuNs <= 1000,
      },
    ],
    notes: [
      `Recording adds ${Math.round(withRecording.cpuNs - noRecording.cpuNs)} ns of CPU per step (building and keeping the transition).`,
      'Wall time is inflated when other processes share the 2 cores; the CPU column counts only this process\'s work.',
    ],
  };
}

function resetTask(items: number): Task {
  const base = makeInventoryTask();
  const spec = { ...base.spec, initialState: inventoryWorld(items), solution: [{ type: 'tool' as const, tool: 'add_stock', args: { item: 'item-000000', quantity: 2 } }, { type: 'finish' as const }] };
  const body = { ...base, spec };
  return { ...body, id: computeTaskId(body) };
}

function resetSection(): BenchSection {
  const domain = createInventoryDomain();
  const rows: BenchRow[] = [];
  for (const items of [10, 1_000, 100_000]) {
    const cache = createRuntimeCache(domain);
    const task = resetTask(items);
    const t0 = performance.now();
    cache.prepare(task);
    const prepareMs = performance.now() - t0;
    const episode = createEpisode(domain, task, { cache });
    let seed = 0;
    const reset = measureBoth((n) => {
      for (let i = 0; i < n; i++) episode.reset({ seed: seed++ });
    });
    // Reset, one write, finish: the reward compares the state hash with the cached reference hash.
    const solution = task.spec.solution;
    const episodeRun = measureBoth((n) => {
      for (let i = 0; i < n; i++) {
        episode.reset({ seed: i });
        for (const action of solution) episode.step(action);
      }
    }, 5);
    rows.push({
      'state size (items)': items.toLocaleString('en-US'),
      'reset µs (wall)': (reset.wallNs / 1000).toFixed(2),
      'reset µs (CPU)': (reset.cpuNs / 1000).toFixed(2),
      'reset + write + graded finish µs (CPU)': (episodeRun.cpuNs / 1000).toFixed(2),
      'first prepare ms (once per task)': prepareMs.toFixed(1),
    });
  }
  return {
    title: 'Runtime: reset time against state size',
    description:
      'Inventory test domain (copy-on-write state: a shared base plus a per-episode overlay, hash in O(changes)). ' +
      '`reset` forks the cached base world and asks the simulated user for its opening; the graded finish hashes only ' +
      'the changes and compares with the reference hash cached per task. Target: flat in state size and ≤ 37 µs ' +
      "(1,000x tau-bench's 37 ms reset).",
    rows,
    notes: ['The one-time prepare cost grows with the world (it builds and hashes it once); resets and grading do not.'],
  };
}

/** One row's figures: wall episodes/s, process CPU and stepping-thread CPU per episode (µs). */
interface RowFigures {
  opsPerSec: number;
  cpuUs: number;
  threadUs?: number | undefined;
  /** Episodes/s of each interleaved round (rows measured in the same rounds pair up round by round). */
  rounds?: number[];
}

/**
 * What a row costs in wall-clock steps/s against the unrecorded row: for rows measured in the same interleaved
 * rounds, the median of each round's ratio (a round's rows ran back to back, so a change of the machine's load
 * between rounds cancels out); else the ratio of the medians.
 */
function wallCost(m: RowFigures, off: RowFigures): number {
  const a = m.rounds;
  const b = off.rounds;
  if (a === undefined || b === undefined || a.length !== b.length) return 1 - m.opsPerSec / off.opsPerSec;
  return median(a.map((rate, r) => 1 - rate / b[r]!));
}

async function recordingSection(): Promise<BenchSection> {
  const domain = createInventoryDomain();
  const task = makeInventoryTask();
  const solution = task.spec.solution;
  const dir = mkdtempSync(join(tmpdir(), 'envharness-bench-'));
  const store = createSqliteStore(join(dir, 'bench.db'), { now: systemClock });
  let counter = 0;
  const episodeId = () => `bench-${counter++}`;
  const cache = createRuntimeCache(domain);
  const episodes = (recorder: Recorder | undefined, awaitEach: boolean, recordAs: 'transitions' | 'inputs' = 'transitions') => {
    const episode = createEpisode(domain, task, { recorder, cache, episodeId, recordAs });
    return async (n: number) => {
      for (let i = 0; i < n; i++) {
        episode.reset({ seed: i });
        for (const action of solution) episode.step(action);
        if (awaitEach) await episode.flush();
      }
      await episode.flush();
    };
  };
  const steps = solution.length;
  const rows: BenchRow[] = [];
  const n = 4000;
  const writer = store.openTransitionWriter();
  // The rows recorded as inputs write to a store file of their own, as each SQLite reference does: on the shared
  // file, the checkpoints of the transition rows' WAL (tens of MB a round) landed on their time.
  const inputsStore = createSqliteStore(join(dir, 'inputs.db'), { now: systemClock });
  const inputsWriter = inputsStore.openTransitionWriter();
  try {
    /**
     * measureAsync plus CPU per episode over its runs: the whole process's (every thread) and the stepping
     * thread's alone. A first run warms the JIT outside the window (else the first row pays the compiling).
     */
    const timed = async (fn: (k: number) => Promise<void>, k: number) => {
      await fn(k);
      const before = process.cpuUsage();
      const thread = threadCpuUs();
      const m = await measureAsync(fn, { n: k, runs: 5 });
      const used = process.cpuUsage(before);
      const episodesRun = Math.max(1, Math.floor(k / 10)) + 5 * k;
      const threadUs = thread === undefined ? undefined : (threadCpuUs()! - thread) / episodesRun;
      return { ...m, cpuUs: (used.user + used.system) / episodesRun, threadUs };
    };
    const off = await timed(episodes(undefined, false), n);
    const inventoryOff = off;
    const inventorySteps = steps;
    const memory = createMemoryRecorder();
    const inMemory = await timed(async (k) => {
      memory.clear();
      await episodes(memory, false)(k);
    }, n);
    /**
     * A SQLite reference for this workload: the same rows written the plain better-sqlite3 way, with the cheapest
     * serialiser and no recorder around it (not a lower bound: the store's multi-row INSERTs cost less). Raw better-sqlite3 on a file of its own with the store's pragmas (WAL,
     * synchronous=NORMAL): JSON.stringify of each transition into a prepared single-row INSERT into a table with a
     * unique (episode, step) index, each episode's final record the same way, one transaction per 512
     * transitions (as the group commit's maxBatch) and per run of flushes (those asked for before the program
     * yields share one, as the group commit's do). In-thread, like the group-commit row.
     */
    let rawFiles = 0;
    /**
     * `episodeRows`: how each ended episode's record is written: `plain`, a row keyed by an integer with its JSON;
     * `store-schema`, a row of the store's episodes table (its columns, the unique id and the run and task indexes, schema 8),
     * an upsert as the store's; `one-per-commit`, the commit's records as one JSON array in one row.
     */
    const rawSqlite = (episodeRows: 'plain' | 'store-schema' | 'one-per-commit' = 'plain'): Recorder => {
      const db = new BetterSqlite3(join(dir, `raw-${rawFiles++}.db`));
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      db.exec(
        'CREATE TABLE transitions (seq INTEGER PRIMARY KEY, episode_seq INTEGER NOT NULL, step INTEGER NOT NULL, body TEXT NOT NULL) STRICT; ' +
          'CREATE UNIQUE INDEX transitions_by_episode ON transitions (episode_seq, step); ' +
          'CREATE TABLE episodes (seq INTEGER PRIMARY KEY, body TEXT NOT NULL) STRICT; ' +
          'CREATE TABLE episode_groups (seq INTEGER PRIMARY KEY, body TEXT NOT NULL) STRICT; ' +
          'CREATE TABLE store_episodes (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, task_id TEXT NOT NULL, run_id TEXT, status TEXT NOT NULL, ' +
          'steps INTEGER NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, body TEXT NOT NULL) STRICT; ' +
          'CREATE INDEX store_episodes_by_run ON store_episodes (run_id); CREATE INDEX store_episodes_by_task ON store_episodes (coalesce(unhex(substr(task_id, 1, 8)), task_id));',
      );
      const insertGroup = db.prepare('INSERT INTO episode_groups (body) VALUES (?)');
      const upsertStoreEpisode = db.prepare(
        'INSERT INTO store_episodes (id, task_id, run_id, status, steps, created_at, updated_at, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ' +
          'ON CONFLICT (id) DO UPDATE SET status = excluded.status, steps = excluded.steps, updated_at = excluded.updated_at, body = excluded.body',
      );
      const insertTransition = db.prepare('INSERT INTO transitions (episode_seq, step, body) VALUES (?, ?, ?)');
      const upsertEpisode = db.prepare('INSERT INTO episodes (seq, body) VALUES (?, ?) ON CONFLICT (seq) DO UPDATE SET body = excluded.body');
      // Episodes keyed by integers, as the store keys them (its ids are text only in the episodes table).
      const seqs = new Map<string, number>();
      let lastSeq = 0;
      const seqOf = (id: string) => {
        let seq = seqs.get(id);
        if (seq === undefined) seqs.set(id, (seq = ++lastSeq));
        return seq;
      };
      let transitions: Transition[] = [];
      let ended: EpisodeRecord[] = [];
      const commit = db.transaction(() => {
        for (const t of transitions) insertTransition.run(seqOf(t.episodeId), t.step, JSON.stringify(t));
        // The floor of a store that kept no row per episode: the commit's records as one JSON array in one row.
        if (episodeRows === 'one-per-commit') {
          if (ended.length > 0) insertGroup.run(JSON.stringify(ended));
          return;
        }
        if (episodeRows === 'store-schema') {
          for (const e of ended) upsertStoreEpisode.run(e.id, e.taskId, e.runId ?? null, e.status, e.steps, e.createdAt, e.updatedAt, JSON.stringify(e));
          return;
        }
        for (const e of ended) {
          upsertEpisode.run(seqOf(e.id), JSON.stringify(e));
          seqs.delete(e.id);
        }
      });
      const write = () => {
        commit.immediate();
        transitions = [];
        ended = [];
      };
      // Flushes asked for during the same synchronous work share one transaction, as the group commit's do (an
      // episode's end asks for one: a transaction per flush would be a transaction per episode).
      let scheduled: Promise<void> | undefined;
      return {
        begin: () => undefined,
        record: (t) => {
          transitions.push(t);
          if (transitions.length === 512) write();
        },
        end: (e) => void ended.push(e),
        flush: () =>
          (scheduled ??= Promise.resolve().then(() => {
            scheduled = undefined;
            write();
          })),
      };
    };
    const rawFloor = await timed(episodes(rawSqlite(), false), n);
    const serialised = await timed(episodes(serialisingRecorder(), false), n);
    const encoded = await timed(episodes(serialisingRecorder(true), false), n);
    const grouped = await timed(episodes(createStoreRecorder(store, { maxBatch: 512, maxDelayMs: 50 }), false), n);
    const threaded = await timed(episodes(createStoreRecorder(writer, { maxBatch: 512, maxDelayMs: 50 }), false), n);
    const inputs = await timed(episodes(createStoreRecorder(inputsStore, { maxBatch: 512, maxDelayMs: 50 }), false, 'inputs'), n);
    const inputsThreaded = await timed(episodes(createStoreRecorder(inputsWriter, { maxBatch: 512, maxDelayMs: 50 }), false, 'inputs'), n);
    // The same reference for episodes recorded as inputs: the recorder then gets no transitions, only the records.
    const inputsFloor = await timed(episodes(rawSqlite(), false, 'inputs'), n);
    const inputsSerialised = await timed(episodes(serialisingRecorder(), false, 'inputs'), n);
    const inputsGroupFloor = await timed(episodes(rawSqlite('one-per-commit'), false, 'inputs'), n);
    const inputsSchemaFloor = await timed(episodes(rawSqlite('store-schema'), false, 'inputs'), n);
    const perEpisode = await timed(episodes(createStoreRecorder(store), true), n / 4);
    const perEpisodeThreaded = await timed(episodes(createStoreRecorder(store.openTransitionWriter()), true), n / 4);
    // A caller that awaits each episode until durable (the harness's evaluation and training rounds did, until 2026-12-06).
    const perEpisodeInputs = await timed(episodes(createStoreRecorder(inputsStore), true, 'inputs'), n / 4);
    // The realistic workload beside the worst case: retail oracle episodes (one task per template and level).
    const retailTasks = retailTemplates.flatMap((template) => template.levels.map((_, i) => instantiateTask(template, { level: i + 1, seed: 1, index: 0 })));
    const retailSteps = retailTasks.reduce((sum, t) => sum + t.spec.solution.length, 0) / retailTasks.length;
    const retailCache = createRuntimeCache(retailDomain);
    const retailEpisodes = (recorder: Recorder | undefined, recordAs: 'transitions' | 'inputs' = 'transitions') => {
      let seed = 0;
      return async (k: number) => {
        for (let i = 0; i < k; i++) {
          const task = retailTasks[seed % retailTasks.length]!;
          const episode = createEpisode(retailDomain, task, { recorder, cache: retailCache, episodeId, recordAs });
          episode.reset({ seed: seed++ });
          for (const action of task.spec.solution) episode.step(action);
        }
        await recorder?.flush();
      };
    };
    const retailN = 2_000;
    /**
     * The retail rows in interleaved rounds (off, serialising, group commit, writer thread, then again), each
     * once to warm up first: rows measured one after another read whatever the machine and the store's threads
     * did meanwhile (a checkpoint of the inventory rows' WAL landed on the unrecorded row, making it the slowest).
     * Wall: median of the rounds; CPU: totals over the rounds per episode.
     */
    const interleaved = async (fns: Array<(k: number) => Promise<void>>, k: number, rounds = 11) => {
      for (const fn of fns) await fn(k);
      const measured = await interleavedRounds(fns.map((fn) => () => fn(k)), rounds, k, threadCpuUs);
      return measured.map((m) => ({ opsPerSec: median(m.rates), cpuUs: m.cpuUs, threadUs: m.threadUs, rounds: m.rates }));
    };
    const [retailOff, retailSerialised, retailEncoded, retailFloor, retailGrouped, retailThreaded, retailInputs, retailInputsThreaded, retailInputsFloor, retailInputsSerialised, retailInputsGroupFloor, retailInputsSchemaFloor] = (await interleaved(
      [
        retailEpisodes(undefined),
        retailEpisodes(serialisingRecorder()),
        retailEpisodes(serialisingRecorder(true)),
        retailEpisodes(rawSqlite()),
        retailEpisodes(createStoreRecorder(store, { maxBatch: 512, maxDelayMs: 50 })),
        retailEpisodes(createStoreRecorder(writer, { maxBatch: 512, maxDelayMs: 50 })),
        retailEpisodes(createStoreRecorder(inputsStore, { maxBatch: 512, maxDelayMs: 50 }), 'inputs'),
        retailEpisodes(createStoreRecorder(inputsWriter, { maxBatch: 512, maxDelayMs: 50 }), 'inputs'),
        retailEpisodes(rawSqlite(), 'inputs'),
        retailEpisodes(serialisingRecorder(), 'inputs'),
        retailEpisodes(rawSqlite('one-per-commit'), 'inputs'),
        retailEpisodes(rawSqlite('store-schema'), 'inputs'),
      ],
      retailN,
    )) as RowFigures[] as [RowFigures, RowFigures, RowFigures, RowFigures, RowFigures, RowFigures, RowFigures, RowFigures, RowFigures, RowFigures, RowFigures, RowFigures];
    const add = (name: string, m: RowFigures, off: RowFigures = inventoryOff, steps = inventorySteps) =>
      rows.push({
        recording: name,
        'episodes/s (wall)': fmt(m.opsPerSec),
        'steps/s (wall)': fmt(m.opsPerSec * steps),
        'cost vs off (steps/s, wall)': m === off ? '—' : costPct(wallCost(m, off)),
        'µs/episode (CPU, process)': m.cpuUs.toFixed(1),
        'cost vs off (CPU, process)': m === off ? '—' : costPct(1 - off.cpuUs / m.cpuUs),
        'µs/episode (CPU, stepping thread)': m.threadUs === undefined ? 'n/a' : m.threadUs.toFixed(1),
        'cost vs off (CPU, stepping thread)':
          m === off || m.threadUs === undefined || off.threadUs === undefined ? '—' : costPct(1 - off.threadUs / m.threadUs),
      });
    add('off', off);
    add('in-memory recorder', inMemory);
    add('serialising only (canonical JSON of each transition and final record, nothing written)', serialised);
    add('serialising to UTF-8 only (the same, each text encoded into one reused buffer, nothing sent)', encoded);
    add('SQLite reference: raw better-sqlite3, the same rows (JSON.stringify, prepared INSERT, 512 transitions a transaction), no recorder', rawFloor);
    add('SQLite, group commit (maxBatch 512, flush at the end of the batch)', grouped);
    add('SQLite, group commit through the writer thread (`openTransitionWriter`)', threaded);
    add('SQLite, recorded as inputs (`recordAs: \'inputs\'`: each ended episode\'s record carries its actions and final state hash, no transition rows), group commit', inputs);
    add('SQLite, recorded as inputs, group commit through the writer thread', inputsThreaded);
    add('SQLite reference: raw better-sqlite3, recorded as inputs (one row per episode: its final record, JSON.stringify, prepared upsert)', inputsFloor);
    add('recorded as inputs, serialising only (canonical JSON of each final record, nothing written)', inputsSerialised);
    add('SQLite reference: raw better-sqlite3, recorded as inputs, one row per commit (the commit\'s records as one JSON array)', inputsGroupFloor);
    add('SQLite reference: raw better-sqlite3, recorded as inputs, one row per episode in the store\'s episodes table (its columns, unique id, run and task indexes)', inputsSchemaFloor);
    add('SQLite, every episode awaited until durable', perEpisode);
    add('SQLite, every episode awaited until durable, through the writer thread', perEpisodeThreaded);
    add('SQLite, recorded as inputs, every episode awaited until durable (a commit per episode)', perEpisodeInputs);
    const retail = (name: string) => `retail oracle episodes (${retailSteps.toFixed(1)} steps): ${name}`;
    add(retail('off'), retailOff, retailOff, retailSteps);
    add(retail('serialising only'), retailSerialised, retailOff, retailSteps);
    add(retail('serialising to UTF-8 only'), retailEncoded, retailOff, retailSteps);
    add(retail('SQLite reference: raw better-sqlite3, the same rows, no recorder'), retailFloor, retailOff, retailSteps);
    add(retail('SQLite, group commit'), retailGrouped, retailOff, retailSteps);
    add(retail('SQLite, group commit through the writer thread'), retailThreaded, retailOff, retailSteps);
    add(retail('SQLite, recorded as inputs, group commit'), retailInputs, retailOff, retailSteps);
    add(retail('SQLite, recorded as inputs, group commit through the writer thread'), retailInputsThreaded, retailOff, retailSteps);
    add(retail('SQLite reference: raw better-sqlite3, recorded as inputs (one row per episode)'), retailInputsFloor, retailOff, retailSteps);
    add(retail('recorded as inputs, serialising only'), retailInputsSerialised, retailOff, retailSteps);
    add(retail('SQLite reference: raw better-sqlite3, recorded as inputs, one row per commit'), retailInputsGroupFloor, retailOff, retailSteps);
    add(retail('SQLite reference: raw better-sqlite3, recorded as inputs, one row per episode in the store\'s episodes table'), retailInputsSchemaFloor, retailOff, retailSteps);
    const rowsPerSec = (1e6 / grouped.cpuUs) * steps;
    const cost = (m: RowFigures, off: RowFigures) => costPct(wallCost(m, off));
    const within = (m: RowFigures, off: RowFigures) => wallCost(m, off) <= 0.3;
    // Each way of recording against the 30% bound, beside raw better-sqlite3 writing the same rows in the same run,
    // and the least any recorder writing those rows could cost if all its work ran on the other cores for free.
    const cores = availableParallelism();
    /**
     * A target row, with what bounds it from below in this run: the stepping thread's own share (`floor`: serialising
     * only, or to UTF-8 for a recorder that hands bytes to the writer thread; what any such recorder pays where the
     * episode steps), and raw better-sqlite3 of the same rows with its CPU spread over the cores.
     */
    const recordingTarget = (workload: string, m: RowFigures, off: RowFigures, floor: { figures: RowFigures; what: string }, raw: RowFigures, rawRows: string): BenchTarget => ({
      source: 'issue 18',
      workload,
      target: '≤ 30% of the steps/s with recording off',
      figure: cost(m, off),
      reference:
        `${floor.what}: ${cost(floor.figures, off)}${within(floor.figures, off) ? '' : ' (over the target alone)'}; ` +
        `raw better-sqlite3, ${rawRows}: ${cost(raw, off)}; its CPU spread over ${cores} cores: at least ${costPct(spreadCostBound(off.cpuUs, raw.cpuUs, cores))}`,
      met: within(m, off),
    });
    const records = 'the same records into the store\'s episodes table';
    const serialising = (figures: RowFigures) => ({ figures, what: 'serialising only' });
    const toUtf8 = (figures: RowFigures) => ({ figures, what: 'serialising to UTF-8 only' });
    const targets: BenchTarget[] = [
      recordingTarget('retail oracle episodes recorded as inputs, in-thread', retailInputs, retailOff, serialising(retailInputsSerialised), retailInputsSchemaFloor, records),
      recordingTarget('retail oracle episodes recorded as inputs, writer thread', retailInputsThreaded, retailOff, serialising(retailInputsSerialised), retailInputsSchemaFloor, records),
      recordingTarget('inventory 4-step episodes recorded as inputs, in-thread', inputs, inventoryOff, serialising(inputsSerialised), inputsSchemaFloor, records),
      recordingTarget('inventory 4-step episodes recorded as inputs, writer thread', inputsThreaded, inventoryOff, serialising(inputsSerialised), inputsSchemaFloor, records),
      recordingTarget('retail oracle episodes recorded as transitions (a row per step), in-thread', retailGrouped, retailOff, serialising(retailSerialised), retailFloor, 'the same rows'),
      recordingTarget('retail oracle episodes recorded as transitions (a row per step), writer thread', retailThreaded, retailOff, toUtf8(retailEncoded), retailFloor, 'the same rows'),
      recordingTarget('inventory 4-step episodes recorded as transitions (a row per step), in-thread', grouped, inventoryOff, serialising(serialised), rawFloor, 'the same rows'),
      recordingTarget('inventory 4-step episodes recorded as transitions (a row per step), writer thread', threaded, inventoryOff, toUtf8(encoded), rawFloor, 'the same rows'),
    ];
    return {
      title: 'Runtime: recording transitions to SQLite',
      description:
        `Full inventory episodes (reset, ${steps} steps of the reference solution, graded finish), recorded through ` +
        '`createStoreRecorder` into a file-backed SQLite store (better-sqlite3, WAL, synchronous=NORMAL). Group commit: ' +
        'one `appendTransitions` transaction per commit, carrying the transitions and the records of the episodes that ' +
        'began or ended since the last one; in-thread on the store\'s connection, or through `openTransitionWriter()` ' +
        '(the stepping thread serialises and hands each commit to a writer thread, which runs SQLite). CPU is shown for ' +
        'the whole process (every thread) and for the stepping thread alone; each row runs once to warm the JIT before ' +
        'it is measured. The "recorded as inputs" rows record each episode as its inputs (`recordAs: \'inputs\'`, what a harness does for training and evaluation): no transition is serialised or stored; the ended episode\'s record carries its actions, final state hash and dynamics, one row per episode, and reading its transitions replays it (docs/storage.md, "Recording episodes as their inputs"). They write to a store file of their own, as each SQLite reference does (on the file the transition rows write to, those rows\' checkpoints landed on their time); a commit starts at every 512 ended episodes (the recorder\'s maxBatch) or at a flush. The last twelve rows are retail oracle episodes recorded the same ways, against their own unrecorded row, measured in interleaved rounds (11 rounds of ' + fmt(retailN) + ' episodes each; their wall-clock cost is the median over the rounds of each round\'s ratio to that round\'s unrecorded run). The "serialising only" rows are a recorder that only writes canonical JSON of each transition and final record and keeps nothing: the floor of any recorder that serialises on the stepping thread; the "serialising to UTF-8 only" rows also encode each text into one reused buffer: the floor of one that hands bytes to another thread. The "SQLite reference" rows write the same rows with raw better-sqlite3 (JSON.stringify, a prepared single-row INSERT into a table with a unique (episode, step) index on integer episode keys, the final episode records too, one transaction per 512 transitions and per run of flushes (those asked for before the program yields), in-thread, on a file of its own): what writing a row per transition costs when done the plain way, a reference rather than a lower bound (the store\'s multi-row INSERTs, byte bindings and kept texts cost less). Targets: recording costs ≤ 30% of steps/s (issue 18; checked on the eight rows named in "Targets checked in this run" at the top, each beside its stepping-thread floor (the serialising row it cannot cost less than) and raw better-sqlite3 writing the same rows); ≥ 100k transitions/s sustained (perf-anchors; the first note).',
      rows,
      targets,
      notes: [
        `Group commit sustains ${fmt(rowsPerSec)} transitions per CPU-second into SQLite (episodes included, in-thread; ${fmt(grouped.opsPerSec * steps)}/s wall): ${rowsPerSec >= 100_000 ? 'meets' : 'misses'} the ≥ 100k transitions/s target, counted in CPU time.`,
        `Recorded as inputs, recording costs ${cost(retailInputs, retailOff)} of retail's steps/s in-thread (the harness's recorder; its evaluation and training rounds flush once per round, "Harness: recording the episodes it runs": ${within(retailInputs, retailOff) ? 'meets' : 'misses'} the ≤ 30% target in this run) and ${cost(retailInputsThreaded, retailOff)} through the writer thread (${within(retailInputsThreaded, retailOff) ? 'meets' : 'misses'} it), and ${cost(inputs, inventoryOff)} and ${cost(inputsThreaded, inventoryOff)} of the inventory's. What bounds it, in this run: the record's canonical JSON alone costs ${cost(inputsSerialised, inventoryOff)} of the inventory's steps/s (retail: ${cost(retailInputsSerialised, retailOff)}); the same records written with raw better-sqlite3 into the store's episodes table (its columns, unique id, run and task indexes) cost ${cost(inputsSchemaFloor, inventoryOff)} (retail: ${cost(retailInputsSchemaFloor, retailOff)}), into a bare integer-keyed table ${cost(inputsFloor, inventoryOff)} (retail: ${cost(retailInputsFloor, retailOff)}), and a commit's records as one row ${cost(inputsGroupFloor, inventoryOff)} (retail: ${cost(retailInputsGroupFloor, retailOff)}). An inventory episode (${off.threadUs === undefined ? '' : `${off.threadUs.toFixed(1)} µs of CPU, `}4 steps) costs about what its record's JSON and row do, so no store that serialises each record can record it within 30%. The store's in-thread rows run their checkpoints on the checkpointer thread (a bulk writer's, docs/storage.md), the references inline in their commits, as SQLite does by default.`,
        `Recorded as transitions, against SQLite itself: written the plain better-sqlite3 way (the "SQLite reference" rows), the same rows cost ${cost(rawFloor, inventoryOff)} of the inventory steps/s and ${cost(retailFloor, retailOff)} of retail's in this run; the store's in-thread group commit ${cost(grouped, inventoryOff)} and ${cost(retailGrouped, retailOff)}, through the writer thread ${cost(threaded, inventoryOff)} and ${cost(retailThreaded, retailOff)}: a row per transition costs more than the ≤ 30% target on both workloads.`,
        `What no recorder of these rows could beat on this machine: the raw reference's CPU per episode (every thread) spread over the ${cores} cores, as if all the work recording adds ran on the other core${cores > 2 ? 's' : ''} for free, costs at least ${costPct(spreadCostBound(inventoryOff.cpuUs, rawFloor.cpuUs, cores))} of the inventory's steps/s with a row per transition (retail: ${costPct(spreadCostBound(retailOff.cpuUs, retailFloor.cpuUs, cores))}) and ${costPct(spreadCostBound(inventoryOff.cpuUs, inputsSchemaFloor.cpuUs, cores))} recorded as inputs (retail: ${costPct(spreadCostBound(retailOff.cpuUs, retailInputsSchemaFloor.cpuUs, cores))}); the targets table at the top gives it beside each row's raw reference. Above 30%, no way of writing those rows meets the target here; below it, only one that moves nearly all of its work off the stepping thread could.`,
        'Store recorders stage each transition when it is recorded (serialised at once, into the writer thread\'s UTF-8 buffer): nothing but text waits for the group commit, which saved GC (same-process A/B, load 6-7, stepping thread: in-thread 28.3 -> 26.7 µs per episode, writer thread 18.3 -> 16.7; process 36.2 -> 31.2 and 42.4 -> 36.2).',
        'Recorded as transitions through the writer thread, the stepping thread still pays canonical JSON of the 4 transitions and the record (~1.4 µs per transition, about JSON.stringify\'s cost) and its UTF-8 encoding: close to what an unrecorded episode costs, which is why the harness records the episodes it runs as their inputs (docs/storage.md).',
        'Through the writer thread, each episode record is handed over with its columns as a short JSON array beside its canonical JSON, so the thread does not parse the record (a record of an episode recorded as its inputs holds all its actions: retail ~1.2 kB, 12.5 µs of JSON.parse against ~9 µs for its row, measured in one process).',
        'The writer thread lowers the stepping thread\'s CPU and raises the process\'s (a second connection, the message, UTF-8 decoding): on a 2-core machine steps/s follows the stepping thread while the other core is free.',
        'What the in-memory recorder costs is keeping every object it is handed (4,000 episodes a run: their transitions, observations and records survive young-generation GCs and are promoted), not building them: same process, interleaved, 9 runs of 5x4,000 episodes, stepping-thread CPU per episode, load 7.7: off 8.5 µs, a recorder that drops what it is handed 9.0 µs (the transitions and records built: +0.5 µs), the in-memory recorder 12.5 µs. The store recorders hold text instead (staged at `record`).',
        'The inventory rows are the worst case for the ≤ 30% target: an unrecorded 4-step episode costs 6-8 µs of CPU, about what canonical JSON of its 4 transitions and 2 episode records costs alone, so even a recorder that did nothing but serialise costs about half (the "serialising only" row measures it in the same run). The retail rows (oracle episodes, one task per template and level, ~8 steps, a world fork and the simulated user per episode) are the same recorders on a realistic episode, measured in the same run.',
        'Retail: a record a tool makes is hashed with core\'s kept frozen-data texts and its transition splices that text (docs/storage.md, "Where a step\'s bytes are produced", (3)). What the writer-thread row costs the stepping thread beyond the "serialising only" row: the UTF-8 bytes (V8 flattens each concatenated text first: ~0.55 µs per retail transition, encoding ~0.2), the call\'s bookkeeping, and the writer thread running SQLite beside it on the other core (docs/design/018-write-path.md, "Where recording\'s remaining cost is"). Same process, interleaved, 13 rounds, load ~8.6, stepping-thread CPU per episode: inventory off 5.9 µs, serialising 12.2, to UTF-8 15.0, the writer\'s recorder and call builder with a target that sends nothing 17.0, through the writer thread 18.4; retail 45.3, 64.1, 69.3, 77.0, 88.1.',
        'Awaiting durability after every episode turns group commit into one transaction per episode; through the writer thread each one is also a round trip between the threads, which costs the stepping thread about what the commit itself did (measured 155 against 149 µs, CPU, load 13): the writer pays off when commits are handed over without waiting.',
      ],
    };
  } finally {
    await store.close();
    await inputsStore.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Entry point for `npm run bench`. */
export async function run(): Promise<BenchSection[]> {
  return [stepSection(), resetSection(), await recordingSection()];
}

// Direct runs print the tables: `npx tsx bench/runtime.bench.ts`.
if (import.meta.url === `file://${process.argv[1]}`) {
  for (const section of await run()) {
    console.log(`\n## ${section.title}`);
    console.table(section.rows);
    for (const note of section.notes ?? []) console.log(`- ${note}`);
  }
}
