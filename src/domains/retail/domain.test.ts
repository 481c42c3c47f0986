import { describe, expect, it } from 'vitest';
import { digest, EnvHarnessError, type JsonValue } from '../../core/index.js';
import { createRetailDomain, worldRef } from './domain.js';
import { makeRetailWorld } from './fixtures.js';
import { generateRetailWorld } from './generator.js';
import type { RetailState } from './state.js';

describe('createRetailDomain', () => {
  it('builds states for registered worlds by digest and forks them', () => {
    const world = makeRetailWorld();
    const retail = createRetailDomain({ worlds: [world], tasks: false });
    expect(worldRef(world)).toEqual({ world: 'fixture', digest: world.digest });
    const state = retail.createState(worldRef(world));
    expect(state.world).toBe(world);
    expect(retail.hashState(state)).toBe(world.digest);
    expect(retail.fork(state)).not.toBe(state);
    expect(digest(retail.exportState(state))).toBe(world.digest);
    expect(retail.name).toBe('retail');
    expect(retail.templates).toEqual([]);
    expect(retail.policy).toBeUndefined();
    expect(retail.tools).toHaveLength(16);
  });

  it('comes with templates, policy, user, acceptance checks and the regression set by default', () => {
    const retail = createRetailDomain();
    expect(retail.templates.map((t) => t.taskType)).toEqual([
      'order_status', 'cancel', 'return_refund', 'exchange', 'address_change', 'payment_change',
      'compound', 'conditional', 'out_of_scope', 'policy_trap', 'compound', 'conditional',
    ]);
    expect(retail.policy?.rules.map((r) => r.id)).toEqual(['authenticate_first', 'one_user', 'pending_only', 'refund_destination']);
    expect(retail.createUser).toBeTypeOf('function');
    expect(retail.regressionSet?.batches[0]?.split).toBe('regression');
  });

  it('registers worlds later, idempotently', () => {
    const retail = createRetailDomain();
    const world = makeRetailWorld();
    expect(() => retail.createState(worldRef(world))).toThrow(/no retail world with digest/);
    retail.addWorld(world);
    retail.addWorld(makeRetailWorld());
    expect(retail.resolveWorld(worldRef(world))).toBe(world);
  });

  it('generates worlds from parameters and reuses them', () => {
    const retail = createRetailDomain({ generatedCacheSize: 2 });
    const ref = { world: 'generated', seed: 4, users: 20, orders: 30, products: 5 };
    const a: RetailState = retail.createState(ref);
    const b: RetailState = retail.createState({ ...ref, generator: 1 });
    expect(b.world).toBe(a.world);
    expect(a.world.digest).toBe(generateRetailWorld({ seed: 4, users: 20, orders: 30, products: 5 }).digest);
    expect(worldRef(a.world)).toEqual({ ...ref, generator: 1 });
    expect(retail.createState(worldRef(a.world)).world).toBe(a.world);
    // Least recently used worlds leave the cache.
    retail.createState({ ...ref, seed: 5 });
    retail.createState({ ...ref, seed: 6 });
    expect(retail.createState(ref).world).not.toBe(a.world);
  });

  it('names the fix when an initialState is malformed', () => {
    const retail = createRetailDomain();
    const bads: JsonValue[] = [null, {}, { world: 'generated' }, { world: 'tau-bench', digest: 'abc' }, { world: 'generated', seed: 1, extra: 1 }];
    for (const bad of bads) {
      expect(() => retail.createState(bad)).toThrow(EnvHarnessError);
    }
    expect(() => retail.createState({})).toThrow(/initialState must be/);
  });
});
