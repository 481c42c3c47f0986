// The generic learner on the example domain, with no library code: trained, it beats itself untrained and random.
import { describe, expect, it } from 'vitest';
import { createLearnerAgent, createRandomAgent } from '../../agents/index.js';
import { mean, runMany, tasksOf } from '../../agents/testing.js';
import { library, libraryTemplates } from './index.js';

describe('the built-in learner on the library domain', () => {
  it('after training on a fixed task set, succeeds on unseen tasks more than untrained and more than random', async () => {
    const train = tasksOf(libraryTemplates, 4, 21);
    const unseen = tasksOf(libraryTemplates, 4, 22);
    const random = mean(await runMany(library, unseen, createRandomAgent({ seed: 1 }), unseen.length, 100_000));
    const learner = createLearnerAgent({ seed: 1 });
    const untrained = mean(await runMany(library, unseen, learner, unseen.length, 100_000));
    learner.setTraining(true);
    await runMany(library, train, learner, 1500);
    learner.setTraining(false);
    const trained = mean(await runMany(library, unseen, learner, unseen.length, 100_000));
    expect(trained).toBeGreaterThan(untrained);
    expect(trained).toBeGreaterThan(random);
  }, 60_000);
});
