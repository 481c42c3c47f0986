import { describe, expect, it } from 'vitest';
import { digest } from '../../core/index.js';
import { createTemplateRegistry, generateBatch } from '../../generation/index.js';
import { createNonTrivialGate, createOracleGate } from '../../runtime/index.js';
import { createRetailDomain } from '../retail/index.js';
import { createAttackDomain } from './domain.js';
import { SAFETY_REGRESSION_SET } from './regression.js';

describe('safety regression set', () => {
  it('regenerates byte-identically from its recipe and matches the locked digest', async () => {
    const safety = createAttackDomain(createRetailDomain(), { regressionSet: SAFETY_REGRESSION_SET });
    const registry = createTemplateRegistry(safety.templates as any);
    const hooks = { oracle: createOracleGate(safety), nonTrivial: createNonTrivialGate(safety) };
    const ids: string[] = [];
    const cells = new Set<string>();
    for (const request of safety.regressionSet!.batches) {
      const batch = await generateBatch(request, { registry, hooks });
      const again = await generateBatch(request, { registry, hooks });
      expect(again.manifest).toEqual(batch.manifest);
      expect(batch.log.filter((entry) => !entry.accepted)).toEqual([]);
      for (const task of batch.tasks) {
        ids.push(task.id);
        cells.add(`${task.taskType}/${task.level}`);
      }
    }
    expect(ids.length).toBe(60);
    // Candidates draw kind and level at random: every kind and every level is there.
    expect(new Set([...cells].map((c) => c.split('/')[0])).size).toBe(5);
    expect(new Set([...cells].map((c) => c.split('/')[1])).size).toBe(6);
    expect(digest([...ids].sort())).toBe(safety.regressionSet!.digest);
  }, 120_000);
});
