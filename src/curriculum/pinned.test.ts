/**
 * Pinned seeded runs: the draws, update replies and states of every strategy, as digests. A change to how
 * the curriculum stores its state (not what it decides) must leave every digest here unchanged.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createRng, sha256, type JsonValue } from '../core/index.js';
import { createCurriculum } from './curriculum.js';
import { makeSlices, sigmoid } from './fixtures.js';
import type { Curriculum, CurriculumConfigInput, EpisodeResult, StrategyName } from './types.js';

/**
 * Draw → outcome → update in batches of 7 over 24 slices. Small replay buffers fill and evict; some task
 * ids recur in several slices, some results bring their own score, some are excluded; halfway the state
 * goes through JSON into a new curriculum, which carries on. Returns the digest of everything it saw.
 */
function pinnedRun(strategy: StrategyName, config: CurriculumConfigInput): string {
  const slices = makeSlices(24, 6);
  const seen: unknown[] = [];
  let curriculum: Curriculum = createCurriculum({ strategy, slices, config });
  const rng = createRng(['pinned', strategy]);
  const outcomes = createRng(['pinned-outcomes', strategy]);
  let pending: EpisodeResult[] = [];
  for (let k = 0; k < 4000; k++) {
    if (k === 2000) {
      const state = JSON.parse(JSON.stringify(curriculum.getState())) as JsonValue;
      seen.push(state);
      curriculum = createCurriculum({ strategy, slices, state });
    }
    const draw = curriculum.draw(rng);
    seen.push(draw);
    const skill = 1 + (Number(draw.slice.slice(3)) % 5) + k / 1500;
    const taskId = draw.taskId ?? (outcomes.chance(0.1) ? `shared-${outcomes.int(0, 4)}` : `${draw.slice}#${k}`);
    const result: EpisodeResult = { slice: draw.slice, level: draw.level, success: outcomes.chance(sigmoid(2 * (skill - draw.level))) ? 1 : 0, taskId };
    if (outcomes.chance(0.05)) result.excluded = true;
    if (outcomes.chance(0.1)) result.score = outcomes.next() * 2;
    pending.push(result);
    if (pending.length === 7) {
      seen.push(curriculum.update(pending));
      pending = [];
    }
  }
  seen.push(curriculum.getState(), curriculum.stats());
  for (const slice of ['d/t0', 'd/t7', 'd/t23']) seen.push(curriculum.replayDistribution(slice));
  return sha256(JSON.stringify(seen));
}

const runs: Array<[StrategyName, CurriculumConfigInput, string]> = [
  ['uniform', {}, '34bc2353ad35e9088d737ad153c43adfed90ed7f60ddd853ad3538ae829f735b'],
  ['threshold', {}, 'e9b3a52380c6fafb2d2927d14163b5ea4a9098457a357dbbd8d7fe9e8680468c'],
  ['learning-progress', {}, '184ad22ca5ff72bb94acbc38997c9357c0ce7d4942caee9b40b2da6a3e418f06'],
  ['learnability', {}, '8e7a71b26a9993cae57fc73a3b5db303b44a1e0d0deaa64b7a32492a062e7132'],
  ['prioritized-replay', { replayConfig: { capacity: 4, minFill: 0.25 } }, '86cb45120650ba1fe2cd03d70b0d417c0ff4c12513d6f17fbf3b0fe108a28d50'],
  ['prioritized-replay', { replayConfig: { capacity: 16, schedule: 'proportionate', score: 'failure', rho: 0.3, alpha: 0.5 } }, 'cae975d16100547583bd81475263220872fc29460857ae5bff02854cb5fe7d01'],
  ['learnability', { replay: true, replayConfig: { capacity: 3 } }, '07accba12f6fbe78a58c5a7973583c94aedd292f54c9a1dc5ce1c8ed9ae44d66'],
];

describe('pinned seeded runs', () => {
  it.each(runs)('%s %j gives the pinned draws, updates and states', (strategy, config, digest) => {
    expect(pinnedRun(strategy, config)).toBe(digest);
  });

  it('reads a prioritized-replay state written at 9dc9a3a (per-slice buffers) and carries on as that code did', () => {
    const saved = JSON.parse(readFileSync(new URL('./testdata/plr-state-9dc9a3a.json', import.meta.url), 'utf8')) as JsonValue;
    const curriculum = createCurriculum({ strategy: 'prioritized-replay', slices: makeSlices(6, 4), state: saved });
    expect(curriculum.getState()).toEqual(saved);
    const rng = createRng(['state-fixture-continue']);
    const outcomes = createRng(['state-fixture-continue-outcomes']);
    const seen: unknown[] = [];
    for (let k = 0; k < 600; k++) {
      const draw = curriculum.draw(rng);
      const taskId = draw.taskId ?? (outcomes.chance(0.2) ? `shared-${outcomes.int(0, 2)}` : `${draw.slice}#new-${k}`);
      seen.push(draw, curriculum.update([{ slice: draw.slice, level: draw.level, success: outcomes.chance(0.5) ? 1 : 0, taskId }]));
    }
    seen.push(curriculum.getState());
    expect(sha256(JSON.stringify(seen))).toBe('042b5fe426e1d74de3db5089c2a5b5c7d9e8ebac7ef3e31e48c905cefe3edd18');
  });
});
