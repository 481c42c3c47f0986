import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalize } from '../core/index.js';
import { canonicalJson, matchesPattern } from './patterns.js';

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
