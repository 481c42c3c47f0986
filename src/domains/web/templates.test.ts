// Perturbations come from the task seed, are named in the tags, and every one of them is reachable from some level.
import { describe, expect, it } from 'vitest';
import { instantiateTask } from '../../generation/index.js';
import { PERTURBATIONS, webTemplates, type WebParams } from './index.js';

describe('web templates', () => {
  it('name exactly the drawn perturbations in the tags, the same for the same seed, and cover all of them', () => {
    const seen = new Set<string>();
    for (const t of webTemplates) {
      for (let level = 1; level <= 5; level++) {
        for (const seed of [1, 2, 3]) {
          const task = instantiateTask(t, { level, seed, index: 0 });
          const drawn = (task.params as unknown as WebParams).world.config.perturbations;
          expect(task.spec.tags!.filter((x) => x.startsWith('perturbation:'))).toEqual(drawn.map((p) => `perturbation:${p}`));
          if (level === 1) expect(drawn).toEqual(t.name === 'fix-validation' ? ['validation'] : []);
          for (const p of drawn) seen.add(p);
          if (seed === 1) expect(instantiateTask(t, { level, seed, index: 0 }).id).toBe(task.id);
        }
      }
    }
    expect([...seen].sort()).toEqual([...PERTURBATIONS].sort());
  }, 120_000);
});
