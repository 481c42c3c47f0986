/** The api-workflows regression set: a recipe that regenerates it byte-identically, locked by the digest of its task ids. */
import type { BatchRequest } from '../../core/index.js';

/** The seven training templates over all five levels (split `regression`, every gate on). */
export const API_REGRESSION_BATCHES: BatchRequest[] = [
  {
    templates: ['lookup', 'create-with-deps', 'bulk-update', 'conditional', 'reconcile', 'schedule', 'recovery'].map((name) => ({ id: `api-workflows/${name}@1` })),
    levels: [1, 2, 3, 4, 5],
    count: 70,
    seed: 20_261_201,
    split: 'regression',
    labels: { set: 'api-workflows-regression', version: '1' },
  },
];

/** sha256 over the sorted ids of the accepted tasks. */
export const API_REGRESSION_DIGEST = '653eaa4c1015ddeae3e10cb7ab10f208914ac19c7ffea75707f5a83756262027';

export const API_REGRESSION_SET = { batches: API_REGRESSION_BATCHES, digest: API_REGRESSION_DIGEST };
