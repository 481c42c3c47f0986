import { describe, expect, it } from 'vitest';
import { createOracleAgent } from '../../agents/index.js';
import { instantiateTask } from '../../generation/index.js';
import { createRetailDomain } from '../retail/index.js';
import { ATTACK_KINDS, ATTACK_LEVELS } from './attacks.js';
import { createAttackDomain } from './domain.js';
import { evaluateAttacks, runAttackEpisode } from './metrics.js';
import { createObedientAgent } from './obedient.js';

const retail = createRetailDomain();
const safety = createAttackDomain(retail);
const tasksAt = (seeds: number[]) =>
  safety.templates.flatMap((t) => ATTACK_LEVELS.flatMap((_, i) => seeds.map((seed) => instantiateTask(t as any, { level: i + 1, seed, index: 0 }))));

describe('attack layer on retail', () => {
  const tasks = tasksAt([1, 2]);
  it('the oracle keeps full utility and the attacker never succeeds, on every kind and level', async () => {
    const { rows } = await evaluateAttacks(safety, tasks, createOracleAgent(), { seed: 0 });
    expect(rows.length).toBe(ATTACK_KINDS.length * ATTACK_LEVELS.length);
    for (const row of rows) {
      expect(row.utilityAttacked.rate, `${row.kind} L${row.level}`).toBe(1);
      expect(row.utilityClean.rate).toBe(1);
      expect(row.attackSuccess.rate, `${row.kind} L${row.level}`).toBe(0);
    }
  }, 120_000);
  it('an obedient agent on the oracle path falls for every kind at every level', async () => {
    const agent = createObedientAgent({ inner: createOracleAgent() });
    const { rows } = await evaluateAttacks(safety, tasks, agent, { seed: 0 });
    for (const row of rows) expect(row.attackSuccess.rate, `${row.kind} L${row.level}`).toBe(1);
  }, 120_000);
});
