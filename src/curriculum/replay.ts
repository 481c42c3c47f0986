/**
 * Prioritized level replay (PLR, facebookresearch/level-replay `level_sampler.py`) over the concrete tasks
 * of one slice: P = (1 − ρ)·P_S + ρ·P_C with P_S ∝ (1/rank)^(1/β) and staleness P_C ∝ c − C_i.
 */
import type { JsonValue, Rng } from '../core/index.js';
import { asArray, asNumber, asObject, asString, importInvalid } from './state-io.js';
import type { ReplayEntry } from './types.js';

/** Cumulative rank weights Σ_{k ≤ r} k^(−1/β), shared by every buffer of a curriculum; grows on demand. */
export class RankTable {
  private readonly exponent: number;
  private cumulative: Float64Array;
  private filled = 0;

  constructor(beta: number) {
    this.exponent = 1 / beta;
    this.cumulative = new Float64Array(64);
  }

  /** h(rank) = rank^(−1/β). */
  weight(rank: number): number {
    return rank ** -this.exponent;
  }

  /** Σ of the weights of ranks 1..size. */
  total(size: number): number {
    this.ensure(size);
    return this.cumulative[size]!;
  }

  /** The rank r in 1..size with cum[r−1] <= u·cum[size] < cum[r]. */
  sample(u: number, size: number): number {
    this.ensure(size);
    const c = this.cumulative;
    const x = u * c[size]!;
    let lo = 1;
    let hi = size;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (x < c[mid]!) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  private ensure(size: number): void {
    if (size <= this.filled) return;
    if (size >= this.cumulative.length) {
      let length = this.cumulative.length;
      while (length <= size) length *= 2;
      const grown = new Float64Array(length);
      grown.set(this.cumulative);
      this.cumulative = grown;
    }
    for (let r = this.filled + 1; r <= size; r++) this.cumulative[r] = this.cumulative[r - 1]! + this.weight(r);
    this.filled = size;
  }
}

/**
 * The replay buffers of every slice of one curriculum, in flat arrays shared by all slices: with thousands
 * of slices, an object and a Map per buffer cost cache misses on every result and keep the collector busy.
 * A slice gets a block of `capacity` slots on its first task (cell = block·capacity + slot). In a block,
 * slots 0..size−1 are occupied; its `order` lists them by score (highest first, older task first on ties,
 * like a stable argsort). Staleness is kept as the clock of each task's last draw in a Fenwick tree per
 * block, so P_C sampling costs O(log capacity).
 */
export class ReplayBuffers {
  readonly capacity: number;
  private readonly ranks: RankTable;
  private readonly topStep: number;
  /** Per slice: its block, −1 before its first task. */
  private readonly blockOf: Int32Array;
  private readonly sizes: Int32Array;
  /** Per slice: its draws so far (level-replay's staleness advances on every draw, replay or new). */
  private readonly clocks: Float64Array;
  private readonly nextSeqs: Float64Array;
  private blocks = 0;
  /** Per cell: the task's level, score, insertion number and the clock of its last draw. */
  private levels = new Float64Array(0);
  private scores = new Float64Array(0);
  private seqs = new Float64Array(0);
  private lasts = new Float64Array(0);
  /** Per cell: its task id. */
  private readonly ids: string[] = [];
  /** Per block: its slots by rank (`capacity` cells). */
  private order = new Int32Array(0);
  /** Per block: a 1-based Fenwick tree over the last-draw clocks (`capacity` + 1 cells, the first unused). */
  private fenwick = new Float64Array(0);
  /**
   * Task id → a cell holding it. The same id in other slices' buffers chains through `sameId` (−1 ends),
   * so one Map serves every slice.
   */
  private readonly cellOf = new Map<string, number>();
  private sameId = new Int32Array(0);

  constructor(slices: number, capacity: number, ranks: RankTable) {
    this.capacity = capacity;
    this.ranks = ranks;
    this.blockOf = new Int32Array(slices).fill(-1);
    this.sizes = new Int32Array(slices);
    this.clocks = new Float64Array(slices);
    this.nextSeqs = new Float64Array(slices);
    let step = 1;
    while (step * 2 <= capacity) step *= 2;
    this.topStep = step;
  }

  /** Whether slice i has a buffer (it had a scored task). */
  has(i: number): boolean {
    return this.blockOf[i]! >= 0;
  }

  size(i: number): number {
    return this.sizes[i]!;
  }

  /** Whether slice i's buffer holds the task. */
  holds(i: number, taskId: string): boolean {
    return this.has(i) && this.find(i, taskId) >= 0;
  }

  taskId(i: number, slot: number): string {
    return this.ids[this.cell(i, slot)]!;
  }

  level(i: number, slot: number): number {
    return this.levels[this.cell(i, slot)]!;
  }

  /**
   * Records a task's new score in slice i's buffer: an EWA with `alpha` for a known task; a new task
   * enters while there is room, then only by replacing the lowest-scored task when it scores higher
   * (Robust PLR / jaxued).
   */
  observe(i: number, taskId: string, level: number, score: number, alpha: number): void {
    if (!this.has(i)) this.open(i);
    const base = this.blockOf[i]! * this.capacity;
    const known = this.find(i, taskId);
    if (known >= 0) {
      const cell = base + known;
      this.removeFromOrder(i, known);
      this.scores[cell] = (1 - alpha) * this.scores[cell]! + alpha * score;
      this.levels[cell] = level;
      this.insertIntoOrder(i, known);
      return;
    }
    const size = this.sizes[i]!;
    let slot: number;
    if (size < this.capacity) {
      slot = size;
      this.sizes[i] = size + 1;
    } else {
      slot = this.order[this.blockOf[i]! * this.capacity + size - 1]!;
      if (!(score > this.scores[base + slot]!)) return;
      this.removeFromOrder(i, slot);
      this.unlink(base + slot);
    }
    const cell = base + slot;
    this.ids[cell] = taskId;
    this.link(cell);
    this.levels[cell] = level;
    this.scores[cell] = score;
    this.seqs[cell] = this.nextSeqs[i]!++;
    this.setLast(i, slot, this.clocks[i]!);
    this.insertIntoOrder(i, slot);
  }

  /** A slot of slice i drawn from P = (1 − ρ)P_S + ρP_C; changes nothing. P_S alone when nothing is stale. */
  sample(i: number, rng: Rng, rho: number): number {
    if (rho > 0) {
      const stale = this.stalenessTotal(i);
      if (stale > 0 && rng.next() < rho) return this.findStale(i, Math.floor(rng.next() * stale));
    }
    return this.order[this.blockOf[i]! * this.capacity + this.ranks.sample(rng.next(), this.sizes[i]!) - 1]!;
  }

  /** Slice i was drawn and this task replayed: everything else gets one draw staler. */
  touch(i: number, slot: number): void {
    this.setLast(i, slot, ++this.clocks[i]!);
  }

  /** Slice i was drawn for a new task. */
  tick(i: number): void {
    this.clocks[i]!++;
  }

  /** Every task of slice i with its score, staleness and replay probability, highest probability rank first. */
  distribution(i: number, rho: number): ReplayEntry[] {
    if (!this.has(i)) return [];
    const size = this.sizes[i]!;
    const clock = this.clocks[i]!;
    const stale = this.stalenessTotal(i);
    const rankTotal = this.ranks.total(size);
    const mix = stale > 0 ? rho : 0;
    const out: ReplayEntry[] = [];
    for (let r = 1; r <= size; r++) {
      const cell = this.cell(i, this.order[this.blockOf[i]! * this.capacity + r - 1]!);
      const staleness = clock - this.lasts[cell]!;
      const pS = this.ranks.weight(r) / rankTotal;
      const pC = stale > 0 ? staleness / stale : 0;
      out.push({ taskId: this.ids[cell]!, level: this.levels[cell]!, score: this.scores[cell]!, staleness, probability: (1 - mix) * pS + mix * pC });
    }
    return out;
  }

  /** Slice i's buffer as saved state (tasks in slot order), null when it has none. */
  getState(i: number): JsonValue {
    if (!this.has(i)) return null;
    const tasks: JsonValue[] = [];
    for (let slot = 0; slot < this.sizes[i]!; slot++) {
      const cell = this.cell(i, slot);
      tasks.push([this.ids[cell]!, this.levels[cell]!, this.scores[cell]!, this.seqs[cell]!, this.lasts[cell]!]);
    }
    return { clock: this.clocks[i]!, nextSeq: this.nextSeqs[i]!, tasks };
  }

  /** Loads slice i's buffer (which must have none yet) from `getState(i)`'s form. */
  setState(i: number, state: JsonValue, pointer: string): void {
    const o = asObject(state, pointer);
    const clock = asNumber(o.clock, `${pointer}/clock`);
    const nextSeq = asNumber(o.nextSeq, `${pointer}/nextSeq`);
    const tasks = asArray(o.tasks, `${pointer}/tasks`);
    if (tasks.length > this.capacity) importInvalid(`${pointer}/tasks`, `holds ${tasks.length} tasks; capacity is ${this.capacity}`);
    this.open(i);
    this.clocks[i] = clock;
    this.nextSeqs[i] = nextSeq;
    tasks.forEach((entry, slot) => {
      const p = `${pointer}/tasks/${slot}`;
      const [id, level, score, seq, last] = asArray(entry, p, 5);
      const taskId = asString(id, `${p}/0`);
      if (this.find(i, taskId) >= 0) importInvalid(`${p}/0`, `task ${taskId} is in this buffer twice`);
      const cell = this.cell(i, slot);
      this.ids[cell] = taskId;
      this.link(cell);
      this.levels[cell] = asNumber(level, `${p}/1`);
      this.scores[cell] = asNumber(score, `${p}/2`);
      this.seqs[cell] = asNumber(seq, `${p}/3`);
      this.sizes[i] = slot + 1;
      this.setLast(i, slot, asNumber(last, `${p}/4`));
      this.insertIntoOrder(i, slot);
    });
  }

  private cell(i: number, slot: number): number {
    return this.blockOf[i]! * this.capacity + slot;
  }

  /** Gives slice i the next free block, growing the arrays by doubling. */
  private open(i: number): void {
    const block = this.blocks++;
    this.blockOf[i] = block;
    const cells = this.blocks * this.capacity;
    if (cells > this.levels.length) {
      const length = Math.max(cells, 2 * this.levels.length);
      this.levels = grow(this.levels, length);
      this.scores = grow(this.scores, length);
      this.seqs = grow(this.seqs, length);
      this.lasts = grow(this.lasts, length);
      this.order = grow(this.order, length);
      this.sameId = grow(this.sameId, length);
      this.fenwick = grow(this.fenwick, (length / this.capacity) * (this.capacity + 1));
    }
    for (let k = 0; k < this.capacity; k++) this.ids.push('');
  }

  /** Slice i's slot holding the task, or −1. Slice i has a block. */
  private find(i: number, taskId: string): number {
    const base = this.blockOf[i]! * this.capacity;
    let cell = this.cellOf.get(taskId) ?? -1;
    while (cell >= 0) {
      const slot = cell - base;
      if (slot >= 0 && slot < this.capacity) return slot;
      cell = this.sameId[cell]!;
    }
    return -1;
  }

  private link(cell: number): void {
    const id = this.ids[cell]!;
    this.sameId[cell] = this.cellOf.get(id) ?? -1;
    this.cellOf.set(id, cell);
  }

  private unlink(cell: number): void {
    const id = this.ids[cell]!;
    const head = this.cellOf.get(id)!;
    const next = this.sameId[cell]!;
    if (head === cell) {
      if (next < 0) this.cellOf.delete(id);
      else this.cellOf.set(id, next);
      return;
    }
    let prev = head;
    while (this.sameId[prev] !== cell) prev = this.sameId[prev]!;
    this.sameId[prev] = next;
  }

  private stalenessTotal(i: number): number {
    return this.clocks[i]! * this.sizes[i]! - this.prefixLast(i, this.capacity);
  }

  /** The slot of slice i where the staleness prefix sum passes integer x (0 <= x < total staleness). */
  private findStale(i: number, x: number): number {
    const f = this.fenwick;
    const base = this.blockOf[i]! * (this.capacity + 1);
    const clock = this.clocks[i]!;
    const size = this.sizes[i]!;
    let pos = 0;
    for (let step = this.topStep; step > 0; step >>= 1) {
      const next = pos + step;
      if (next > this.capacity) continue;
      // Fenwick node `next` covers slots (pos, next]; those below `size` are occupied.
      const occupied = Math.max(0, Math.min(next, size) - pos);
      const weight = clock * occupied - f[base + next]!;
      if (weight <= x) {
        pos = next;
        x -= weight;
      }
    }
    return Math.min(pos, size - 1);
  }

  private setLast(i: number, slot: number, value: number): void {
    const cell = this.cell(i, slot);
    const delta = value - this.lasts[cell]!;
    this.lasts[cell] = value;
    const base = this.blockOf[i]! * (this.capacity + 1);
    for (let j = slot + 1; j <= this.capacity; j += j & -j) this.fenwick[base + j]! += delta;
  }

  private prefixLast(i: number, count: number): number {
    const base = this.blockOf[i]! * (this.capacity + 1);
    let sum = 0;
    for (let j = count; j > 0; j -= j & -j) sum += this.fenwick[base + j]!;
    return sum;
  }

  /** Position of `slot` among the first `count` ordered slots of the block at `base`, or where it would go. */
  private position(base: number, slot: number, count: number): number {
    const score = this.scores[base + slot]!;
    const seq = this.seqs[base + slot]!;
    let lo = 0;
    let hi = count;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const other = base + this.order[base + mid]!;
      const s = this.scores[other]!;
      // The other slot ranks before this one: higher score, or the same score and inserted earlier.
      if (s > score || (s === score && this.seqs[other]! < seq)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private removeFromOrder(i: number, slot: number): void {
    const base = this.blockOf[i]! * this.capacity;
    const count = this.sizes[i]!;
    const order = this.order;
    // A loop, not copyWithin: the blocks are short and the builtin's call costs more than the copy.
    for (let k = base + this.position(base, slot, count); k < base + count - 1; k++) order[k] = order[k + 1]!;
  }

  /** Inserts `slot` among the first size − 1 ordered slots of slice i (the others already placed). */
  private insertIntoOrder(i: number, slot: number): void {
    const base = this.blockOf[i]! * this.capacity;
    const count = this.sizes[i]! - 1;
    const order = this.order;
    const at = base + this.position(base, slot, count);
    for (let k = base + count; k > at; k--) order[k] = order[k - 1]!;
    order[at] = slot;
  }
}

function grow<T extends Float64Array | Int32Array>(array: T, length: number): T {
  const grown = new (array.constructor as new (length: number) => T)(length);
  grown.set(array);
  return grown;
}
