import { beforeAll, describe, expect, it } from 'vitest';
import type { Task } from '../core/index.js';
import { createRetailDomain } from '../domains/retail/index.js';
import { runEpisode } from '../harness/episodes.js';
import { createLearnerAgent } from './learner.js';
import { createOracleAgent } from './oracle.js';
import { createRandomAgent } from './random.js';
import { createRuleBasedAgent } from './rule-based.js';
import { mean, runMany, tasksOf, trainingTemplates } from './testing.js';

const retail = createRetailDomain();
const templates = trainingTemplates(retail);
let sample: Task[];

async function success(agent: ReturnType<typeof createOracleAgent>, tasks: readonly Task[]): Promise<number> {
  return mean(await Promise.all(tasks.map(async (t, i) => (await runEpisode(retail, t, agent, { seed: i })).outcome)));
}

beforeAll(() => {
  // Two tasks per training template and level: 100 tasks over the 10 task types.
  sample = tasksOf(templates, 2, 11);
}, 60_000);

describe('built-in agents on retail', () => {
  it('has the ten training task types', () => {
    expect(new Set(templates.map((t) => t.taskType)).size).toBe(10);
  });

  it('oracle scores 1 on every retail task type and level', async () => {
    const oracle = createOracleAgent();
    for (const [i, task] of sample.entries()) {
      const o = await runEpisode(retail, task, oracle, { seed: i });
      expect(o.outcome, `${task.template} level ${task.level}`).toBe(1);
    }
  });

  it('random fails', async () => {
    expect(await success(createRandomAgent({ seed: 3 }), sample)).toBeLessThanOrEqual(0.02);
  });

  it('rule-based solves plain single requests, and its success falls as the level rises', async () => {
    const bot = createRuleBasedAgent();
    const byLevel = [1, 2, 3, 4, 5].map((level) => sample.filter((t) => t.level === level));
    const rates = [];
    for (const tasks of byLevel) rates.push(await success(bot, tasks));
    const single = sample.filter((t) => t.level === 1 && ['order_status', 'cancel', 'return_refund', 'exchange', 'payment_change'].includes(t.taskType));
    expect(await success(bot, single)).toBe(1);
    expect(rates[0]!).toBeGreaterThan(rates[4]!);
    expect(rates[3]!).toBeGreaterThan(rates[4]!);
    expect(rates[0]!).toBeGreaterThan(rates[3]!);
  });

  it('rule-based handles one request per conversation and misses conditions', async () => {
    const bot = createRuleBasedAgent();
    const compound = sample.filter((t) => t.taskType === 'compound' || t.taskType === 'conditional');
    expect(await success(bot, compound)).toBe(0);
    // The same understanding, handling every request and checking first: the macros can solve these tasks.
    const careful = createRuleBasedAgent({ handleAll: true, maxAsks: 3 });
    expect(await success(careful, compound.filter((t) => t.level <= 2))).toBe(1);
  });

  it('learner: success rises with training on a fixed small task set (seeded, deterministic)', async () => {
    const tasks = sample.filter((t) => t.level <= 2);
    const curve = async () => {
      const learner = createLearnerAgent({ seed: 5, training: true });
      const outcomes = await runMany(retail, tasks, learner, 800);
      return { outcomes, state: learner.getState() };
    };
    const a = await curve();
    const first = mean(a.outcomes.slice(0, 100));
    const last = mean(a.outcomes.slice(-100));
    expect(last - first).toBeGreaterThan(0.3);
    expect(last).toBeGreaterThan(0.8);
    const b = await curve();
    expect(b.outcomes).toEqual(a.outcomes);
    expect(b.state).toEqual(a.state);
  });
});
