/** The front's server-wide hot heads (front-heads.ts): one head per key and per episode, a bound with the oldest going first, forgotten on close. */
import { describe, expect, it } from 'vitest';
import { HotHeads } from './front-heads.js';

const episodes = Array.from({ length: 6 }, (_, i) => ({ id: `ep${i}` }));
const text = (i: number, query = '') => `/v1/episodes/ep${i}/step${query}`;

describe('HotHeads', () => {
  it('keeps at most `capacity` heads, the oldest kept going first', () => {
    const heads = new HotHeads<string, string, { id: string }>(3);
    for (let i = 0; i < 6; i++) {
      heads.keep(text(i), `head ${i}`, episodes[i]!);
      expect(heads.size).toBe(Math.min(i + 1, 3));
    }
    expect([0, 1, 2].map((i) => heads.get(text(i)))).toEqual([undefined, undefined, undefined]);
    expect([3, 4, 5].map((i) => heads.get(text(i))?.head)).toEqual(['head 3', 'head 4', 'head 5']);
    // A forgotten episode's slot is free: nothing else goes for the next one.
    heads.forget(episodes[4]!);
    heads.keep(text(0), 'head 0', episodes[0]!);
    expect([3, 5, 0].map((i) => heads.get(text(i))?.ep)).toEqual([episodes[3], episodes[5], episodes[0]]);
  });

  it('keeps one head per episode and per key: a newer head replaces the older', () => {
    const heads = new HotHeads<string, string, { id: string }>(8);
    const ep = episodes[0]!;
    heads.keep(text(0), 'a', ep);
    heads.keep(text(0, '?x=1'), 'b', ep);
    expect(heads.size).toBe(1);
    expect(heads.get(text(0))).toBeUndefined();
    expect(heads.get(text(0, '?x=1'))).toEqual({ head: 'b', ep });
    // Another head under the same key replaces it; kept again as it is: still one.
    heads.keep(text(0, '?x=1'), 'c', ep);
    heads.keep(text(0, '?x=1'), 'c', ep);
    expect(heads.size).toBe(1);
    expect(heads.get(text(0, '?x=1'))?.head).toBe('c');
  });

  it('forgets a dropped head (only the one kept under its key) and a closed episode\'s head', () => {
    const heads = new HotHeads<string, string, { id: string }>(8);
    heads.keep(text(0), 'zero', episodes[0]!);
    heads.keep(text(1), 'one', episodes[1]!);
    // Another head under the same key (a refused token): the kept one stays.
    heads.drop(text(0), 'refused');
    expect(heads.get(text(0))?.head).toBe('zero');
    heads.drop(text(0), 'zero');
    heads.forget(episodes[1]!);
    expect(heads.size).toBe(0);
    // A dropped head's episode has no head left to forget, and keeping it again works.
    heads.forget(episodes[0]!);
    heads.keep(text(0), 'zero', episodes[0]!);
    expect(heads.get(text(0))?.head).toBe('zero');
  });
});
