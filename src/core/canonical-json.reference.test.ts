/** The canonical writers against a straightforward RFC 8785 implementation written from the RFC, on arbitrary JSON. */
import { hash } from 'node:crypto';
import { test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { canonicalize, canonicalizeFrozen, canonicalSha256, sha256OfCanonicalBytes } from './canonical-json.js';
import { digest } from './digest.js';
import { EnvHarnessError } from './errors.js';
import { anyJson, NoCanonicalForm, reference, validJson } from './testing/rfc8785.js';

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

const sha = (text: string): string => hash('sha256', text, 'hex');

describe('canonical writers against the RFC 8785 reference', () => {
  test.prop([validJson], { numRuns: 400 })('canonicalize and canonicalSha256 give the reference bytes', (value) => {
    const expected = reference(value);
    expect(canonicalize(value)).toBe(expected);
    expect(canonicalSha256(value)).toBe(sha(expected));
    expect(digest(value)).toBe(sha(expected));
    // The memoising path (retail's world records): frozen objects, a memo shared across two calls.
    const memo = new WeakMap<object, string>();
    const frozen = deepFreeze(structuredClone(value));
    expect(canonicalize(frozen, memo)).toBe(expected);
    expect(canonicalize(frozen, memo)).toBe(expected);
    // The frozen-data writer (retail's new records), then the same value where a transition's tool output is.
    const kept = deepFreeze(structuredClone(value));
    expect(canonicalizeFrozen(kept)).toBe(expected);
    expect(canonicalizeFrozen(kept)).toBe(expected);
    expect(canonicalize({ observation: { output: kept } })).toBe(`{"observation":{"output":${expected}}}`);
  });

  test.prop([validJson], { numRuns: 100 })('gives the reference bytes again once its shapes are compiled (written 10 times)', (value) => {
    const expected = reference(value);
    for (let i = 0; i < 10; i++) expect(canonicalize(structuredClone(value))).toBe(expected);
  });

  test.prop([anyJson], { numRuns: 400 })('refuses exactly what has no canonical form (NaN, infinities, lone surrogates)', (value) => {
    let expected: string | undefined;
    try {
      expected = reference(value);
    } catch (error) {
      if (!(error instanceof NoCanonicalForm)) throw error;
    }
    if (expected === undefined) {
      expect(() => canonicalize(value)).toThrow(EnvHarnessError);
      expect(() => canonicalSha256(value)).toThrow(EnvHarnessError);
      expect(() => canonicalizeFrozen(deepFreeze(structuredClone(value)))).toThrow(EnvHarnessError);
    } else {
      expect(canonicalizeFrozen(deepFreeze(structuredClone(value)))).toBe(expected);
      expect(canonicalize(value)).toBe(expected);
      expect(canonicalSha256(value)).toBe(sha(expected));
    }
  });

  it('has a reference number writer that agrees with Number::toString on 100,000 seeded bit patterns', () => {
    // The reference is the oracle of the properties above, so it is checked on its own: once it rounded a
    // tie at the shortest length upwards (199373048224318.125 -> ...13) where ECMAScript picks the even digit.
    const view = new DataView(new ArrayBuffer(8));
    let state = 0x9e3779b97f4a7c15n;
    const mismatches: string[] = [];
    for (let i = 0; i < 100_000; i++) {
      state = (state * 6364136223846793005n + 1442695040888963407n) & 0xffffffffffffffffn;
      view.setBigUint64(0, state);
      const x = view.getFloat64(0);
      if (!Number.isFinite(x)) continue;
      if (reference(x) !== JSON.stringify(x)) mismatches.push(String(x));
    }
    expect(mismatches.slice(0, 5)).toEqual([]);
  });

  it('matches the reference on the edge cases the writers special-case', () => {
    const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${(i * 7) % 40}`, i]));
    const cases: unknown[] = [
      { b: 1, '10': 2, '2': 3, a: 4 }, // integer-like keys: V8 lists them first, RFC 8785 sorts them as text
      JSON.parse('{"__proto__":{"x":1},"a":[]}'),
      Object.assign(Object.create(null), { z: 1, y: [null] }),
      many, // past the insertion-sort limit
      { '\ufb33': 1, '\ud83d\ude00': 2, '\u20ac': 3, '\r': 4, '1': 5, '\u0080': 6, '\u00f6': 7 },
      [-0, 5e-324, 1e21, 1e-7, 0.000001, 123e-20, 4.5, 2 ** 53, -(2 ** 31)],
      [-199373048224318.12, 199373048224318.125, 0.1 + 0.2, 1.7976931348623157e308, 2.2250738585072014e-308], // a tie at the shortest length goes to the even digit
      'tab\tquote"back\\slash\u0001\u001f\u007f\u2028 \ud83d\ude00',
      { a: undefined, b: [undefined, 1] },
      { deep: [[[[[[[[[[{ x: [{ y: 1 }] }]]]]]]]]]] },
    ];
    for (const value of cases) {
      const expected = reference(value);
      expect(canonicalize(value)).toBe(expected);
      expect(canonicalSha256(value)).toBe(sha(expected));
      expect(sha256OfCanonicalBytes((out) => out.value(value))).toBe(sha(expected));
    }
  });

  it('writes toJSON values, class instances and values met inside a getter the way the checked writer does', () => {
    class Point {
      constructor(
        public y: number,
        public x: number,
      ) {}
    }
    const nested = {
      get inner() {
        return canonicalize({ b: 1, a: 2 }); // a canonicalize call while one is running
      },
    };
    expect(canonicalize({ when: new Date(0), p: new Point(2, 1) })).toBe('{"p":{"x":1,"y":2},"when":"1970-01-01T00:00:00.000Z"}');
    expect(canonicalSha256({ p: new Point(2, 1) })).toBe(sha('{"p":{"x":1,"y":2}}'));
    expect(canonicalize(nested)).toBe('{"inner":"{\\"a\\":2,\\"b\\":1}"}');
  });
});
