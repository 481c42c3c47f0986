/** Copy-on-write retail state: an immutable world plus a small overlay of replaced records per table. */
import { hash } from 'node:crypto';
import { sha256 } from '../../core/index.js';
import { quote, sortKeys } from './canonical.js';
import {
  RETAIL_TABLES,
  type RetailData,
  type RetailOrder,
  type RetailProduct,
  type RetailRecord,
  type RetailTable,
  type RetailUser,
} from './schema.js';
import { canonicalTables, deepFreeze, recordCanon, type RetailWorld } from './world.js';

/** Per table, the replaced records; a table nothing replaced shares `NO_CHANGES` until its first write. */
type Overlay = { [T in RetailTable]: Map<string, RetailRecord<T>> };

/**
 * The overlay of a table with no replaced records, shared by every state (a fork of an unchanged world
 * allocates no maps). Never written: `putFrozenRecord` gives a table its own map first.
 */
const NO_CHANGES = new Map<string, never>();

/**
 * The working state of an episode. Records are immutable: a write replaces a whole record in the
 * overlay, so forks share every record they have not changed.
 */
export interface RetailState {
  readonly world: RetailWorld;
  /** @internal Replaced records per table. */
  readonly overlay: Overlay;
  /** @internal Memoised `hashRetailState`, cleared by every write. */
  hash: string | undefined;
}

/** A fresh state on a world, with no changes. */
export function createRetailState(world: RetailWorld): RetailState {
  return { world, overlay: { orders: NO_CHANGES, products: NO_CHANGES, users: NO_CHANGES }, hash: world.cache.digest };
}

/** A working copy: O(changed records); writes to either side never reach the other. */
export function forkRetailState(state: RetailState): RetailState {
  const { orders, products, users } = state.overlay;
  return {
    world: state.world,
    overlay: {
      orders: orders.size === 0 ? NO_CHANGES : new Map(orders),
      products: products.size === 0 ? NO_CHANGES : new Map(products),
      users: users.size === 0 ? NO_CHANGES : new Map(users),
    },
    hash: state.hash,
  };
}

/** The current record, or undefined when the key is not in the table (Python's `key in dict`). */
export function getRecord<T extends RetailTable>(state: RetailState, table: T, key: string): RetailRecord<T> | undefined {
  return (state.overlay[table].get(key) ?? state.world.cache.byKey[table].get(key)) as RetailRecord<T> | undefined;
}

export const getOrder = (state: RetailState, orderId: string): RetailOrder | undefined => getRecord(state, 'orders', orderId);
export const getUser = (state: RetailState, userId: string): RetailUser | undefined => getRecord(state, 'users', userId);
export const getProduct = (state: RetailState, productId: string): RetailProduct | undefined =>
  getRecord(state, 'products', productId);

/**
 * Replaces (or adds) a record. The record is deep-frozen: callers build a new object, never mutate
 * one they read. Keys keep their position in the table; a new key goes last, as in a Python dict.
 */
export function putRecord<T extends RetailTable>(state: RetailState, table: T, key: string, record: RetailRecord<T>): void {
  putFrozenRecord(state, table, key, deepFreeze(record));
}

/** @internal `putRecord` for callers that froze every object they built (the tools): skips the walk. */
export function putFrozenRecord<T extends RetailTable>(state: RetailState, table: T, key: string, record: RetailRecord<T>): void {
  let overlay = state.overlay[table] as Map<string, RetailRecord<T>>;
  if (overlay === NO_CHANGES) {
    overlay = new Map();
    (state.overlay as Record<RetailTable, Map<string, unknown>>)[table] = overlay;
  }
  overlay.set(key, record);
  state.hash = undefined;
}

/** Every key of a table in insertion order (base order, then added keys). */
export function listKeys(state: RetailState, table: RetailTable): string[] {
  const base = state.world.data[table];
  const keys = Object.keys(base);
  for (const key of state.overlay[table].keys()) if (!Object.hasOwn(base, key)) keys.push(key);
  return keys;
}

/** Records whose content differs from the world they were forked from, sorted by table and key. */
export function listChanges(state: RetailState): Array<{ table: RetailTable; key: string }> {
  const out: Array<{ table: RetailTable; key: string }> = [];
  for (const table of RETAIL_TABLES) {
    for (const key of changedKeys(state, table)) out.push({ table, key });
  }
  return out;
}

function changedKeys(state: RetailState, table: RetailTable): string[] {
  const overlay = state.overlay[table];
  if (overlay.size === 0) return [];
  const world = state.world;
  const base = world.cache.byKey[table];
  const keys: string[] = [];
  for (const [key, record] of overlay) {
    const original = base.get(key);
    // A record written back to its original content is not a change: equal worlds hash equal.
    if (original !== undefined && (record === original || recordCanon(world, record, true) === recordCanon(world, original))) continue;
    keys.push(key);
  }
  return sortKeys(keys);
}

/**
 * The state's digest, incremental: the world's digest when nothing differs from the world, else
 * sha256 over the world's digest and the canonical JSON of each differing record, by table and key.
 * Two states forked from the same world hash equal exactly when their canonical exports are equal,
 * whatever path led there (a record changed and changed back is not a difference). States of
 * different worlds are not comparable by this hash; use `digestRetailExport` for that.
 */
export function hashRetailState(state: RetailState): string {
  if (state.hash !== undefined) return state.hash;
  const world = state.world;
  const lines: string[] = [];
  for (const table of RETAIL_TABLES) {
    for (const key of changedKeys(state, table)) {
      lines.push(table + '\t' + quote(key) + '\t' + recordCanon(world, state.overlay[table].get(key)!, true));
    }
  }
  // One-shot crypto.hash: the same digest as core's sha256 without a Hash object per call.
  state.hash = lines.length === 0 ? world.digest : hash('sha256', 'envharness.retail-state/1\n' + world.digest + '\n' + lines.join('\n'), 'hex');
  return state.hash;
}

/**
 * sha256 of the RFC 8785 canonical JSON of `exportRetailState(state)`: the digest tau-bench computes
 * for its database. Costs one sha256 over the whole world (a few ms for 1,000 orders): unchanged
 * records reuse their memoised canonical JSON.
 */
export function digestRetailExport(state: RetailState): string {
  if (state.overlay.orders.size + state.overlay.products.size + state.overlay.users.size === 0) return state.world.digest;
  return sha256(canonicalTables(state.world, state.overlay));
}

/**
 * `{ orders, products, users }` with tau-bench's field names, values and key order (Python dict
 * semantics: a replaced key keeps its place, a new one goes last). Records are shared, frozen
 * objects: copy before mutating. JS objects list integer-like keys (item ids below 2^32 - 1)
 * first and in numeric order whatever their insertion order; canonical JSON is unaffected.
 */
export function exportRetailState(state: RetailState): RetailData {
  return {
    orders: exportTable(state, 'orders'),
    products: exportTable(state, 'products'),
    users: exportTable(state, 'users'),
  };
}

function exportTable<T extends RetailTable>(state: RetailState, table: T): Record<string, RetailRecord<T>> {
  const base = state.world.data[table] as Record<string, RetailRecord<T>>;
  const overlay = state.overlay[table] as Map<string, RetailRecord<T>>;
  if (overlay.size === 0) return base;
  const out: Record<string, RetailRecord<T>> = {};
  for (const key of Object.keys(base)) setOwn(out, key, overlay.get(key) ?? base[key]!);
  for (const [key, record] of overlay) if (!Object.hasOwn(base, key)) setOwn(out, key, record);
  return out;
}

/** `obj[key] = value` that also works for a key named `__proto__` (possible in loaded JSON). */
function setOwn<V>(obj: Record<string, V>, key: string, value: V): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}
