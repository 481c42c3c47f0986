import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { createRng, isEnvHarnessError, type JsonValue } from '../core/index.js';
import { createCurriculum, effectiveFloor } from './curriculum.js';
import { makeSlices, recentSuccess, simulate, testRng } from './fixtures.js';
import { slicesFromTemplates } from './slices.js';
import { STRATEGY_NAMES, type Curriculum, type CurriculumConfigInput, type Draw, type EpisodeResult, type StrategyName } from './types.js';

/** Share of a slice's non-rehearsal draws at each level, over draws [from, to). */
function levelShares(draws: Draw[], slice: string, from: number): Record<number, number> {
  const counts: Record<number, number> = {};
  let n = 0;
  for (const d of draws.slice(from)) {
    if (d.slice !== slice || d.rehearsal || d.replay) continue;
    counts[d.level] = (counts[d.level] ?? 0) + 1;
    n++;
  }
  for (const level of Object.keys(counts)) counts[Number(level)]! /= n;
  return counts;
}

function errorCode(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return isEnvHarnessError(error) ? error.code : 'not an EnvHarnessError';
  }
  return undefined;
}

describe('threshold levels', () => {
  it('settles each slice at the level whose success is inside the 0.3–0.7 band', () => {
    // Success at level L is sigmoid(2(skill − L)): t0 is in band only at level 3 (0.60), t1 only at 5 (0.65).
    const curriculum = createCurriculum({ strategy: 'threshold', slices: makeSlices(2, 8) });
    const sim = simulate(curriculum, { episodes: 6000, seed: 'settle', skill: (s) => (s === 'd/t0' ? 3.2 : 5.3) });
    expect(levelShares(sim.draws, 'd/t0', 3000)[3]).toBeGreaterThan(0.9);
    expect(levelShares(sim.draws, 'd/t1', 3000)[5]).toBeGreaterThan(0.6);
    for (const slice of ['d/t0', 'd/t1']) {
      const success = recentSuccess(sim, slice, 1500, (d) => !d.rehearsal);
      expect(success).toBeGreaterThan(0.3);
      expect(success).toBeLessThan(0.7);
    }
  });

  it('moves one level at a time, only with minSamples results, and restarts the window after a move', () => {
    const curriculum = createCurriculum({ strategy: 'threshold', slices: makeSlices(1, 5), config: { threshold: { minSamples: 10 } } });
    const win = (n: number): EpisodeResult[] => Array.from({ length: n }, () => ({ slice: 'd/t0', level: curriculum.levels()['d/t0']!, success: 1 }));
    expect(curriculum.update(win(9)).moves).toEqual([]);
    const update = curriculum.update(win(1));
    expect(update.moves).toEqual([{ slice: 'd/t0', from: 1, to: 2, reason: 'above-band', successRate: 1, n: 10 }]);
    expect(curriculum.stats()['d/t0']!.window.n).toBe(0);
    expect(curriculum.update(win(9)).moves).toEqual([]);
    const fail = Array.from({ length: 10 }, () => ({ slice: 'd/t0', level: 3, success: 0 }));
    expect(curriculum.update(fail).moves).toEqual([]); // level-3 results do not count at level 2
  });

  it('needs `patience` consecutive evaluations beyond the band', () => {
    const curriculum = createCurriculum({
      strategy: 'threshold',
      slices: makeSlices(1, 5),
      config: { threshold: { minSamples: 4, patience: 3 } },
    });
    const one = (success: number): EpisodeResult => ({ slice: 'd/t0', level: 1, success });
    curriculum.update([one(1), one(1), one(1), one(1), one(1)]);
    expect(curriculum.levels()['d/t0']).toBe(1);
    expect(curriculum.update([one(1)]).moves).toHaveLength(1);
  });

  it('draws a share of lower levels (rehearsal) and none at the lowest level', () => {
    const curriculum = createCurriculum({ strategy: 'threshold', slices: makeSlices(1, 5), config: { initialLevel: 4 } });
    const rng = testRng('rehearsal');
    const draws = Array.from({ length: 20_000 }, () => curriculum.draw(rng));
    const rehearsal = draws.filter((d) => d.rehearsal);
    expect(rehearsal.length / draws.length).toBeCloseTo(0.2, 1);
    expect(new Set(rehearsal.map((d) => d.level))).toEqual(new Set([1, 2, 3]));
    expect(draws.filter((d) => !d.rehearsal).every((d) => d.level === 4)).toBe(true);
    const low = createCurriculum({ strategy: 'threshold', slices: makeSlices(1, 5) });
    expect(Array.from({ length: 1000 }, () => low.draw(rng)).some((d) => d.rehearsal)).toBe(false);
  });
});

describe('learnability', () => {
  it('steers success toward 0.5 with the AdaRFT target', () => {
    const curriculum = createCurriculum({ strategy: 'learnability', slices: makeSlices(2, 10) });
    const sim = simulate(curriculum, { episodes: 6000, seed: 'steer', steepness: 1, skill: (s) => (s === 'd/t0' ? 5.5 : 2.3) });
    for (const slice of ['d/t0', 'd/t1']) {
      const success = recentSuccess(sim, slice, 1500);
      expect(success).toBeGreaterThan(0.4);
      expect(success).toBeLessThan(0.6);
    }
    const stats = curriculum.stats();
    expect(Math.abs(stats['d/t0']!.target! - 5.5)).toBeLessThan(1.5);
    expect(Math.abs(stats['d/t1']!.target! - 2.3)).toBeLessThan(1.5);
  });

  it('weights a slice near p = 0.5 above a mastered one', () => {
    const curriculum = createCurriculum({ strategy: 'learnability', slices: makeSlices(2, 3) });
    // t0 is mastered even at its top level; t1 can reach p ≈ 0.5 at level 2.
    simulate(curriculum, { episodes: 4000, seed: 'learnable', skill: (s) => (s === 'd/t0' ? 20 : 2) });
    const w = curriculum.weights();
    expect(curriculum.levels()['d/t0']).toBe(3);
    expect(w['d/t1']!).toBeGreaterThan(3 * w['d/t0']!);
  });
});

describe('learning-progress weights', () => {
  it('shift weight to the slice that is improving', () => {
    const E = 3000;
    const curriculum = createCurriculum({
      strategy: 'learning-progress',
      slices: makeSlices(3, 5),
      config: { levels: 'fixed', initialLevel: 3 },
    });
    const sum = [0, 0, 0];
    let n = 0;
    simulate(curriculum, {
      episodes: E,
      seed: 'progress',
      // t0 improves from hopeless to mastered; t1 is mastered; t2 is hopeless.
      skill: (s, e) => (s === 'd/t0' ? (6 * e) / E : s === 'd/t1' ? 6 : 0),
      onUpdate: (_u, e) => {
        if (e < 0.2 * E || e > 0.8 * E) return;
        const w = curriculum.weights();
        sum[0]! += w['d/t0']!;
        sum[1]! += w['d/t1']!;
        sum[2]! += w['d/t2']!;
        n++;
      },
    });
    const [improving, mastered, hopeless] = sum.map((s) => s / n) as [number, number, number];
    expect(improving).toBeGreaterThan(2 * mastered);
    expect(improving).toBeGreaterThan(2 * hopeless);
  });

  it('treats slices without enough results as most promising (bootstrap)', () => {
    const curriculum = createCurriculum({ strategy: 'learning-progress', slices: makeSlices(2, 3), config: { levels: 'fixed' } });
    curriculum.update(Array.from({ length: 40 }, () => ({ slice: 'd/t0', level: 1, success: 1 })));
    expect(curriculum.stats()['d/t0']!.progress).toBe(0);
    expect(curriculum.stats()['d/t1']!.progress).toBeNull();
    expect(curriculum.weights()['d/t1']!).toBeGreaterThan(0.8);
  });
});

const strategies: readonly StrategyName[] = STRATEGY_NAMES;

describe('weights', () => {
  test.prop(
    [
      fc.constantFrom(...strategies),
      fc.constantFrom(3, 10, 80),
      fc.constantFrom(0.02, 0.3),
      fc.constantFrom(0.05, 1, 20),
      fc.integer(),
    ],
    { numRuns: 40 },
  )('never put a slice below the floor, and sum to 1', (strategy, slices, floor, temperature, seed) => {
    const curriculum = createCurriculum({ strategy, slices: makeSlices(slices, 6), config: { floor, temperature } });
    const least = effectiveFloor(floor, slices);
    const outcomes = createRng(['floor', seed]);
    const skills = Array.from({ length: slices }, () => outcomes.next() * 8 - 1);
    simulate(curriculum, {
      episodes: 800,
      batch: 16,
      seed,
      skill: (s, e) => skills[Number(s.slice(3))]! + (e / 800) * (outcomes.next() - 0.3) * 4,
      onUpdate: () => {
        const w = Object.values(curriculum.weights());
        expect(Math.min(...w)).toBeGreaterThanOrEqual(least * (1 - 1e-12));
        expect(w.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 10);
      },
    });
  });

  it('are the probabilities draw() follows (chi-square at a fixed seed)', () => {
    const curriculum = createCurriculum({ strategy: 'learning-progress', slices: makeSlices(6, 4), config: { temperature: 0.5 } });
    simulate(curriculum, { episodes: 1500, seed: 'chi', skill: (s, e) => (s === 'd/t0' ? e / 300 : Number(s.slice(3))) });
    curriculum.freeze();
    const weights = curriculum.weights();
    const keys = Object.keys(weights);
    const rng = testRng('draws-follow-weights');
    const counts = new Map(keys.map((k) => [k, 0]));
    const draws = 100_000;
    for (let k = 0; k < draws; k++) {
      const slice = curriculum.draw(rng).slice;
      counts.set(slice, counts.get(slice)! + 1);
    }
    const chi = keys.reduce((s, k) => s + (counts.get(k)! - draws * weights[k]!) ** 2 / (draws * weights[k]!), 0);
    expect(chi).toBeLessThan(20.52); // p = 0.001, 5 degrees of freedom
  });

  it('caps the floor at half the mass when there are many slices', () => {
    expect(effectiveFloor(0.02, 10)).toBe(0.02);
    expect(effectiveFloor(0.02, 10_000)).toBe(0.5 / 10_000);
  });
});

describe('levels', () => {
  test.prop(
    [
      fc.constantFrom(...strategies),
      fc.array(fc.tuple(fc.integer({ min: -3, max: 3 }), fc.integer({ min: 0, max: 6 })), { minLength: 1, maxLength: 5 }),
      fc.array(fc.tuple(fc.nat(), fc.double({ min: 0, max: 1, noNaN: true }), fc.boolean()), { maxLength: 400 }),
    ],
    { numRuns: 60 },
  )('stay within each slice’s bounds and move one step at a time', (strategy, bounds, stream) => {
    const slices = bounds.map(([min, span], i) => ({ domain: 'd', taskType: `t${i}`, minLevel: min, maxLevel: min + span }));
    const curriculum = createCurriculum({
      strategy,
      slices,
      config: { threshold: { minSamples: 3 }, target: { batch: 2 }, window: 6 },
    });
    const rng = testRng('bounds', strategy);
    for (let k = 0; k < stream.length; k += 7) {
      const results = stream.slice(k, k + 7).map(([at, success, drawn]): EpisodeResult => {
        const slice = slices[at % slices.length]!;
        const draw = curriculum.draw(rng);
        return drawn
          ? { slice: draw.slice, level: draw.level, success, taskId: draw.taskId ?? `t${k}` }
          : { slice: `d/${slice.taskType}`, level: curriculum.levels()[`d/${slice.taskType}`]!, success, taskId: `x${at % 5}` };
      });
      const update = curriculum.update(results);
      for (const move of update.moves) expect(Math.abs(move.to - move.from)).toBe(1);
      const levels = curriculum.levels();
      slices.forEach((s) => {
        const level = levels[`d/${s.taskType}`]!;
        expect(level).toBeGreaterThanOrEqual(s.minLevel);
        expect(level).toBeLessThanOrEqual(s.maxLevel);
      });
    }
  });

  it('never rise while held, may still fall, and rise again once released', () => {
    const curriculum = createCurriculum({ strategy: 'threshold', slices: makeSlices(1, 5), config: { initialLevel: 2 } });
    curriculum.holdLevels(true);
    const batch = (level: number, success: number): EpisodeResult[] => Array.from({ length: 45 }, () => ({ slice: 'd/t0', level, success }));
    const held = curriculum.update(batch(2, 1));
    expect(held.moves).toEqual([]);
    expect(held.blocked).toEqual(['d/t0']);
    expect(curriculum.update(batch(2, 0)).moves.map((m) => m.to)).toEqual([1]);
    curriculum.holdLevels(false);
    expect(curriculum.update(batch(1, 1)).moves.map((m) => m.to)).toEqual([2]);
  });

  it('hold the AdaRFT target at the current level while held', () => {
    const curriculum = createCurriculum({ strategy: 'learnability', slices: makeSlices(1, 5) });
    curriculum.holdLevels(true);
    const update = curriculum.update(Array.from({ length: 64 }, () => ({ slice: 'd/t0', level: 1, success: 1 })));
    expect(update.moves).toEqual([]);
    expect(update.blocked).toEqual(['d/t0']);
    expect(curriculum.stats()['d/t0']!.target).toBeLessThan(1.5);
  });
});

describe('failure attribution', () => {
  it.each(strategies)('%s: excluded results change nothing but the excluded count', (strategy) => {
    const plain = createCurriculum({ strategy, slices: makeSlices(3, 5) });
    const noisy = createCurriculum({ strategy, slices: makeSlices(3, 5) });
    const rngA = testRng('attribution');
    const rngB = testRng('attribution');
    const outcomes = createRng(['outcomes', strategy]);
    let excluded = 0;
    for (let batch = 0; batch < 100; batch++) {
      const clean: EpisodeResult[] = [];
      const withFaults: EpisodeResult[] = [];
      for (let k = 0; k < 8; k++) {
        const draw = plain.draw(rngA);
        expect(noisy.draw(rngB)).toEqual(draw);
        const p = 1 / (1 + Math.exp(-2 * (1 + Number(draw.slice.slice(3)) * 1.5 - draw.level)));
        const result = { slice: draw.slice, level: draw.level, success: outcomes.chance(p) ? 1 : 0, taskId: draw.taskId ?? `${batch}-${k}` };
        clean.push(result);
        withFaults.push(result);
        if (outcomes.chance(0.3)) {
          withFaults.push({ ...result, success: outcomes.chance(0.5) ? 1 : 0, taskId: `fault-${batch}-${k}`, excluded: true });
          excluded++;
        }
      }
      const a = plain.update(clean);
      const b = noisy.update(withFaults);
      expect({ ...b, excluded: 0 }).toEqual({ ...a, excluded: 0 });
    }
    const a = plain.stats();
    const b = noisy.stats();
    for (const key of Object.keys(a)) expect({ ...b[key]!, excluded: 0 }).toEqual({ ...a[key]!, excluded: 0 });
    expect(Object.values(b).reduce((s, x) => s + x.excluded, 0)).toBe(excluded);
    expect(excluded).toBeGreaterThan(100);
  });
});

describe('state', () => {
  const configs: Array<[StrategyName, CurriculumConfigInput]> = [
    ...strategies.map((s): [StrategyName, CurriculumConfigInput] => [s, {}]),
    ['learnability', { replay: true, temperature: 0.7, learnability: { signal: 'variance' } }],
    ['prioritized-replay', { weights: 'learning-progress', replayConfig: { capacity: 8, schedule: 'proportionate', score: 'failure' } }],
  ];

  it.each(configs)('%s %j: a restored curriculum continues identically (same draws, same updates)', (strategy, config) => {
    const slices = makeSlices(4, 6);
    const original = createCurriculum({ strategy, slices, config });
    simulate(original, { episodes: 900, seed: `state-${strategy}`, taskSpread: 2, skill: (s, e) => Number(s.slice(3)) + e / 300 });
    original.holdLevels(true);
    const saved = JSON.parse(JSON.stringify(original.getState())) as JsonValue;
    const restored = createCurriculum({ strategy, slices, state: saved });
    expect(restored.getState()).toEqual(original.getState());
    const rngA = testRng('continue');
    const rngB = testRng('continue');
    const outcomes = testRng('outcomes');
    let pending: EpisodeResult[] = [];
    for (let k = 0; k < 600; k++) {
      if (k === 300) {
        original.holdLevels(false);
        restored.holdLevels(false);
      }
      const draw = original.draw(rngA);
      expect(restored.draw(rngB)).toEqual(draw);
      pending.push({ slice: draw.slice, level: draw.level, success: outcomes.chance(0.6) ? 1 : 0, taskId: draw.taskId ?? `new-${k}`, excluded: outcomes.chance(0.05) });
      if (pending.length === 5) {
        expect(restored.update(pending)).toEqual(original.update(pending));
        pending = [];
      }
    }
    expect(restored.getState()).toEqual(original.getState());
    expect(restored.stats()).toEqual(original.stats());
  });

  it('refuses a state of another strategy, other slices or another config', () => {
    const slices = makeSlices(2, 5);
    const state = createCurriculum({ strategy: 'threshold', slices }).getState();
    expect(errorCode(() => createCurriculum({ strategy: 'uniform', slices, state }))).toBe('SNAPSHOT_MISMATCH');
    expect(errorCode(() => createCurriculum({ strategy: 'threshold', slices: makeSlices(3, 5), state }))).toBe('SNAPSHOT_MISMATCH');
    expect(errorCode(() => createCurriculum({ strategy: 'threshold', slices: makeSlices(2, 6), state }))).toBe('SNAPSHOT_MISMATCH');
    expect(errorCode(() => createCurriculum({ strategy: 'threshold', slices, state, config: { window: 60 } }))).toBe('SNAPSHOT_MISMATCH');
    expect(errorCode(() => createCurriculum({ strategy: 'threshold', slices, state: { format: 'x' } }))).toBe('IMPORT_INVALID');
    expect(errorCode(() => createCurriculum({ strategy: 'threshold', slices, state: { ...(state as object), level: [1] } }))).toBe('IMPORT_INVALID');
    expect(createCurriculum({ strategy: 'threshold', slices, state, config: { window: 50 } }).levels()).toEqual({ 'd/t0': 1, 'd/t1': 1 });
  });
});

describe('frozen', () => {
  it.each(strategies)('%s: updates record nothing and draws change nothing', (strategy) => {
    const curriculum = createCurriculum({ strategy, slices: makeSlices(3, 5), config: { replayConfig: { minFill: 0.01 } } });
    simulate(curriculum, { episodes: 400, seed: 'frozen', skill: () => 3 });
    const before = JSON.stringify(curriculum.getState());
    const stats = curriculum.stats();
    curriculum.freeze();
    expect(curriculum.isFrozen).toBe(true);
    const sim = simulate(curriculum, { episodes: 300, seed: 'eval', skill: () => 6 });
    expect(sim.updates.every((u) => u.counted === 0 && u.moves.length === 0)).toBe(true);
    expect(sim.updates.reduce((s, u) => s + u.ignored, 0)).toBe(300);
    if (strategy === 'prioritized-replay') expect(sim.draws.some((d) => d.replay)).toBe(true);
    expect(curriculum.stats()).toEqual(stats);
    curriculum.unfreeze();
    expect(JSON.stringify(curriculum.getState())).toBe(before);
  });
});

describe('inputs', () => {
  it('rejects results for unknown slices or out-of-range values without applying any of the batch', () => {
    const curriculum = createCurriculum({ strategy: 'threshold', slices: makeSlices(2, 3) });
    const before = JSON.stringify(curriculum.getState());
    const good: EpisodeResult = { slice: 'd/t0', level: 1, success: 1 };
    expect(errorCode(() => curriculum.update([good, { slice: 'd/nope', level: 1, success: 1 }]))).toBe('PARAMS_INVALID');
    expect(errorCode(() => curriculum.update([good, { slice: 'd/t1', level: 4, success: 1 }]))).toBe('PARAMS_INVALID');
    expect(errorCode(() => curriculum.update([good, { slice: 'd/t1', level: 1, success: 1.5 }]))).toBe('PARAMS_INVALID');
    expect(errorCode(() => curriculum.update([good, { slice: 'd/t1', level: 1, success: NaN }]))).toBe('PARAMS_INVALID');
    expect(JSON.stringify(curriculum.getState())).toBe(before);
    expect(errorCode(() => curriculum.replayDistribution('d/nope'))).toBe('PARAMS_INVALID');
  });

  it('rejects invalid configs and slices with CONFIG_INVALID', () => {
    const slices = makeSlices(1);
    const bad: CurriculumConfigInput[] = [
      { floor: 2 },
      { temperature: 0 },
      { threshold: { lower: 0.8, upper: 0.7 } },
      { threshold: { minSamples: 60 } },
      { replayConfig: { alpha: 0 } },
      { levels: 'nope' as 'fixed' },
    ];
    for (const config of bad) expect(errorCode(() => createCurriculum({ strategy: 'threshold', slices, config }))).toBe('CONFIG_INVALID');
    expect(errorCode(() => createCurriculum({ strategy: 'nope' as StrategyName, slices }))).toBe('CONFIG_INVALID');
    expect(errorCode(() => createCurriculum({ strategy: 'uniform', slices: [] }))).toBe('CONFIG_INVALID');
    expect(errorCode(() => createCurriculum({ strategy: 'uniform', slices: [...slices, ...slices] }))).toBe('CONFIG_INVALID');
    expect(errorCode(() => createCurriculum({ strategy: 'uniform', slices: [{ ...slices[0]!, initialLevel: 9 }] }))).toBe('CONFIG_INVALID');
  });

  it('builds slices from templates: one per (domain, task type), held-out templates skipped', () => {
    const t = (domain: string, taskType: string, levels: number, heldout?: boolean) => ({
      domain,
      taskType,
      levels: Array.from({ length: levels }, () => ({})),
      heldout,
    });
    expect(slicesFromTemplates([t('retail', 'refund', 3), t('retail', 'refund', 5), t('retail', 'cancel', 2), t('retail', 'exchange', 4, true)])).toEqual([
      { domain: 'retail', taskType: 'refund', minLevel: 1, maxLevel: 5 },
      { domain: 'retail', taskType: 'cancel', minLevel: 1, maxLevel: 2 },
    ]);
  });

  it('keeps the uniform strategy static: equal weights, fixed levels', () => {
    const curriculum: Curriculum = createCurriculum({ strategy: 'uniform', slices: makeSlices(4, 5), config: { initialLevel: 2 } });
    simulate(curriculum, { episodes: 500, seed: 'uniform', skill: (s) => Number(s.slice(3)) * 3 });
    expect(new Set(Object.values(curriculum.levels()))).toEqual(new Set([2]));
    for (const w of Object.values(curriculum.weights())) expect(w).toBeCloseTo(0.25, 12);
  });
});

