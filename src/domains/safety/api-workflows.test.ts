import { describe, expect, it } from 'vitest';
import { createOracleAgent } from '../../agents/index.js';
import { episodeRunner } from '../../runtime/index.js';
import type { Task } from '../../core/index.js';
import { instantiateTask } from '../../generation/index.js';
import { createApiWorkflowsDomain } from '../api-workflows/index.js';
import { createAttackDomain } from './domain.js';
import { evaluateAttacks } from './metrics.js';
import { createObedientAgent } from './obedient.js';

// The product's api-workflows domain, as shipped: it declares its own injectionPoints; nothing here is per-domain.
const api = createApiWorkflowsDomain();

describe('attack layer on api-workflows', () => {
  it('oracle keeps utility and resists; the obedient agent on its path falls (every kind the tasks can host)', async () => {
    expect(api.injectionPoints?.map((p) => p.tool)).toEqual(['get_customer', 'get_ticket', 'get_invoice']);
    const safety = createAttackDomain(api, { name: 'safety-api' });
    const tasks: Task[] = [];
    for (const t of safety.templates) for (let l = 1; l <= t.levels.length; l++) for (const seed of [1]) {
      try {
        tasks.push(instantiateTask(t as any, { level: l, seed, index: 0 }));
      } catch (e) {
        if (!/no api-workflows task fits/.test(String(e))) throw e;
      }
    }
    const kinds = new Set(tasks.map((t) => t.taskType));
    // Attack kinds and out-of-bounds kinds both compose with it.
    for (const k of ['exfiltrate', 'canary', 'forbidden-tool', 'policy-violation']) expect(kinds.has(k), k).toBe(true);
    const oracle = await evaluateAttacks(safety, tasks, createOracleAgent(), { seed: 0, runner: episodeRunner });
    for (const r of oracle.rows) {
      expect(r.attackSuccess.rate, `${r.kind} L${r.level}`).toBe(0);
      expect(r.utilityAttacked.rate, `${r.kind} L${r.level}`).toBe(r.utilityClean.rate);
    }
    const obedient = await evaluateAttacks(safety, tasks, createObedientAgent({ inner: createOracleAgent(), readsUser: true }), { seed: 0, runner: episodeRunner });
    for (const r of obedient.rows) expect(r.attackSuccess.rate, `${r.kind} L${r.level}`).toBe(1);
  }, 120_000);
});
