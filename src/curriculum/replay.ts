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
 * Storage shared by the replay buffers of one curriculum. With thousands of slices, one array (rather
 * than several small arrays per buffer) keeps a draw to a few cache lines.
 */
export class ReplayArena {
  data = new Float64Array(1024);
  readonly ids: string[] = [];
  private used = 0;

  /** Reserves `numbers` cells of `data` and `ids` cells of `ids`; returns where they start. */
  reserve(numbers: number, ids: number): { base: number; idBase: number } {
    if (this.used + numbers > this.data.length) {
      let length = this.data.length;
      while (length < this.used + numbers) length *= 2;
      const grown = new Float64Array(length);
      grown.set(this.data);
      this.data = grown;
    }
    const base = this.used;
    this.used += numbers;
    const idBase = this.ids.length;
    for (let k = 0; k < ids; k++) this.ids.push('');
    return { base, idBase };
  }
}

/**
 * The replay buffer of one slice. Slots 0..size−1 are always occupied; `order` lists them by score
 * (highest first, older task first on ties, like a stable argsort). Staleness is kept as the clock of
 * each task's last draw in a Fenwick tree, so P_C sampling costs O(log capacity).
 */
export class ReplayBuffer {
  readonly capacity: number;
  size = 0;
  /** Draws of this slice so far (level-replay's staleness advances on every draw, replay or new). */
  clock = 0;
  private nextSeq = 0;
  private readonly arena: ReplayArena;
  /** Offsets into the arena of this buffer's columns: per slot its level, score, insertion seq, last-draw clock. */
  private readonly levelCol: number;
  private readonly scoreCol: number;
  private readonly seqCol: number;
  private readonly lastCol: number;
  /** Slots by rank. */
  private readonly orderCol: number;
  /** 1-based Fenwick tree over the last-draw clocks (capacity + 1 cells, cell 0 unused). */
  private readonly fenwickCol: number;
  private readonly idCol: number;
  private readonly slotOf = new Map<string, number>();
  private readonly ranks: RankTable;
  private readonly topStep: number;

  constructor(capacity: number, ranks: RankTable, arena: ReplayArena = new ReplayArena()) {
    this.capacity = capacity;
    this.ranks = ranks;
    this.arena = arena;
    const { base, idBase } = arena.reserve(6 * capacity + 1, capacity);
    this.levelCol = base;
    this.scoreCol = base + capacity;
    this.seqCol = base + 2 * capacity;
    this.lastCol = base + 3 * capacity;
    this.orderCol = base + 4 * capacity;
    this.fenwickCol = base + 5 * capacity;
    this.idCol = idBase;
    let step = 1;
    while (step * 2 <= capacity) step *= 2;
    this.topStep = step;
  }

  private get data(): Float64Array {
    return this.arena.data;
  }

  has(taskId: string): boolean {
    return this.slotOf.has(taskId);
  }

  taskId(slot: number): string {
    return this.arena.ids[this.idCol + slot]!;
  }

  level(slot: number): number {
    return this.data[this.levelCol + slot]!;
  }

  /**
   * Records a task's new score: an EWA with `alpha` for a known task; a new task enters while there is
   * room, then only by replacing the lowest-scored task when it scores higher (Robust PLR / jaxued).
   */
  observe(taskId: string, level: number, score: number, alpha: number): void {
    const known = this.slotOf.get(taskId);
    if (known !== undefined) {
      this.removeFromOrder(known);
      this.data[this.scoreCol + known] = (1 - alpha) * this.data[this.scoreCol + known]! + alpha * score;
      this.data[this.levelCol + known] = level;
      this.insertIntoOrder(known);
      return;
    }
    let slot: number;
    if (this.size < this.capacity) {
      slot = this.size++;
    } else {
      slot = this.data[this.orderCol + this.size - 1]!;
      if (!(score > this.data[this.scoreCol + slot]!)) return;
      this.removeFromOrder(slot);
      this.slotOf.delete(this.taskId(slot));
    }
    this.arena.ids[this.idCol + slot] = taskId;
    this.slotOf.set(taskId, slot);
    this.data[this.levelCol + slot] = level;
    this.data[this.scoreCol + slot] = score;
    this.data[this.seqCol + slot] = this.nextSeq++;
    this.setLast(slot, this.clock);
    this.insertIntoOrder(slot);
  }

  /** A slot drawn from P = (1 − ρ)P_S + ρP_C; does not change the buffer. P_S alone when nothing is stale. */
  sample(rng: Rng, rho: number): number {
    if (rho > 0) {
      const stale = this.stalenessTotal();
      if (stale > 0 && rng.next() < rho) return this.findStale(Math.floor(rng.next() * stale));
    }
    return this.data[this.orderCol + this.ranks.sample(rng.next(), this.size) - 1]!;
  }

  /** The slice was drawn and this task replayed: everything else gets one draw staler. */
  touch(slot: number): void {
    this.clock++;
    this.setLast(slot, this.clock);
  }

  /** The slice was drawn for a new task. */
  tick(): void {
    this.clock++;
  }

  /** Every task with its score, staleness and replay probability, highest probability rank first. */
  distribution(rho: number): ReplayEntry[] {
    const stale = this.stalenessTotal();
    const rankTotal = this.ranks.total(this.size);
    const mix = stale > 0 ? rho : 0;
    const out: ReplayEntry[] = [];
    for (let r = 1; r <= this.size; r++) {
      const slot = this.data[this.orderCol + r - 1]!;
      const staleness = this.clock - this.data[this.lastCol + slot]!;
      const pS = this.ranks.weight(r) / rankTotal;
      const pC = stale > 0 ? staleness / stale : 0;
      out.push({
        taskId: this.taskId(slot),
        level: this.data[this.levelCol + slot]!,
        score: this.data[this.scoreCol + slot]!,
        staleness,
        probability: (1 - mix) * pS + mix * pC,
      });
    }
    return out;
  }

  getState(): JsonValue {
    const tasks: JsonValue[] = [];
    for (let slot = 0; slot < this.size; slot++) {
      tasks.push([this.taskId(slot), this.data[this.levelCol + slot]!, this.data[this.scoreCol + slot]!, this.data[this.seqCol + slot]!, this.data[this.lastCol + slot]!]);
    }
    return { clock: this.clock, nextSeq: this.nextSeq, tasks };
  }

  static fromState(state: JsonValue, capacity: number, ranks: RankTable, arena: ReplayArena, pointer: string): ReplayBuffer {
    const o = asObject(state, pointer);
    const buffer = new ReplayBuffer(capacity, ranks, arena);
    buffer.clock = asNumber(o.clock, `${pointer}/clock`);
    buffer.nextSeq = asNumber(o.nextSeq, `${pointer}/nextSeq`);
    const tasks = asArray(o.tasks, `${pointer}/tasks`);
    if (tasks.length > capacity) importInvalid(`${pointer}/tasks`, `holds ${tasks.length} tasks; capacity is ${capacity}`);
    tasks.forEach((entry, slot) => {
      const p = `${pointer}/tasks/${slot}`;
      const [id, level, score, seq, last] = asArray(entry, p, 5);
      const taskId = asString(id, `${p}/0`);
      arena.ids[buffer.idCol + slot] = taskId;
      buffer.slotOf.set(taskId, slot);
      buffer.data[buffer.levelCol + slot] = asNumber(level, `${p}/1`);
      buffer.data[buffer.scoreCol + slot] = asNumber(score, `${p}/2`);
      buffer.data[buffer.seqCol + slot] = asNumber(seq, `${p}/3`);
      buffer.size = slot + 1;
      buffer.setLast(slot, asNumber(last, `${p}/4`));
      buffer.insertIntoOrder(slot);
    });
    return buffer;
  }

  private stalenessTotal(): number {
    return this.clock * this.size - this.prefixLast(this.capacity);
  }

  /** The slot where the staleness prefix sum passes integer x (0 <= x < total staleness). */
  private findStale(x: number): number {
    const f = this.data;
    const base = this.fenwickCol;
    let pos = 0;
    for (let step = this.topStep; step > 0; step >>= 1) {
      const next = pos + step;
      if (next > this.capacity) continue;
      // Fenwick node `next` covers slots (pos, next]; those below `size` are occupied.
      const occupied = Math.max(0, Math.min(next, this.size) - pos);
      const weight = this.clock * occupied - f[base + next]!;
      if (weight <= x) {
        pos = next;
        x -= weight;
      }
    }
    return Math.min(pos, this.size - 1);
  }

  private setLast(slot: number, value: number): void {
    const delta = value - this.data[this.lastCol + slot]!;
    this.data[this.lastCol + slot] = value;
    for (let j = slot + 1; j <= this.capacity; j += j & -j) this.data[this.fenwickCol + j]! += delta;
  }

  private prefixLast(count: number): number {
    let sum = 0;
    for (let j = count; j > 0; j -= j & -j) sum += this.data[this.fenwickCol + j]!;
    return sum;
  }

  /** True when slot a ranks before slot b. */
  private before(a: number, b: number): boolean {
    const sa = this.data[this.scoreCol + a]!;
    const sb = this.data[this.scoreCol + b]!;
    return sa > sb || (sa === sb && this.data[this.seqCol + a]! < this.data[this.seqCol + b]!);
  }

  /** Position of `slot` among the first `count` ordered slots, or of where it would go. */
  private position(slot: number, count: number): number {
    let lo = 0;
    let hi = count;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.before(this.data[this.orderCol + mid]!, slot)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private removeFromOrder(slot: number): void {
    const count = this.size;
    const at = this.position(slot, count);
    this.data.copyWithin(this.orderCol + at, this.orderCol + at + 1, this.orderCol + count);
  }

  /** Inserts `slot` among the first size − 1 ordered slots (the others already placed). */
  private insertIntoOrder(slot: number): void {
    const count = this.size - 1;
    const at = this.position(slot, count);
    this.data.copyWithin(this.orderCol + at + 1, this.orderCol + at, this.orderCol + count);
    this.data[this.orderCol + at] = slot;
  }
}
