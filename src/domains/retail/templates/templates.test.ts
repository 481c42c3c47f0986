import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import type { Task } from '../../../core/index.js';
import { instantiateTask } from '../../../generation/index.js';
import { goalOf, type RetailGoal } from '../goal.js';
import { cancelTemplate, compoundTemplate, conditionalTemplate, policyTrapTemplate, retailParamsSchema, retailTemplates, retailTrainingTemplates, returnRefundTemplate } from './index.js';
import { worldIndex } from './worlds.js';

const goal = (task: Task): RetailGoal => goalOf(task.spec.user)!;

describe('retail templates: levels', () => {
  it('are version 2, with no paraphrased requests at level 1 and a share that rises with the level', () => {
    for (const template of retailTemplates) {
      expect(template.id).toMatch(/@2$/);
      const shares = template.levels.map((spec) => (spec['paraphrase'] ?? 0) as number);
      expect(shares[0], template.id).toBe(0);
      for (let i = 1; i < shares.length; i++) expect(shares[i]!, template.id).toBeGreaterThan(shares[i - 1]!);
    }
  });

  it('raise compound requests one by one only at level 1, and state more of them as the level rises', () => {
    const staggered = compoundTemplate.levels.map((spec) => spec['staggered']);
    expect(staggered).toEqual([true, false, false, false, false]);
    const counts = [1, 2, 3, 4, 5].map((level) => goal(instantiateTask(compoundTemplate, { level, seed: 3, index: 0 })).intents.length);
    expect(counts).toEqual([2, 2, 3, 3, 4]);
    expect(goal(instantiateTask(conditionalTemplate, { level: 1, seed: 3, index: 0 })).staggered).toBe(true);
  });

  it("put someone else's order into policy traps at levels 4 (with a status question) and 5 (with a cancel or refund trap)", () => {
    for (const level of [1, 2, 3, 4, 5]) {
      for (let seed = 0; seed < 10; seed++) {
        const kinds = goal(instantiateTask(policyTrapTemplate, { level, seed, index: 0 })).intents.map((i) => i.kind);
        if (level === 4) expect(kinds).toEqual(['status', 'other_customer']);
        else if (level === 5) expect(kinds[1]).toBe('other_customer');
        else expect(kinds).not.toContain('other_customer');
      }
    }
  });

  it('at level 5 names an order by a product it shares with another order plus one only it has', () => {
    let shared = 0;
    for (let seed = 0; seed < 40; seed++) {
      const task = instantiateTask(returnRefundTemplate, { level: 5, seed, index: 0 });
      const g = goal(task);
      const intent = g.intents[0]!;
      if (intent.kind !== 'return' || intent.order.refer !== 'items') continue;
      const index = worldIndex((task.spec.initialState as { seed: number }).seed);
      const orders = index.world.data.users[g.profile.user_id]!.orders.map((id) => index.world.data.orders[id]!);
      const containing = (name: string) => orders.filter((o) => o.items.some((i) => i.name === name)).map((o) => o.order_id);
      const names = intent.order.names;
      // Only the target order has every named product.
      const all = orders.filter((o) => names.every((n) => o.items.some((i) => i.name === n)));
      expect(all.map((o) => o.order_id)).toEqual([intent.order.order_id]);
      if (names.length === 2) {
        shared++;
        expect(containing(names[0]!).length).toBeGreaterThan(1);
        expect(containing(names[1]!)).toEqual([intent.order.order_id]);
        expect(task.spec.tags).toContain('shared-products');
      }
    }
    expect(shared).toBeGreaterThan(5);
  });

  it('never share product names below level 4', () => {
    for (const template of retailTrainingTemplates) {
      for (const level of [1, 2, 3]) {
        const g = goal(instantiateTask(template, { level, seed: 9, index: 0 }));
        for (const i of g.intents) if ('order' in i) expect(i.order.names.length).toBeLessThanOrEqual(1);
      }
    }
  });
});

describe('retail templates: sampled params', () => {
  // instantiateTask keeps zod's parse of the sampled params: it must be the sampler's output, unchanged.
  test.prop([fc.nat(retailTemplates.length - 1), fc.integer({ min: 1, max: 5 }), fc.integer({ min: -1e9, max: 1e9 }), fc.nat(1000)], { numRuns: 400, seed: 11 })(
    'always pass retailParamsSchema unchanged: same JSON, key order included',
    (t, level, seed, index) => {
      const task = instantiateTask(retailTemplates[t]!, { level, seed, index });
      const parsed = retailParamsSchema.safeParse(task.params);
      expect(parsed.success).toBe(true);
      expect(JSON.stringify(parsed.data)).toBe(JSON.stringify(task.params));
    },
  );

  it('are parsed in full when they come from anywhere else', () => {
    const params = structuredClone(instantiateTask(cancelTemplate, { level: 3, seed: 1, index: 0 }).params) as Record<string, any>;
    const ok = cancelTemplate.params.safeParse(params);
    expect(ok.success).toBe(true);
    expect(ok.data).not.toBe(params);
    expect(ok.data).toEqual(params);
    const bad = cancelTemplate.params.safeParse({ ...params, goal: { ...params['goal'], noise: 7 } });
    expect(bad.success).toBe(false);
    expect(bad.error!.issues[0]!.path).toEqual(['goal', 'noise']);
    expect(cancelTemplate.params.safeParse({ ...params, extra: 1 }).success).toBe(false);
  });
});
