/** A retail world: an immutable (deep-frozen) database plus the caches that make hashing it cheap. */
import { canonicalizeFrozen, EnvHarnessError, escapePointerToken, sha256, type JsonObject } from '../../core/index.js';
import { canonicalJson, quote, sortKeys } from './canonical.js';
import { RETAIL_TABLES, type RetailData, type RetailTable, type RetailVariant } from './schema.js';

/** A loaded or generated database that states are forked from. Never mutated. */
export interface RetailWorld {
  /** Where the world came from: `tau-bench`, `generated`, `fixture`, or any label the caller gives. */
  readonly source: string;
  /** The deep-frozen tables. */
  readonly data: RetailData;
  /** Generator parameters, for generated worlds. */
  readonly params: JsonObject | undefined;
  /** sha256 of the RFC 8785 canonical JSON of `data` (tau-bench's own digest for its world); computed once. */
  readonly digest: string;
  /** @internal Memoised canonical JSON per record, sorted keys and lookup indexes. */
  readonly cache: WorldCache;
}

/** @internal */
export interface WorldCache {
  /** Canonical JSON of frozen records and of every frozen object inside them, keyed by identity. */
  readonly canon: WeakMap<object, string>;
  readonly sortedKeys: Partial<Record<RetailTable, readonly string[]>>;
  /** Per table: the base records by key (a Map lookup beats a 1,000-key dictionary object). */
  readonly byKey: { readonly [T in RetailTable]: ReadonlyMap<string, object> };
  /** Per table: canonical text of the base entries (`"key":record`, comma-separated) and offsets. */
  readonly tableTexts: Partial<Record<RetailTable, TableText>>;
  /** Variants by item id per base product (frozen item-id-keyed objects have slow lookups in V8). */
  variants?: Map<string, ReadonlyMap<string, RetailVariant>>;
  userPositions?: Map<string, number>;
  emailIndex?: Map<string, string[]>;
  nameZipIndex?: Map<string, string[]>;
  /** `list_all_product_types` of the base products: [name, product id] sorted by name. */
  productTypes?: ReadonlyArray<readonly [string, string]>;
  /** The same as `list_all_product_types`' frozen output object, shared by every call on the base products. */
  productTypesOutput?: Readonly<Record<string, string>>;
  digest?: string;
}

/** @internal The base table's canonical body; entry i spans text[starts[i], ends[i]). */
export interface TableText {
  readonly text: string;
  readonly index: ReadonlyMap<string, number>;
  readonly starts: readonly number[];
  readonly ends: readonly number[];
}

export interface CreateRetailWorldOptions {
  source?: string;
  params?: JsonObject;
  /** Check the tables against tau-bench's schema and cross references (default true). */
  validate?: boolean;
}

/**
 * Wraps tables as a world. Takes ownership of `data`: it is deep-frozen in place, not copied.
 * @example
 * const world = createRetailWorld({ orders: {}, products: {}, users: {} }, { source: 'fixture' });
 */
export function createRetailWorld(data: RetailData, options: CreateRetailWorldOptions = {}): RetailWorld {
  const source = options.source ?? 'custom';
  if (options.validate !== false) validateRetailData(data, source);
  deepFreeze(data);
  const byKey = {
    orders: new Map(Object.entries(data.orders)),
    products: new Map(Object.entries(data.products)),
    users: new Map(Object.entries(data.users)),
  };
  const cache: WorldCache = { canon: new WeakMap(), byKey, sortedKeys: {}, tableTexts: {} };
  const world: RetailWorld = {
    source,
    data,
    params: options.params === undefined ? undefined : deepFreeze(structuredClone(options.params)),
    get digest(): string {
      return (cache.digest ??= sha256(canonicalTables(world, undefined)));
    },
    cache,
  };
  return Object.freeze(world);
}

/**
 * Checks tables against tau-bench's schema (the fields its tools read, with their types) and that
 * every order's user exists; throws IMPORT_INVALID with the JSON pointer of the first problem.
 * Extra fields are allowed. Hand-written rather than zod: 10x faster on a 1 MB world.
 */
export function validateRetailData(data: unknown, source = 'custom'): asserts data is RetailData {
  const fail = (pointer: string, message: string): never => {
    throw new EnvHarnessError('IMPORT_INVALID', `${source} retail world is not in tau-bench's schema at ${pointer}: ${message}`, {
      details: { pointer },
    });
  };
  const obj = (value: unknown, at: string): Record<string, unknown> =>
    typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : fail(at, 'expected an object');
  const fields = (value: unknown, at: string, spec: Record<string, 'string' | 'number' | 'boolean' | 'object' | 'array'>) => {
    const record = obj(value, at);
    for (const [key, type] of Object.entries(spec)) {
      const field = record[key];
      const actual = Array.isArray(field) ? 'array' : field === null ? 'null' : typeof field;
      if (actual !== type) fail(`${at}/${escapePointerToken(key)}`, `expected ${type}, got ${field === undefined ? 'nothing' : actual}`);
    }
    return record;
  };
  const strings = (value: unknown, at: string): void => {
    (value as unknown[]).forEach((s, i) => typeof s === 'string' || fail(`${at}/${i}`, 'expected a string'));
  };
  const ADDRESS = { address1: 'string', address2: 'string', city: 'string', country: 'string', state: 'string', zip: 'string' } as const;
  const tables = fields(data, '', { orders: 'object', products: 'object', users: 'object' });
  const users = obj(tables.users, '/users');
  for (const [id, value] of Object.entries(users)) {
    const at = `/users/${escapePointerToken(id)}`;
    const user = fields(value, at, { name: 'object', address: 'object', email: 'string', payment_methods: 'object', orders: 'array' });
    fields(user.name, `${at}/name`, { first_name: 'string', last_name: 'string' });
    fields(user.address, `${at}/address`, ADDRESS);
    strings(user.orders, `${at}/orders`);
    for (const [pid, pm] of Object.entries(obj(user.payment_methods, `${at}/payment_methods`))) {
      const pat = `${at}/payment_methods/${escapePointerToken(pid)}`;
      const method = fields(pm, pat, { source: 'string', id: 'string' });
      if (method.source === 'gift_card') fields(pm, pat, { balance: 'number' });
      else if (method.source === 'credit_card') fields(pm, pat, { brand: 'string', last_four: 'string' });
      else if (method.source !== 'paypal') fail(`${pat}/source`, `unknown payment source ${JSON.stringify(method.source)}`);
    }
  }
  for (const [id, value] of Object.entries(obj(tables.products, '/products'))) {
    const at = `/products/${escapePointerToken(id)}`;
    const product = fields(value, at, { name: 'string', product_id: 'string', variants: 'object' });
    for (const [vid, variant] of Object.entries(obj(product.variants, `${at}/variants`))) {
      const v = fields(variant, `${at}/variants/${escapePointerToken(vid)}`, { item_id: 'string', options: 'object', available: 'boolean', price: 'number' });
      stringValues(v.options, `${at}/variants/${escapePointerToken(vid)}/options`, fail);
    }
  }
  for (const [id, value] of Object.entries(obj(tables.orders, '/orders'))) {
    const at = `/orders/${escapePointerToken(id)}`;
    const order = fields(value, at, {
      order_id: 'string', user_id: 'string', address: 'object', items: 'array', fulfillments: 'array', status: 'string', payment_history: 'array',
    });
    fields(order.address, `${at}/address`, ADDRESS);
    (order.items as unknown[]).forEach((item, i) => {
      const it = fields(item, `${at}/items/${i}`, { name: 'string', product_id: 'string', item_id: 'string', price: 'number', options: 'object' });
      stringValues(it.options, `${at}/items/${i}/options`, fail);
    });
    (order.fulfillments as unknown[]).forEach((f, i) => {
      const ful = fields(f, `${at}/fulfillments/${i}`, { tracking_id: 'array', item_ids: 'array' });
      strings(ful.tracking_id, `${at}/fulfillments/${i}/tracking_id`);
      strings(ful.item_ids, `${at}/fulfillments/${i}/item_ids`);
    });
    (order.payment_history as unknown[]).forEach((p, i) => {
      const tx = fields(p, `${at}/payment_history/${i}`, { transaction_type: 'string', amount: 'number', payment_method_id: 'string' });
      if (tx.transaction_type !== 'payment' && tx.transaction_type !== 'refund') {
        fail(`${at}/payment_history/${i}/transaction_type`, 'expected "payment" or "refund"');
      }
    });
    if (!Object.hasOwn(users, order.user_id as string)) fail(`${at}/user_id`, `unknown user ${String(order.user_id)}`);
  }
}

function stringValues(value: unknown, at: string, fail: (pointer: string, message: string) => never): void {
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    if (typeof v !== 'string') fail(`${at}/${escapePointerToken(key)}`, 'expected a string');
  }
}


/**
 * Canonical JSON of one immutable record, memoised per world. A record a tool made (`made`: from a state's
 * overlay) is written through the world's memo too, and its text is also kept by core for writers without a memo,
 * so that the step's transition, whose tool output is usually that very record, reuses the text rather than
 * serialising it again.
 */
export function recordCanon(world: RetailWorld, record: object, made = false): string {
  let text = world.cache.canon.get(record);
  if (text === undefined) {
    text = made ? canonicalizeFrozen(record, world.cache.canon) : canonicalJson(record, world.cache.canon);
    // Flattens V8's concatenation tree once; joining unflattened strings costs ~10x more on every digest.
    text.charCodeAt(0);
    world.cache.canon.set(record, text);
  }
  return text;
}

/** The base table's keys in RFC 8785 order, computed once per world. */
export function sortedBaseKeys(world: RetailWorld, table: RetailTable): readonly string[] {
  return (world.cache.sortedKeys[table] ??= Object.freeze(sortKeys(Object.keys(world.data[table]))));
}

/** The canonical body of a base table, built once per world. */
function tableText(world: RetailWorld, table: RetailTable): TableText {
  let cached = world.cache.tableTexts[table];
  if (cached === undefined) {
    const base = world.data[table] as Record<string, object>;
    const keys = sortedBaseKeys(world, table);
    const entries = keys.map((key) => quote(key) + ':' + recordCanon(world, base[key]!));
    const starts: number[] = [];
    const ends: number[] = [];
    let offset = 0;
    for (const entry of entries) {
      starts.push(offset);
      offset += entry.length;
      ends.push(offset);
      offset += 1;
    }
    const text = entries.join(',');
    text.charCodeAt(0);
    cached = { text, index: new Map(keys.map((k, i) => [k, i])), starts, ends };
    world.cache.tableTexts[table] = cached;
  }
  return cached;
}

/**
 * Canonical JSON of `{ orders, products, users }` with `changes` laid over the base tables: the
 * base tables' canonical text (built once per world) with the changed entries spliced in, so only
 * changed records are serialised and the rest is one memory copy.
 */
export function canonicalTables(
  world: RetailWorld,
  changes: { readonly [T in RetailTable]: ReadonlyMap<string, object> } | undefined,
): string {
  const parts: string[] = [];
  for (let t = 0; t < RETAIL_TABLES.length; t++) {
    const table = RETAIL_TABLES[t]!;
    parts.push(t === 0 ? '{"' + table + '":{' : '},"' + table + '":{');
    const body = tableText(world, table);
    const overlay = changes?.[table];
    if (overlay === undefined || overlay.size === 0) {
      parts.push(body.text);
      continue;
    }
    const changed: number[] = [];
    let added = false;
    for (const key of overlay.keys()) {
      const i = body.index.get(key);
      if (i === undefined) added = true;
      else changed.push(i);
    }
    if (added) {
      parts.push(mergedBody(world, table, overlay));
      continue;
    }
    changed.sort((a, b) => a - b);
    const keys = sortedBaseKeys(world, table);
    let offset = 0;
    for (const i of changed) {
      parts.push(body.text.slice(offset, body.starts[i]));
      parts.push(quote(keys[i]!) + ':' + recordCanon(world, overlay.get(keys[i]!)!));
      offset = body.ends[i]!;
    }
    parts.push(body.text.slice(offset));
  }
  parts.push('}}');
  return parts.join('');
}

/** The body of a table whose overlay adds keys the base does not have (rare: no tool adds records). */
function mergedBody(world: RetailWorld, table: RetailTable, overlay: ReadonlyMap<string, object>): string {
  const base = world.data[table] as Record<string, object>;
  const keys = sortKeys([...sortedBaseKeys(world, table), ...[...overlay.keys()].filter((k) => !Object.hasOwn(base, k))]);
  return keys.map((key) => quote(key) + ':' + recordCanon(world, overlay.get(key) ?? base[key]!)).join(',');
}

/** Freezes a value and everything reachable from it; stops at objects that are already frozen. */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  return value;
}
