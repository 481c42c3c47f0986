/** A small, splittable, seeded PRNG (sfc32) whose streams never change across library versions. */
import { canonicalize } from './canonical-json.js';
import { sha256Bytes } from './digest.js';

/** The whole generator state: four unsigned 32-bit words. Serialisable as-is. */
export type RngState = readonly [number, number, number, number];

/** Derives a generator state from any JSON-able parts, e.g. (seed, templateId, index). */
export function deriveSeed(...parts: unknown[]): RngState {
  const bytes = sha256Bytes(canonicalize(parts));
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const state: [number, number, number, number] = [
    view.getUint32(0, false),
    view.getUint32(4, false),
    view.getUint32(8, false),
    view.getUint32(12, false),
  ];
  // sfc32 must not start from all zeros.
  if ((state[0] | state[1] | state[2] | state[3]) === 0) state[3] = 1;
  return state;
}

/** A seeded generator. `fork(label)` derives an independent child without advancing this one. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(state: RngState) {
    [this.a, this.b, this.c, this.d] = state;
    this.a >>>= 0;
    this.b >>>= 0;
    this.c >>>= 0;
    this.d >>>= 0;
  }

  /** Next unsigned 32-bit integer. */
  nextUint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform float in [0, 1) with 32 bits of randomness. */
  next(): number {
    return this.nextUint32() / 4294967296;
  }

  /** Uniform integer in [min, max], both inclusive, without modulo bias. */
  int(min: number, max: number): number {
    if (!Number.isInteger(min) || !Number.isInteger(max) || max < min) {
      throw new RangeError(`Rng.int needs integers min <= max, got ${min}, ${max}`);
    }
    const span = max - min + 1;
    if (span > 4294967296) throw new RangeError('Rng.int range exceeds 2^32');
    if (span === 4294967296) return min + this.nextUint32();
    const limit = 4294967296 - (4294967296 % span);
    let x = this.nextUint32();
    while (x >= limit) x = this.nextUint32();
    return min + (x % span);
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** A uniformly chosen element; throws on an empty list. */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('Rng.pick from an empty list');
    return items[this.int(0, items.length - 1)]!;
  }

  /** Index chosen with probability proportional to non-negative weights. */
  weightedIndex(weights: readonly number[]): number {
    let total = 0;
    for (const w of weights) total += w > 0 ? w : 0;
    if (!(total > 0)) throw new RangeError('Rng.weightedIndex needs a positive total weight');
    let x = this.next() * total;
    for (let i = 0; i < weights.length; i++) {
      const w = weights[i]! > 0 ? weights[i]! : 0;
      if (x < w) return i;
      x -= w;
    }
    for (let i = weights.length - 1; i >= 0; i--) if (weights[i]! > 0) return i;
    return weights.length - 1;
  }

  /** A new shuffled copy (Fisher-Yates). */
  shuffle<T>(items: readonly T[]): T[] {
    const out = items.slice();
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(0, i);
      const tmp = out[i]!;
      out[i] = out[j]!;
      out[j] = tmp;
    }
    return out;
  }

  /** k distinct elements in random order (k clamped to the list length). */
  sample<T>(items: readonly T[], k: number): T[] {
    return this.shuffle(items).slice(0, Math.max(0, Math.min(k, items.length)));
  }

  /** An independent child stream keyed by the current state and a label; does not advance this one. */
  fork(label: string | number): Rng {
    return new Rng(deriveSeed(this.getState(), label));
  }

  getState(): RngState {
    return [this.a >>> 0, this.b >>> 0, this.c >>> 0, this.d >>> 0];
  }
}

/** A generator from a state or from seed parts. */
export function createRng(seed: RngState | readonly unknown[]): Rng {
  if (isRngState(seed)) return new Rng(seed);
  return new Rng(deriveSeed(...seed));
}

export function isRngState(value: unknown): value is RngState {
  return (
    Array.isArray(value) &&
    value.length === 4 &&
    value.every((x) => typeof x === 'number' && Number.isInteger(x) && x >= 0 && x <= 0xffffffff)
  );
}
