import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { createRng, digest, EnvHarnessError, isRngState } from './index.js';
import { computeTaskId, fastDigest, fastRng, fastTaskId, rngFor } from './hashing.js';
import { jsonValue } from '../generation/testing/arbitraries.js';

/** fastTaskId gives core computeTaskId's id, or throws where it throws. */
function expectCoreTaskId(task: Parameters<typeof computeTaskId>[0]): void {
  let expected: string;
  try {
    expected = computeTaskId(task);
  } catch {
    expect(() => fastTaskId(task)).toThrow();
    return;
  }
  expect(fastTaskId(task)).toBe(expected);
}

// Keys that stress RFC 8785 ordering: UTF-16 order differs from code point order above U+FFFF.
const key = fc.oneof(fc.string(), fc.constantFrom('a', 'B', '\u00e9', '\ud83d\ude00', '\uff5e', '~', '/', ''));
const value = jsonValue({ key, unit: 'binary' });

describe('fastDigest', () => {
  test.prop([value])('equals core digest, or throws where core canonicalize throws', (v) => {
    let expected: string | Error;
    try {
      expected = digest(v);
    } catch (error) {
      expected = error as Error;
    }
    if (expected instanceof Error) expect(() => fastDigest(v)).toThrow(expected.message);
    else expect(fastDigest(v)).toBe(expected);
  });

  it('drops undefined keys, maps undefined array items to null and prints -0 as 0', () => {
    const v = { b: 1, a: undefined, c: [undefined, -0] };
    expect(fastDigest(v)).toBe(digest(v));
  });

  it('throws core errors (PARAMS_INVALID with the pointer) for values without a canonical form', () => {
    for (const bad of [{ a: [1, Number.NaN] }, { s: '\ud800' }, { f: () => 1 }, 10n]) {
      let error: unknown;
      try {
        fastDigest(bad);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(EnvHarnessError);
      expect((error as EnvHarnessError).code).toBe('PARAMS_INVALID');
    }
  });

  it('hashes escapes, every UTF-8 length and large values exactly as core does', () => {
    const strings = [
      'quote " backslash \\ controls \u0000\u0001\b\t\n\f\r\u001f del \u007f',
      'two bytes \u00e9\u07ff, three \u0800\uffff\u2028, four \ud83d\ude00\udbff\udfff',
      'x\u00e9\ud83d\ude00'.repeat(5000),
    ];
    for (const text of strings) {
      const value = { [text.slice(0, 40)]: text, list: [text, 1.5e-7, -0, 1e21, true, null] };
      expect(fastDigest(value)).toBe(digest(value));
    }
  });

  it('falls back to the string path for toJSON (which may hash again) and stays correct', () => {
    const inner = { n: 1 };
    const value = { a: { toJSON: () => ({ d: fastDigest(inner), z: 1 }) }, b: 2 };
    expect(fastDigest(value)).toBe(digest({ a: { d: digest(inner), z: 1 }, b: 2 }));
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

describe('rngFor on both sides of one SHA-256 block', () => {
  it('is the stream of createRng([seed, label, index]) for texts of 40 to 70 bytes, ASCII or not', () => {
    for (let length = 20; length <= 50; length++) {
      for (const label of ['m'.repeat(length), `q"\\${'x'.repeat(length)}`, `é${'y'.repeat(length)}`]) {
        for (const [seed, index] of [[0, 0], [-9_007_199_254_740_991, 9_007_199_254_740_991], [42, 123_456]] as const) {
          const fast = rngFor(seed, label, index);
          const core = createRng([seed, label, index]);
          expect([fast.nextUint32(), fast.nextUint32()]).toEqual([core.nextUint32(), core.nextUint32()]);
        }
      }
    }
  });
});

describe('fastRng', () => {
  test.prop([fc.string(), fc.oneof(fc.integer(), fc.constant('reference')), fc.string(), fc.array(value, { maxLength: 3 })])(
    'is the stream of createRng(parts) for the runtime\'s part lists',
    (id, seed, label, rest) => {
      const parts = [id, seed, label, ...rest];
      let core;
      try {
        core = createRng(parts);
      } catch {
        expect(() => fastRng(parts)).toThrow();
        return;
      }
      const fast = fastRng(parts);
      expect(fast.getState()).toEqual(core.getState());
      expect([fast.nextUint32(), fast.nextUint32()]).toEqual([core.nextUint32(), core.nextUint32()]);
    },
  );
});

describe('fastRng on short lists (hashed in JavaScript when they fit one SHA-256 block)', () => {
  const part = fc.oneof(
    fc.string({ unit: 'binary-ascii', maxLength: 30 }),
    fc.constantFrom('', '"', '\\', '\u007f', 'web-perturbation', 'é'),
    fc.integer({ min: -1e6, max: 1e6 }),
    fc.constantFrom(-0, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 2 ** 53, 1.5),
  );
  // fastRng takes part lists, not an RngState (four 32-bit integers), which createRng would use as its state.
  const parts = fc.array(part, { maxLength: 4 }).filter((p) => !isRngState(p));
  test.prop([parts], { numRuns: 2000 })('is the stream of createRng(parts), at and around 55 bytes too', (parts) => {
    const core = createRng(parts);
    const fast = fastRng(parts);
    expect(fast.getState()).toEqual(core.getState());
    expect(fast.nextUint32()).toBe(core.nextUint32());
  });

  test('lists of 53 to 57 canonical bytes (one block holds 55)', () => {
    for (let n = 40; n <= 46; n++) {
      const parts = ['a'.repeat(n), 12345];
      expect(fastRng(parts).getState()).toEqual(createRng(parts).getState());
    }
  });
});

describe('fastTaskId', () => {
  test.prop([fc.dictionary(key, value, { maxKeys: 4 }), value, fc.integer({ min: 1, max: 9 })])(
    'equals core computeTaskId when params objects reappear in the spec (copied bytes)',
    (goal, extra, level) => {
      const params = { world: 1, goal, again: goal };
      const task = {
        template: 'retail/x@1',
        domain: 'retail',
        taskType: 't',
        level,
        params: params as never,
        spec: { instructions: 'x', initialState: { extra, goal } as never, budget: {}, acceptance: { finalState: true }, solution: [], user: goal as never },
      };
      expectCoreTaskId(task);
      expectCoreTaskId(task); // again: the repeated object's remembered bytes must not leak across calls
    },
  );

  test.prop([value, value, fc.integer({ min: 1, max: 9 })])('equals core computeTaskId', (params, extra, level) => {
    const task = {
      template: 'math/add@1',
      domain: 'math',
      taskType: 'arithmetic',
      level,
      params: params as never,
      spec: { instructions: 'x', initialState: extra as never, budget: {}, acceptance: { finalState: false }, solution: [] },
    };
    expectCoreTaskId(task);
  });
});
