/** The check every shipped regression set runs: it regenerates byte-identically from its recipe and matches its locked digest. */
import { expect } from 'vitest';
import { digest, type Domain, type GateName, type Task } from '../../src/core/index.js';
import { createTemplateRegistry, generateBatch } from '../../src/generation/index.js';
import { createNonTrivialGate, createOracleGate } from '../../src/runtime/index.js';

export interface RegressionSetExpectations {
  /** Exact task count, or a lower bound (`{ atLeast }`) when near-duplicate drops make it vary by template version. */
  tasks: number | { atLeast: number };
  /** How many distinct task types the set covers. */
  types: number;
  /** How many distinct levels the set covers. */
  levels: number;
  /** How many distinct (task type, level) cells, when a set covers some types at fewer levels. */
  cells?: number;
  /** Gates whose rejections are expected while generating (e.g. `near_duplicate`); any other rejection fails. */
  allowedRejections?: readonly GateName[];
}

/**
 * Regenerates `domain.regressionSet` twice from its recipe with the simulator gates and checks the manifests
 * agree, no unexpected rejection happened, the coverage is what the domain promises and the digest over the
 * sorted task ids is the locked one. Returns the tasks for domain-specific checks.
 */
export async function checkRegressionSet(domain: Domain<any>, expected: RegressionSetExpectations): Promise<Task[]> {
  const set = domain.regressionSet;
  expect(set, `${domain.name} declares no regression set`).toBeDefined();
  const registry = createTemplateRegistry(domain.templates as any);
  const hooks = { oracle: createOracleGate(domain), nonTrivial: createNonTrivialGate(domain) };
  const allowed = new Set<string>(expected.allowedRejections ?? []);
  const tasks: Task[] = [];
  for (const request of set!.batches) {
    expect(request.split).toBe('regression');
    const batch = await generateBatch(request, { registry, hooks });
    const again = await generateBatch(request, { registry, hooks });
    expect(again.manifest).toEqual(batch.manifest);
    // A rejection outside the allowed gates means a template produced a bad task.
    expect(batch.log.filter((entry) => !entry.accepted && !allowed.has(entry.gate ?? ''))).toEqual([]);
    tasks.push(...batch.tasks);
  }
  if (typeof expected.tasks === 'number') expect(tasks.length).toBe(expected.tasks);
  else expect(tasks.length).toBeGreaterThanOrEqual(expected.tasks.atLeast);
  expect(new Set(tasks.map((task) => task.taskType)).size).toBe(expected.types);
  expect(new Set(tasks.map((task) => task.level)).size).toBe(expected.levels);
  if (expected.cells !== undefined) expect(new Set(tasks.map((task) => `${task.taskType}/${task.level}`)).size).toBe(expected.cells);
  // A changed digest means the regression set changed: bump the template versions and update it deliberately.
  expect(digest(tasks.map((task) => task.id).sort())).toBe(set!.digest);
  return tasks;
}
