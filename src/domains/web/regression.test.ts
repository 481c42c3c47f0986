import { describe, it } from 'vitest';
import { checkRegressionSet } from '../../../test/conformance/regression-set.js';
import { web } from './index.js';
describe('web regression set', () => {
  it('regenerates byte-identically from its recipe and matches the locked digest', async () => {
    // All eight task types (the held-out one included) at each of the five levels.
    await checkRegressionSet(web, { tasks: 120, types: 8, levels: 5, cells: 40 });
  }, 120_000);
});
