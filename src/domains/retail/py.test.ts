import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { comparePyStrings, nearestDouble, pyFloatRepr, pyRound2, pySorted, pyTruthy } from './py.js';

/** Python's round(x, 2) from first principles: exact binary value, half-even, nearest double. */
function referenceRound2(x: number): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const hi = view.getUint32(0);
  const lo = view.getUint32(4);
  const sign = hi >>> 31 ? -1n : 1n;
  const exponentBits = (hi >>> 20) & 0x7ff;
  let mantissa = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let exponent = exponentBits - 1075;
  if (exponentBits === 0) exponent = -1074;
  else mantissa |= 1n << 52n;
  // |x| * 100 = mantissa * 100 * 2^exponent = num / den
  let num = mantissa * 100n;
  let den = 1n;
  if (exponent >= 0) num <<= BigInt(exponent);
  else den <<= BigInt(-exponent);
  let q = num / den;
  const twiceRemainder = 2n * (num % den);
  if (twiceRemainder > den || (twiceRemainder === den && q % 2n === 1n)) q += 1n;
  const magnitude = q === 0n ? 0 : nearestDouble(q, 100n);
  return sign < 0n ? -magnitude : magnitude;
}

describe("pyRound2 (Python's round(x, 2))", () => {
  it.each([
    [2.675, 2.67],
    [1.005, 1],
    [1.115, 1.11],
    [0.125, 0.12],
    [0.375, 0.38],
    [-0.125, -0.12],
    [10.625, 10.62],
    [10.875, 10.88],
    [35.25 - 30.1, 5.15],
    [57, 57],
    [0.1 + 0.2, 0.3],
  ])('rounds %d to %d', (x, expected) => {
    expect(pyRound2(x)).toBe(expected);
  });

  it('rounds exact ties to even where toFixed rounds them up', () => {
    expect((0.125).toFixed(2)).toBe('0.13');
    expect(pyRound2(0.125)).toBe(0.12);
    expect(pyRound2(1234.625)).toBe(1234.62);
    expect(pyRound2(1234.875)).toBe(1234.88);
  });

  it('keeps the sign of a negative result that rounds to zero, like Python', () => {
    expect(Object.is(pyRound2(-0.001), -0)).toBe(true);
    expect(Object.is(pyRound2(-0), -0)).toBe(true);
  });

  test.prop([fc.double({ min: -1e16, max: 1e16, noNaN: true })], { numRuns: 3000, seed: 1 })('matches an exact BigInt reference', (x) => {
    expect(pyRound2(x)).toBe(referenceRound2(x));
  });

  test.prop([fc.integer({ min: -(2 ** 53), max: 2 ** 53 })], { numRuns: 3000, seed: 2 })('matches the reference on multiples of 1/8 (the only ties)', (k) => {
    expect(pyRound2(k / 8)).toBe(referenceRound2(k / 8));
  });

  it('rounds ties exactly where x * 100 is no longer exact', () => {
    // CPython: round(856017677579075.125, 2) == 856017677579075.1
    expect(pyRound2(856017677579075.125)).toBe(856017677579075.1);
    expect(pyRound2(-419236160814762.125)).toBe(-419236160814762.1);
  });

  test.prop([fc.integer({ min: 0, max: 1_000_000 }), fc.integer({ min: 0, max: 1_000_000 })], { seed: 3 })(
    'matches the reference on sums and differences of prices',
    (a, b) => {
      const x = a / 100 - b / 100 + a / 100;
      expect(pyRound2(x)).toBe(referenceRound2(x));
    },
  );
});

describe("pyFloatRepr (Python's repr(float))", () => {
  it.each([
    [4, '4.0'],
    [74.97, '74.97'],
    [0.1 + 0.2, '0.30000000000000004'],
    [0.0001, '0.0001'],
    [0.00001, '1e-05'],
    [1.5e-7, '1.5e-07'],
    [1e16, '1e+16'],
    [9999999999999998, '9999999999999998.0'],
    [1.5e300, '1.5e+300'],
    [-2.5, '-2.5'],
    [0, '0.0'],
    [-0, '-0.0'],
    [Infinity, 'inf'],
    [-Infinity, '-inf'],
    [NaN, 'nan'],
  ])('prints %d as %s', (x, text) => {
    expect(pyFloatRepr(x)).toBe(text);
  });
});

describe('Python string order and truthiness', () => {
  it('sorts by code point, not UTF-16 code unit', () => {
    const astral = '\u{1F600}';
    const highBmp = '\uFF01';
    expect([astral, highBmp].sort()).toEqual([astral, highBmp]);
    expect(pySorted([astral, highBmp])).toEqual([highBmp, astral]);
    expect(comparePyStrings('10', '9')).toBeLessThan(0);
    expect(pySorted(['b', 'a', 'ab'])).toEqual(['a', 'ab', 'b']);
  });

  it('treats empty containers as false and NaN as true', () => {
    expect([[], {}, '', 0, false, null].map(pyTruthy)).toEqual([false, false, false, false, false, false]);
    expect([[0], { a: 1 }, 'x', NaN, true].map(pyTruthy)).toEqual([true, true, true, true, true]);
  });
});
