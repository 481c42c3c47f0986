import { describe, expect, it } from 'vitest';
import { digest } from '../../core/index.js';
import { createTemplateRegistry, generateBatch } from '../../generation/index.js';
import { createNonTrivialGate, createOracleGate } from '../../runtime/index.js';
import { library, libraryTemplates } from './index.js';

describe('library regression set', () => {
  it('regenerates byte-identically from its recipe and matches the locked digest', async () => {
    const set = library.regressionSet!;
    const registry = createTemplateRegistry(libraryTemplates);
    const hooks = { oracle: createOracleGate(library), nonTrivial: createNonTrivialGate(library) };
    const ids: string[] = [];
    const cells = new Set<string>();
    for (const request of set.batches) {
      expect(request.split).toBe('regression');
      const batch = await generateBatch(request, { registry, hooks });
      const again = await generateBatch(request, { registry, hooks });
      expect(again.manifest).toEqual(batch.manifest);
      for (const task of batch.tasks) {
        ids.push(task.id);
        cells.add(`${task.taskType}/${task.level}`);
      }
      expect(batch.log.filter((entry) => !entry.accepted)).toEqual([]);
    }
    expect(ids.length).toBe(40);
    // Both task types at each of their levels (borrow 1-4, return 1-3).
    expect(cells.size).toBe(7);
    // A changed digest means the regression set changed: bump the template versions and update it deliberately.
    expect(digest([...ids].sort())).toBe(set.digest);
  }, 60_000);
});
