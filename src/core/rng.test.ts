import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { createRng, deriveSeed, Rng } from './rng.js';

/** An independent sfc32 in BigInt arithmetic, to check the 32-bit implementation against. */
function referenceSfc32(seed: readonly number[], n: number): number[] {
  const M = 0xffffffffn;
  let [a, b, c, d] = seed.map(BigInt) as [bigint, bigint, bigint, bigint];
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = (a + b + d) & M;
    d = (d + 1n) & M;
    a = b ^ (b >> 9n);
    b = (c + (c << 3n)) & M;
    c = ((c << 21n) | (c >> 11n)) & M;
    c = (c + t) & M;
    out.push(Number(t));
  }
  return out;
}

describe('Rng (sfc32)', () => {
  it('reproduces the golden vector for seed (42, "retail/cancel@1", 0)', () => {
    const state = deriveSeed(42, 'retail/cancel@1', 0);
    const rng = createRng(state);
    const values = Array.from({ length: 6 }, () => rng.nextUint32());
    expect(values).toEqual(referenceSfc32(state, 6));
    expect({ state, values }).toMatchInlineSnapshot(`
      {
        "state": [
          3356686911,
          598682293,
          3644720632,
          1934549232,
        ],
        "values": [
          1594951140,
          977015753,
          643571288,
          3885490362,
          2850391758,
          2277553388,
        ],
      }
    `);
  });

  test.prop([fc.tuple(fc.nat(), fc.nat(), fc.nat(), fc.nat()).map((t) => t.map((x) => x >>> 0))])(
    'agrees with a BigInt reference for any state',
    (state) => {
      fc.pre(state.some((x) => x !== 0));
      const rng = new Rng(state as [number, number, number, number]);
      expect(Array.from({ length: 20 }, () => rng.nextUint32())).toEqual(referenceSfc32(state, 20));
    },
  );

  it('derives task i alone: the seed depends only on (seed, template, index)', () => {
    const a = createRng([7, 'x/y@1', 123]).nextUint32();
    for (let i = 0; i < 5; i++) createRng([7, 'x/y@1', i]).nextUint32();
    expect(createRng([7, 'x/y@1', 123]).nextUint32()).toBe(a);
    expect(createRng([7, 'x/y@1', 124]).nextUint32()).not.toBe(a);
  });

  it('forks independent children without advancing the parent', () => {
    const parent = createRng([1]);
    const before = parent.getState();
    const c1 = parent.fork('user');
    expect(parent.getState()).toEqual(before);
    expect(parent.fork('user').nextUint32()).toBe(c1.nextUint32());
    expect(parent.fork('faults').nextUint32()).not.toBe(parent.fork('user').nextUint32());
  });

  it('restores from its state and continues identically', () => {
    const rng = createRng([99]);
    for (let i = 0; i < 10; i++) rng.next();
    const copy = new Rng(rng.getState());
    expect(Array.from({ length: 10 }, () => copy.next())).toEqual(Array.from({ length: 10 }, () => rng.next()));
  });

  test.prop([fc.integer({ min: -1000, max: 1000 }), fc.integer({ min: 0, max: 1000 }), fc.nat()])(
    'int stays within inclusive bounds',
    (min, span, seed) => {
      const rng = createRng([seed]);
      for (let i = 0; i < 50; i++) {
        const x = rng.int(min, min + span);
        expect(x).toBeGreaterThanOrEqual(min);
        expect(x).toBeLessThanOrEqual(min + span);
      }
    },
  );

  it('is roughly uniform (chi-square over 10 buckets, 100k draws)', () => {
    const rng = createRng(['uniformity']);
    const counts = new Array(10).fill(0);
    for (let i = 0; i < 100_000; i++) counts[rng.int(0, 9)]++;
    const chi = counts.reduce((s, c) => s + (c - 10_000) ** 2 / 10_000, 0);
    expect(chi).toBeLessThan(27.88); // p = 0.001 for 9 degrees of freedom
  });

  it('weightedIndex never picks a zero weight and follows the weights', () => {
    const rng = createRng(['w']);
    const counts = [0, 0, 0];
    for (let i = 0; i < 30_000; i++) counts[rng.weightedIndex([1, 0, 3])]!++;
    expect(counts[1]).toBe(0);
    expect(counts[2]! / counts[0]!).toBeGreaterThan(2.7);
    expect(counts[2]! / counts[0]!).toBeLessThan(3.3);
  });
});
