/**
 * The backing data store behind a site: an immutable base world (shared by every episode of a task) plus
 * a persistent overlay of changed records. A write returns a new store (O(changes)), a fork is free, and
 * the hash is memoised and covers the base digest plus the changed records only.
 */
import { digest, sha256, type JsonObject, type JsonValue } from '../../core/index.js';
import { memoOn } from './memo.js';

/** One record: a flat JSON object. */
export type Row = Readonly<Record<string, JsonValue>>;

/** The base world: tables of records by id. */
export type Tables = Readonly<Record<string, Readonly<Record<string, Row>>>>;

/** A store: never mutated after it is built (every write makes a new one that shares the base). */
export interface WebStore {
  readonly base: Tables;
  readonly baseHash: string;
  /** `table/id` → the record now (`null`: deleted). */
  readonly changes: ReadonlyMap<string, Row | null>;
  /** Insertion sequence for new ids, per table. */
  readonly seq: Readonly<Record<string, number>>;
  /** Memoised hash (set once, on first `hashStore`). */
  hash?: string;
}

/** A store on a base world. */
export function createStore(base: Tables, baseHash: string = digest(base)): WebStore {
  return { base, baseHash, changes: new Map(), seq: {} };
}

/** The record `table/id` now, or undefined. */
export function getRow(store: WebStore, table: string, id: string): Row | undefined {
  const changed = store.changes.get(`${table}/${id}`);
  if (changed !== undefined) return changed ?? undefined;
  return store.base[table]?.[id];
}

/**
 * Every record of a table now, sorted by id. Stores never change, so the list is kept per store and
 * table (every render of a page reads its tables again; most steps do not write).
 */
export function rowsOf(store: WebStore, table: string): ReadonlyArray<{ id: string; row: Row }> {
  const tables = memoOn(store, LISTED, newListing);
  let rows = tables.get(table);
  // Not frozen (typed read-only instead): V8 slices and maps frozen arrays on a slow path (about 15x).
  if (rows === undefined) tables.set(table, (rows = listRows(store, table)));
  return rows;
}

/**
 * The records of a table that `keep` accepts, in id order, kept per store like `rowsOf` under `name`,
 * which must name the filter and every input it reads (a page's search, its status filter): a page
 * rendered again on the same store (paged, sorted, scrolled, a dialog closed) filters once.
 */
export function rowsWhere(store: WebStore, table: string, name: string, keep: (row: Row) => boolean): ReadonlyArray<{ id: string; row: Row }> {
  // Per table, then per name: no `table + name` string built (and hashed) on every render.
  const tables = memoOn(store, FILTERED, newFiltering);
  let filters = tables.get(table);
  if (filters === undefined) tables.set(table, (filters = new Map()));
  let rows = filters.get(name);
  if (rows === undefined) {
    const all = rowsOf(store, table);
    const kept: Array<{ id: string; row: Row }> = [];
    for (let i = 0; i < all.length; i++) if (keep(all[i]!.row)) kept.push(all[i]!);
    filters.set(name, (rows = kept));
  }
  return rows;
}

/** The store's listed tables, and its filtered ones by table and filter name (memo.ts). */
const LISTED = Symbol('listed rows');
const newListing = (): Map<string, ReadonlyArray<{ id: string; row: Row }>> => new Map();
const FILTERED = Symbol('filtered rows');
const newFiltering = (): Map<string, Map<string, ReadonlyArray<{ id: string; row: Row }>>> => new Map();

function listRows(store: WebStore, table: string): ReadonlyArray<{ id: string; row: Row }> {
  const base = store.base[table] ?? {};
  // Every store of a world shares its base: the base's records in id order are listed once per base table.
  const listed = baseListing(base);
  if (store.changes.size === 0) return listed.rows;
  const prefix = `${table}/`;
  // The base's list with this table's changes applied: changed records replaced in place, deleted ones
  // dropped, new ones added and the list sorted again (the base's list itself when nothing here changed).
  let rows: Array<{ id: string; row: Row }> | undefined;
  let deleted: Set<string> | undefined;
  let added = false;
  for (const [key, row] of store.changes) {
    if (!key.startsWith(prefix)) continue;
    const id = key.slice(prefix.length);
    const at = placesOf(listed).get(id);
    rows ??= listed.rows.slice();
    if (row === null) {
      if (at !== undefined) (deleted ??= new Set()).add(id);
    } else if (at !== undefined) rows[at] = { id, row };
    else {
      rows.push({ id, row });
      added = true;
    }
  }
  if (rows === undefined) return listed.rows;
  if (deleted !== undefined) rows = rows.filter((r) => !deleted.has(r.id));
  if (added) rows.sort((a, b) => byId(a.id, b.id));
  return rows;
}

/** A base table's records in id order (listed once per base table: every store of a world shares its base). */
function baseListing(base: Readonly<Record<string, Row>>): BaseListing {
  return memoOn(base, BASE_LISTED, () => listBase(base));
}

/** A base table's records in id order, and each id's place in that list (made when a change first needs it). */
interface BaseListing {
  readonly rows: ReadonlyArray<{ id: string; row: Row }>;
  at: ReadonlyMap<string, number> | undefined;
}
const BASE_LISTED = Symbol('listed base');

function listBase(base: Readonly<Record<string, Row>>): BaseListing {
  // The default order is `byId`'s (UTF-16 code units), without a comparator called per comparison.
  const ids = Object.keys(base).sort();
  // Pushed from empty: a packed array (`new Array(n)` filled in is holey, which slices and maps slower).
  const rows: Array<{ id: string; row: Row }> = [];
  for (let i = 0; i < ids.length; i++) rows.push({ id: ids[i]!, row: base[ids[i]!]! });
  return { rows, at: undefined };
}

/** Each id's place in a base listing (most tables a session reads it never writes). */
function placesOf(listed: BaseListing): ReadonlyMap<string, number> {
  if (listed.at !== undefined) return listed.at;
  const at = new Map<string, number>();
  for (let i = 0; i < listed.rows.length; i++) at.set(listed.rows[i]!.id, i);
  return (listed.at = at);
}

const byId = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** A new store with `table/id` set to `row` (`null` deletes). Writing a record back to its base value drops the change. */
export function putRow(store: WebStore, table: string, id: string, row: Row | null): WebStore {
  const key = `${table}/${id}`;
  const original = store.base[table]?.[id];
  const changes = new Map(store.changes);
  if ((row === null && original === undefined) || (row !== null && original !== undefined && sameRecord(row, original))) changes.delete(key);
  else changes.set(key, row === null ? null : Object.freeze({ ...row }));
  return { base: store.base, baseHash: store.baseHash, changes, seq: store.seq };
}

/** A new id for `table` (`prefix` + a sequence after the base's ids) and the store that reserved it. */
export function nextId(store: WebStore, table: string, prefix: string): { id: string; store: WebStore } {
  const n = (store.seq[table] ?? baseListing(store.base[table] ?? {}).rows.length) + 1;
  const id = `${prefix}${String(1000 + n)}`;
  return { id, store: { ...store, seq: { ...store.seq, [table]: n }, hash: undefined } as WebStore };
}

/**
 * The store's digest: the base digest when nothing changed, else sha256 over the base digest and the
 * canonical JSON of each changed record in key order. Equal content gives equal hashes whatever path
 * led there (a record changed and changed back is no change).
 */
export function hashStore(store: WebStore): string {
  if (store.hash !== undefined) return store.hash;
  let out = store.baseHash;
  if (store.changes.size > 0) {
    const keys = [...store.changes.keys()].sort();
    const lines = keys.map((k) => `${k}\t${recordDigest(store.changes.get(k) ?? null)}`);
    out = sha256(`envharness.web-store/1\n${store.baseHash}\n${lines.join('\n')}`);
  }
  store.hash = out;
  return out;
}

/**
 * Whether two records have the same canonical JSON (what comparing their digests says), without hashing
 * when every value is a string (without surrogates), a boolean, null or a finite number; anything else is
 * left to the digests.
 */
function sameRecord(a: Row, b: Row): boolean {
  let count = 0;
  for (const k in a) {
    const x = a[k];
    if (x === undefined) continue;
    count++;
    const y = b[k];
    if (!plain(x) || !plain(y)) return digest(a) === digest(b);
    if (x !== y) return false;
  }
  for (const k in b) {
    const y = b[k];
    if (y === undefined) continue;
    if (!plain(y)) return digest(a) === digest(b);
    count--;
  }
  return count === 0;
}

// Strings with surrogates go to the digests too: a lone one has no canonical form, and the digest throws as before.
const plain = (v: unknown): boolean => v === null || (typeof v === 'string' && !SURROGATE.test(v)) || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
const SURROGATE = /[\uD800-\uDFFF]/;

/** A changed record's digest, kept per record object (records in a store are frozen and never change). */
function recordDigest(row: Row | null): string {
  if (row === null) return NULL_DIGEST;
  let out = recordDigests.get(row);
  if (out === undefined) recordDigests.set(row, (out = digest(row)));
  return out;
}
const recordDigests = new WeakMap<Row, string>();
const NULL_DIGEST = digest(null);

/** The whole store as JSON, tables and ids sorted. */
export function exportStore(store: WebStore): JsonObject {
  const tables = new Set(Object.keys(store.base));
  for (const key of store.changes.keys()) tables.add(key.slice(0, key.indexOf('/')));
  const out: JsonObject = {};
  for (const table of [...tables].sort()) {
    const rows: JsonObject = {};
    for (const { id, row } of rowsOf(store, table)) rows[id] = row as JsonObject;
    out[table] = rows;
  }
  return out;
}
