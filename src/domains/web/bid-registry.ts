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
  assigner(): BidAssigner {
    return new BidAssigner(this, this.log, this.next);
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

/** Where an assigner stood (`BidAssigner.mark`): a log and how far into it. */
export interface BidMark {
  readonly log: object;
  readonly next: number;
}

/** One render's bid assignment (see `BidMap.assigner`); methods, not closures, since a render makes one. */
export class BidAssigner {
  private owned: boolean;

  /** @internal */
  constructor(
    private readonly from: BidMap,
    private log: Log,
    private next: number,
  ) {
    this.owned = log.keys.length === next;
  }

  /** Whether `key` has a bid in this session (assigned before this render or by it). */
  holdsKey(key: string): boolean {
    const n = this.log.ids.get(key);
    return n !== undefined && n < this.next;
  }

  /** The bid of `key`, appending it when it is new to this session. */
  bid(key: string): string {
    let log = this.log;
    const n = log.ids.get(key);
    if (n !== undefined && n < this.next) return log.strings[n]!;
    // A session replaying what the log's tip did (another episode of the same task on the same path)
    // gives this key the very bid the log already holds next: it shares the log instead of copying.
    if (n === this.next) return log.strings[this.next++]!;
    if (!this.owned) {
      this.log = log = copyLog(log, this.next);
      this.owned = true;
    }
    const next = this.next++;
    const s = bidText(next);
    log.ids.set(key, next);
    log.keys.push(key);
    log.strings.push(s);
    return s;
  }

  /**
   * A mark of where this assigner stands: `holds(mark)` later says whether every key assigned up to now
   * still has the same bid (the same log, not behind the mark).
   */
  mark(): BidMark {
    return { log: this.log, next: this.next };
  }

  /** Whether every key assigned up to `mark` has the bid it had then (see `mark`). */
  holds(mark: BidMark): boolean {
    return mark.log === this.log && mark.next <= this.next;
  }

  /** The registry after the render (the one it started from when nothing was assigned). */
  done(): BidMap {
    return this.next === this.from.next ? this.from : new BidMap(this.log, this.next);
  }
}

/**
 * Bid texts by number, shared by every session (a bid is its number in decimal; the first few thousand
 * kept). Kept internalized, as V8 holds a short string `JSON.parse` reads (a bid given in a JSON body is
 * one too): telling two internalized strings apart is one comparison, where two other strings of one
 * length are compared character by character, as the search for an action's target does at every node.
 */
const BID_TEXTS: string[] = [];
function bidText(n: number): string {
  if (n >= 4096) return String(n);
  return (BID_TEXTS[n] ??= JSON.parse(`"${n}"`) as string);
}

function copyLog(log: Log, next: number): Log {
  const keys = log.keys.slice(0, next);
  const ids = new Map<string, number>();
  for (let n = 1; n < next; n++) ids.set(keys[n]!, n);
  return { ids, keys, strings: log.strings.slice(0, next) };
}
