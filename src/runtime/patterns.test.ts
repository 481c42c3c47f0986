import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalize } from '../core/index.js';
import { callKey, CallKeyIndex, callText, canonicalJson, matchesPattern } from './patterns.js';

describe('canonicalJson', () => {
  it('is byte-identical to core canonicalize on JSON values', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        if (canonicalJson(value) !== canonicalize(value)) throw new Error(`differs on ${JSON.stringify(value)}`);
      }),
      { numRuns: 2000, seed: 3 },
    );
    expect(canonicalJson({ b: 1, a: [-0, 1e21, 'é'], 10: null, 2: true })).toBe(canonicalize({ b: 1, a: [-0, 1e21, 'é'], 10: null, 2: true }));
  });

  it('still refuses values without a canonical form', () => {
    expect(() => canonicalJson({ a: Number.NaN })).toThrow();
  });
});

describe('matchesPattern', () => {
  it('matches by type, tool and a subset of arguments', () => {
    const call = { type: 'tool' as const, tool: 'get', args: { id: 1, tags: ['a', 'b'] } };
    expect(matchesPattern({ tool: 'get' }, call)).toBe(true);
    expect(matchesPattern({ tool: 'get', args: { tags: ['a', 'b'] } }, call)).toBe(true);
    expect(matchesPattern({ tool: 'get', args: { tags: ['b', 'a'] } }, call)).toBe(false);
    expect(matchesPattern({ args: { id: 2 } }, call)).toBe(false);
    expect(matchesPattern({ type: 'message' }, call)).toBe(false);
    expect(matchesPattern({ type: 'message' }, { type: 'message', text: 'x' })).toBe(true);
    expect(matchesPattern({ tool: 'get' }, { type: 'message', text: 'x' })).toBe(false);
  });
});

describe('CallKeyIndex', () => {
  it('answers as the key set does, for any tool names (NULs and shared prefixes included) and arguments', () => {
    const tool = fc.constantFrom('click', 'click\u0000', 'click\u0000x', 'clic', '', '\u0000', 'fill');
    const value = fc.oneof(fc.string(), fc.constantFrom('\u0000', '\ud800', 'x\u0000y'));
    const args = fc.oneof(fc.dictionary(fc.constantFrom('bid', 'text', 'a\u0000'), value), fc.constant({ n: Number.NaN }));
    fc.assert(
      fc.property(fc.array(fc.tuple(tool, args), { maxLength: 8 }), fc.array(fc.tuple(tool, args), { maxLength: 8 }), (stored, asked) => {
        const keys = new Set(stored.map(([t, a]) => callKey(t, a)));
        const index = new CallKeyIndex(keys);
        for (const [t, a] of [...asked, ...stored]) {
          if (index.has(t, callText(a)) !== keys.has(callKey(t, a))) throw new Error(`differs on ${JSON.stringify([t, a])}`);
        }
      }),
      { numRuns: 2000, seed: 5 },
    );
    const keys = new Set([callKey('a\u0000b', { x: '1' })]);
    expect(new CallKeyIndex(keys).has('a\u0000b', callText({ x: '1' }))).toBe(true);
    expect(new CallKeyIndex(keys).has('a', 'b\u0000' + callText({ x: '1' }))).toBe(true);
    expect(new CallKeyIndex(keys).has('a', callText({ x: '1' }))).toBe(false);
  });
});
