import { describe, expect, it } from 'vitest';
import { digest } from '../../core/index.js';
import { createTemplateRegistry, generateBatch } from '../../generation/index.js';
import { createNonTrivialGate, createOracleGate } from '../../runtime/index.js';
import { apiTemplates, apiWorkflows } from './index.js';

describe('api-workflows regression set', () => {
  it('regenerates byte-identically from its recipe and matches the locked digest', async () => {
    const set = apiWorkflows.regressionSet!;
    const registry = createTemplateRegistry(apiTemplates);
    const hooks = { oracle: createOracleGate(apiWorkflows), nonTrivial: createNonTrivialGate(apiWorkflows) };
    const ids: string[] = [];
    const types = new Set<string>();
    const levels = new Set<number>();
    for (const request of set.batches) {
      expect(request.split).toBe('regression');
      const batch = await generateBatch(request, { registry, hooks });
      const again = await generateBatch(request, { registry, hooks });
      expect(again.manifest).toEqual(batch.manifest);
      for (const task of batch.tasks) {
        ids.push(task.id);
        types.add(task.taskType);
        levels.add(task.level);
      }
      // Only near-duplicates may be dropped: an oracle or non-triviality rejection would mean a template produced a bad task.
      expect(batch.log.filter((entry) => !entry.accepted && entry.gate !== 'near_duplicate')).toEqual([]);
    }
    expect(ids.length).toBeGreaterThanOrEqual(65);
    expect(types.size).toBe(7);
    expect([...levels].sort()).toEqual([1, 2, 3, 4, 5]);
    // A changed digest means the regression set changed: bump the template versions and update it deliberately.
    expect(digest([...ids].sort())).toBe(set.digest);
  }, 120_000);
});
