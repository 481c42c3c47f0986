/** The retail regression set: a recipe that regenerates it byte-identically, locked by the digest of its task ids. */
import type { BatchRequest } from '../../core/index.js';

/** The ten training templates, equally weighted. */
const TEMPLATES = [
  'retail/order-status@2',
  'retail/cancel@2',
  'retail/return-refund@2',
  'retail/exchange@2',
  'retail/address-change@2',
  'retail/payment-change@2',
  'retail/compound@2',
  'retail/conditional@2',
  'retail/out-of-scope@2',
  'retail/policy-trap@2',
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
    labels: { set: 'retail-regression', version: '2' },
  },
];

/** sha256 over the sorted ids of the accepted tasks (core's `digest` of the sorted id list). */
export const RETAIL_REGRESSION_DIGEST = '98d87a3f87d0f888e868b280d9c639fc0370ff701a0830f6bd5ed7d2978ea922';

export const RETAIL_REGRESSION_SET = { batches: RETAIL_REGRESSION_BATCHES, digest: RETAIL_REGRESSION_DIGEST };
