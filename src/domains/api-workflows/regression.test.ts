import { describe, it } from 'vitest';
import { checkRegressionSet } from '../../../test/conformance/regression-set.js';
import { apiWorkflows } from './index.js';

describe('api-workflows regression set', () => {
  it('regenerates byte-identically from its recipe and matches the locked digest', async () => {
    // Only near-duplicates may be dropped: an oracle or non-triviality rejection would mean a bad task.
    await checkRegressionSet(apiWorkflows, { tasks: { atLeast: 65 }, types: 7, levels: 5, allowedRejections: ['near_duplicate'] });
  }, 120_000);
});
