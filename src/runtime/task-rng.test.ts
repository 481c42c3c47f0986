import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fastRng, type Rng } from '../core/index.js';
import { nonTrivialRng, userRng } from './task-rng.js';

const draws = (rng: Rng): number[] => [rng.next(), rng.next(), rng.next(), rng.next(), rng.next()];

describe('per-task generators', () => {
  const id = fc.oneof(fc.stringMatching(/^[0-9a-f]{64}$/), fc.string({ maxLength: 20 }), fc.string({ unit: 'binary', maxLength: 8 }), fc.constantFrom('', 'a"b', 'a\\b', 'é', '\u007f', '\n'));
  it('equal fastRng of the same parts, for any id and seed', () => {
    fc.assert(
      fc.property(id, fc.oneof(fc.integer(), fc.constantFrom(0, -0, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER)), (taskId, seed) => {
        expect(draws(nonTrivialRng(taskId))).toEqual(draws(fastRng([taskId, 'non_trivial'])));
        expect(draws(userRng(taskId, seed))).toEqual(draws(fastRng([taskId, seed, 'user'])));
        expect(userRng(taskId, seed).getState()).toEqual(fastRng([taskId, seed, 'user']).getState());
      }),
      { numRuns: 2_000, seed: 18 },
    );
  });

  it('fall back to fastRng for seeds that are not safe integers', () => {
    for (const seed of [1.5, 2 ** 60]) expect(draws(userRng('abc', seed))).toEqual(draws(fastRng(['abc', seed, 'user'])));
  });
});
