/**
 * Writer backpressure on the `-wal` file. While a read transaction holds a snapshot, no checkpoint can move
 * past it and the WAL only grows (checkpoint starvation: an export, a long analysis); a continuous writer
 * outruns checkpoints too. SQLite has no bound of its own, so the bulk writers of a store wait a little
 * before each write while the file is long, asynchronously (the event loop keeps serving), and wait for it
 * to be truncated once it is near the bound. The checkpointer thread reports the file's size after every
 * checkpoint.
 */
import { statSync } from 'node:fs';
import { TRUNCATE_AFTER_BYTES } from './checkpointer.js';

/** Default bound on the `-wal` file (bytes), reached only when a reader pins the WAL for longer than writers can wait. */
export const DEFAULT_WAL_LIMIT_BYTES = 64 * 1024 * 1024;
/** The longest a write waits for the WAL to be truncated before it goes ahead anyway (a stuck reader must not stop writes). */
export const WAL_MAX_WAIT_MS = 10_000;
/** The delay before a write at the soft mark, growing linearly to `WAL_MAX_DELAY_MS` at the hard mark. */
const WAL_MIN_DELAY_MS = 1;
const WAL_MAX_DELAY_MS = 10;
/**
 * Writes after which a writer yields one event-loop turn to hear the checkpointer and looks at the file (a
 * tight loop of awaits never does): at most 8, and fewer when 8 writes would grow the WAL by more than
 * `limit / 8` (half the headroom past the hard mark; measured between two looks). A write's WAL grows with the
 * page size (every page it touches is a whole frame), so a count of writes alone bounds no bytes.
 */
const UNREPORTED_WRITES = 8;
/**
 * How much of the largest growth per write seen so far a later, smaller one keeps (each look): a look after the
 * WAL was truncated or restarted sees only part of what its writes added, and one such look must not let several
 * times the headroom go unseen. A run of smaller writes still lowers the estimate, a tenth a look.
 */
const GROWTH_MEMORY = 0.9;
/** How often a write parked at the hard mark looks at the WAL again. */
const WAL_POLL_MS = 10;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The `-wal` file's size now (0 when there is none). */
export function fileBytes(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** The file size past which the checkpointer truncates the WAL: a quarter of the limit, at most 16 MiB. */
export function truncateMark(limitBytes: number): number {
  return Math.min(TRUNCATE_AFTER_BYTES, Math.floor(limitBytes / 4));
}

/**
 * The `-wal` file's size as the checkpointer last saw it, and the waits it implies. Marks: the checkpointer
 * truncates the file past a quarter of the limit when no reader holds it, throttling starts at 3/8, writes
 * park at 3/4 (the rest is headroom for a write already under way and for other processes' writes). The
 * checkpointer's report (one interval old at most) says when to look; a write then reads the file's size
 * itself. The file is what is bounded: a WAL a reader pins only grows, and so does one that a continuous
 * writer outruns (SQLite resets it only when a write begins with every frame copied back).
 */
export class WalPressure {
  private bytes = 0;
  /** Whether the checkpointer has reported at all (until then nothing is held back). */
  reported = false;
  /** Writes since the last report: a writer that never yields to the event loop would never hear one. */
  private unreported = 0;
  /** Writes allowed between looks at the file (at first one: nothing is known yet of how much a write adds). */
  private lookEvery = 1;
  /** The file's size at the writer's last look (-1 before the first), and the writes counted since. */
  private looked = -1;
  private sinceLook = 0;
  /** The WAL growth per write the looks have seen (the largest, fading by GROWTH_MEMORY a look); 0 before any. */
  private perWrite = 0;
  /** The WAL growth allowed between two looks (see UNREPORTED_WRITES). */
  private readonly unseenBytes: number;
  readonly truncateBytes: number;
  readonly softBytes: number;
  readonly hardBytes: number;

  constructor(
    private readonly walPath: string,
    limitBytes: number,
  ) {
    this.truncateBytes = truncateMark(limitBytes);
    this.softBytes = Math.floor((limitBytes * 3) / 8);
    this.hardBytes = Math.floor((limitBytes * 3) / 4);
    this.unseenBytes = Math.floor(limitBytes / 8);
  }

  /**
   * What the checkpointer reported: the file's size after its checkpoint. It says whether writes are held back,
   * not what a write adds: the size was read on the checkpointer's thread at a moment of its own, possibly in
   * the middle of a commit, and the writes counted since the writer's last look are not the ones in it. (Taken as
   * a measure of growth, a report read mid-commit can make one write look like a frame's worth of WAL and let the
   * next 8 writes of 16 KiB pages, ~2.6 MB, go unseen: wal-pressure-estimate.test.ts; CI's 4.33 MB against a 4 MiB
   * bound on 2026-12-06 fits it.)
   */
  update(bytes: number): void {
    this.bytes = bytes;
    this.reported = true;
    this.unreported = 0;
  }

  /**
   * The writer sees the file `bytes` long before its next write: sets how many writes may go before the next look
   * from what the writes since the last look added.
   */
  private look(bytes: number): void {
    const grown = this.looked < 0 ? -1 : bytes - this.looked;
    // A file that shrank (truncated) or kept its size says nothing of the writes: the interval stays. One that grew
    // by less than its writes added (the WAL restarted from its start, or was truncated, between the looks) lowers
    // the estimate by a tenth at most, and the interval at most doubles a look.
    if (grown > 0 && this.sinceLook > 0) {
      this.perWrite = Math.max(grown / this.sinceLook, this.perWrite * GROWTH_MEMORY);
      const fits = Math.floor(this.unseenBytes / this.perWrite);
      this.lookEvery = Math.max(1, Math.min(UNREPORTED_WRITES, 2 * this.lookEvery, fits));
    }
    this.looked = bytes;
    this.sinceLook = 0;
  }

  /** The WAL file is past the mark where writes are held back. */
  get pressed(): boolean {
    return this.bytes >= this.softBytes;
  }

  /**
   * Counts one write about to start (a method, not a getter: asking counts) and says whether it should call
   * `admit` first: the WAL is long, or reports may be waiting to be heard.
   */
  due(): boolean {
    this.sinceLook += 1;
    return this.pressed || ++this.unreported >= this.lookEvery;
  }

  /** For `getInfo`: the last report, and whether writes are being held back. */
  state(): { bytes: number; backpressure: boolean } {
    return { bytes: this.bytes, backpressure: this.pressed };
  }

  /** Waits as long as the WAL's size asks: a short delay between the marks, until it shrinks past the hard mark. */
  async admit(): Promise<void> {
    if (this.unreported >= this.lookEvery) {
      // One turn of the event loop, so that the checkpointer's messages are delivered.
      this.unreported = 0;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    for (let waited = 0; waited < WAL_MAX_WAIT_MS; waited += WAL_POLL_MS) {
      const bytes = fileBytes(this.walPath);
      if (waited === 0) this.look(bytes);
      if (bytes < this.softBytes) return;
      if (bytes < this.hardBytes) {
        const fill = (bytes - this.softBytes) / (this.hardBytes - this.softBytes);
        await sleep(Math.round(WAL_MIN_DELAY_MS + fill * (WAL_MAX_DELAY_MS - WAL_MIN_DELAY_MS)));
        return;
      }
      await sleep(WAL_POLL_MS);
    }
  }
}
