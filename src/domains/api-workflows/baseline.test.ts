import { describe, expect, it } from 'vitest';
import { instantiateTask } from '../../generation/index.js';
import { createRuleBasedAgent } from '../../agents/index.js';
import { runEpisode } from '../../runtime/index.js';
import { createApiBaselineAgent } from './baseline.js';
import { apiTrainingTemplates, apiWorkflows } from './index.js';

describe('api-workflows scripted baseline', () => {
  it('sees observations only (not privileged)', () => {
    expect(createApiBaselineAgent().privileged).not.toBe(true);
  });

  it('is what the built-in rule-based agent plays on this domain', async () => {
    const bot = createRuleBasedAgent({ domains: [apiWorkflows] });
    const task = instantiateTask(apiTrainingTemplates[0]!, { level: 1, seed: 5, index: 0 });
    expect((await runEpisode(apiWorkflows, task, bot, { seed: 1 })).outcome).toBe(1);
  });

  it('solves easy levels and gets worse as levels add faults, pages, events and ambiguity', async () => {
    const agent = createApiBaselineAgent();
    const success = async (level: number): Promise<number> => {
      let sum = 0;
      let n = 0;
      for (const template of apiTrainingTemplates) {
        for (let i = 0; i < 3; i++) {
          sum += (await runEpisode(apiWorkflows, instantiateTask(template, { level, seed: 40 + i, index: i }), agent, { seed: i })).outcome;
          n++;
        }
      }
      return sum / n;
    };
    const l1 = await success(1);
    const l5 = await success(5);
    expect(l1).toBeGreaterThanOrEqual(0.8);
    expect(l5).toBeLessThan(l1 - 0.4);
  }, 60_000);
});
