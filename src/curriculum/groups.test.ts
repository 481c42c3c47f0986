import { describe, expect, it } from 'vitest';
import { createGroupTracker, groupStats } from './groups.js';

describe('groupStats', () => {
  it('flags all-pass and all-fail groups as zero variance', () => {
    expect(groupStats([1, 1, 1, 1])).toMatchObject({ mean: 1, variance: 0, zeroVariance: true, allPass: true, allFail: false });
    expect(groupStats([0, 0, 0, 0])).toMatchObject({ mean: 0, zeroVariance: true, allPass: false, allFail: true });
    expect(groupStats([1, 0, 1, 1])).toMatchObject({ mean: 0.75, variance: 0.1875, zeroVariance: false });
    expect(groupStats([0.5, 0.5])).toMatchObject({ zeroVariance: true, allPass: false, allFail: false });
  });

  it('leaves out excluded episodes', () => {
    const stats = groupStats([
      { slice: 's', level: 1, success: 1 },
      { slice: 's', level: 1, success: 0, excluded: true },
      { slice: 's', level: 1, success: 1 },
    ]);
    expect(stats).toMatchObject({ size: 3, counted: 2, mean: 1, zeroVariance: true });
    expect(groupStats([{ slice: 's', level: 1, success: 0, excluded: true }])).toMatchObject({ counted: 0, mean: 0, zeroVariance: true, allFail: false });
  });
});

describe('createGroupTracker', () => {
  it('reports the per-slice share of zero-variance groups and what was skipped, and restores', () => {
    const tracker = createGroupTracker();
    tracker.record('a', groupStats([1, 1]), true);
    tracker.record('a', groupStats([1, 0]));
    tracker.record('a', groupStats([0, 0]), true);
    tracker.record('b', groupStats([0, 1]));
    expect(tracker.shares()).toEqual({
      a: { groups: 3, zeroVariance: 2, allPass: 1, allFail: 1, skipped: 2, share: 2 / 3 },
      b: { groups: 1, zeroVariance: 0, allPass: 0, allFail: 0, skipped: 0, share: 0 },
    });
    const copy = createGroupTracker(JSON.parse(JSON.stringify(tracker.getState())));
    expect(copy.shares()).toEqual(tracker.shares());
  });
});
