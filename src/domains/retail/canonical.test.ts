import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { canonicalize, EnvHarnessError } from '../../core/index.js';
import { canonicalJson } from './canonical.js';

describe('canonicalJson (fast RFC 8785 writer for world records)', () => {
  test.prop([fc.jsonValue()], { numRuns: 2000, seed: 7 })("is byte-identical to core's canonicalize", (value) => {
    expect(canonicalJson(value)).toBe(canonicalize(value));
  });

  test.prop([fc.dictionary(fc.string({ unit: 'binary' }), fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string()))], {
    numRuns: 1000,
    seed: 8,
  })('agrees on any key order, number and well-formed string', (value) => {
    expect(canonicalJson(value)).toBe(canonicalize(value));
  });

  it('drops undefined members and writes undefined array items as null, like core', () => {
    const value = { b: undefined, a: [undefined, 1] };
    expect(canonicalJson(value)).toBe(canonicalize(value));
    expect(canonicalJson(value)).toBe('{"a":[null,1]}');
  });

  it('rejects what has no canonical form', () => {
    expect(() => canonicalJson({ x: Infinity })).toThrow(EnvHarnessError);
    expect(() => canonicalJson('\ud800')).toThrow(/lone UTF-16 surrogate/);
    expect(canonicalJson('\ud83d\ude00')).toBe('"\ud83d\ude00"');
  });
});
