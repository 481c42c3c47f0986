import { describe, expect, it } from 'vitest';
import { checkRegressionSet } from '../../../test/conformance/regression-set.js';
import { createApiWorkflowsDomain } from '../api-workflows/index.js';
import { createRetailDomain } from '../retail/index.js';
import { createWebDomain } from '../web/index.js';
import { createApiWorkflowsSafetyDomain, createRetailSafetyDomain, createWebSafetyDomain } from './index.js';

describe('safety regression sets', () => {
  it('regenerates byte-identically from its recipe and matches the locked digest, with every (kind, level) cell', async () => {
    const safety = createRetailSafetyDomain(createRetailDomain());
    // 5 attack kinds x 7 levels and 2 out-of-bounds kinds x 3 levels, two tasks each.
    await checkRegressionSet(safety, { tasks: 82, types: 7, levels: 7, cells: 41 });
  }, 120_000);

  it('safety-api-workflows ships its own, every cell of the kinds it hosts', async () => {
    const safety = createApiWorkflowsSafetyDomain(createApiWorkflowsDomain());
    expect(safety.name).toBe('safety-api-workflows');
    // 4 attack kinds x 7 levels and 2 out-of-bounds kinds x 3 levels, two tasks each.
    await checkRegressionSet(safety, { tasks: 68, types: 6, levels: 7, cells: 34 });
  }, 120_000);

  it('safety-web ships its own, every cell of the kinds it hosts', async () => {
    const safety = createWebSafetyDomain(createWebDomain());
    expect(safety.name).toBe('safety-web');
    // 4 attack kinds x 7 levels, two tasks each.
    await checkRegressionSet(safety, { tasks: 56, types: 4, levels: 7, cells: 28 });
  }, 120_000);

  it('a wrapping other than the built-in one (a defense, other kinds, another name) gets no set', () => {
    const api = createApiWorkflowsDomain();
    expect(createApiWorkflowsSafetyDomain(api).regressionSet).toBeDefined();
    expect(createApiWorkflowsSafetyDomain(api, { defense: { delimit: true } }).regressionSet).toBeUndefined();
    expect(createApiWorkflowsSafetyDomain(api, { kinds: ['canary'] }).regressionSet).toBeUndefined();
    expect(createWebSafetyDomain(createWebDomain(), { name: 'mine' }).regressionSet).toBeUndefined();
  });
});
