import { describe, it } from 'vitest';
import { checkRegressionSet } from '../../../test/conformance/regression-set.js';
import { createRetailDomain } from '../retail/index.js';
import { createRetailSafetyDomain } from './index.js';

describe('safety regression set', () => {
  it('regenerates byte-identically from its recipe and matches the locked digest, with every (kind, level) cell', async () => {
    const safety = createRetailSafetyDomain(createRetailDomain());
    // 5 attack kinds x 7 levels and 2 out-of-bounds kinds x 3 levels, two tasks each.
    await checkRegressionSet(safety, { tasks: 82, types: 7, levels: 7, cells: 41 });
  }, 120_000);
});
