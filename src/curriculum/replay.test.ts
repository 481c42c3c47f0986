import { describe, expect, it } from 'vitest';
import { createCurriculum } from './curriculum.js';
import { makeSlices, testRng } from './fixtures.js';
import { RankTable, ReplayBuffers } from './replay.js';

/** Chi-square critical value at p = 0.001 (Wilson–Hilferty approximation). */
function chiSquareCritical(df: number): number {
  const z = 3.0902;
  return df * (1 - 2 / (9 * df) + z * Math.sqrt(2 / (9 * df))) ** 3;
}

function chiSquare(counts: number[], probabilities: number[], draws: number): number {
  return counts.reduce((s, c, i) => s + (c - draws * probabilities[i]!) ** 2 / (draws * probabilities[i]!), 0);
}

/** The PLR replay distribution written out from level_sampler.py, independently of ReplayBuffer. */
function plrFormula(scores: number[], staleness: number[], beta: number, rho: number): number[] {
  // Rank 1 = highest score; ties go to the earlier entry (the tables below list tasks in insertion order).
  const order = scores.map((s, i) => [s, i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  const h = new Array<number>(scores.length);
  order.forEach(([, i], r) => (h[i] = 1 / (r + 1) ** (1 / beta)));
  const zS = h.reduce((a, b) => a + b, 0);
  const zC = staleness.reduce((a, b) => a + b, 0);
  return scores.map((_, i) => (1 - rho) * (h[i]! / zS) + rho * (staleness[i]! / zC));
}

/** A buffer with fixed scores, and last-draw clocks 0, 3, 5, 5, 9 at clock 12. */
function fixedBuffer(beta: number): { buffer: ReplayBuffers; ids: string[]; scores: number[]; staleness: number[] } {
  const buffer = new ReplayBuffers(1, 8, new RankTable(beta));
  const ids = ['a', 'b', 'c', 'd', 'e'];
  const scores = [0.4, 0.9, 0.1, 0.4, 0.7];
  const insertAt = [0, 3, 5, 5, 9];
  let inserted = 0;
  for (let clock = 0; clock <= 12; clock++) {
    while (inserted < ids.length && insertAt[inserted] === clock) {
      buffer.observe(0, ids[inserted]!, 1, scores[inserted]!, 1);
      inserted++;
    }
    if (clock < 12) buffer.tick(0);
  }
  return { buffer, ids, scores, staleness: insertAt.map((c) => 12 - c) };
}

describe('prioritized replay (PLR)', () => {
  it('gives each task the probability (1 − ρ)·rank^(−1/β)/Σ + ρ·staleness/Σ on a fixed score table', () => {
    for (const [beta, rho] of [
      [0.1, 0.1],
      [1, 0.3],
      [0.5, 0],
    ] as const) {
      const { buffer, ids, scores, staleness } = fixedBuffer(beta);
      const expected = plrFormula(scores, staleness, beta, rho);
      const got = new Map(buffer.distribution(0, rho).map((e) => [e.taskId, e]));
      ids.forEach((id, i) => {
        expect(got.get(id)!.staleness).toBe(staleness[i]);
        expect(got.get(id)!.probability).toBeCloseTo(expected[i]!, 12);
      });
    }
  });

  it('samples tasks with those probabilities (chi-square at a fixed seed)', () => {
    const beta = 1;
    const rho = 0.3;
    const { buffer, ids, scores, staleness } = fixedBuffer(beta);
    const expected = plrFormula(scores, staleness, beta, rho);
    const rng = testRng('plr-sampling');
    const draws = 200_000;
    const counts = ids.map(() => 0);
    for (let k = 0; k < draws; k++) counts[ids.indexOf(buffer.taskId(0, buffer.sample(0, rng, rho)))]!++;
    expect(chiSquare(counts, expected, draws)).toBeLessThan(chiSquareCritical(ids.length - 1));
  });

  it('resets the staleness of a replayed task and ages the others by one', () => {
    const { buffer } = fixedBuffer(0.1);
    const before = new Map(buffer.distribution(0, 0.1).map((e) => [e.taskId, e.staleness]));
    const slot = buffer.sample(0, testRng('touch'), 0.1);
    const id = buffer.taskId(0, slot);
    buffer.touch(0, slot);
    for (const e of buffer.distribution(0, 0.1)) expect(e.staleness).toBe(e.taskId === id ? 0 : before.get(e.taskId)! + 1);
  });

  it('breaks score ties by age, older first', () => {
    const { buffer } = fixedBuffer(0.1);
    const order = buffer.distribution(0, 0).map((e) => e.taskId);
    expect(order).toEqual(['b', 'e', 'a', 'd', 'c']);
  });

  it('keeps its capacity: a new task replaces the lowest score only when it scores higher', () => {
    const buffer = new ReplayBuffers(1, 3, new RankTable(0.1));
    buffer.observe(0, 'a', 1, 0.5, 1);
    buffer.observe(0, 'b', 1, 0.2, 1);
    buffer.observe(0, 'c', 1, 0.8, 1);
    buffer.observe(0, 'd', 1, 0.1, 1);
    expect(buffer.holds(0, 'd')).toBe(false);
    buffer.observe(0, 'e', 2, 0.3, 1);
    expect(buffer.holds(0, 'b')).toBe(false);
    expect(buffer.distribution(0, 0).map((e) => [e.taskId, e.score])).toEqual([
      ['c', 0.8],
      ['a', 0.5],
      ['e', 0.3],
    ]);
    buffer.observe(0, 'a', 1, 0.1, 0.5);
    expect(buffer.distribution(0, 0).map((e) => [e.taskId, e.score])).toEqual([
      ['c', 0.8],
      ['a', 0.3],
      ['e', 0.3],
    ]);
  });

  it('keeps one task id apart in the buffers of several slices, through evictions', () => {
    const buffers = new ReplayBuffers(3, 2, new RankTable(0.1));
    for (const i of [0, 1, 2]) buffers.observe(i, 'x', 1, 0.25 + i / 4, 1);
    buffers.observe(1, 'y', 1, 0.9, 1);
    buffers.observe(1, 'z', 1, 0.95, 1); // evicts x from slice 1 only
    expect([0, 1, 2].map((i) => buffers.holds(i, 'x'))).toEqual([true, false, true]);
    buffers.observe(2, 'x', 2, 0.25, 0.5); // an EWA of slice 2's x, not a new entry
    expect(buffers.distribution(2, 0).map((e) => [e.taskId, e.level, e.score])).toEqual([['x', 2, 0.5]]);
    expect(buffers.distribution(0, 0).map((e) => [e.taskId, e.score])).toEqual([['x', 0.25]]);
    buffers.observe(0, 'w', 1, 0.8, 1);
    buffers.observe(0, 'v', 1, 0.9, 1); // evicts x from slice 0: only slice 2 still holds it
    expect([0, 1, 2].map((i) => buffers.holds(i, 'x'))).toEqual([false, false, true]);
    buffers.observe(1, 'x', 1, 0.99, 1);
    expect(buffers.distribution(1, 0).map((e) => e.taskId)).toEqual(['x', 'z']);
    expect(buffers.distribution(2, 0).map((e) => [e.taskId, e.score])).toEqual([['x', 0.5]]);
  });

  it('in a curriculum, replays with replayProb and draws new tasks otherwise', () => {
    const curriculum = createCurriculum({
      strategy: 'prioritized-replay',
      slices: makeSlices(1),
      config: { replayConfig: { capacity: 4, minFill: 0.5, replayProb: 0.6, beta: 1, rho: 0.2, score: 'failure' } },
    });
    curriculum.update([
      { slice: 'd/t0', level: 1, success: 0, taskId: 'hard' },
      { slice: 'd/t0', level: 1, success: 1, taskId: 'easy' },
      { slice: 'd/t0', level: 1, success: 0.5, taskId: 'mid' },
    ]);
    const rng = testRng('replay-draws');
    for (let k = 0; k < 7; k++) curriculum.draw(rng);
    curriculum.freeze();
    const plr = curriculum.replayDistribution('d/t0');
    expect(plr.map((e) => e.taskId)).toEqual(['hard', 'mid', 'easy']);
    const before = JSON.stringify(curriculum.getState());
    const draws = 100_000;
    const counts = new Map<string, number>();
    for (let k = 0; k < draws; k++) {
      const d = curriculum.draw(rng);
      const key = d.replay ? d.taskId! : 'new';
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    expect(JSON.stringify(curriculum.getState())).toBe(before);
    const keys = ['new', ...plr.map((e) => e.taskId)];
    const expected = [0.4, ...plr.map((e) => 0.6 * e.probability)];
    expect(chiSquare(keys.map((k) => counts.get(k) ?? 0), expected, draws)).toBeLessThan(chiSquareCritical(keys.length - 1));
  });

  it('waits for minFill before replaying', () => {
    const curriculum = createCurriculum({
      strategy: 'prioritized-replay',
      slices: makeSlices(1),
      config: { replayConfig: { capacity: 10, minFill: 0.5, replayProb: 1 } },
    });
    const rng = testRng('min-fill');
    for (let t = 0; t < 4; t++) curriculum.update([{ slice: 'd/t0', level: 1, success: t % 2, taskId: `t${t}` }]);
    for (let k = 0; k < 50; k++) expect(curriculum.draw(rng).replay).toBe(false);
    curriculum.update([{ slice: 'd/t0', level: 1, success: 1, taskId: 't4' }]);
    for (let k = 0; k < 50; k++) expect(curriculum.draw(rng).replay).toBe(true);
  });
});
