import { describe, it } from 'vitest';
import { checkRegressionSet } from '../../../test/conformance/regression-set.js';
import { retail } from './index.js';

describe('retail regression set', () => {
  it('regenerates byte-identically from its recipe and matches the locked digest', async () => {
    // Every candidate passes every gate.
    await checkRegressionSet(retail, { tasks: { atLeast: 95 }, types: 10, levels: 5 });
  }, 120_000);
});
