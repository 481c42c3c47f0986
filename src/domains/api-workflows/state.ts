/** Episode state of api-workflows: an immutable world, an overlay of changed records, and the service session. */
import { digest, sha256, type Feedback } from '../../core/index.js';
import type { FaultRecord, Scenario } from './scenario.js';
import { idOf, TABLES, type Table, type World, type WorldRecord } from './world.js';

/**
 * What the simulated services remember besides the records: the clock, call counts, rate-limit windows,
 * auth, idempotency keys, replica lag and the fault log. It is not part of the graded world (a failing
 * call may advance the clock), so `hashState` covers the records only.
 */
export interface Session {
  /** Simulated seconds: every call takes one, `wait` takes more. */
  clock: number;
  calls: Map<string, number>;
  /** Per service: the first second at which calls are accepted again after a 429. */
  limitedUntil: Map<string, number>;
  /** The token was renewed with `refresh_token` after it expired. */
  refreshed: boolean;
  idempotency: Map<string, { tool: string; args: string; output: unknown }>;
  /** Record key (`table/id`) → the previous version and the second it changed (what a lagging replica serves). */
  changedAt: Map<string, { previous: WorldRecord | null; at: number }>;
  /** Record keys the agent was last served stale (a write on them is a stale write). */
  staleServed: Set<string>;
  /** Scenario events already applied, by index. */
  eventsDone: Set<number>;
  faults: FaultRecord[];
  /** Feedback of the latest call, drained by the domain's feedback producer. */
  feedback: Feedback[];
  /** Signatures of side effects created in this episode, for duplicate detection: signature → record key. */
  effects: Map<string, string>;
}

/** The working state of an episode. */
export interface ApiState {
  readonly world: World;
  readonly scenario: Scenario;
  /** Changed or new records per table (null: deleted). */
  readonly overlay: { readonly [T in Table]: Map<string, WorldRecord | null> };
  readonly seq: Record<Table, number>;
  session: Session;
  /** Memoised hash, cleared by every record change. */
  hash: string | undefined;
}

function freshSession(): Session {
  return { clock: 0, calls: new Map(), limitedUntil: new Map(), refreshed: false, idempotency: new Map(), changedAt: new Map(), staleServed: new Set(), eventsDone: new Set(), faults: [], feedback: [], effects: new Map() };
}

/** A fresh state on a world with a scenario (faults and events). */
export function createApiState(world: World, scenario: Scenario): ApiState {
  const overlay: ApiState['overlay'] = { customers: new Map(), staff: new Map(), invoices: new Map(), payments: new Map(), products: new Map(), shipments: new Map(), tickets: new Map(), events: new Map(), outbox: new Map() };
  return { world, scenario, overlay, seq: { ...world.nextSeq }, session: freshSession(), hash: world.digest };
}

const copyMap = <K, V>(map: ReadonlyMap<K, V>): Map<K, V> => (map.size === 0 ? new Map() : new Map(map));
const copySet = <T>(set: ReadonlySet<T>): Set<T> => (set.size === 0 ? new Set() : new Set(set));

/** A working copy: O(changed records + session entries). */
export function forkApiState(state: ApiState): ApiState {
  const o = state.overlay;
  // Spelled out (not built from TABLES): a fork happens every episode, and an empty table needs no copy loop.
  const overlay: ApiState['overlay'] = {
    customers: copyMap(o.customers),
    staff: copyMap(o.staff),
    invoices: copyMap(o.invoices),
    payments: copyMap(o.payments),
    products: copyMap(o.products),
    shipments: copyMap(o.shipments),
    tickets: copyMap(o.tickets),
    events: copyMap(o.events),
    outbox: copyMap(o.outbox),
  };
  const s = state.session;
  const session: Session = {
    clock: s.clock,
    calls: copyMap(s.calls),
    limitedUntil: copyMap(s.limitedUntil),
    refreshed: s.refreshed,
    idempotency: copyMap(s.idempotency),
    changedAt: copyMap(s.changedAt),
    staleServed: copySet(s.staleServed),
    eventsDone: copySet(s.eventsDone),
    faults: s.faults.length === 0 ? [] : s.faults.map((f) => ({ ...f })),
    feedback: [],
    effects: copyMap(s.effects),
  };
  return { world: state.world, scenario: state.scenario, overlay, seq: { ...state.seq }, session, hash: state.hash };
}

/** The current record, or undefined. */
export function getRecord(state: ApiState, table: Table, id: string): WorldRecord | undefined {
  const changed = state.overlay[table].get(id);
  if (changed !== undefined) return changed ?? undefined;
  return state.world.byId[table].get(id);
}

/** Every current record of a table, in id order (base order, then new records). */
export function listRecords(state: ApiState, table: Table): WorldRecord[] {
  const overlay = state.overlay[table];
  if (overlay.size === 0) return state.world.tables[table] as WorldRecord[];
  const out: WorldRecord[] = [];
  for (const r of state.world.tables[table]) {
    const changed = overlay.get(r.id);
    if (changed === undefined) out.push(r);
    else if (changed !== null) out.push(changed);
  }
  const added = [...overlay.entries()].filter(([id, r]) => r !== null && !state.world.byId[table].has(id)).sort(([a], [b]) => (a < b ? -1 : 1));
  for (const [, r] of added) out.push(r!);
  return out;
}

// Per world, per (table, field): records by field value, in id order (pure memoisation).
const fieldIndexes = new WeakMap<World, Map<string, Map<string, WorldRecord[]>>>();
function fieldIndex(world: World, table: Table, field: string): Map<string, WorldRecord[]> {
  let byWorld = fieldIndexes.get(world);
  if (byWorld === undefined) fieldIndexes.set(world, (byWorld = new Map()));
  const key = `${table}.${field}`;
  let index = byWorld.get(key);
  if (index === undefined) {
    index = new Map();
    for (const r of world.tables[table]) {
      const v = String(r[field]);
      let list = index.get(v);
      if (list === undefined) index.set(v, (list = []));
      list.push(r);
    }
    byWorld.set(key, index);
  }
  return index;
}

/** Current records of a table whose `field` equals `value`, in id order (as `listRecords` orders them): O(matches + changes). */
export function listWhere(state: ApiState, table: Table, field: string, value: string): WorldRecord[] {
  const base = fieldIndex(state.world, table, field).get(value) ?? [];
  const overlay = state.overlay[table];
  if (overlay.size === 0) return base;
  const out: WorldRecord[] = [];
  for (const r of base) {
    const changed = overlay.get(r.id);
    if (changed === undefined) out.push(r);
    else if (changed !== null && String(changed[field]) === value) out.push(changed);
  }
  let added = false;
  for (const [id, r] of overlay) {
    if (r === null || String(r[field]) !== value) continue;
    const original = state.world.byId[table].get(id);
    if (original !== undefined && String(original[field]) === value) continue;
    out.push(r);
    added = true;
  }
  // Ids are zero-padded sequences: id order is table order, base records first.
  if (added) out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return out;
}

/** Replaces or adds a record (remembering the previous version for lagging replicas). */
export function putRecord(state: ApiState, table: Table, record: WorldRecord): void {
  const key = `${table}/${record.id}`;
  state.session.changedAt.set(key, { previous: getRecord(state, table, record.id) ?? null, at: state.session.clock });
  state.overlay[table].set(record.id, Object.freeze({ ...record }));
  state.hash = undefined;
}

/** A new record with the table's next id. */
export function insertRecord(state: ApiState, table: Table, fields: Record<string, WorldRecord[string]>): WorldRecord {
  const id = idOf(table, state.seq[table]++);
  const record = { id, ...fields } as WorldRecord;
  putRecord(state, table, record);
  return record;
}

// Records are frozen: a record's digest never changes, so each is computed once (pure memoisation).
const recordDigests = new WeakMap<WorldRecord, string>();
/** sha256 of a record's canonical JSON, computed once per record object. */
export function recordDigest(record: WorldRecord): string {
  let d = recordDigests.get(record);
  if (d === undefined) recordDigests.set(record, (d = digest(record)));
  return d;
}

/** Digest of the records (world digest plus the sorted changed records): O(changes log changes). */
export function hashApiState(state: ApiState): string {
  if (state.hash !== undefined) return state.hash;
  const parts: string[] = [state.world.digest];
  for (const table of TABLES) {
    const overlay = state.overlay[table];
    if (overlay.size === 0) continue;
    for (const id of [...overlay.keys()].sort()) {
      const r = overlay.get(id)!;
      const key = `${table}/${id}`;
      const d = r === null ? 'deleted' : recordDigest(r);
      if (state.world.recordDigests.get(key) !== d) parts.push(`${key}=${d}`);
    }
  }
  state.hash = parts.length === 1 ? state.world.digest : sha256(parts.join('\n'));
  return state.hash;
}

/** Changed or new records of a state relative to its world: `table/id` → record (null when deleted). */
export function changesOf(state: ApiState): Map<string, WorldRecord | null> {
  const out = new Map<string, WorldRecord | null>();
  for (const table of TABLES) {
    for (const [id, r] of state.overlay[table]) {
      const key = `${table}/${id}`;
      if (state.world.recordDigests.get(key) !== (r === null ? 'deleted' : recordDigest(r))) out.set(key, r);
    }
  }
  return out;
}

/** JSON of every table. */
export function exportApiState(state: ApiState): Record<Table, WorldRecord[]> {
  return Object.fromEntries(TABLES.map((t) => [t, listRecords(state, t)])) as Record<Table, WorldRecord[]>;
}
