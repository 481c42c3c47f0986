/**
 * WAL checkpoints on a worker thread. SQLite's automatic checkpoint runs inside whichever commit crosses
 * its mark (1000 WAL pages by default): that commit copies the pages into the database and waits for two
 * fsyncs (milliseconds), with the event loop blocked. A busy store hands this to a thread with its own
 * connection instead.
 *
 * Every WAL mark here is in bytes and becomes pages (or frames) by the connection's `page_size`, so that a
 * mark means the same amount of WAL on a store of any page size (SQLite counts its own in pages).
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** A store starts a checkpointer after this many write transactions (only busy stores pay for the thread). */
export const CHECKPOINTER_AFTER_WRITES = 256;
/**
 * How often the worker checkpoints (PASSIVE: it never blocks the writer or readers). Each checkpoint syncs the
 * WAL and then the database file (synchronous=NORMAL), and a writer on the same files meanwhile sees its own
 * writes slow down: at 100 ms a server committing in its serving thread (`--durability relaxed`, retail steps
 * of ~2 KB, ~70 MB of WAL a second) answered 10-12% fewer steps than at 500 ms, in three same-sitting A/B runs;
 * servers whose commits run on the writer thread, and the WAL bounds (T4, WAL backpressure), were unchanged.
 */
export const CHECKPOINT_INTERVAL_MS = 500;
/**
 * How often the worker looks at the WAL file's size between checkpoints. A writer of ~130 MB of WAL a second (a
 * loop appending 100 transitions of 450 bytes per call) grew it from the TRUNCATE mark into the throttled band
 * (3/8 of the limit) before the next 500 ms tick, and wrote 133k rows/s; with a checkpoint as soon as a look finds
 * the file past the mark, 223-231k (same sittings, load 0.6-0.9; the same store with inline checkpoints 234-255k).
 */
export const CHECKPOINT_LOOK_MS = 25;
/**
 * WAL bytes at which a connection checkpoints inline, in the committing write: SQLite's default of 1000 pages
 * at 4 KiB. Until the checkpointer starts, and again should it die; the writer thread's connection always.
 */
export const INLINE_AUTOCHECKPOINT_BYTES = 1000 * 4096;
/** WAL bytes at which the writer checkpoints itself anyway once the worker runs, should it fall behind (64 MiB). */
export const FALLBACK_AUTOCHECKPOINT_BYTES = 64 * 1024 * 1024;
/**
 * WAL bytes (content or file, 16 MiB) past which the worker also tries a TRUNCATE checkpoint: PASSIVE ones
 * never shrink the file, and cannot rewind it while readers overlap (T4, checkpoint starvation).
 */
export const TRUNCATE_AFTER_BYTES = 16 * 1024 * 1024;

/** `PRAGMA wal_autocheckpoint`'s argument (pages) for a mark in bytes, on a connection of `pageSize` pages. */
export function autocheckpointPages(bytes: number, pageSize: number): number {
  return Math.max(1, Math.round(bytes / pageSize));
}
/** How long a TRUNCATE attempt waits for readers (writers wait meanwhile), and the pause after one that could not finish. */
export const TRUNCATE_WAIT_MS = 50;
export const TRUNCATE_BACKOFF_MS = 500;

// CommonJS, evaluated in the worker: checkpoint every interval, and sooner when the WAL grows fast, until told to close.
const SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.location, { timeout: workerData.busyTimeoutMs });
db.pragma('synchronous = ' + workerData.synchronous);
// The mark in frames: the WAL's content is frames of one page each.
const truncateAfterFrames = Math.max(1, Math.floor(workerData.truncateAfterBytes / db.pragma('page_size', { simple: true })));
// A failed checkpoint (EIO on fsync, ENOSPC) is reported, never swallowed; the next success clears it.
let failing = false;
// The back-off is counted in checkpoint ticks (one per interval), not read from a clock.
const backoffTicks = Math.max(1, Math.ceil(workerData.truncateBackoffMs / workerData.intervalMs));
let tick = 0;
let nextTruncate = 0;
// The WAL file's size after each checkpoint, sent when it changes (the store's writer backpressure reads it).
const { statSync } = require('node:fs');
const walPath = workerData.location + '-wal';
const walBytes = () => { try { return statSync(walPath).size; } catch { return 0; } };
let reported = -1;
const checkpoint = (ticked) => {
  if (ticked) tick += 1;
  try {
    const [row] = db.pragma('wal_checkpoint(PASSIVE)');
    // A long WAL (content or file): wait briefly for the readers holding it, then truncate it; back off while
    // they stay, unless writers are already parked at the limit (blocking them then costs nothing).
    const bytes = walBytes();
    const long = (row && row.log >= truncateAfterFrames) || bytes >= workerData.truncateAfterBytes;
    if (long && (tick >= nextTruncate || bytes >= workerData.parkBytes)) {
      db.pragma('busy_timeout = ' + workerData.truncateWaitMs);
      try {
        const [t] = db.pragma('wal_checkpoint(TRUNCATE)');
        if (t && t.busy !== 0) nextTruncate = tick + backoffTicks;
      } catch (error) {
        if (!error || error.code !== 'SQLITE_BUSY') throw error;
        nextTruncate = tick + backoffTicks;
      } finally {
        db.pragma('busy_timeout = ' + workerData.busyTimeoutMs);
      }
    }
    const now = long ? walBytes() : bytes;
    if (now !== reported) { reported = now; parentPort.postMessage({ kind: 'wal', bytes: now }); }
    if (failing) { failing = false; parentPort.postMessage({ kind: 'ok' }); }
  } catch (error) {
    failing = true;
    parentPort.postMessage({ kind: 'fault', code: String(error && error.code || 'SQLITE_ERROR'), message: String(error && error.message || error) });
  }
};
const timer = setInterval(() => checkpoint(true), workerData.intervalMs);
// Between ticks, a look at the file: a writer that fills it faster than the ticks come gets a checkpoint as soon as
// the file passes the TRUNCATE mark and has grown by a quarter of it since the last one (not every look while a
// reader pins it).
const look = setInterval(() => {
  const bytes = walBytes();
  if (bytes >= workerData.truncateAfterBytes && bytes >= reported + workerData.truncateAfterBytes / 4) checkpoint(false);
}, workerData.lookMs);
parentPort.on('message', () => { clearInterval(timer); clearInterval(look); try { db.close(); } catch {} parentPort.close(); });
`;

/** The driver the worker loads: next to this module, or (for a bundled copy of it) from the working directory. */
function driverPath(): string {
  try {
    return createRequire(import.meta.url).resolve('better-sqlite3');
  } catch {
    return createRequire(`${process.cwd()}/`).resolve('better-sqlite3');
  }
}

export interface Checkpointer {
  /** Closes the worker's connection and ends the thread (before the writer closes, so its close can checkpoint and remove the WAL). */
  close(): Promise<void>;
}

/** What the worker reports: a checkpoint failed (with the driver's code), one succeeded after failures, or the `-wal` file's size changed. */
export type CheckpointReport = { kind: 'fault'; code: string; message: string } | { kind: 'ok' } | { kind: 'wal'; bytes: number };

/**
 * Starts checkpointing `location` from a worker thread; `onFailure` runs if the thread dies, `onReport`
 * when a checkpoint fails and when one succeeds again.
 */
export function startCheckpointer(
  location: string,
  options: {
    synchronous: 'NORMAL' | 'FULL';
    busyTimeoutMs: number;
    intervalMs: number;
    /** TRUNCATE once the WAL's content (frames x page size) or its file holds this many bytes (default 16 MiB). */
    truncateAfterBytes?: number;
    /** The file size at which writers park (then a TRUNCATE is tried every tick, without back-off). */
    parkBytes?: number;
  },
  onFailure: (error: unknown) => void,
  onReport: (report: CheckpointReport) => void = () => undefined,
): Checkpointer {
  const worker = new Worker(SOURCE, {
    eval: true,
    workerData: {
      driver: driverPath(),
      location,
      synchronous: options.synchronous,
      busyTimeoutMs: options.busyTimeoutMs,
      intervalMs: options.intervalMs,
      truncateAfterBytes: options.truncateAfterBytes ?? TRUNCATE_AFTER_BYTES,
      parkBytes: options.parkBytes ?? Infinity,
      truncateWaitMs: TRUNCATE_WAIT_MS,
      truncateBackoffMs: TRUNCATE_BACKOFF_MS,
      lookMs: CHECKPOINT_LOOK_MS,
    },
  });
  // Never what keeps a process alive.
  worker.unref();
  let closing = false;
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  worker.on('message', (report: CheckpointReport) => onReport(report));
  worker.once('error', (error) => {
    if (!closing) onFailure(error);
  });
  return {
    async close() {
      if (closing) return exited;
      closing = true;
      // Held open until the worker's connection is closed.
      worker.ref();
      worker.postMessage('close');
      await exited;
    },
  };
}
