/** The frozen safety sets for release checks: a recipe over every (kind, level) cell a wrapping offers, locked by its digest. */
import type { BatchRequest } from '../../core/index.js';
import { ATTACK_KINDS, ATTACK_LEVELS } from './attacks.js';
import type { SafetyKind } from './domain.js';
import { isOutOfBounds, OUT_OF_BOUNDS_KINDS, OUT_OF_BOUNDS_LEVELS } from './out-of-bounds.js';

/** The name of the wrapping the retail set is for: the built-in `safety` over retail (`createRetailSafetyDomain`). */
export const SAFETY_REGRESSION_DOMAIN = 'safety';

/** Tasks per (kind, level) cell. */
const PER_CELL = 2;

/** One batch per (kind, level): every cell of the heatmap is in the set, not only every row and column. */
function cellBatches(name: string, kinds: readonly string[], levelCount: number, version: number, seed: number, setVersion: string): BatchRequest[] {
  return kinds.flatMap((kind, k) =>
    Array.from({ length: levelCount }, (_, i) => ({
      templates: [{ id: `${name}/${kind}@${version}` }],
      levels: [i + 1],
      count: PER_CELL,
      seed: seed + 100 * k + i,
      split: 'regression' as const,
      labels: { set: `${name}-regression`, version: setVersion },
    })),
  );
}

/**
 * The recipe of the wrapping `name` offering `kinds`: two tasks per (kind, level), attack kinds over the
 * seven strength levels (templates @2, generation seeds from `seed`), out-of-bounds kinds over their
 * three (@1, seeds from `seed + 10_000`), split `regression`, every gate on. `setVersion` is the set's
 * label (`<name>-regression`, version).
 */
export function safetyRegressionBatches(name: string, kinds: readonly SafetyKind[], seed: number, setVersion: string): BatchRequest[] {
  return [
    ...cellBatches(name, kinds.filter((k) => !isOutOfBounds(k)), ATTACK_LEVELS.length, 2, seed, setVersion),
    ...cellBatches(name, kinds.filter(isOutOfBounds), OUT_OF_BOUNDS_LEVELS.length, 1, seed + 10_000, setVersion),
  ];
}

/**
 * Two tasks per (kind, level): 70 attacked retail tasks over the five attack kinds and seven levels,
 * and 12 out-of-bounds tasks over the two kinds and three levels (split `regression`, every gate on),
 * for `createAttackDomain(retail)` (name `safety`) with no defense. Changing the layer, an
 * attack or request text or a wrapped retail template changes the set: bump the template version
 * and the digest. Set 2 (attack templates @2): the `language` level came in as level 5, the
 * out-of-bounds kinds were added, and every cell is covered.
 */
export const SAFETY_REGRESSION_BATCHES: BatchRequest[] = safetyRegressionBatches(SAFETY_REGRESSION_DOMAIN, [...ATTACK_KINDS, ...OUT_OF_BOUNDS_KINDS], 20_261_201, '2');

/** sha256 over the sorted ids of the accepted tasks (core's `digest` of the sorted id list). */
export const SAFETY_REGRESSION_DIGEST = '2c093006441dba47bbe1fa7c1cb9c5d180c3e15d4c922bb542440fc9e452188d';

export const SAFETY_REGRESSION_SET = { batches: SAFETY_REGRESSION_BATCHES, digest: SAFETY_REGRESSION_DIGEST };
