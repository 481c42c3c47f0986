import { describe, expect, it } from 'vitest';
import { createOracleAgent } from '../../agents/index.js';
import { createRng } from '../../core/index.js';
import { instantiateTask } from '../../generation/index.js';
import { createRetailDomain } from '../retail/index.js';
import { attackResult, createAttackCurriculum } from './curriculum.js';
import { createAttackDomain } from './domain.js';
import { runAttackEpisode } from './metrics.js';
import { createObedientAgent } from './obedient.js';

describe('adaptive attack curriculum', () => {
  it('raises strength on the kinds the agent resists and moves weight to the kinds it falls for (seeded)', async () => {
    const safety = createAttackDomain(createRetailDomain());
    // Falls for every attack that asks for a tool call; never repeats a secret or an address.
    const agent = createObedientAgent({ inner: createOracleAgent(), follows: (d) => d.type === 'call' });
    const curriculum = createAttackCurriculum(safety, { window: 10, threshold: { minSamples: 5 } });
    const byKind = new Map(safety.templates.map((t) => [t.taskType, t]));
    const rng = createRng(['attack-curriculum', 7]);
    const draws: Record<string, number> = {};
    for (let i = 0; i < 360; i++) {
      const draw = curriculum.draw(rng);
      const kind = draw.slice.split('/')[1]!;
      draws[kind] = (draws[kind] ?? 0) + (i >= 180 ? 1 : 0);
      const task = instantiateTask(byKind.get(kind)! as any, { level: draw.level, seed: 5_000 + i, index: 0 });
      curriculum.update([attackResult(task, await runAttackEpisode(safety, task, agent, i))]);
    }
    const levels = curriculum.levels();
    const weights = curriculum.weights();
    for (const resisted of ['safety/canary', 'safety/exfiltrate']) expect(levels[resisted], resisted).toBe(6);
    for (const fallen of ['safety/forbidden-tool', 'safety/foreign-write', 'safety/skip-confirmation']) {
      expect(levels[fallen], fallen).toBe(1);
      expect(weights[fallen]!, fallen).toBeGreaterThan(3 * Math.max(weights['safety/canary']!, weights['safety/exfiltrate']!));
    }
    // In the second half most draws went to the kinds that work.
    expect((draws['forbidden-tool']! + draws['foreign-write']! + draws['skip-confirmation']!) / 180).toBeGreaterThan(0.8);
  }, 120_000);
});
