/** The fixed generated worlds retail tasks live in, memoised with the lookups templates sample from. */
import type { JsonObject, Rng } from '../../../core/index.js';
import { generateRetailWorld, normalizeWorldParams } from '../generator.js';
import type { PaymentMethod, RetailOrder, RetailUser } from '../schema.js';
import type { RetailWorld } from '../world.js';

/**
 * World seeds of generated tasks. A small fixed set keeps the runtime's state cache warm; changing it
 * changes every task (bump the template versions and the regression digest).
 */
export const TASK_WORLD_SEEDS: readonly number[] = [11, 23, 37, 41, 53, 67, 79, 97];

/** A customer with their orders, as templates sample them. */
export interface Customer {
  id: string;
  user: RetailUser;
  /** In the user's `orders` order; the last one is their most recent order. */
  orders: readonly RetailOrder[];
  methods: readonly PaymentMethod[];
}

/** A world plus customer lookups and memoised candidate lists. */
export interface WorldIndex {
  seed: number;
  world: RetailWorld;
  initialState: JsonObject;
  /** Customers with at least one order, in table order. */
  customers: readonly Customer[];
  /** Candidate lists by a caller-chosen key (template and level): pure memoisation. */
  memo: Map<string, readonly unknown[]>;
}

// Pure memoisation: a world is a function of its seed, so caching it changes no result.
const indexes = new Map<number, WorldIndex>();

/** The world of `seed` at the default size (500 users, 1,000 orders, 50 products), built once. */
export function worldIndex(seed: number): WorldIndex {
  let index = indexes.get(seed);
  if (index === undefined) {
    const params = normalizeWorldParams({ seed });
    const world = generateRetailWorld(params);
    const customers: Customer[] = [];
    for (const [id, user] of Object.entries(world.data.users)) {
      if (user.orders.length === 0) continue;
      customers.push({
        id,
        user,
        orders: user.orders.map((o) => world.data.orders[o]!),
        methods: Object.values(user.payment_methods),
      });
    }
    index = { seed, world, initialState: { ...params }, customers, memo: new Map() };
    indexes.set(seed, index);
  }
  return index;
}

/**
 * The memoised world for generator parameters, when they name one of the task worlds at the default
 * size (so the domain's states and the templates share one world object and its caches).
 */
export function taskWorld(params: { generator: number; seed: number; users: number; orders: number; products: number }): RetailWorld | undefined {
  if (!TASK_WORLD_SEEDS.includes(params.seed)) return undefined;
  const defaults = normalizeWorldParams({ seed: params.seed });
  if (params.generator !== defaults.generator || params.users !== defaults.users || params.orders !== defaults.orders || params.products !== defaults.products) {
    return undefined;
  }
  return worldIndex(params.seed).world;
}

/** Memoised candidate list of a world under `key`. */
export function candidates<T>(index: WorldIndex, key: string, make: () => T[]): readonly T[] {
  let list = index.memo.get(key) as readonly T[] | undefined;
  if (list === undefined) {
    list = make();
    index.memo.set(key, list);
  }
  return list;
}

/**
 * Picks a world and a candidate from it: a world chosen by the rng, then the next world if that one has
 * no candidates under `key`. Throws when no world has any (a template bug, caught by its tests).
 */
export function pickCandidate<T>(rng: Rng, key: string, make: (index: WorldIndex) => T[]): { index: WorldIndex; value: T } {
  const start = rng.int(0, TASK_WORLD_SEEDS.length - 1);
  for (let k = 0; k < TASK_WORLD_SEEDS.length; k++) {
    const index = worldIndex(TASK_WORLD_SEEDS[(start + k) % TASK_WORLD_SEEDS.length]!);
    const list = candidates(index, key, () => make(index));
    if (list.length > 0) return { index, value: rng.pick(list) };
  }
  throw new Error(`no retail world has a candidate for ${key}`);
}
