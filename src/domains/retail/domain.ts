/** The retail domain object: worlds by reference, copy-on-write states, tau-bench's tools. */
import { z } from 'zod';
import { canonicalize, defineDomain, EnvHarnessError, type Domain, type InjectionPoint, type JsonObject, type JsonValue, type Template } from '../../core/index.js';
import { generateRetailWorld, normalizeWorldParams } from './generator.js';
import { RETAIL_POLICY_TEXT, retailAcceptanceChecks, retailPolicyRules } from './policy.js';
import { RETAIL_REGRESSION_SET } from './regression.js';
import { retailTemplates } from './templates/index.js';
import { taskWorld } from './templates/worlds.js';
import { createRetailUser } from './user.js';
import { createRetailRuleBasedAgent, type RetailRuleBasedOptions } from './rule-based.js';
import { createRetailState, exportRetailState, forkRetailState, hashRetailState, type RetailState } from './state.js';
import { retailTools } from './tools.js';
import type { RetailWorld } from './world.js';

/** Where attacker text can appear in retail's tool outputs (see `Domain.injectionPoints`). */
export const RETAIL_INJECTION_POINTS: readonly InjectionPoint[] = [
  { tool: 'get_order_details', pointer: '/note', description: 'a note left on the order by the customer or a courier' },
  { tool: 'get_product_details', pointer: '/description', description: "the seller's product description" },
  { tool: 'get_user_details', pointer: '/note', description: 'a note on the customer account' },
];

/** How a task names its world: a registered world by digest, or generator parameters. */
export type RetailInitialState =
  | { world: string; digest: string }
  | { world: 'generated'; seed: number; users?: number; orders?: number; products?: number; generator?: number };

const generatedRef = z.strictObject({
  world: z.literal('generated'),
  generator: z.literal(1).optional(),
  seed: z.number().int(),
  users: z.number().int().min(0).optional(),
  orders: z.number().int().min(0).optional(),
  products: z.number().int().min(0).optional(),
});
const digestRef = z.strictObject({ world: z.string(), digest: z.string().regex(/^[0-9a-f]{64}$/) });

export interface CreateRetailDomainOptions {
  /** Worlds tasks may name by `{ world, digest }` (e.g. from `loadTauBenchWorld`). */
  worlds?: readonly RetailWorld[];
  /** Generated worlds kept in memory, most recently used first (default 12: the 8 task worlds and room). */
  generatedCacheSize?: number;
  /**
   * Templates, policy, simulated user, acceptance checks and regression set (default true). `false` gives
   * the bare world and tools, e.g. to replay tau-bench's gold actions, which do not follow this policy.
   */
  tasks?: boolean;
  /** Templates to offer instead of `retailTemplates`. */
  templates?: readonly Template<any>[];
}

/** The retail domain plus its world registry. */
export interface RetailDomain extends Domain<RetailState> {
  /** Makes a world available to tasks as `worldRef(world)`; adding the same content twice is a no-op. */
  addWorld(world: RetailWorld): void;
  /** The world an `initialState` names; throws PARAMS_INVALID when it is unknown or malformed. */
  resolveWorld(initialState: JsonValue): RetailWorld;
}

/** The `initialState` JSON that names a world in a task. */
export function worldRef(world: RetailWorld): JsonObject {
  if (world.source === 'generated' && world.params !== undefined) return { ...world.params };
  return { world: world.source, digest: world.digest };
}

/**
 * The retail domain: tau-bench's 16 tools on copy-on-write states, with the policy (`policy.md` and its
 * machine-checked rules), the rule-based simulated customer, the templates and the frozen regression set.
 * @example
 * const retail = createRetailDomain({ worlds: [loadTauBenchWorld(dir)] });
 * const state = retail.fork(retail.createState({ world: 'tau-bench', digest: 'd991536b…' }));
 */
export function createRetailDomain(options: CreateRetailDomainOptions = {}): RetailDomain {
  const byDigest = new Map<string, RetailWorld>();
  const generated = new Map<string, RetailWorld>();
  const cacheSize = Math.max(1, options.generatedCacheSize ?? 12);

  const addWorld = (world: RetailWorld): void => {
    if (!byDigest.has(world.digest)) byDigest.set(world.digest, world);
  };
  for (const world of options.worlds ?? []) addWorld(world);

  const resolveWorld = (initialState: JsonValue): RetailWorld => {
    const asGenerated = generatedRef.safeParse(initialState);
    if (asGenerated.success) {
      const params = normalizeWorldParams(asGenerated.data);
      const key = canonicalize(params);
      let world = generated.get(key);
      if (world === undefined) {
        world = taskWorld(params) ?? generateRetailWorld(params);
        if (generated.size >= cacheSize) generated.delete(generated.keys().next().value!);
      } else {
        generated.delete(key);
      }
      generated.set(key, world);
      return world;
    }
    const asDigest = digestRef.safeParse(initialState);
    if (asDigest.success) {
      const world = byDigest.get(asDigest.data.digest);
      if (world !== undefined) return world;
      throw new EnvHarnessError(
        'PARAMS_INVALID',
        `no retail world with digest ${asDigest.data.digest} (${asDigest.data.world}); load it (e.g. loadTauBenchWorld(dir)) and pass it to createRetailDomain({ worlds }) or domain.addWorld`,
        { details: { pointer: '/digest', known: [...byDigest.keys()] } },
      );
    }
    throw new EnvHarnessError(
      'PARAMS_INVALID',
      `retail initialState must be { "world": "<name>", "digest": "<sha256>" } or { "world": "generated", "seed": <int>, "users"?, "orders"?, "products"? }, got ${JSON.stringify(initialState)}`,
      { details: { pointer: '' } },
    );
  };

  const domain = defineDomain<RetailState>({
    name: 'retail',
    version: 1,
    description: "Customer service for an online store, in tau-bench's retail schema: users, orders, products and 16 tools.",
    createState: (initialState) => createRetailState(resolveWorld(initialState)),
    fork: forkRetailState,
    hashState: hashRetailState,
    exportState: (state) => exportRetailState(state) as unknown as JsonValue,
    tools: retailTools,
    templates: options.tasks === false ? [] : [...(options.templates ?? retailTemplates)],
    ...(options.tasks === false
      ? {}
      : {
          policy: { text: RETAIL_POLICY_TEXT, rules: retailPolicyRules },
          acceptance: retailAcceptanceChecks,
          createUser: createRetailUser,
          regressionSet: RETAIL_REGRESSION_SET,
          // The main built-in world: `envharness train` trains here unless told otherwise.
          defaults: { train: true },
        }),
    baselines: { 'rule-based': (o) => createRetailRuleBasedAgent(o as RetailRuleBasedOptions) },
    // Free text a third party could write: retail's records carry none, so these are fields a real
    // store adds (a note on the order or the account, a seller's product description).
    injectionPoints: RETAIL_INJECTION_POINTS,
  });
  return Object.assign(domain, { addWorld, resolveWorld });
}
