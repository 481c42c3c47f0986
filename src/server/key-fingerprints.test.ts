import { describe, expect, it } from 'vitest';
import { KeyFingerprints } from './key-fingerprints.js';

describe('KeyFingerprints', () => {
  const key = (i: number) => `5f0c2e9a1b7d3c4e8f-${i}`;

  it('knows every key added, across the table growing, and no key it was not given', () => {
    const set = new KeyFingerprints();
    expect(set.has(key(0))).toBe(false);
    for (let i = 0; i < 100_000; i++) set.add(key(i));
    expect(set.size).toBe(100_000);
    for (let i = 0; i < 100_000; i++) if (!set.has(key(i))) throw new Error(`lost ${key(i)}`);
    let taken = 0;
    for (let i = 100_000; i < 300_000; i++) if (set.has(key(i))) taken++;
    expect(taken).toBe(0);
  });

  it('counts a key added twice once; tells apart keys that differ in one unit, in order, or in length', () => {
    const set = new KeyFingerprints();
    set.add('abc');
    set.add('abc');
    expect(set.size).toBe(1);
    for (const other of ['abd', 'acb', 'ab', 'abcd', 'ABC', '', 'abc\u0000']) expect(set.has(other), other).toBe(false);
    set.add('');
    expect(set.has('')).toBe(true);
    expect(set.size).toBe(2);
  });
});
