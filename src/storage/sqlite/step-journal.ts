/**
 * The step journal of a SQLite store (docs/storage.md, "Step journal"): an append-only file next to the
 * database (`<db>-steps`) that a server in the default durability writes each commit group to, with one
 * `write()`, before it answers; SQLite then takes the journal's entries in groups (asked at most `FEED_MS`
 * later; the store's feed commits them on its writer thread), each group in one transaction that also records,
 * in `meta`, the last entry applied. Opening the store
 * applies the entries that SQLite does not hold yet; applying is idempotent (an entry at or below the
 * recorded one is skipped, inside the same transaction). Crash semantics are SQLite's with
 * `synchronous=NORMAL`: an entry whose `write()` returned survives a process crash, not an OS crash or power
 * loss (no fsync). With `synchronous=FULL` the store offers no journal (commit before answer, as before).
 *
 * File: a 24-byte header (`EHSJ`, format version, a 16-byte random journal id), then records
 * `[u32 payload length][u32 CRC-32 of payload][payload]` (little-endian). A record that is cut short or whose
 * checksum does not match ends the journal (a torn tail): it and anything after it are ignored.
 * Payload: `f64 seq, u32 transitions, u32 records`, each transition `str episodeId, f64 step, str body`, each
 * record `str body` (canonical JSON; `str` is `u32 byte length` + UTF-8).
 */
import { randomBytes } from 'node:crypto';
import { closeSync, ftruncateSync, openSync, readFileSync, rmSync, truncateSync, writeSync } from 'node:fs';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { crc32 } from 'node:zlib';
import { canonicalize, EnvHarnessError, type EpisodeRecord, type StagedTransitions, type Transition } from '../../core/index.js';
import { stageTexts } from './transitions.js';

/**
 * The longest an acknowledged entry waits before SQLite is asked for it (ms). 20 rather than 10: half the
 * transactions, each with pages every feed writes (the `meta` row, the index's last pages) and a wake-up of the
 * writer thread; measured (`serve`, wrk round-robin over 32 episodes, 7 paired rounds, load ~2) 0.97x the
 * server's CPU per null and per retail step.
 */
export const FEED_MS = 20;
/** Transitions pending past which SQLite is fed at once rather than at the timer. */
const FEED_TRANSITIONS = 2048;
/**
 * Bytes of entries not yet in SQLite (pending and in the feed under way) past which an append's promise waits
 * for the feed under way to settle: a writer thread slower than the steps holds back the answers rather than
 * letting the stepping thread's buffer grow.
 */
export const FEED_MAX_BYTES = 8 << 20;
/** How long a failed feed waits before it is tried again (ms), doubling up to `RETRY_MAX_MS`. */
const RETRY_MS = 50;
const RETRY_MAX_MS = 2000;
const MAGIC = 0x4a534845; // 'EHSJ' read as a little-endian u32
const VERSION = 1;
export const HEADER_BYTES = 24;
/**
 * The journal file is written full of zeros to this size when it starts, and written over in place from the
 * header on once SQLite holds it all: appends then never change the file's size. Measured (a 900-byte
 * `pwrite` every 150 with another thread writing and fsyncing 64 KiB in a loop, as SQLite's checkpoints do):
 * appends that grow a file cut back every 150 writes had stalls up to 33-76 ms, writes in place at most 4-5 ms.
 * A feed interval of retail steps (about 1.2 MB at 27k steps/s and `FEED_MS`) grows it once past 1 MiB; it keeps
 * that size. (4 MiB was tried: CI's T2 runs the server on a 4 MiB tmpfs.)
 */
const PREALLOCATED_BYTES = 1 << 20;
const FRAME_BYTES = 8;
/** The `meta` key that holds the last entry of journal `id` applied. */
export const JOURNAL_META_PREFIX = 'stepJournal.';

/** One commit group: transitions (episode id, step, canonical body) and episode records. */
export interface JournalEntry {
  seq: number;
  ids: string[];
  steps: number[];
  bodies: string[];
  episodes: EpisodeRecord[];
}

/** Applies the entries of journal `id` not applied yet, in one transaction; returns how many it applied. */
export type ApplyJournal = (id: string, entries: readonly JournalEntry[]) => number;

/**
 * Entries handed to SQLite in one feed: their framed records exactly as the journal file holds them
 * (`[u32 length][u32 CRC-32][payload]` one after another; `decodeBatch` reads them back), so that a feed hands
 * over bytes already written instead of serialising anything again. `bytes` is a view of shared memory that the
 * journal leaves alone until the feed settles (and reuses after).
 */
export interface JournalBatch {
  bytes: Uint8Array;
  entries: number;
  transitions: number;
  /** The last entry's sequence number. */
  last: number;
}

/**
 * Applies a batch of journal `id` (the entries at or below the last one recorded in `meta` are skipped, and
 * the last one applied is recorded, in the same transaction); resolves once committed, with how many it applied.
 */
export type JournalFeed = (id: string, batch: JournalBatch) => Promise<number>;

/** The entries of a batch (framed records one after another; the checksums were taken when written). */
export function decodeBatch(bytes: Uint8Array): JournalEntry[] {
  const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const entries: JournalEntry[] = [];
  for (let at = 0; at < data.length; ) {
    const end = at + FRAME_BYTES + data.readUInt32LE(at);
    const entry = decode(data.subarray(at + FRAME_BYTES, end));
    if (entry === undefined) throw new RangeError(`journal batch: the record at byte ${at} cannot be read`);
    entries.push(entry);
    at = end;
  }
  return entries;
}

/** The journal file of a store at `location`. */
export function journalPath(location: string): string {
  return `${location}-steps`;
}

/** What a journal file holds: its id and its whole entries (a torn tail is left out), or undefined (no file, or no header). */
export function readJournal(path: string): { id: string; entries: JournalEntry[]; bytes: number } | undefined {
  let data: Buffer;
  try {
    data = readFileSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  if (data.length < HEADER_BYTES || data.readUInt32LE(0) !== MAGIC) return undefined;
  if (data.readUInt32LE(4) !== VERSION) {
    throw new EnvHarnessError('STORE_FAILED', `step journal ${path}: format version ${data.readUInt32LE(4)} is not known to this EnvHarness version (${VERSION})`, { details: { operation: 'open', journal: path } });
  }
  const id = data.toString('hex', 8, HEADER_BYTES);
  const entries: JournalEntry[] = [];
  let at = HEADER_BYTES;
  while (at + FRAME_BYTES <= data.length) {
    const length = data.readUInt32LE(at);
    const end = at + FRAME_BYTES + length;
    if (end > data.length || length < 16) break;
    const payload = data.subarray(at + FRAME_BYTES, end);
    if (crc32(payload) !== data.readUInt32LE(at + 4)) break;
    const entry = decode(payload);
    // A record not after the last one is left from before the file was written over from its start.
    if (entry === undefined || (entries.length > 0 && entry.seq <= entries[entries.length - 1]!.seq)) break;
    entries.push(entry);
    at = end;
  }
  return { id, entries, bytes: at };
}

function decode(payload: Buffer): JournalEntry | undefined {
  let at = 0;
  const str = (): string => {
    const n = payload.readUInt32LE(at);
    at += 4;
    if (at + n > payload.length) throw new RangeError('string past the record');
    const text = payload.toString('utf8', at, at + n);
    at += n;
    return text;
  };
  try {
    const seq = payload.readDoubleLE(0);
    const count = payload.readUInt32LE(8);
    const records = payload.readUInt32LE(12);
    at = 16;
    const entry: JournalEntry = { seq, ids: [], steps: [], bodies: [], episodes: [] };
    for (let i = 0; i < count; i++) {
      entry.ids.push(str());
      entry.steps.push(payload.readDoubleLE(at));
      at += 8;
      entry.bodies.push(str());
    }
    for (let i = 0; i < records; i++) entry.episodes.push(JSON.parse(str()) as EpisodeRecord);
    return at === payload.length ? entry : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Applies what the journal at `location` holds and SQLite does not (store open). Never truncates: the
 * journal may belong to a server that is running (its own feed then skips what this applied).
 */
export function replayStepJournal(location: string, apply: ApplyJournal): number {
  const path = journalPath(location);
  const journal = readJournal(path);
  if (journal === undefined || journal.entries.length === 0) return 0;
  try {
    return apply(journal.id, journal.entries);
  } catch (error) {
    throw new EnvHarnessError('STORE_FAILED', `sqlite store ${location}: cannot apply the step journal ${path}: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
      details: { operation: 'open', journal: path },
    });
  }
}

/**
 * The journal of one server (`SqliteStore.openStepJournal`): a recording target (`createStoreRecorder`) whose
 * commits are one `write()` each, and resolve then; SQLite is fed behind them. One per store at a time (its
 * `JournalLock`: while another connection holds it, none for this one).
 */
export class StepJournal {
  readonly ordered = true;
  private fd: number | undefined;
  private readonly id: Buffer;
  private size = HEADER_BYTES;
  private seq = 0;
  /**
   * The framed records written and not yet handed to a feed, in order (`pendingBytes` bytes of `pendingBuffer`).
   * Shared memory: a feed hands the thread the buffer itself (nothing copied), and the journal writes the
   * next records into `spare` until the feed settles (the buffers then swap; a failed feed's are kept).
   */
  private pendingBuffer = sharedBuffer(1 << 16);
  private spare: Buffer | undefined;
  private pendingBytes = 0;
  private pendingEntries = 0;
  private pendingTransitions = 0;
  /** The batch of the feed under way (its buffer is not written until the feed settles; a failed one is fed again). */
  private inflight: JournalBatch | undefined;
  /** Appends waiting for room (`FEED_MAX_BYTES`): resolved when a feed settles. */
  private roomWaiters: Array<() => void> = [];
  private feeding = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private retryMs = RETRY_MS;
  /** The highest entry known to be in SQLite. */
  private fed = 0;
  private readonly waiters: Array<{ seq: number; resolve: () => void; reject: (error: unknown) => void }> = [];
  /** A write failed and its torn bytes could not be cut off: the journal takes nothing more. */
  private failure: EnvHarnessError | undefined;
  /** The last feed's error, until a feed commits: while SQLite lacks `FEED_MAX_BYTES` or more, no step is taken. */
  private feedError: unknown;
  private closing: Promise<void> | undefined;
  /** For tests and benches: journal writes, feeds (SQLite transactions) and restarts from the header so far. */
  readonly stats = { writes: 0, feeds: 0, rewinds: 0 };

  private constructor(
    readonly path: string,
    private readonly lock: JournalLock,
    private readonly feed: JournalFeed,
  ) {
    this.id = randomBytes(16);
    const header = Buffer.alloc(HEADER_BYTES);
    header.writeUInt32LE(MAGIC, 0);
    header.writeUInt32LE(VERSION, 4);
    this.id.copy(header, 8);
    // Truncated and started anew: what it held was applied just before (the caller's applyNow).
    const fd = openSync(path, 'w');
    try {
      const file = Buffer.alloc(PREALLOCATED_BYTES);
      header.copy(file, 0);
      try {
        writeAll(fd, file, file.length, 0);
      } catch (error) {
        // No room for the preallocation (a nearly full disk): the journal starts with its header and an end
        // frame, and grows as it is written; a write that then finds no room fails as any journal write does.
        if (!isNoSpace(error)) throw error;
        ftruncateSync(fd, 0);
        writeAll(fd, file, HEADER_BYTES + FRAME_BYTES, 0);
      }
    } catch (error) {
      closeSync(fd);
      throw error;
    }
    this.fd = fd;
  }

  /**
   * Takes the journal of the store at `location`: applies what an earlier owner left (`applyNow`), then starts
   * an empty one. Undefined when another live process holds it.
   */
  static open(location: string, applyNow: ApplyJournal, feed: JournalFeed): StepJournal | undefined {
    const path = journalPath(location);
    const lock = JournalLock.take(`${path}.lock`);
    if (lock === undefined) return undefined;
    try {
      replayStepJournal(location, applyNow);
      return new StepJournal(path, lock, feed);
    } catch (error) {
      lock.release();
      throw error;
    }
  }

  /** The journal's id (hex), as its header and the `meta` key name it. */
  get journalId(): string {
    return this.id.toString('hex');
  }

  /** Entries written and not yet committed to SQLite. */
  get unfed(): number {
    return this.seq - this.fed;
  }

  /** A commit filled transition by transition: each is serialised as it is added; `commit` writes the entry. */
  stage(): StagedTransitions {
    return stageTexts((rows, episodes) => (rows.failure !== undefined ? Promise.reject(rows.failure) : this.append(rows.ids, rows.steps, rows.texts, episodes)));
  }

  appendTransitions(transitions: readonly Transition[], options: { episodes?: readonly EpisodeRecord[] } = {}): Promise<void> {
    let bodies: string[];
    try {
      bodies = transitions.map((t) => canonicalize(t));
    } catch (error) {
      return Promise.reject(error);
    }
    return this.append(transitions.map((t) => t.episodeId), transitions.map((t) => t.step), bodies, options.episodes ?? []);
  }

  /** Writes one entry (one `write()`); resolves once it returned. SQLite gets it at most `FEED_MS` later. */
  private append(ids: string[], steps: number[], bodies: string[], episodes: readonly EpisodeRecord[]): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.fd === undefined || this.closing !== undefined) return Promise.reject(new EnvHarnessError('STORE_FAILED', `step journal ${this.path} is closed`, { details: { operation: 'appendTransitions' } }));
    if (ids.length === 0 && episodes.length === 0) return Promise.resolve();
    if (this.feedError !== undefined && this.pendingBytes + (this.inflight?.bytes.length ?? 0) >= FEED_MAX_BYTES) {
      // SQLite refuses the entries it lacks (a step it already has, a full disk, a lock held elsewhere) and they
      // pass FEED_MAX_BYTES: this step is not taken, rather than acknowledged into a buffer that would grow for as
      // long as the failure lasts. The feed is still tried again, and steps are taken once it commits.
      const cause = this.feedError;
      return Promise.reject(
        new EnvHarnessError('STORE_FAILED', `step journal ${this.path}: SQLite lacks ${this.unfed} acknowledged entries and its feed fails (${cause instanceof Error ? cause.message : String(cause)}); no step is taken until it commits`, {
          cause,
          details: { operation: 'appendTransitions', journal: this.path, unfed: this.unfed },
        }),
      );
    }
    const records = episodes.map((e) => canonicalize(e));
    const seq = this.seq + 1;
    // Framed where the feed takes it from, after the records pending: written to the file from there, and
    // counted as pending only once the write returned (bytes copied nowhere, nothing serialised again).
    const at = this.pendingBytes;
    const length = this.encode(seq, ids, steps, bodies, records);
    try {
      writeAll(this.fd, this.pendingBuffer, length, this.size, at);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const failed = new EnvHarnessError('STORE_FAILED', `step journal ${this.path}: write failed: ${error instanceof Error ? error.message : String(error)}`, {
        cause: error,
        details: { operation: 'appendTransitions', journal: this.path, ...(code !== undefined ? { code } : {}) },
      });
      // Cut back to the last whole entry, so that nothing is ever appended after a torn one; if even that
      // fails, the journal takes nothing more.
      try {
        ftruncateSync(this.fd, this.size);
      } catch {
        this.failure = failed;
      }
      return Promise.reject(failed);
    }
    this.seq = seq;
    this.size += length;
    this.stats.writes++;
    this.pendingBytes += length;
    this.pendingEntries++;
    this.pendingTransitions += ids.length;
    if (this.pendingTransitions >= FEED_TRANSITIONS) this.feedSoon(0);
    else this.feedSoon(FEED_MS);
    if (this.pendingBytes + (this.inflight?.bytes.length ?? 0) < FEED_MAX_BYTES) return Promise.resolve();
    // SQLite is behind by more than FEED_MAX_BYTES: this answer waits for the feed under way.
    this.feedSoon(0);
    return new Promise<void>((resolve) => this.roomWaiters.push(resolve));
  }

  /** Resolves once SQLite holds every entry written so far; rejects if feeding it fails (the entries stay in the journal). */
  drain(): Promise<void> {
    if (this.fed >= this.seq) return Promise.resolve();
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ seq: this.seq, resolve, reject }));
    this.feedSoon(0);
    return done;
  }

  /** Feeds SQLite everything, then removes the journal and releases its lock. On a failure the file stays (applied at the next open). */
  close(): Promise<void> {
    this.closing ??= (async () => {
      try {
        await this.drain();
      } finally {
        if (this.timer !== undefined) clearTimeout(this.timer);
        this.timer = undefined;
        const fd = this.fd;
        this.fd = undefined;
        const clean = this.fed >= this.seq && this.failure === undefined;
        if (fd !== undefined) closeSync(fd);
        if (clean) rmSync(this.path, { force: true });
        this.lock.release();
      }
    })();
    return this.closing;
  }

  private feedSoon(delayMs: number): void {
    if (this.feeding) return;
    if (this.timer !== undefined) {
      if (delayMs > 0) return;
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.feedNow();
    }, delayMs);
    // Only a drain keeps the process up for the feed: entries nobody waits for are safe in the file (the next
    // open applies them), so a process that ends (or closed its store first) is not held by retries.
    if (this.waiters.length === 0 && this.roomWaiters.length === 0) this.timer.unref?.();
  }

  private async feedNow(): Promise<void> {
    if (this.feeding || this.pendingEntries === 0) return;
    this.feeding = true;
    // The pending records themselves (shared memory, read by the writer thread); new ones go to the spare buffer.
    const held = this.pendingBuffer;
    const batch: JournalBatch = { bytes: held.subarray(0, this.pendingBytes), entries: this.pendingEntries, transitions: this.pendingTransitions, last: this.seq };
    this.inflight = batch;
    this.pendingBuffer = this.spare ?? sharedBuffer(held.length);
    this.spare = undefined;
    this.pendingBytes = 0;
    this.pendingEntries = 0;
    this.pendingTransitions = 0;
    let error: unknown;
    try {
      await this.feed(this.journalId, batch);
    } catch (caught) {
      error = caught;
    }
    this.feeding = false;
    this.inflight = undefined;
    this.stats.feeds++;
    const room = this.roomWaiters.splice(0);
    for (const resolve of room) resolve();
    this.feedError = error;
    if (error !== undefined) {
      // Kept, in order, ahead of what came meanwhile: tried again later, and in the file until then.
      const all = sharedBuffer(Math.max(this.pendingBuffer.length, batch.bytes.length + this.pendingBytes));
      all.set(batch.bytes, 0);
      this.pendingBuffer.copy(all, batch.bytes.length, 0, this.pendingBytes);
      this.pendingBuffer = all;
      this.pendingBytes += batch.bytes.length;
      this.pendingEntries += batch.entries;
      this.pendingTransitions += batch.transitions;
      const waiters = this.waiters.splice(0);
      for (const w of waiters) w.reject(error);
      if (this.closing === undefined) {
        const wait = this.retryMs;
        this.retryMs = Math.min(RETRY_MAX_MS, this.retryMs * 2);
        this.timer = setTimeout(() => {
          this.timer = undefined;
          void this.feedNow();
        }, wait);
        this.timer.unref?.();
      }
      return;
    }
    this.spare = held;
    this.retryMs = RETRY_MS;
    this.fed = batch.last;
    if (this.pendingEntries === 0 && this.fd !== undefined) {
      // Everything written is in SQLite: the journal starts over after its header, in place. A zero frame
      // there ends it for a reader until the next entry is written over it.
      try {
        writeAll(this.fd, ZERO_FRAME, FRAME_BYTES, HEADER_BYTES);
        this.size = HEADER_BYTES;
        this.stats.rewinds++;
      } catch {
        // Still valid as it is (every entry in it is applied, and skipped if read again).
      }
    }
    for (let i = 0; i < this.waiters.length; ) {
      const w = this.waiters[i]!;
      if (w.seq <= this.fed) {
        this.waiters.splice(i, 1);
        w.resolve();
      } else i++;
    }
    if (this.pendingEntries > 0) this.feedSoon(this.waiters.length > 0 || this.pendingTransitions >= FEED_TRANSITIONS ? 0 : FEED_MS);
  }

  /** Writes the framed record of an entry into `pendingBuffer` after the pending records; returns its length. */
  private encode(seq: number, ids: readonly string[], steps: readonly number[], bodies: readonly string[], records: readonly string[]): number {
    // UTF-8 takes at most 3 bytes per UTF-16 unit: reserve that, then write.
    let bound = FRAME_BYTES + 16;
    for (let i = 0; i < ids.length; i++) bound += 16 + (ids[i]!.length + bodies[i]!.length) * 3;
    for (const r of records) bound += 4 + r.length * 3;
    const start = this.pendingBytes;
    if (this.pendingBuffer.length - start < bound) {
      const bigger = sharedBuffer(Math.max(this.pendingBuffer.length * 2, start + bound));
      this.pendingBuffer.copy(bigger, 0, 0, start);
      this.pendingBuffer = bigger;
    }
    const b = this.pendingBuffer;
    let at = start + FRAME_BYTES;
    b.writeDoubleLE(seq, at);
    b.writeUInt32LE(ids.length, at + 8);
    b.writeUInt32LE(records.length, at + 12);
    at += 16;
    for (let i = 0; i < ids.length; i++) {
      at = putString(b, ids[i]!, at);
      b.writeDoubleLE(steps[i]!, at);
      at += 8;
      at = putString(b, bodies[i]!, at);
    }
    for (const r of records) at = putString(b, r, at);
    b.writeUInt32LE(at - start - FRAME_BYTES, start);
    b.writeUInt32LE(crc32(b.subarray(start + FRAME_BYTES, at)), start + 4);
    return at - start;
  }
}

const ZERO_FRAME = Buffer.alloc(FRAME_BYTES);

/** A buffer over shared memory (posting it to a thread shares it rather than copying it). */
function sharedBuffer(bytes: number): Buffer {
  return Buffer.from(new SharedArrayBuffer(bytes));
}

/** Writes `u32 byte length` + UTF-8 of `text` at `at`; returns where it ends. */
function putString(b: Buffer, text: string, at: number): number {
  const n = b.write(text, at + 4, 'utf8');
  b.writeUInt32LE(n, at);
  return at + 4 + n;
}

/** The error of a write that found no room (the disk, or the user's quota, is full). */
function isNoSpace(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

/** `write()` until the `length` bytes of `buffer` from `offset` are out, at `position` (a short write continues; an error throws). */
function writeAll(fd: number, buffer: Buffer, length: number, position: number, offset = 0): void {
  let done = 0;
  while (done < length) done += writeSync(fd, buffer, offset + done, length - done, position + done);
}

/**
 * The journal's lock on `<db>-steps.lock`: an exclusive SQLite lock (POSIX record locks underneath) that an open
 * connection holds for as long as the journal lives. The kernel drops it when its process ends, however it ends,
 * so no lock is ever stale and none is taken over. Until 2026-12-06 the lock was a file naming its owner's pid:
 * two processes that found a dead owner's lock could both take it (the second removed the first's new lock), and
 * one that read the file between another's create and write removed a live lock; two journals on one store write
 * over each other's entries. The file stays when the lock is released: removing it would let a process that had
 * opened it just before lock the removed file while another locks a new one. Nothing in the holding process opens
 * the file any other way: closing any descriptor of it drops the process's POSIX locks on it (SQLite's own
 * connections to it keep theirs). The lock lives as long as its journal is reachable (its store keeps the journal
 * it handed out): a store dropped without `close()` loses it at a garbage collection, and the next owner applies
 * what its journal holds.
 */
class JournalLock {
  private constructor(private readonly db: Database) {}

  /** The lock, or undefined while another connection (this process's or another's) holds it. */
  static take(path: string): JournalLock | undefined {
    for (let attempt = 0; attempt < 2; attempt++) {
      const db = new BetterSqlite3(path, { timeout: 0 });
      try {
        // Taken at once, held until the connection closes (nothing is ever written).
        db.exec('BEGIN EXCLUSIVE');
        return new JournalLock(db);
      } catch (error) {
        db.close();
        const code = (error as { code?: unknown }).code;
        if (code === 'SQLITE_BUSY') return undefined;
        // A lock file an earlier version wrote (`<pid> <start time>`): held while that process runs; else
        // emptied in place (an empty file is an empty database) and taken.
        if (code !== 'SQLITE_NOTADB' || attempt > 0) throw error;
        if (isAlive(readFileSync(path, 'utf8').trim())) return undefined;
        truncateSync(path, 0);
      }
    }
    return undefined;
  }

  release(): void {
    if (this.db.open) this.db.close();
  }
}

/** Whether the process a lock names (`<pid> [start time]`) still runs. */
function isAlive(holder: string): boolean {
  const [pidText, started] = holder.split(' ');
  const pid = Number(pidText);
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  const now = startTime(pid);
  if (started !== undefined && now !== undefined) return now === started;
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A process's start time in clock ticks since boot (field 22 of /proc/<pid>/stat), or undefined (no such process, or no /proc). */
function startTime(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[19];
  } catch {
    return undefined;
  }
}

