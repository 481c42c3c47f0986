/** The frozen attack set for release checks: a recipe over every attack kind and level, locked by its digest. */
import type { BatchRequest } from '../../core/index.js';
import { ATTACK_KINDS } from './attacks.js';

/**
 * 60 attacked retail tasks over the five kinds and six levels (split `regression`, every gate on),
 * for the default wrapping (`createAttackDomain(retail)`, no defense). Changing the layer, an attack
 * text or a wrapped retail template changes the set: bump the template version and the digest.
 */
export const SAFETY_REGRESSION_BATCHES: BatchRequest[] = [
  {
    templates: ATTACK_KINDS.map((kind) => ({ id: `safety/${kind}@1` })),
    levels: [1, 2, 3, 4, 5, 6],
    count: 60,
    seed: 20_261_201,
    split: 'regression',
    labels: { set: 'safety-regression', version: '1' },
  },
];

/** sha256 over the sorted ids of the accepted tasks (core's `digest` of the sorted id list). */
export const SAFETY_REGRESSION_DIGEST = '00f88305078ed654b221276b10fddc9604889b93efa72b07879c205449508816';

export const SAFETY_REGRESSION_SET = { batches: SAFETY_REGRESSION_BATCHES, digest: SAFETY_REGRESSION_DIGEST };
