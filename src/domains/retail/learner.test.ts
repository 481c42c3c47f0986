// The generic learner on retail cancellations, with no retail code: trained, it beats itself untrained and random.
import { describe, expect, it } from 'vitest';
import { createLearnerAgent, createRandomAgent } from '../../agents/index.js';
import { mean, runMany, tasksOf, trainingTemplates } from '../../agents/testing.js';
import { createRetailDomain } from './index.js';

const retail = createRetailDomain();

describe('the built-in learner on retail', () => {
  it('after training on level-1 cancellations, succeeds on unseen ones more than untrained and more than random', async () => {
    const templates = trainingTemplates(retail, ['cancel']);
    const train = tasksOf(templates, 8, 21, [1]);
    const unseen = tasksOf(templates, 8, 22, [1]);
    const random = mean(await runMany(retail, unseen, createRandomAgent({ seed: 1 }), unseen.length, 100_000));
    const learner = createLearnerAgent({ seed: 1 });
    const untrained = mean(await runMany(retail, unseen, learner, unseen.length, 100_000));
    learner.setTraining(true);
    await runMany(retail, train, learner, 800);
    learner.setTraining(false);
    const trained = mean(await runMany(retail, unseen, learner, unseen.length, 100_000));
    expect(trained).toBeGreaterThan(untrained + 0.3);
    expect(trained).toBeGreaterThan(random + 0.3);
  }, 120_000);
});
