/** The fixed generated worlds tasks live in, memoised (a world is a pure function of its seed). */
import { z } from 'zod';
import { EnvHarnessError, type JsonValue } from '../../core/index.js';
import { scenarioSchema, type Scenario } from './scenario.js';
import { createApiState, getRecord, putRecord, type ApiState } from './state.js';
import { generateWorld, type Table, type World, type WorldRecord } from './world.js';

/** World seeds of generated tasks: a small fixed set keeps the runtime's state cache warm. */
export const WORLD_SEEDS: readonly number[] = [3, 5, 8, 13];

const memo = new Map<number, World>();

/** The world of `seed` at the default size, generated once per process. */
export function worldOf(seed: number): World {
  let world = memo.get(seed);
  if (world === undefined) {
    world = generateWorld(seed);
    memo.set(seed, world);
  }
  return world;
}

/** A change to the world a task starts from (e.g. a planted disagreement between billing and payments). */
export const patchSchema = z.strictObject({
  table: z.enum(['invoices', 'payments', 'shipments', 'tickets', 'products', 'customers']),
  id: z.string(),
  set: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
});
export type Patch = z.infer<typeof patchSchema>;

/** A task's `initialState`: world seed, planted patches, and the scenario of faults and events. */
export const initialStateSchema = z.strictObject({
  world: z.number().int().min(0).max(1_000_000),
  patches: z.array(patchSchema).max(64),
  scenario: scenarioSchema,
});
export type ApiInitialState = z.infer<typeof initialStateSchema>;

/** The state a task starts in; throws PARAMS_INVALID naming the field when `initialState` is malformed. */
export function stateFor(initialState: JsonValue): ApiState {
  const parsed = initialStateSchema.safeParse(initialState);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const pointer = `/${issue.path.map((p) => String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;
    throw new EnvHarnessError('PARAMS_INVALID', `api-workflows initialState ${pointer}: ${issue.message}; expected { world: <seed>, patches: [...], scenario: { faults, events } }`, { details: { pointer } });
  }
  return buildState(parsed.data.world, parsed.data.patches, parsed.data.scenario as Scenario);
}

/** A fresh state: the world with its patches applied, the session empty. */
export function buildState(seed: number, patches: readonly Patch[], scenario: Scenario): ApiState {
  const state = createApiState(worldOf(seed), scenario);
  for (const patch of patches) {
    const current = getRecord(state, patch.table as Table, patch.id);
    if (current === undefined) throw new EnvHarnessError('PARAMS_INVALID', `api-workflows patch names no record ${patch.table}/${patch.id}`, { details: { pointer: '/patches' } });
    putRecord(state, patch.table as Table, { ...current, ...patch.set } as WorldRecord);
  }
  state.session.changedAt.clear();
  return state;
}

/** Lookups templates sample from (pure memoisation per world). */
export interface WorldIndex {
  invoicesOf: ReadonlyMap<string, readonly WorldRecord[]>;
  paymentsOf: ReadonlyMap<string, readonly WorldRecord[]>;
  ticketsOf: ReadonlyMap<string, readonly WorldRecord[]>;
  ticketsAssigned: ReadonlyMap<string, readonly WorldRecord[]>;
  shipmentsOf: ReadonlyMap<string, readonly WorldRecord[]>;
}

const indexes = new WeakMap<World, WorldIndex>();

function group(records: readonly WorldRecord[], field: string): Map<string, WorldRecord[]> {
  const out = new Map<string, WorldRecord[]>();
  for (const r of records) {
    const k = String(r[field]);
    let list = out.get(k);
    if (list === undefined) out.set(k, (list = []));
    list.push(r);
  }
  return out;
}

export function indexOf(world: World): WorldIndex {
  let index = indexes.get(world);
  if (index === undefined) {
    index = {
      invoicesOf: group(world.tables.invoices, 'customer_id'),
      paymentsOf: group(world.tables.payments, 'invoice_id'),
      ticketsOf: group(world.tables.tickets, 'customer_id'),
      ticketsAssigned: group(world.tables.tickets, 'assignee'),
      shipmentsOf: group(world.tables.shipments, 'customer_id'),
    };
    indexes.set(world, index);
  }
  return index;
}
