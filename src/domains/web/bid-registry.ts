/**
 * The bid registry of a browsing session: node key → stable bid, append-only. A page sees the first
 * `next` entries of a log it shares with its successors, so a render that meets new keys appends in O(new
 * keys) instead of copying the map. Sessions branching from one page (episodes of a task) share the log
 * for as long as they assign the same keys in the same order; only one that assigns differently copies.
 */

/** The shared, append-only log: `keys[n]` holds bid `n` (bids are numbered from 1 in assignment order). */
interface Log {
  readonly ids: Map<string, number>;
  readonly keys: string[];
  readonly strings: string[];
  /** Set once a page behind the tip is seen: sessions have branched on this log. */
  shared?: boolean;
}

/** A page's view of the registry: the bids assigned so far in its session (a `ReadonlyMap` of key → bid). */
export class BidMap implements ReadonlyMap<string, string> {
  /** @internal */
  constructor(
    private readonly log: Log,
    /** The bid the next new key gets; entries below it are this page's. */
    readonly next: number,
  ) {}

  /** A registry with `root` as bid 1. */
  static root(key: string): BidMap {
    return new BidMap({ ids: new Map([[key, 1]]), keys: ['', key], strings: ['', '1'] }, 2);
  }

  /**
   * The log this registry reads: the same object for every page of a session and for sessions that
   * branched from one page and have assigned alike since. Equal `(scope, next)` means equal bids.
   */
  get scope(): object {
    return this.log;
  }

  /**
   * Whether sessions have branched on this log (this page, or one seen before, is behind its tip):
   * only then may another session meet the same states, so only then are renders worth keeping.
   */
  get isShared(): boolean {
    if (this.log.shared === true) return true;
    if (this.log.keys.length === this.next) return false;
    this.log.shared = true;
    return true;
  }

  get size(): number {
    return this.next - 1;
  }

  get(key: string): string | undefined {
    const n = this.log.ids.get(key);
    return n !== undefined && n < this.next ? this.log.strings[n] : undefined;
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  /** The key a bid was given to (undefined for a bid this session never assigned). */
  keyOf(bid: string): string | undefined {
    const n = Number(bid);
    return Number.isInteger(n) && n >= 1 && n < this.next && this.log.strings[n] === bid ? this.log.keys[n] : undefined;
  }

  /**
   * An assigner for one render: `bid(key)` returns the key's bid, appending new keys; `done()` is the
   * registry after the render. Appends go to the shared log when this page is its tip, else to a copy.
   */
  assigner(): { bid(key: string): string; done(): BidMap } {
    let log = this.log;
    let next = this.next;
    let owned = log.keys.length === next;
    return {
      bid: (key) => {
        const n = log.ids.get(key);
        if (n !== undefined && n < next) return log.strings[n]!;
        // A session replaying what the log's tip did (another episode of the same task on the same path)
        // gives this key the very bid the log already holds next: it shares the log instead of copying.
        if (n === next) return log.strings[next++]!;
        if (!owned) {
          log = copyLog(log, next);
          owned = true;
        }
        const s = String(next);
        log.ids.set(key, next);
        log.keys.push(key);
        log.strings.push(s);
        next++;
        return s;
      },
      done: () => (next === this.next ? this : new BidMap(log, next)),
    };
  }

  *entries(): MapIterator<[string, string]> {
    for (let n = 1; n < this.next; n++) yield [this.log.keys[n]!, this.log.strings[n]!];
  }

  *keys(): MapIterator<string> {
    for (let n = 1; n < this.next; n++) yield this.log.keys[n]!;
  }

  *values(): MapIterator<string> {
    for (let n = 1; n < this.next; n++) yield this.log.strings[n]!;
  }

  [Symbol.iterator](): MapIterator<[string, string]> {
    return this.entries();
  }

  forEach(fn: (value: string, key: string, map: ReadonlyMap<string, string>) => void): void {
    for (let n = 1; n < this.next; n++) fn(this.log.strings[n]!, this.log.keys[n]!, this);
  }
}

function copyLog(log: Log, next: number): Log {
  const keys = log.keys.slice(0, next);
  const ids = new Map<string, number>();
  for (let n = 1; n < next; n++) ids.set(keys[n]!, n);
  return { ids, keys, strings: log.strings.slice(0, next) };
}
