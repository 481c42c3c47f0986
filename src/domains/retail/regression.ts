/** The retail regression set: a recipe that regenerates it byte-identically, locked by the digest of its task ids. */
import type { BatchRequest } from '../../core/index.js';

/** The ten training templates, equally weighted. */
const TEMPLATES = [
  'retail/order-status@1',
  'retail/cancel@1',
  'retail/return-refund@1',
  'retail/exchange@1',
  'retail/address-change@1',
  'retail/payment-change@1',
  'retail/compound@1',
  'retail/conditional@1',
  'retail/out-of-scope@1',
  'retail/policy-trap@1',
];

/**
 * About 100 tasks over all ten task types and all five levels (split `regression`, every gate on).
 * Changing a template so that this set changes means bumping its version and updating `digest`.
 */
export const RETAIL_REGRESSION_BATCHES: BatchRequest[] = [
  {
    templates: TEMPLATES.map((id) => ({ id })),
    levels: [1, 2, 3, 4, 5],
    count: 100,
    seed: 20_240_601,
    split: 'regression',
    labels: { set: 'retail-regression', version: '1' },
  },
];

/** sha256 over the sorted ids of the accepted tasks (core's `digest` of the sorted id list). */
export const RETAIL_REGRESSION_DIGEST = '9ba3f2b4c240eee30470ef1014211028e6305b4cec6c9c298ee611523f0116c1';

export const RETAIL_REGRESSION_SET = { batches: RETAIL_REGRESSION_BATCHES, digest: RETAIL_REGRESSION_DIGEST };
