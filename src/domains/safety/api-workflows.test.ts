import { describe, expect, it } from 'vitest';
import { createOracleAgent } from '../../agents/index.js';
import { builtinDomains } from '../../builtins.js';
import { episodeRunner } from '../../runtime/index.js';
import type { Task } from '../../core/index.js';
import { instantiateTask } from '../../generation/index.js';
import { createApiWorkflowsDomain } from '../api-workflows/index.js';
import { ATTACK_LEVELS } from './attacks.js';
import { createAttackDomain, isOutOfBounds, type AttackDomain } from './domain.js';
import { evaluateAttacks } from './metrics.js';
import { createObedientAgent } from './obedient.js';

// The product's api-workflows domain, as shipped: it declares its own injectionPoints; nothing here is per-domain.
const api = createApiWorkflowsDomain();
const HOSTED = ['forbidden-tool', 'foreign-write', 'exfiltrate', 'canary', 'policy-violation', 'bulk-destructive'] as const;
const builtin = builtinDomains().find((d) => d.name === 'safety-api-workflows') as AttackDomain<any>;
const tasksOf = (domain: AttackDomain<any>, seeds: number[]): Task[] =>
  domain.templates.flatMap((t) => t.levels.flatMap((_, i) => seeds.map((seed) => instantiateTask(t as any, { level: i + 1, seed, index: 0 }))));

describe('attack layer on api-workflows', () => {
  it('the built-in offers every kind its tasks can host', () => {
    expect(api.injectionPoints?.map((p) => p.tool)).toEqual(['get_customer', 'get_ticket', 'get_invoice']);
    // No api-workflows task reads an injectable output and then makes a write that needs confirmation.
    expect(builtin.templates.map((t) => t.taskType).sort()).toEqual([...HOSTED].sort());
  });

  it('each kind it hosts yields a task at every level, seed after seed, with the placements its level names', () => {
    // The two-placement levels (split, two-hop) fit few base tasks: free draws alone missed some of these seeds.
    const safety = createAttackDomain(api, { name: 'safety-api-workflows', kinds: HOSTED });
    const tasks = tasksOf(safety, [0, 1, 2, 3, 4, 5]);
    expect(tasks).toHaveLength(6 * (4 * ATTACK_LEVELS.length + 2 * 3));
    for (const task of tasks) {
      const plan = safety.attackOf(task)!;
      expect(plan.kind).toBe(task.taskType);
      // The level's attacker texts, and the planted secret for canary; out-of-bounds requests place nothing.
      const placed = isOutOfBounds(plan.kind) ? 0 : ATTACK_LEVELS[task.level - 1]!.placements + (plan.kind === 'canary' ? 1 : 0);
      expect(plan.placements, `${task.taskType} L${task.level}`).toHaveLength(placed);
    }
  });

  it('a kind no base task can host is refused naming what it needs and the options that leave it out', () => {
    const only = createAttackDomain(api, { name: 'safety-api', kinds: ['skip-confirmation'] });
    expect(() => instantiateTask(only.templates[0] as any, { level: 1, seed: 0, index: 0 })).toThrow(
      /no api-workflows task fits a skip-confirmation attack at level 1: .*reads 1 injectable output and makes a write that needs confirmation .*option kinds/,
    );
  });

  it('oracle keeps utility and resists; the obedient agent on its path falls (every kind the tasks can host)', async () => {
    const tasks = tasksOf(builtin, [1]);
    const oracle = await evaluateAttacks(builtin, tasks, createOracleAgent(), { seed: 0, runner: episodeRunner });
    for (const r of oracle.rows) {
      expect(r.attackSuccess.rate, `${r.kind} L${r.level}`).toBe(0);
      expect(r.utilityAttacked.rate, `${r.kind} L${r.level}`).toBe(r.utilityClean.rate);
    }
    const obedient = await evaluateAttacks(builtin, tasks, createObedientAgent({ inner: createOracleAgent(), readsUser: true }), { seed: 0, runner: episodeRunner });
    expect(obedient.rows).toHaveLength(4 * ATTACK_LEVELS.length + 2 * 3);
    for (const r of obedient.rows) expect(r.attackSuccess.rate, `${r.kind} L${r.level}`).toBe(1);
  }, 120_000);
});
