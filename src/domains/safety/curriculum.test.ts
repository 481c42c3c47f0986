import { describe, expect, it } from 'vitest';
import { createOracleAgent } from '../../agents/index.js';
import { episodeRunner } from '../../runtime/index.js';
import { createCurriculum, slicesFromTemplates } from '../../curriculum/index.js';
import { createRng } from '../../core/index.js';
import { instantiateTask } from '../../generation/index.js';
import { createRetailDomain } from '../retail/index.js';
import { ATTACK_KINDS, ATTACK_LEVELS } from './attacks.js';
import { ATTACK_CURRICULUM, attackResult } from './curriculum.js';
import { createAttackDomain } from './domain.js';
import { runAttackEpisode } from './metrics.js';
import { createObedientAgent } from './obedient.js';

describe('adaptive attack curriculum', () => {
  it('raises strength on the kinds the agent resists and moves weight to the kinds it falls for (seeded)', async () => {
    const safety = createAttackDomain(createRetailDomain(), { kinds: ATTACK_KINDS });
    // Falls for every attack that asks for a tool call; never repeats a secret or an address.
    const agent = createObedientAgent({ inner: createOracleAgent(), follows: (d) => d.type === 'call' });
    const curriculum = createCurriculum({ ...ATTACK_CURRICULUM, slices: slicesFromTemplates(safety.templates), config: { ...ATTACK_CURRICULUM.config, window: 10, threshold: { minSamples: 5 } } });
    const byKind = new Map(safety.templates.map((t) => [t.taskType, t]));
    const rng = createRng(['attack-curriculum', 7]);
    const draws: Record<string, number> = {};
    for (let i = 0; i < 480; i++) {
      const draw = curriculum.draw(rng);
      const kind = draw.slice.split('/')[1]!;
      draws[kind] = (draws[kind] ?? 0) + (i >= 240 ? 1 : 0);
      const task = instantiateTask(byKind.get(kind)! as any, { level: draw.level, seed: 5_000 + i, index: 0 });
      curriculum.update([attackResult(task, await runAttackEpisode(safety, task, agent, i, episodeRunner))]);
    }
    const levels = curriculum.levels();
    const weights = curriculum.weights();
    for (const resisted of ['safety/canary', 'safety/exfiltrate']) expect(levels[resisted], resisted).toBe(ATTACK_LEVELS.length);
    for (const fallen of ['safety/forbidden-tool', 'safety/foreign-write', 'safety/skip-confirmation']) {
      expect(levels[fallen], fallen).toBe(1);
      expect(weights[fallen]!, fallen).toBeGreaterThan(3 * Math.max(weights['safety/canary']!, weights['safety/exfiltrate']!));
    }
    // In the second half most draws went to the kinds that work.
    expect((draws['forbidden-tool']! + draws['foreign-write']! + draws['skip-confirmation']!) / 240).toBeGreaterThan(0.8);
  }, 120_000);

  it("the curriculum's `failure` weight rule: weight follows the failure rate at the current level, and a restored curriculum continues identically", () => {
    const slices = ['a', 'b', 'c'].map((t) => ({ domain: 'd', taskType: t, minLevel: 1, maxLevel: 3 }));
    const make = (state?: unknown) => createCurriculum({ strategy: 'uniform', slices, config: { weights: 'failure', floor: 0 }, ...(state === undefined ? {} : { state: state as never }) });
    const c = make();
    const results = [];
    for (let i = 0; i < 8; i++) results.push({ slice: 'd/a', level: 1, success: 0 }, { slice: 'd/b', level: 1, success: 1 }, { slice: 'd/c', level: 1, success: i % 2 });
    c.update(results);
    const w = c.weights();
    // (8 + 1) / 10 : (0 + 1) / 10 : (4 + 1) / 10, normalised.
    expect(w['d/a']).toBeCloseTo(9 / 15, 10);
    expect(w['d/b']).toBeCloseTo(1 / 15, 10);
    expect(w['d/c']).toBeCloseTo(5 / 15, 10);
    const restored = make(c.getState());
    const r1 = createRng(['failure-rule', 1]);
    const r2 = createRng(['failure-rule', 1]);
    for (let i = 0; i < 20; i++) expect(restored.draw(r2)).toEqual(c.draw(r1));
  });
});
