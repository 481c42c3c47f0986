/** Run ids depend on the store, never the clock (issue 13 item 10). */
import { describe, expect, it } from 'vitest';
import { createOracleAgent } from '../agents/oracle.js';
import { math } from '../domains/math/index.js';
import { createHarness } from './harness.js';

describe('run ids', () => {
  it('are a per-store counter: the same under any clock, unique, in creation order', async () => {
    const ids: string[][] = [];
    for (const clock of [() => '2026-01-01T00:00:00.000Z', () => '2031-06-15T12:00:00.000Z']) {
      const h = await createHarness({ store: ':memory:', domains: [math], clock });
      await h.initialize();
      await h.generate({ templates: [{ id: 'math/chain-sum@1' }], levels: [1], count: 3, seed: 0, split: 'dynamic' });
      const agent = createOracleAgent();
      const [a, b] = await Promise.all([h.evaluate({ agent, split: 'dynamic' }), h.evaluate({ agent, split: 'dynamic' })]);
      const c = await h.evaluate({ agent, split: 'dynamic' });
      ids.push([a.runId, b.runId, c.runId]);
      await h.close();
    }
    expect(new Set(ids[0]).size).toBe(3);
    expect([...ids[0]!].sort()).toEqual(['eval-1', 'eval-2', 'eval-3']);
    expect(ids[0]![2]).toBe('eval-3');
    expect([...ids[1]!].sort()).toEqual([...ids[0]!].sort());
  });
});
