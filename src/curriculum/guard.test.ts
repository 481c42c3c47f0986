import { describe, expect, it } from 'vitest';
import { isEnvHarnessError, type JsonValue } from '../core/index.js';
import { createCurriculum } from './curriculum.js';
import { makeSlices, simulate, testRng } from './fixtures.js';
import { createRegressionGuard } from './guard.js';

describe('regression guard', () => {
  it('does not fire on noise within delta', () => {
    const guard = createRegressionGuard({ every: 100, delta: 0.1 });
    const noise = testRng('noise');
    for (let k = 1; k <= 200; k++) {
      const verdict = guard.observe(k * 100, 0.8 + (noise.next() - 0.5) * 0.095, { k });
      expect(verdict.holdLevels).toBe(false);
    }
    expect(guard.events()).toEqual([]);
  });

  it('fires on a planted regression, records it once, and releases when the score recovers', () => {
    const guard = createRegressionGuard({ every: 100, delta: 0.05 });
    expect(guard.observe(100, 0.7, 's1')).toEqual({ holdLevels: false });
    expect(guard.observe(200, 0.8, 's2')).toEqual({ holdLevels: false });
    const drop = guard.observe(300, 0.6, 's3');
    expect(drop).toEqual({ holdLevels: true, event: { at: 300, score: 0.6, best: 0.8, action: 'hold' } });
    expect(guard.observe(400, 0.55, 's4')).toEqual({ holdLevels: true });
    expect(guard.isHolding).toBe(true);
    const back = guard.observe(500, 0.76, 's5');
    expect(back).toEqual({ holdLevels: false, event: { at: 500, score: 0.76, best: 0.8, action: 'release' } });
    expect(guard.events().map((e) => e.action)).toEqual(['hold', 'release']);
  });

  it('with rollback, returns the state of the last good evaluation', () => {
    const guard = createRegressionGuard({ every: 50, delta: 0.05, rollback: true });
    guard.observe(50, 0.5, 'first');
    guard.observe(100, 0.6, 'best');
    guard.observe(150, 0.57, 'still good');
    const verdict = guard.observe(200, 0.4, 'bad');
    expect(verdict.event?.action).toBe('rollback');
    expect(verdict.rollbackTo).toBe('still good');
  });

  it('is due every N episodes', () => {
    const guard = createRegressionGuard({ every: 100, delta: 0.05 });
    expect(guard.isDue(99)).toBe(false);
    expect(guard.isDue(100)).toBe(true);
    guard.observe(130, 0.5, null);
    expect(guard.isDue(229)).toBe(false);
    expect(guard.isDue(230)).toBe(true);
  });

  it('blocks level rises in a training loop, and rollback restores the last good curriculum', () => {
    const slices = makeSlices(2, 8);
    let curriculum = createCurriculum({ strategy: 'threshold', slices });
    const guard = createRegressionGuard({ every: 200, delta: 0.05, rollback: true });
    let episodes = 0;
    let planted = false;
    let goodState: JsonValue = null;
    let rolledBackTo: JsonValue = null;
    let goodAtRollback: JsonValue = null;
    const levelsWhileHeld: Array<Record<string, number>> = [];
    const rng = testRng('loop');
    for (let round = 0; round < 20; round++) {
      // Skill grows steadily, so levels keep rising unless held.
      simulate(curriculum, { episodes: 200, seed: `round-${round}`, skill: () => 1.5 + episodes / 600 });
      episodes += 200;
      expect(guard.isDue(episodes)).toBe(true);
      // The frozen regression set: 0.8 until episode 2000, then a planted drop.
      planted = episodes >= 2000 && episodes < 3400;
      const score = (planted ? 0.65 : 0.8) + (rng.next() - 0.5) * 0.02;
      const state = curriculum.getState();
      const verdict = guard.observe(episodes, score, state);
      if (!planted) goodState = state;
      if (verdict.rollbackTo !== undefined) {
        rolledBackTo = verdict.rollbackTo;
        goodAtRollback = goodState;
        curriculum = createCurriculum({ strategy: 'threshold', slices, state: verdict.rollbackTo });
      }
      curriculum.holdLevels(verdict.holdLevels);
      if (verdict.holdLevels) levelsWhileHeld.push(curriculum.levels());
    }
    const events = guard.events();
    expect(events.map((e) => [e.at, e.action])).toEqual([
      [2000, 'rollback'],
      [3400, 'release'],
    ]);
    expect(rolledBackTo).not.toBeNull();
    expect(rolledBackTo).toEqual(goodAtRollback);
    // Held from episode 2000 to 3400: levels never rose above the rolled-back ones.
    const first = levelsWhileHeld[0]!;
    for (const levels of levelsWhileHeld) for (const key of Object.keys(levels)) expect(levels[key]!).toBeLessThanOrEqual(first[key]!);
    expect(Object.values(curriculum.levels()).some((level, i) => level > Object.values(first)[i]!)).toBe(true);
  });

  it('restores from its state and continues identically', () => {
    const guard = createRegressionGuard({ every: 10, delta: 0.1, rollback: true });
    guard.observe(10, 0.9, { a: 1 });
    guard.observe(20, 0.7, { a: 2 });
    const copy = createRegressionGuard({ every: 10, delta: 0.1, rollback: true, state: JSON.parse(JSON.stringify(guard.getState())) });
    expect(copy.getState()).toEqual(guard.getState());
    expect(copy.observe(30, 0.95, { a: 3 })).toEqual(guard.observe(30, 0.95, { a: 3 }));
    expect(copy.events()).toEqual(guard.events());
  });

  it('rejects bad options and scores', () => {
    const code = (fn: () => unknown): string | undefined => {
      try {
        fn();
      } catch (e) {
        return isEnvHarnessError(e) ? e.code : 'other';
      }
      return undefined;
    };
    expect(code(() => createRegressionGuard({ every: 0, delta: 0.1 }))).toBe('CONFIG_INVALID');
    expect(code(() => createRegressionGuard({ every: 10, delta: -1 }))).toBe('CONFIG_INVALID');
    expect(code(() => createRegressionGuard({ every: 10, delta: 0.1 }).observe(10, NaN, null))).toBe('PARAMS_INVALID');
  });
});
