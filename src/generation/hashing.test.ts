import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { canonicalize, computeTaskId, createRng, digest, EnvHarnessError } from '../core/index.js';
import { canonicalJson, fastDigest, fastTaskId, rngFor } from './hashing.js';

// Keys that stress RFC 8785 ordering: UTF-16 order differs from code point order above U+FFFF.
const key = fc.oneof(fc.string(), fc.constantFrom('a', 'B', '\u00e9', '\ud83d\ude00', '\uff5e', '~', '/', ''));
const value = fc.letrec((tie) => ({
  json: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer(),
    fc.string({ unit: 'binary' }),
    fc.array(tie('json'), { maxLength: 4 }),
    fc.dictionary(key, tie('json'), { maxKeys: 5 }),
  ),
})).json;

describe('canonicalJson', () => {
  test.prop([value])('is byte-identical to core canonicalize', (v) => {
    let expected: string | Error;
    try {
      expected = canonicalize(v);
    } catch (error) {
      expected = error as Error;
    }
    if (expected instanceof Error) expect(() => canonicalJson(v)).toThrow(expected.message);
    else expect(canonicalJson(v)).toBe(expected);
  });

  it('drops undefined keys, maps undefined array items to null and prints -0 as 0', () => {
    expect(canonicalJson({ b: 1, a: undefined, c: [undefined, -0] })).toBe(canonicalize({ b: 1, a: undefined, c: [undefined, -0] }));
  });

  it('throws core errors (with the pointer) for values without a canonical form', () => {
    for (const bad of [{ a: [1, Number.NaN] }, { s: '\ud800' }, { f: () => 1 }, 10n]) {
      const error = (() => {
        try {
          canonicalJson(bad);
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(error).toBeInstanceOf(EnvHarnessError);
      expect((error as EnvHarnessError).code).toBe('PARAMS_INVALID');
    }
  });

  test.prop([value])('fastDigest equals core digest', (v) => {
    try {
      canonicalize(v);
    } catch {
      return;
    }
    expect(fastDigest(v)).toBe(digest(v));
  });
});

describe('rngFor', () => {
  test.prop([fc.integer({ min: -(2 ** 40), max: 2 ** 40 }), fc.string(), fc.nat()])(
    'is the stream of createRng([seed, label, index])',
    (seed, label, index) => {
      const fast = rngFor(seed, label, index);
      const core = createRng([seed, label, index]);
      expect(fast.getState()).toEqual(core.getState());
      expect([fast.nextUint32(), fast.nextUint32()]).toEqual([core.nextUint32(), core.nextUint32()]);
    },
  );
});

describe('fastTaskId', () => {
  test.prop([value, value, fc.integer({ min: 1, max: 9 })])('equals core computeTaskId', (params, extra, level) => {
    const task = {
      template: 'math/add@1',
      domain: 'math',
      taskType: 'arithmetic',
      level,
      params: params as never,
      spec: { instructions: 'x', initialState: extra as never, budget: {}, acceptance: { finalState: false }, solution: [] },
    };
    let expected: string | undefined;
    try {
      expected = computeTaskId(task);
    } catch {
      expect(() => fastTaskId(task)).toThrow();
      return;
    }
    expect(fastTaskId(task)).toBe(expected);
  });
});
