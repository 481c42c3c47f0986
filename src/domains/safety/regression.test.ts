import { describe, it } from 'vitest';
import { checkRegressionSet } from '../../../test/conformance/regression-set.js';
import { createRetailDomain } from '../retail/index.js';
import { createAttackDomain } from './domain.js';
import { SAFETY_REGRESSION_SET } from './regression.js';

describe('safety regression set', () => {
  it('regenerates byte-identically from its recipe and matches the locked digest', async () => {
    const safety = createAttackDomain(createRetailDomain(), { regressionSet: SAFETY_REGRESSION_SET });
    // Candidates draw kind and level at random: every kind and every level is there.
    await checkRegressionSet(safety, { tasks: 60, types: 5, levels: 6 });
  }, 120_000);
});
