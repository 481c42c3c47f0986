/** Fixed-size windows of recent success values for many slices, stored as flat typed arrays. */
import type { JsonValue } from '../core/index.js';
import { asArray, asNumber, asNumbers, asObject, importInvalid } from './state-io.js';

/** One ring buffer of the last `size` values per slice, with running sums. */
export class SuccessWindows {
  readonly size: number;
  private readonly values: Float64Array;
  private readonly pos: Int32Array;
  private readonly counts: Int32Array;
  private readonly sums: Float64Array;

  constructor(slices: number, size: number) {
    this.size = size;
    this.values = new Float64Array(slices * size);
    this.pos = new Int32Array(slices);
    this.counts = new Int32Array(slices);
    this.sums = new Float64Array(slices);
  }

  push(i: number, value: number): void {
    const at = i * this.size + this.pos[i]!;
    if (this.counts[i] === this.size) this.sums[i]! -= this.values[at]!;
    else this.counts[i]!++;
    this.values[at] = value;
    this.sums[i]! += value;
    this.pos[i] = (this.pos[i]! + 1) % this.size;
  }

  clear(i: number): void {
    this.pos[i] = 0;
    this.counts[i] = 0;
    this.sums[i] = 0;
  }

  count(i: number): number {
    return this.counts[i]!;
  }

  sum(i: number): number {
    return this.sums[i]!;
  }

  /** Mean of slice i's window; NaN when empty. */
  mean(i: number): number {
    return this.counts[i]! > 0 ? this.sums[i]! / this.counts[i]! : NaN;
  }

  /** The value `back` steps before the newest (0 = newest); back < count(i). */
  recent(i: number, back: number): number {
    return this.values[i * this.size + ((this.pos[i]! - 1 - back + 2 * this.size) % this.size)]!;
  }

  /** Slice i's values, oldest first. */
  list(i: number): number[] {
    const out: number[] = [];
    for (let back = this.counts[i]! - 1; back >= 0; back--) out.push(this.recent(i, back));
    return out;
  }

  getState(): JsonValue {
    const values: number[][] = [];
    for (let i = 0; i < this.pos.length; i++) values.push(this.list(i));
    // Running sums are saved, not recomputed, so a restored window rounds exactly as the original.
    return { values, sums: Array.from(this.sums) };
  }

  setState(state: JsonValue, pointer: string): void {
    const o = asObject(state, pointer);
    const values = asArray(o.values, `${pointer}/values`, this.pos.length);
    const sums = asNumbers(o.sums, `${pointer}/sums`, this.pos.length);
    for (let i = 0; i < values.length; i++) {
      const list = asArray(values[i], `${pointer}/values/${i}`);
      if (list.length > this.size) importInvalid(`${pointer}/values/${i}`, `holds ${list.length} values; the window is ${this.size}`);
      this.clear(i);
      list.forEach((x, k) => this.push(i, asNumber(x, `${pointer}/values/${i}/${k}`)));
      this.sums[i] = sums[i]!;
    }
  }
}
