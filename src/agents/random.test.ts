import { describe, expect, it } from 'vitest';
import { createEpisode } from '../runtime/index.js';
import { createInventoryDomain } from '../runtime/testing/index.js';
import type { Action } from '../core/index.js';
import { createRandomAgent } from './random.js';
import { inventoryTasks, mean, runMany } from './testing.js';

const inventory = createInventoryDomain();

async function actions(seed: number, agentSeed: number): Promise<Action[]> {
  const task = inventoryTasks(1)[0]!;
  const episode = createEpisode(inventory, task);
  let observation = episode.reset({ seed });
  const session = createRandomAgent({ seed: agentSeed }).begin({ episodeId: 'e', seed, domain: 'inventory' });
  const out: Action[] = [];
  for (;;) {
    const action = await session.act(observation);
    out.push(action);
    const result = episode.step(action);
    if (result.terminated || result.truncated) return out;
    observation = result.observation;
  }
}

describe('random agent', () => {
  it('mostly fails', async () => {
    const outcomes = await runMany(inventory, inventoryTasks(5), createRandomAgent({ seed: 1 }), 105);
    expect(mean(outcomes)).toBeLessThanOrEqual(0.1);
  });

  it('calls the tools of the reset observation with arguments that fit their schemas most of the time', async () => {
    const all = (await Promise.all([1, 2, 3, 4, 5].map((s) => actions(s, 0)))).flat();
    const calls = all.filter((a) => a.type === 'tool');
    expect(calls.length).toBeGreaterThan(5);
    const names = new Set(['list_items', 'get_stock', 'add_stock', 'remove_stock', 'delete_item']);
    for (const call of calls) expect(names.has(call.tool)).toBe(true);
    expect(all.some((a) => a.type === 'message')).toBe(true);
  });

  it('is deterministic given its seed and the episode seed', async () => {
    expect(await actions(7, 3)).toEqual(await actions(7, 3));
    expect(await actions(7, 3)).not.toEqual(await actions(7, 4));
  });
});
