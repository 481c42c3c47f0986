/**
 * Transition commits on a writer thread. The calling thread serialises a call's transitions and records
 * (canonical JSON, as the store writes them) and hands the texts over; a worker thread with its own
 * connection runs the same INSERTs in one `BEGIN IMMEDIATE` transaction and answers once it has committed.
 * A stepping thread then pays serialisation and the hand-off (the UTF-8 buffer is shared with the thread, not copied, and reused once the thread has answered); SQLite's statements and commit run beside it.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { canonicalize, type EpisodeRecord, type Transition } from '../../core/index.js';
import { INLINE_AUTOCHECKPOINT_BYTES } from './checkpointer.js';
import { SEGMENT_STEPS, TRANSITION_CHUNK, TRANSITION_SQL } from './transitions.js';

/** Calls handed over and not yet committed past which a caller waits (blocking) for the thread to catch up. */
export const WRITER_MAX_IN_FLIGHT = 64;
/** How long a caller blocked on a full queue waits for the thread before giving up with STORE_FAILED. */
export const WRITER_STALL_MS = 30_000;

// CommonJS, evaluated in the worker: one transaction per call, in arrival order; `done[0]` counts answered calls.
const SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const SQL = workerData.sql;
const CHUNK = workerData.chunk;
const done = new Int32Array(workerData.done);
let db;
let openError;
try {
  db = new Database(workerData.location, { timeout: workerData.busyTimeoutMs });
  db.pragma('synchronous = ' + workerData.synchronous);
  db.pragma('foreign_keys = ON');
  db.pragma('trusted_schema = OFF');
  autocheckpoint(workerData.autocheckpointBytes);
} catch (error) {
  openError = error;
}
// The store's automatic checkpoint mark (inline, or the far-off fallback once its checkpointer thread runs), in pages of this file.
function autocheckpoint(bytes) {
  db.pragma('wal_autocheckpoint = ' + Math.max(1, Math.round(bytes / db.pragma('page_size', { simple: true }))));
}
const statements = new Map();
const sql = (text) => { let s = statements.get(text); if (s === undefined) { s = db.prepare(text); statements.set(text, s); } return s; };
// By size: building a chunk's statement text (and hashing it for the lookup) every chunk cost the thread 1-2 µs per episode.
const inserts = [];
const insertOf = (size) => (inserts[size] ??= sql(SQL.insertPrefix + Array(size).fill(SQL.insertRowBytes).join(', ')));
// Episode id -> [segment, key] of its latest segment used, for keys known committed (a key never changes once committed).
let keys = new Map();
const SEGMENT = workerData.segmentSteps;
// Streams (one per writer handle) whose earlier call failed: later calls of theirs are refused, never committed after it.
const failed = new Map();
const isUnique = (e) => e && (e.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || e.code === 'SQLITE_CONSTRAINT_UNIQUE');
class Conflict extends Error { constructor(index) { super('duplicate step'); this.index = index; } }
// The key of the segment of \`step\` (created: id -> Map(segment -> key) of this transaction), as the store's segmentKey.
function keyOf(id, step, created) {
  const segment = Math.trunc(step / SEGMENT);
  const known = keys.get(id);
  if (known !== undefined && known[0] === segment) return known[1];
  const segments = created.get(id);
  const mine = segments === undefined ? undefined : segments.get(segment);
  if (mine !== undefined) return mine;
  const inserted = sql(SQL.newEpisodeKey).run(id, segment);
  if (inserted.changes === 0) {
    const stored = sql(SQL.episodeKey).pluck().get(id, segment);
    keys.set(id, [segment, stored]);
    return stored;
  }
  const key = Number(inserted.lastInsertRowid);
  if (segments === undefined) created.set(id, new Map([[segment, key]])); else segments.set(segment, key);
  return key;
}
function write(m, created) {
  const n = m.key.length;
  const bytes = Buffer.from(m.bytes.buffer, m.bytes.byteOffset, m.bytes.byteLength);
  // Records are decoded (their columns come from their JSON); transition bodies stay bytes (insertRows).
  const bodies = new Array(n);
  let from = 0;
  for (let i = 0; i < n; i++) { bodies[i] = bytes.subarray(from, m.ends[i]); from = m.ends[i]; }
  const ids = new Array(n);
  for (let i = 0; i < n; i++) ids[i] = m.keys[m.key[i]];
  insertRows(ids, m.steps, bodies, created, (i) => new Conflict(i));
  // Each record is two texts: its columns (recordColumns), then its canonical JSON, bound as it is.
  for (let i = n; i < m.ends.length; i += 2) {
    const columns = JSON.parse(bytes.utf8Slice(from, m.ends[i]));
    writeColumns(columns, bytes.utf8Slice(m.ends[i], m.ends[i + 1]), created);
    from = m.ends[i + 1];
  }
}
// Transition rows in multi-row INSERTs of CHUNK; on a duplicate, row by row to find it (\`duplicate\` names it).
// Bodies are Buffers of their UTF-8, bound as they are (SQL.insertRowBytes): decoding them to strings only for the
// driver to encode them again cost ~0.5 µs a row (raw better-sqlite3, 941-byte bodies: 3.1 against 2.6 µs of CPU).
function insertRows(ids, steps, bodies, created, duplicate) {
  const n = ids.length;
  const params = [];
  for (let start = 0; start < n; start += CHUNK) {
    const size = Math.min(CHUNK, n - start);
    params.length = 0;
    for (let i = start; i < start + size; i++) params.push(keyOf(ids[i], steps[i], created), steps[i], bodies[i]);
    try {
      insertOf(size).run(params);
    } catch (error) {
      if (!isUnique(error)) throw error;
      const one = insertOf(1);
      for (let i = start; i < start + size; i++) {
        try { one.run(keyOf(ids[i], steps[i], created), steps[i], bodies[i]); } catch (inner) { if (isUnique(inner)) throw duplicate(i); throw inner; }
      }
      throw error;
    }
  }
}
// An episode record of the step journal: its columns come from its own canonical JSON (what the store's connection binds from the record).
function writeRecord(body, created) {
  const e = JSON.parse(body);
  writeColumns([e.id, e.taskId, e.runId === undefined ? null : e.runId, e.status, e.steps, e.createdAt, e.updatedAt, e.inputs !== undefined], body, created);
}
// An episode record from its columns ([id, task, run, status, steps, created, updated, recorded as inputs]) and its canonical JSON, as the store's writeEpisode.
function writeColumns(c, body, created) {
  const segments = created.get(c[0]);
  const likelyNew = c[7] || (segments !== undefined && segments.has(0));
  if (!likelyNew && sql(SQL.episodeProgress).run(c[3], c[4], c[5], c[6], body, c[0], c[1], c[2]).changes > 0) return;
  sql(SQL.episodeUpsert).run(c[0], c[1], c[2], c[3], c[4], c[5], c[6], body);
}
// After a commit: each episode's newest segment key, for the next call's rows (bounded).
function rememberKeys(created) {
  if (keys.size >= 65536) keys = new Map();
  for (const [id, segments] of created) {
    let last;
    for (const [segment, key] of segments) if (last === undefined || segment > last[0]) last = [segment, key];
    keys.set(id, last);
  }
}
const failedReply = (error) => ({ kind: 'failed', code: String((error && error.code) || 'SQLITE_ERROR'), message: String((error && error.message) || error) });
function commit(m) {
  if (openError !== undefined) return { seq: m.seq, error: { kind: 'failed', code: String(openError.code || 'SQLITE_CANTOPEN'), message: 'cannot open: ' + String(openError.message || openError) } };
  const earlier = failed.get(m.stream);
  if (earlier !== undefined) return { seq: m.seq, error: { kind: 'earlier', message: earlier } };
  const created = new Map();
  try {
    db.transaction(() => write(m, created)).immediate();
  } catch (error) {
    const reply = error instanceof Conflict
      ? { kind: 'conflict', index: error.index }
      : failedReply(error);
    failed.set(m.stream, reply.kind === 'conflict' ? 'a duplicate step' : reply.message);
    return { seq: m.seq, error: reply };
  }
  rememberKeys(created);
  return { seq: m.seq };
}
// The step journal's feed (step-journal.ts): framed journal records, each applied unless at or below the last
// one \`meta\` records for the journal, and the last applied recorded, in one transaction (as applyJournalNow).
const META_GET = 'SELECT value FROM meta WHERE key = ?';
const META_SET = 'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value';
class JournalConflict extends Error { constructor(episodeId, step) { super('duplicate step'); this.episodeId = episodeId; this.step = step; } }
function applyJournal(m) {
  if (openError !== undefined) return { seq: m.seq, error: { kind: 'failed', code: String(openError.code || 'SQLITE_CANTOPEN'), message: 'cannot open: ' + String(openError.message || openError) } };
  const bytes = Buffer.from(m.bytes.buffer, m.bytes.byteOffset, m.bytes.byteLength);
  const created = new Map();
  let applied = 0;
  try {
    db.transaction(() => {
      const text = sql(META_GET).pluck().get(m.key);
      const done = text === undefined ? 0 : JSON.parse(text);
      let last = done;
      // Every applied entry's transitions in chunked INSERTs, then the records in entry order.
      const ids = [], steps = [], bodies = [], records = [];
      for (let at = 0; at < bytes.length; ) {
        const start = at + 8;
        at = start + bytes.readUInt32LE(at);
        const seq = bytes.readDoubleLE(start);
        if (seq <= last) continue;
        const count = bytes.readUInt32LE(start + 8);
        const recordCount = bytes.readUInt32LE(start + 12);
        let p = start + 16;
        const str = () => { const n = bytes.readUInt32LE(p); const s = bytes.utf8Slice(p + 4, p + 4 + n); p += 4 + n; return s; };
        const raw = () => { const n = bytes.readUInt32LE(p); const s = bytes.subarray(p + 4, p + 4 + n); p += 4 + n; return s; };
        for (let i = 0; i < count; i++) { ids.push(str()); steps.push(bytes.readDoubleLE(p)); p += 8; bodies.push(raw()); }
        for (let i = 0; i < recordCount; i++) records.push(str());
        last = seq;
        applied++;
      }
      insertRows(ids, steps, bodies, created, (i) => new JournalConflict(ids[i], steps[i]));
      for (const body of records) writeRecord(body, created);
      if (last > done) sql(META_SET).run(m.key, JSON.stringify(last));
    }).immediate();
  } catch (error) {
    const reply = error instanceof JournalConflict
      ? { kind: 'conflict', episodeId: error.episodeId, step: error.step }
      : failedReply(error);
    return { seq: m.seq, error: reply };
  }
  rememberKeys(created);
  return { seq: m.seq, applied };
}
parentPort.on('message', (m) => {
  if (m.kind === 'close') {
    try { if (db !== undefined) db.close(); } catch {}
    parentPort.close();
    return;
  }
  if (m.kind === 'forget') { failed.delete(m.stream); return; }
  if (m.kind === 'autocheckpoint') { if (db !== undefined) { try { autocheckpoint(m.bytes); } catch {} } return; }
  const reply = m.kind === 'journal' ? applyJournal(m) : commit(m);
  Atomics.add(done, 0, 1);
  Atomics.notify(done, 0);
  parentPort.postMessage(reply);
});
`;

/** One call as the thread receives it: UTF-8 texts in one transferred buffer, and typed key columns. */
export interface WriterCall {
  /** The episode ids of the call; transition i belongs to `keys[key[i]]`. */
  keys: string[];
  key: Uint32Array;
  steps: Float64Array;
  /**
   * The transitions' canonical JSON, then per episode record its columns (`recordColumns`) and its canonical JSON, as
   * UTF-8 one after another; text i ends at `ends[i]` (a view: its whole buffer goes to the thread).
   */
  bytes: Uint8Array;
  ends: Uint32Array;
  /** Where `bytes` came from: then they are shared with the thread (not transferred) and taken again once it answered. */
  buffers?: CallBuffers | undefined;
}

/**
 * Bytes a new call buffer starts with: the last call's size and a quarter more (calls of one recorder are alike),
 * at least this. Without the quarter nearly every call outgrew its buffer (a second one and a copy): `put` keeps
 * 3 bytes per UTF-16 unit free, and a call is rarely smaller than the last (32 of 32 inventory calls, 4-7 of 7 retail).
 */
const MIN_CALL_BYTES = 4096;
let lastCallBytes = 1 << 16;
const utf8 = new TextEncoder();
/** Answered call buffers a store keeps for later calls: at most this many, and at most this many bytes. */
const SPARE_MAX = 8;
const SPARE_BYTES_MAX = 16 << 20;

/**
 * The byte buffers of one store's writer-thread calls, reused: a call's buffer is shared with the thread (a
 * SharedArrayBuffer, neither copied nor transferred) and taken again once the thread has answered that call (its
 * count of answered calls, read with Atomics, has passed the call's number; the thread counts a call only after
 * its transaction, when nothing reads the bytes any more). A fresh buffer per call cost its allocation and the
 * page faults of writing it.
 */
export class CallBuffers {
  private readonly spare: Uint8Array[] = [];
  private spareBytes = 0;
  /** Buffers of calls handed over, in call order, with their thread's answered count and the call's number. */
  private readonly lent: Array<{ bytes: Uint8Array; done: Int32Array; seq: number }> = [];

  /** A buffer of at least `minBytes`: an answered call's when one is that large, else a new one. */
  take(minBytes: number): Uint8Array {
    this.reclaim();
    for (let i = this.spare.length - 1; i >= 0; i--) {
      const bytes = this.spare[i]!;
      if (bytes.length >= minBytes) {
        this.spare.splice(i, 1);
        this.spareBytes -= bytes.length;
        return bytes;
      }
    }
    return new Uint8Array(new SharedArrayBuffer(minBytes));
  }

  /** A buffer no call holds (one a builder outgrew, or an answered call's). */
  give(bytes: Uint8Array): void {
    if (this.spare.length < SPARE_MAX && this.spareBytes + bytes.length <= SPARE_BYTES_MAX) {
      this.spare.push(bytes);
      this.spareBytes += bytes.length;
    }
  }

  /** The buffer of `call` went to the thread whose answered count is `done`, as call number `seq`. */
  lend(call: Uint8Array, done: Int32Array, seq: number): void {
    // Past this bound (only with a thread that stopped answering) the oldest are dropped: collected, never reused.
    if (this.lent.length >= 2 * WRITER_MAX_IN_FLIGHT) this.lent.shift();
    // The whole buffer, not the call's view of its first bytes.
    this.lent.push({ bytes: new Uint8Array(call.buffer), done, seq });
  }

  private reclaim(): void {
    while (this.lent.length > 0) {
      const call = this.lent[0]!;
      if (Atomics.load(call.done, 0) <= call.seq) {
        // Unanswered: wait for it, unless its thread was replaced since (it may never answer); then drop it, unused.
        if (call.done === this.lent[this.lent.length - 1]!.done) return;
        this.lent.shift();
        continue;
      }
      this.lent.shift();
      this.give(call.bytes);
    }
  }
}

/**
 * A writer-thread call built transition by transition: each transition's canonical JSON is written as UTF-8
 * when it is added (while its objects are young: a recorder that stages through this holds no transition
 * objects until its commit), into a buffer the thread then reads (one of `buffers`, else a new one it is given).
 */
export class WriterCallBuilder {
  private bytes: Uint8Array;
  private at = 0;
  private readonly ends: number[] = [];
  private readonly keys: string[] = [];
  private readonly key: number[] = [];
  private readonly steps: number[] = [];
  private last: string | undefined;
  /** The first transition that could not be serialised (the call then must fail as a whole), or undefined. */
  failure: unknown;

  constructor(private readonly buffers?: CallBuffers) {
    const size = Math.max(MIN_CALL_BYTES, lastCallBytes + (lastCallBytes >> 2));
    this.bytes = buffers !== undefined ? buffers.take(size) : new Uint8Array(size);
  }

  /** Transitions added so far. */
  get size(): number {
    return this.key.length;
  }

  /** The episode id and step of transition `index` (for errors). */
  transition(index: number): { episodeId: string; step: number } {
    return { episodeId: this.keys[this.key[index]!]!, step: this.steps[index]! };
  }

  /** Adds one transition; a serialisation failure is kept in `failure` (the first one), never thrown. */
  add(t: Transition): void {
    if (this.failure !== undefined) return;
    let text: string;
    try {
      text = canonicalize(t);
    } catch (error) {
      this.failure = error;
      return;
    }
    // Calls hold runs of one episode's steps: a new key only where the episode changes.
    if (t.episodeId !== this.last) {
      this.last = t.episodeId;
      this.keys.push(t.episodeId);
    }
    this.key.push(this.keys.length - 1);
    this.steps.push(t.step);
    this.put(text);
  }

  /** The call: the transitions added, then these episode records (canonical JSON, as the store writes them). Throws what `failure` holds. */
  finish(episodes: readonly EpisodeRecord[]): WriterCall {
    if (this.failure !== undefined) throw this.failure;
    for (const episode of episodes) {
      this.put(recordColumns(episode));
      this.put(canonicalize(episode));
    }
    lastCallBytes = this.at;
    return {
      keys: this.keys,
      key: Uint32Array.from(this.key),
      steps: Float64Array.from(this.steps),
      bytes: this.bytes.subarray(0, this.at),
      ends: Uint32Array.from(this.ends),
      buffers: this.buffers,
    };
  }

  private put(text: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    if (this.bytes.length - this.at < text.length * 3) {
      const size = Math.max(this.bytes.length * 2, this.at + text.length * 3);
      const bigger = this.buffers !== undefined ? this.buffers.take(size) : new Uint8Array(size);
      bigger.set(this.bytes.subarray(0, this.at));
      this.buffers?.give(this.bytes);
      this.bytes = bigger;
    }
    this.at += utf8.encodeInto(text, this.bytes.subarray(this.at)).written;
    this.ends.push(this.at);
  }
}

/**
 * What the thread binds to an episode record's columns, as a short JSON array: it would otherwise parse the whole
 * record for them, and a record of an episode recorded as its inputs holds all its actions (measured, retail: 12.5 µs
 * of JSON.parse per 1.2 kB record, more than its row's INSERT).
 */
function recordColumns(e: EpisodeRecord): string {
  return JSON.stringify([e.id, e.taskId, e.runId ?? null, e.status, e.steps, e.createdAt, e.updatedAt, e.inputs !== undefined]);
}

/** A whole `appendTransitions` call as a writer-thread call (serialised now, on the calling thread). */
export function serialiseCall(transitions: readonly Transition[], episodes: readonly EpisodeRecord[], buffers?: CallBuffers): WriterCall {
  const builder = new WriterCallBuilder(buffers);
  for (const t of transitions) builder.add(t);
  return builder.finish(episodes);
}

/** The thread's answer: committed, or why not. */
export type WriterReply =
  | { seq: number; error?: undefined }
  | { seq: number; error: { kind: 'conflict'; index: number } | { kind: 'failed'; code: string; message: string } | { kind: 'earlier'; message: string } };

/** The thread's answer to a journal feed (`postJournal`): how many entries it applied, or why nothing was. */
export type JournalReply =
  | { seq: number; applied: number; error?: undefined }
  | { seq: number; error: { kind: 'conflict'; episodeId: string; step: number } | { kind: 'failed'; code: string; message: string } };

/** The driver the worker loads: next to this module, or (for a bundled copy of it) from the working directory. */
function driverPath(): string {
  try {
    return createRequire(import.meta.url).resolve('better-sqlite3');
  } catch {
    return createRequire(`${process.cwd()}/`).resolve('better-sqlite3');
  }
}

/**
 * The writer thread of one store: calls are committed in the order they are posted, one transaction each,
 * and `post` resolves with the thread's reply. Rejects (with the error `onDeath` gave) if the thread dies.
 */
export class WriterThread {
  private readonly worker: Worker;
  private readonly done: Int32Array;
  private posted = 0;
  private seq = 0;
  private readonly waiting = new Map<number, { resolve: (reply: WriterReply) => void; reject: (error: unknown) => void; reply: Promise<WriterReply> }>();
  private dead: unknown;
  private closing: Promise<void> | undefined;
  private readonly exited: Promise<void>;

  /**
   * `autocheckpointBytes`: the connection's automatic checkpoint mark to start with (default: the store's inline one,
   * INLINE_AUTOCHECKPOINT_BYTES); `autocheckpoint()` moves it.
   */
  constructor(location: string, options: { synchronous: 'NORMAL' | 'FULL'; busyTimeoutMs: number; autocheckpointBytes?: number }) {
    const done = new SharedArrayBuffer(4);
    this.done = new Int32Array(done);
    this.worker = new Worker(SOURCE, {
      eval: true,
      workerData: { driver: driverPath(), location, synchronous: options.synchronous, busyTimeoutMs: options.busyTimeoutMs, sql: TRANSITION_SQL, chunk: TRANSITION_CHUNK, segmentSteps: SEGMENT_STEPS, autocheckpointBytes: options.autocheckpointBytes ?? INLINE_AUTOCHECKPOINT_BYTES, done },
    });
    // Only pending calls keep the process alive (ref'd while any is waiting).
    this.worker.unref();
    this.exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.on('message', (reply: WriterReply) => {
      const waiter = this.waiting.get(reply.seq);
      if (waiter === undefined) return;
      this.waiting.delete(reply.seq);
      if (this.waiting.size === 0) this.worker.unref();
      waiter.resolve(reply);
    });
    const die = (error: unknown) => {
      this.dead ??= error;
      for (const waiter of this.waiting.values()) waiter.reject(this.dead);
      this.waiting.clear();
    };
    this.worker.once('error', die);
    this.worker.once('exit', (code) => {
      if (this.closing === undefined) die(new Error(`the writer thread exited (code ${code})`));
    });
  }

  /** Why the thread is unusable (died, or closed), or undefined while it takes calls. */
  get failure(): unknown {
    return this.dead ?? (this.closing === undefined ? undefined : new Error('the writer thread is closed'));
  }

  /**
   * Hands a call to the thread (synchronously: its bytes are the thread's from now on, transferred, or shared until
   * it answers when they came from `call.buffers`) and resolves with its reply.
   * With WRITER_MAX_IN_FLIGHT calls unanswered, first blocks until the thread has answered one.
   */
  post(stream: number, call: WriterCall): Promise<WriterReply> {
    const failure = this.failure;
    if (failure !== undefined) return Promise.reject(failure);
    this.waitForRoom();
    const seq = this.seq++;
    const { buffers, ...fields } = call;
    const message = { stream, seq, ...fields };
    let settle: { resolve: (reply: WriterReply) => void; reject: (error: unknown) => void } | undefined;
    const reply = new Promise<WriterReply>((resolve, reject) => (settle = { resolve, reject }));
    this.waiting.set(seq, { ...settle!, reply });
    if (this.waiting.size === 1) this.worker.ref();
    if (buffers !== undefined) {
      buffers.lend(call.bytes, this.done, seq);
      this.worker.postMessage(message);
    } else {
      // The bytes move to the thread (transferred, not copied).
      this.worker.postMessage(message, [call.bytes.buffer as ArrayBuffer]);
    }
    this.posted++;
    return reply;
  }

  /**
   * Hands a feed of the step journal to the thread: `bytes`, framed journal records (step-journal.ts), are
   * applied in one transaction, skipping those at or below the last one `meta` records under `metaKey`, and
   * recording the last one applied. Copied, not transferred: the caller keeps them until the commit (a failed
   * feed is fed again). Ordered with `post`'s calls; not tied to any writer's stream.
   */
  postJournal(metaKey: string, bytes: Uint8Array): Promise<JournalReply> {
    const failure = this.failure;
    if (failure !== undefined) return Promise.reject(failure);
    this.waitForRoom();
    const seq = this.seq++;
    let settle: { resolve: (reply: WriterReply) => void; reject: (error: unknown) => void } | undefined;
    const reply = new Promise<WriterReply>((resolve, reject) => (settle = { resolve, reject }));
    this.waiting.set(seq, { ...settle!, reply });
    if (this.waiting.size === 1) this.worker.ref();
    this.worker.postMessage({ kind: 'journal', seq, key: metaKey, bytes });
    this.posted++;
    return reply as unknown as Promise<JournalReply>;
  }

  /**
   * Moves the thread connection's automatic checkpoint mark (bytes of WAL, in pages of the file), ordered with the
   * calls: the store keeps it where its own connection's is, so that once its checkpointer thread runs, the commits
   * here do not also copy the WAL back inline (measured: ~43% of this thread's time per retail step before).
   */
  autocheckpoint(bytes: number): void {
    if (this.failure === undefined) this.worker.postMessage({ kind: 'autocheckpoint', bytes });
  }

  /** Lets the thread commit calls of `stream` again after one failed (a new recorder over the same handle). */
  forget(stream: number): void {
    if (this.failure === undefined) this.worker.postMessage({ kind: 'forget', stream });
  }

  /** Answers every call posted so far, then closes the thread's connection and ends it. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.allSettled([...this.waiting.values()].map((w) => w.reply));
      if (this.dead === undefined) {
        this.worker.ref();
        // Messages are handled in order: every call posted before this one is answered first.
        this.worker.postMessage({ kind: 'close' });
      }
      await this.exited;
    })();
    return this.closing;
  }

  /** A bounded queue: the calling thread waits (Atomics.wait, event loop blocked) while the thread is far behind. */
  private waitForRoom(): void {
    let answered = Atomics.load(this.done, 0);
    if (this.posted - answered < WRITER_MAX_IN_FLIGHT) return;
    // Counted in waits, not read from a clock: each wait is at most 100 ms, and progress starts the count again.
    let waits = 0;
    while (this.posted - answered >= WRITER_MAX_IN_FLIGHT) {
      if (waits * 100 >= WRITER_STALL_MS) throw new Error(`the writer thread answered none of ${this.posted - answered} calls in ${WRITER_STALL_MS} ms`);
      Atomics.wait(this.done, 0, answered, 100);
      const now = Atomics.load(this.done, 0);
      waits = now === answered ? waits + 1 : 0;
      answered = now;
    }
  }
}
