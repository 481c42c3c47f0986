// The bid registry: which keys a session holds, as a render's search for old children relies on.
import { describe, expect, it } from 'vitest';
import { BidMap } from './bid-registry.js';

describe('the bid registry', () => {
  it("holds a key only once this session gave it a bid, not when another session on the shared log did", () => {
    const root = BidMap.root('root');
    const a = root.assigner();
    expect(a.holdsKey('x')).toBe(false);
    expect(a.bid('x')).toBe('2');
    expect([a.holdsKey('x'), a.holdsKey('root'), a.holdsKey('y')]).toEqual([true, true, false]);
    const first = a.done();
    // A second session from the same page assigns on the shared log: the first session's later keys are not its own.
    const b = first.assigner();
    expect(b.bid('y')).toBe('3');
    const c = first.assigner();
    expect([c.holdsKey('x'), c.holdsKey('y')]).toEqual([true, false]);
    expect(c.bid('z')).toBe('3');
    expect([c.holdsKey('y'), c.holdsKey('z')]).toEqual([false, true]);
  });
});
