/**
 * The step journal (step-journal.ts): an acknowledged entry reaches SQLite exactly once, whoever applies it
 * (the owner's feed, a store opened on the files a killed process left, another connection opening the
 * store while the owner lives); a torn or corrupt last record is ignored; the file is cut back to its header
 * once SQLite holds everything, and removed on close.
 */
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { makeEpisode, makeTransition } from '../../../test/conformance/store-fixtures.js';
import { systemClock } from '../../cli/clock.js';
import { canonicalize, type Transition } from '../../core/index.js';
import { createStoreRecorder } from '../../runtime/recorder.js';
import { createSqliteStore, type SqliteStore } from './index.js';
import { FEED_MAX_BYTES, HEADER_BYTES, journalPath, readJournal, replayStepJournal, type StepJournal } from './step-journal.js';

const dir = mkdtempSync(join(tmpdir(), 'envharness-journal-'));
const repo = join(dirname(fileURLToPath(import.meta.url)), '../../..');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

function open(file: string): SqliteStore {
  return createSqliteStore(file, { now: systemClock });
}

/** The stored bodies of an episode's transitions, in step order, read on a connection of its own (no replay). */
function rawBodies(file: string, episodeId: string): string[] {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    return db.prepare('SELECT t.body FROM episode_keys k JOIN transitions t ON t.episode_seq = k.seq WHERE k.id = ? ORDER BY k.segment, t.step').pluck().all(episodeId) as string[];
  } finally {
    db.close();
  }
}

/** The files a process killed now would leave (the database, its WAL and the journal), copied elsewhere. */
function crashCopy(file: string): string {
  const copy = join(dir, `crash-${files++}.db`);
  copyFileSync(file, copy);
  if (existsSync(`${file}-wal`)) copyFileSync(`${file}-wal`, `${copy}-wal`);
  copyFileSync(journalPath(file), journalPath(copy));
  return copy;
}

function fresh(): { file: string; store: SqliteStore; journal: StepJournal } {
  const file = join(dir, `store-${files++}.db`);
  const store = open(file);
  const journal = store.openStepJournal();
  if (journal === undefined) throw new Error('no journal');
  return { file, store, journal };
}

/**
 * A process that opens the store at `file` and, once the file `go` exists, takes its step journal, says whether it
 * got it ('held' or 'none'), collects garbage, says so and waits to be killed (run with the loader this test runs
 * under, on the sources).
 */
function holdJournal(file: string, go: string): { ready: Promise<void>; said: Promise<string>; kill: () => Promise<void> } {
  const script = join(dir, `holder-${files++}.ts`);
  writeFileSync(script, [
    `import { existsSync } from 'node:fs';`,
    `import { createSqliteStore } from ${JSON.stringify(join(repo, 'src/storage/sqlite/index.ts'))};`,
    `const store = createSqliteStore(${JSON.stringify(file)}, { now: () => '2026-01-01T00:00:00.000Z' });`,
    `process.stdout.write('ready\\n');`,
    `while (!existsSync(${JSON.stringify(go)}));`,
    `const journal = store.openStepJournal();`,
    `process.stdout.write(journal === undefined ? 'none\\n' : 'held\\n');`,
    // A full collection, then a line saying so: a lock still referenced outlives any collection. Until
    // 2026-12-06 this script kept neither its store nor the journal, and a collection at a moment of the child's
    // own closed the lock's connection: CI saw the test process take a lock a live child had said it held.
    // (Collected once this script's frame is gone; finalizers run in a task of their own after the collection.)
    `setTimeout(() => { globalThis.gc(); setTimeout(() => process.stdout.write('collected\\n'), 100); }, 0);`,
    'setInterval(() => void [store, journal], 1000);',
  ].join('\n'));
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', script], { cwd: repo, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const lines: string[] = [];
  const waiting: Array<() => void> = [];
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    lines.push(...chunk.split('\n').filter((l) => l !== ''));
    for (const wake of waiting.splice(0)) wake();
  });
  const line = (i: number): Promise<string> =>
    new Promise((resolve, reject) => {
      const check = () => (lines.length > i ? resolve(lines[i]!) : waiting.push(check));
      void exited.then(() => reject(new Error(`journal holder exited before saying line ${i + 1}`)));
      check();
    });
  return {
    ready: line(0).then(() => undefined),
    said: line(2).then(() => line(1)),
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

const steps = (id: string, from: number, count: number): Transition[] => Array.from({ length: count }, (_, i) => makeTransition(id, from + i));

describe('step journal', () => {
  it('answers from the journal and feeds SQLite behind it; a killed process’s entries are applied at open, once, and a torn last record is ignored', async () => {
    const { file, store, journal } = fresh();
    const recorder = createStoreRecorder(journal);
    const episode = makeEpisode('ep-a', 'task-a');
    recorder.begin(episode);
    for (const t of steps('ep-a', 1, 3)) recorder.record(t);
    await recorder.flush();
    await journal.appendTransitions(steps('ep-a', 4, 2), { episodes: [{ ...episode, steps: 5 }] });
    await journal.appendTransitions(steps('ep-b', 1, 1), { episodes: [makeEpisode('ep-b', 'task-b')] });
    // Answered, not yet in SQLite (fed at most 10 ms later): this is what a SIGKILL now leaves.
    expect(rawBodies(file, 'ep-a')).toEqual([]);
    expect(readJournal(journalPath(file))!.entries.map((e) => e.seq)).toEqual([1, 2, 3]);
    const killed = crashCopy(file);
    const torn = crashCopy(file);
    const corrupt = crashCopy(file);
    const partialFrame = crashCopy(file);
    // A torn last record (its write cut short), a last record whose bytes changed, and the first bytes of a
    // frame after whole records: each ignored, the whole records before applied.
    truncateSync(journalPath(torn), lastRecord(journalPath(torn)).start + 11);
    const bytes = readFileSync(journalPath(corrupt));
    const at = lastRecord(journalPath(corrupt)).end - 3;
    bytes[at] = bytes[at]! ^ 0x55;
    writeFileSync(journalPath(corrupt), bytes);
    const cut = readFileSync(journalPath(partialFrame));
    Buffer.from([200, 0, 0, 0, 7]).copy(cut, lastRecord(journalPath(partialFrame)).end);
    writeFileSync(journalPath(partialFrame), cut);
    expect(readJournal(journalPath(torn))!.entries).toHaveLength(2);
    expect(readJournal(journalPath(corrupt))!.entries).toHaveLength(2);
    for (const [copy, expected] of [[killed, 2], [torn, 1], [corrupt, 1], [partialFrame, 2]] as const) {
      const reopened = open(copy);
      try {
        expect((await reopened.listTransitions('ep-a')).map((t) => t.step)).toEqual([1, 2, 3, 4, 5]);
        expect((await reopened.listTransitions('ep-b')).length, copy).toBe(expected - 1);
        expect((await reopened.getEpisode('ep-a'))?.steps).toBe(5);
        // Byte for byte what the owner's own feed writes: the canonical text the recorder staged.
        expect(rawBodies(copy, 'ep-a')).toEqual(steps('ep-a', 1, 5).map((t) => canonicalize(t)));
      } finally {
        await reopened.close();
      }
      // Opened again (and applied again by hand): nothing changes, nothing is applied twice.
      expect(replayStepJournal(copy, () => 0)).toBe(0);
      const again = open(copy);
      try {
        expect((await again.listTransitions('ep-a')).length).toBe(5);
        expect((await again.listTransitions('ep-b')).length).toBe(expected - 1);
      } finally {
        await again.close();
      }
    }

    // The owner's feed: SQLite gets all of it, once; the journal starts over after its header (in place).
    await journal.drain();
    expect(rawBodies(file, 'ep-a')).toHaveLength(5);
    expect(readJournal(journalPath(file))!.entries).toEqual([]);
    // Written over from the start: the entries left after the new one (older) are not read as the journal's,
    // even one that starts exactly where the new one ends (a whole record, checksum and all).
    const before = readFileSync(journalPath(killed));
    const oldFirst = before.subarray(HEADER_BYTES, HEADER_BYTES + 8 + before.readUInt32LE(HEADER_BYTES));
    await journal.appendTransitions(steps('ep-a', 6, 1));
    expect(readJournal(journalPath(file))!.entries.map((e) => e.seq)).toEqual([4]);
    const now = readFileSync(journalPath(file));
    oldFirst.copy(now, lastRecord(journalPath(file)).end);
    const stale = join(dir, `stale-${files++}`);
    writeFileSync(stale, now);
    expect(readJournal(stale)!.entries.map((e) => e.seq)).toEqual([4]);
    await journal.drain();
    await journal.close();
    expect(existsSync(journalPath(file))).toBe(false);
    await store.close();
  });

  it('an entry applied by another connection opening the store while the owner lives is skipped by the owner’s feed', async () => {
    const { file, store, journal } = fresh();
    await journal.appendTransitions(steps('ep-c', 1, 4), { episodes: [makeEpisode('ep-c', 'task-c', { steps: 4 })] });
    // Another process opens the store now: it applies the entry (the journal stays, it is not its own).
    const other = open(file);
    expect((await other.listTransitions('ep-c')).length).toBe(4);
    expect(readJournal(journalPath(file))!.entries).toHaveLength(1);
    // Then the owner's feed, and one more entry after it: no duplicate step (STORE_CONFLICT), nothing twice.
    await journal.drain();
    await journal.appendTransitions(steps('ep-c', 5, 1), { episodes: [makeEpisode('ep-c', 'task-c', { steps: 5 })] });
    const third = open(file);
    await journal.drain();
    expect((await other.listTransitions('ep-c')).map((t) => t.step)).toEqual([1, 2, 3, 4, 5]);
    expect((await other.getEpisode('ep-c'))?.steps).toBe(5);
    await third.close();
    await other.close();
    await journal.close();
    await store.close();
  });

  it('is one per store: a second open while the owner lives gets none; after close the next one does', async () => {
    const { store, journal } = fresh();
    expect(store.openStepJournal()).toBeUndefined();
    await journal.close();
    const next = store.openStepJournal();
    expect(next).toBeDefined();
    await next!.close();
    await store.close();
  });

  it('is held by one process at a time: of processes racing for it (a dead owner’s lock left behind), one gets it, and the next gets it once that one is killed', async () => {
    const file = join(dir, `lock-${files++}.db`);
    await open(file).close();
    // What an owner killed by an earlier version left: a lock file naming a process that is gone.
    writeFileSync(`${journalPath(file)}.lock`, '2147483646 1');
    const go = join(dir, `go-${files++}`);
    const holders = Array.from({ length: 6 }, () => holdJournal(file, go));
    await Promise.all(holders.map((h) => h.ready));
    writeFileSync(go, '');
    const said = await Promise.all(holders.map((h) => h.said));
    try {
      expect(said.filter((s) => s === 'held')).toHaveLength(1);
      expect(said.filter((s) => s === 'none')).toHaveLength(holders.length - 1);
      const store = open(file);
      try {
        expect(store.openStepJournal()).toBeUndefined();
        // Killed: no close, no clean-up; the kernel drops its lock, and nothing is left to judge stale.
        await holders[said.indexOf('held')]!.kill();
        const journal = store.openStepJournal();
        expect(journal).toBeDefined();
        await journal!.close();
      } finally {
        await store.close();
      }
    } finally {
      await Promise.all(holders.map((h) => h.kill()));
    }
  });

  it('respects a lock file an earlier version wrote (`<pid> <start time>`) while its process runs, and takes it over when it is gone', async () => {
    const file = join(dir, `lock-${files++}.db`);
    const store = open(file);
    const lock = `${journalPath(file)}.lock`;
    const started = (pid: number) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[19]!;
    // Another live process (the parent, with its real start time): held.
    writeFileSync(lock, `${process.ppid} ${started(process.ppid)}`);
    expect(store.openStepJournal()).toBeUndefined();
    // This pid, but another start time: an earlier process that had the same pid (a restarted container).
    writeFileSync(lock, `${process.pid} 1`);
    const journal = store.openStepJournal();
    expect(journal).toBeDefined();
    expect(store.openStepJournal()).toBeUndefined();
    await journal!.close();
    // Released: the next one gets it.
    const next = store.openStepJournal();
    expect(next).toBeDefined();
    await next!.close();
    await store.close();
  });

  it('is not offered with synchronous=FULL (commit before answer keeps power-loss durability) or in memory', async () => {
    const full = createSqliteStore(join(dir, `full-${files++}.db`), { now: systemClock, synchronous: 'FULL' });
    expect(full.openStepJournal()).toBeUndefined();
    await full.close();
    const memory = createSqliteStore(':memory:', { now: systemClock });
    expect(memory.openStepJournal()).toBeUndefined();
    await memory.close();
  });

  it('a feed that fails keeps its entries in the journal and in order, and applies them once it can', async () => {
    const { file, store, journal } = fresh();
    // Another connection holds the write lock past the busy timeout: the feed fails (SQLITE_BUSY).
    const blocker = new BetterSqlite3(file);
    blocker.pragma('busy_timeout = 0');
    blocker.exec('BEGIN IMMEDIATE');
    const slow = createSqliteStore(file, { now: systemClock, busyTimeoutMs: 0 });
    const slowJournal = (await (async () => {
      await journal.close();
      return slow.openStepJournal();
    })())!;
    await slowJournal.appendTransitions(steps('ep-d', 1, 2), { episodes: [makeEpisode('ep-d', 'task-d', { steps: 2 })] });
    await expect(slowJournal.drain()).rejects.toMatchObject({ code: 'STORE_FAILED' });
    await slowJournal.appendTransitions(steps('ep-d', 3, 1), { episodes: [makeEpisode('ep-d', 'task-d', { steps: 3 })] });
    expect(readJournal(journalPath(file))!.entries.map((e) => e.seq)).toEqual([1, 2]);
    blocker.exec('COMMIT');
    blocker.close();
    await slowJournal.drain();
    expect((await slow.listTransitions('ep-d')).map((t) => t.step)).toEqual([1, 2, 3]);
    expect((await slow.getEpisode('ep-d'))?.steps).toBe(3);
    await slowJournal.close();
    await slow.close();
    await store.close();
  });

  it('a read through the store that owns the journal waits for its feed (the writer thread commits it first)', async () => {
    const { file, store, journal } = fresh();
    await journal.appendTransitions(steps('ep-h', 1, 3), { episodes: [makeEpisode('ep-h', 'task-h', { steps: 3 })] });
    expect(rawBodies(file, 'ep-h')).toEqual([]);
    expect((await store.listTransitions('ep-h')).map((t) => t.step)).toEqual([1, 2, 3]);
    await journal.appendTransitions(steps('ep-h', 4, 1), { episodes: [makeEpisode('ep-h', 'task-h', { steps: 4 })] });
    expect((await store.getEpisode('ep-h'))?.steps).toBe(4);
    expect(rawBodies(file, 'ep-h')).toHaveLength(4);
    await journal.close();
    await store.close();
  });

  it('a feed the writer thread cannot commit is not lost: close rejects and keeps the file, and the next open applies it once', async () => {
    const file = join(dir, `unfed-${files++}.db`);
    const store = createSqliteStore(file, { now: systemClock, busyTimeoutMs: 0 });
    const journal = store.openStepJournal()!;
    const blocker = new BetterSqlite3(file);
    blocker.pragma('busy_timeout = 0');
    blocker.exec('BEGIN IMMEDIATE');
    await journal.appendTransitions(steps('ep-f', 1, 3), { episodes: [makeEpisode('ep-f', 'task-f', { steps: 3 })] });
    await journal.appendTransitions(steps('ep-f', 4, 1), { episodes: [makeEpisode('ep-f', 'task-f', { steps: 4 })] });
    await expect(journal.close()).rejects.toMatchObject({ code: 'STORE_FAILED', details: { operation: 'applyJournal', sqliteCode: 'SQLITE_BUSY' } });
    expect(journal.unfed).toBe(2);
    blocker.exec('ROLLBACK');
    blocker.close();
    // Nothing of it in SQLite; all of it in the file, whose lock is released.
    expect(rawBodies(file, 'ep-f')).toEqual([]);
    expect(readJournal(journalPath(file))!.entries.map((e) => e.seq)).toEqual([1, 2]);
    await store.close();
    for (let i = 0; i < 2; i++) {
      const reopened = open(file);
      try {
        expect(rawBodies(file, 'ep-f')).toEqual(steps('ep-f', 1, 4).map((t) => canonicalize(t)));
        expect((await reopened.getEpisode('ep-f'))?.steps).toBe(4);
      } finally {
        await reopened.close();
      }
    }
  });

  it('holds answers back while the bytes SQLite lacks pass FEED_MAX_BYTES, and lets them go when the feed under way commits', async () => {
    const file = join(dir, `behind-${files++}.db`);
    const store = createSqliteStore(file, { now: systemClock, busyTimeoutMs: 20_000 });
    const journal = store.openStepJournal()!;
    const blocker = new BetterSqlite3(file);
    blocker.exec('BEGIN IMMEDIATE');
    const mib = (step: number): Transition => ({ ...makeTransition('ep-g', step), observation: { kind: 'tool', output: 'x'.repeat(1 << 20) } });
    await journal.appendTransitions([mib(1)]);
    // The feed of entry 1 is under way, waiting for the write lock on the writer thread.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const answered: number[] = [];
    const appends = [2, 3, 4, 5, 6, 7, 8, 9].map((step) => journal.appendTransitions([mib(step)]).then(() => answered.push(step)));
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Entries 1-7 are 7 MiB and some bytes: answered; the 8th passes FEED_MAX_BYTES (8 MiB), so it and the next wait.
    expect(FEED_MAX_BYTES).toBe(8 << 20);
    expect(answered).toEqual([2, 3, 4, 5, 6, 7]);
    blocker.exec('COMMIT');
    blocker.close();
    await Promise.all(appends);
    expect(answered).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
    await journal.drain();
    expect(rawBodies(file, 'ep-g')).toHaveLength(9);
    await journal.close();
    await store.close();
  });
});

/** Where the last whole record of a journal file starts and ends (the file is zeros after its records). */
function lastRecord(path: string): { start: number; end: number } {
  const data = readFileSync(path);
  let at = HEADER_BYTES;
  let last = { start: at, end: at };
  while (at + 8 <= data.length && data.readUInt32LE(at) >= 16) {
    last = { start: at, end: at + 8 + data.readUInt32LE(at) };
    at = last.end;
  }
  return last;
}
