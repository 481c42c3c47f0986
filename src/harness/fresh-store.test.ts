/** A fresh store gives a working episode through the library with the built-in defaults (issue 13 item 1). */
import { afterEach, describe, expect, it } from 'vitest';
import { builtinDomains } from '../builtins.js';
import { createHarness, type Harness } from './harness.js';
import { systemClock } from '../cli/clock.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe('openEpisode on a fresh store', { timeout: 120_000 }, () => {
  it('fills the default domain\'s pools on the first draw and runs the episode', async () => {
    harness = await createHarness({ clock: systemClock, store: ':memory:', domains: builtinDomains() });
    await harness.initialize();
    expect((await harness.poolStats()).bySplit.dynamic).toBe(0);
    const { episode, task } = await harness.openEpisode();
    expect(task.domain).toBe('retail');
    const observation = episode.reset({ seed: 0 });
    expect(observation.kind).toBe('reset');
    const stats = await harness.poolStats();
    expect(stats.bySplit.dynamic).toBeGreaterThan(0);
    // Held-out templates went to heldout, never into the pool training draws from.
    expect(stats.bySplit.heldout).toBeGreaterThan(0);
    expect(stats.slices.filter((s) => s.split === 'dynamic').every((s) => s.slice.startsWith('retail/'))).toBe(true);
  });

  it('a draw pinned to a domain fills only that domain, and an unknown one still answers POOL_EMPTY', async () => {
    harness = await createHarness({ clock: systemClock, store: ':memory:', domains: builtinDomains() });
    await harness.initialize();
    const task = await harness.generateTask({ domain: 'math' });
    expect(task.domain).toBe('math');
    expect((await harness.poolStats()).slices.every((s) => s.split === 'regression' || s.slice.startsWith('math/'))).toBe(true);
    await expect(harness.generateTask({ domain: 'nope' })).rejects.toMatchObject({ code: 'POOL_EMPTY' });
  });
});
