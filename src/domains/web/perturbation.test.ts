// The perturbation draws: seeded streams that must stay the ones every pinned label, order and regression digest was made with.
import { describe, expect, it } from 'vitest';
import { createRng } from '../../core/index.js';
import { perturbationRng, plainConfig } from './perturbation.js';

describe('perturbation draws', () => {
  it("draw from createRng(['web-perturbation', seed, label])'s stream, whatever the seed and label", () => {
    for (const seed of [0, 1, 7, 123_456_789, 2 ** 31 - 1]) {
      for (const label of ['label:Save', 'order:product.fields', 'label:Email', "label:O'Brien \\ é ✓", '']) {
        const fast = perturbationRng({ ...plainConfig(), seed }, label);
        const plain = createRng(['web-perturbation', seed, label]);
        expect([fast.int(0, 1e9), fast.next(), fast.int(0, 3)]).toEqual([plain.int(0, 1e9), plain.next(), plain.int(0, 3)]);
      }
    }
  });
});
