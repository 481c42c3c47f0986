import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { testRng } from './fixtures.js';
import { SumTree } from './sum-tree.js';

describe('SumTree', () => {
  it('finds the index whose prefix interval holds x', () => {
    const tree = SumTree.from([1, 0, 2, 3]);
    expect(tree.total).toBe(6);
    expect([0, 0.99, 1, 2.99, 3, 5.99].map((x) => tree.find(x))).toEqual([0, 0, 2, 2, 3, 3]);
  });

  it('never returns a zero-weight or padding index, even at the top edge', () => {
    const tree = SumTree.from([0, 0.1, 0.2, 0, 0]);
    expect(tree.find(tree.total)).toBe(2);
    expect(tree.find(tree.total * (1 + 1e-15))).toBe(2);
    expect(tree.find(0)).toBe(1);
  });

  test.prop([fc.array(fc.double({ min: 0, max: 100, noNaN: true }), { minLength: 1, maxLength: 40 }), fc.array(fc.tuple(fc.nat(), fc.double({ min: 0, max: 100, noNaN: true })), { maxLength: 30 })])(
    'is a pure function of its leaves: updates equal a rebuild, bit for bit',
    (weights, updates) => {
      const tree = SumTree.from(weights);
      const leaves = weights.slice();
      for (const [at, w] of updates) {
        const i = at % leaves.length;
        tree.set(i, w);
        leaves[i] = w;
      }
      const rebuilt = SumTree.from(leaves);
      expect(tree.total).toBe(rebuilt.total);
      for (const x of [0, 0.25, 0.5, 0.75, 0.999]) expect(tree.find(x * tree.total)).toBe(rebuilt.find(x * rebuilt.total));
    },
  );

  it('samples in proportion to the weights', () => {
    const weights = [5, 1, 0, 3, 1];
    const tree = SumTree.from(weights);
    const rng = testRng('sum-tree');
    const counts = [0, 0, 0, 0, 0];
    const draws = 100_000;
    for (let k = 0; k < draws; k++) counts[tree.find(rng.next() * tree.total)]!++;
    expect(counts[2]).toBe(0);
    const chi = weights.reduce((s, w, i) => (w === 0 ? s : s + (counts[i]! - (draws * w) / 10) ** 2 / ((draws * w) / 10)), 0);
    expect(chi).toBeLessThan(16.27); // p = 0.001, 3 degrees of freedom
  });

  it('rejects negative, NaN and infinite weights', () => {
    const tree = new SumTree(3);
    for (const bad of [-1, NaN, Infinity]) expect(() => tree.set(0, bad)).toThrow(RangeError);
  });
});
