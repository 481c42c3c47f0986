/** A sum tree for weighted sampling: O(log n) draws and O(log n) weight updates. */

/**
 * A complete binary tree of partial sums over non-negative weights. Each parent is recomputed from its
 * children on update (never adjusted by deltas), so the tree is a pure function of its leaves: no float
 * drift, and a tree rebuilt from saved weights samples exactly like the original.
 */
export class SumTree {
  readonly size: number;
  private readonly base: number;
  private readonly tree: Float64Array;

  constructor(size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`SumTree size must be a positive integer, got ${size}`);
    this.size = size;
    let base = 1;
    while (base < size) base *= 2;
    this.base = base;
    this.tree = new Float64Array(2 * base);
  }

  /** A tree over the given weights, built in O(n). */
  static from(weights: ArrayLike<number>): SumTree {
    const tree = new SumTree(weights.length);
    for (let i = 0; i < weights.length; i++) tree.tree[tree.base + i] = check(weights[i]!);
    for (let p = tree.base - 1; p >= 1; p--) tree.tree[p] = tree.tree[2 * p]! + tree.tree[2 * p + 1]!;
    return tree;
  }

  get total(): number {
    return this.tree[1]!;
  }

  get(i: number): number {
    return this.tree[this.base + i]!;
  }

  set(i: number, weight: number): void {
    if (!(i >= 0 && i < this.size)) throw new RangeError(`SumTree index ${i} is outside [0, ${this.size})`);
    const t = this.tree;
    let p = this.base + i;
    t[p] = check(weight);
    for (p >>= 1; p >= 1; p >>= 1) t[p] = t[2 * p]! + t[2 * p + 1]!;
  }

  /**
   * The index i with prefix(i) <= x < prefix(i + 1), for x in [0, total). Never returns a zero-weight
   * index while the total is positive (rounding at a boundary falls to the side with weight).
   */
  find(x: number): number {
    const t = this.tree;
    let p = 1;
    while (p < this.base) {
      const left = t[2 * p]!;
      if (x < left || !(t[2 * p + 1]! > 0)) p = 2 * p;
      else {
        x -= left;
        p = 2 * p + 1;
      }
    }
    return p - this.base;
  }
}

function check(weight: number): number {
  if (!(weight >= 0) || weight === Infinity) throw new RangeError(`SumTree weights must be finite and >= 0, got ${weight}`);
  return weight;
}
