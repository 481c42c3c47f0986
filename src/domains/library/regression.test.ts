import { describe, it } from 'vitest';
import { checkRegressionSet } from '../../../test/conformance/regression-set.js';
import { library } from './index.js';

describe('library regression set', () => {
  it('regenerates byte-identically from its recipe and matches the locked digest', async () => {
    // Both task types at each of their levels (borrow 1-4, return 1-3).
    await checkRegressionSet(library, { tasks: 40, types: 2, levels: 4, cells: 7 });
  }, 60_000);
});
