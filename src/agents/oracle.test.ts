import { describe, expect, it } from 'vitest';
import { runEpisode } from '../runtime/rollout.js';
import { createInventoryDomain } from '../runtime/testing/index.js';
import { createOracleAgent } from './oracle.js';
import { inventoryTasks } from './testing.js';

const inventory = createInventoryDomain();

describe('oracle agent', () => {
  it('scores 1 on every inventory template and level, faults included', async () => {
    const oracle = createOracleAgent();
    for (const task of inventoryTasks(4)) {
      for (const seed of [0, 1, 2]) {
        const outcome = await runEpisode(inventory, task, oracle, { seed });
        expect(outcome.outcome, `${task.template} level ${task.level} seed ${seed}`).toBe(1);
      }
    }
  });

  it('is privileged, and refuses to start without the task', () => {
    const oracle = createOracleAgent();
    expect(oracle.privileged).toBe(true);
    expect(() => oracle.begin({ episodeId: 'e', seed: 0, domain: 'inventory' })).toThrow(/needs the task/);
  });
});
