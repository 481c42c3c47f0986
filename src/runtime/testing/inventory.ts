/**
 * `inventory`: a tiny test domain for the runtime. A stock list with read and write tools, a precondition,
 * policy rules, a confirmation-gated tool, a deterministic simulated user and two templates.
 * Its state is copy-on-write (a shared base plus a per-episode overlay) with a hash in O(changes).
 */
import { z } from 'zod';
import { defineDomain, defineTemplate, defineTool, digest } from '../../core/index.js';
import type { Action, Domain, JsonValue, LevelSpec, Rng, SimulatedUser, Task, TaskSpec, UserTurn } from '../../core/index.js';

/** The shared, never-mutated part of a world. */
interface InventoryBase {
  items: ReadonlyMap<string, number>;
  locked: ReadonlySet<string>;
  hash: string;
}

/** A world: the base plus the changes of one episode (`null` = deleted). Only entries that differ from the base are kept. */
export interface InventoryState {
  base: InventoryBase;
  changes: Map<string, number | null>;
}

const initialStateSchema = z.object({
  items: z.record(z.string(), z.number().int().nonnegative()),
  locked: z.array(z.string()).default([]),
});

function quantity(state: InventoryState, item: string): number | undefined {
  const changed = state.changes.get(item);
  if (changed !== undefined) return changed === null ? undefined : changed;
  return state.base.items.get(item);
}

function setQuantity(state: InventoryState, item: string, value: number | null): void {
  const original = state.base.items.get(item);
  // Keep the overlay minimal so that equal worlds hash equal.
  if ((value === null && original === undefined) || value === original) state.changes.delete(item);
  else state.changes.set(item, value);
}

function allItems(state: InventoryState): string[] {
  const names = new Set(state.base.items.keys());
  for (const [name, value] of state.changes) {
    if (value === null) names.delete(name);
    else names.add(name);
  }
  return [...names].sort();
}

const item = z.string().min(1).describe('item name, e.g. "widget-3"');
const amount = z.number().int().positive().describe('number of units');

const listItems = defineTool<InventoryState, { prefix?: string }>({
  name: 'list_items',
  description: 'Lists items (name and quantity), optionally only those whose name starts with a prefix.',
  effect: 'read',
  args: z.object({ prefix: z.string().optional() }).strict(),
  run: (state, args) => {
    const names = allItems(state).filter((n) => args.prefix === undefined || n.startsWith(args.prefix));
    return { ok: true, output: names.slice(0, 100).map((n) => ({ item: n, quantity: quantity(state, n)! })) };
  },
});

const getStock = defineTool<InventoryState, { item: string }>({
  name: 'get_stock',
  description: 'Returns the quantity of one item and whether it is locked.',
  effect: 'read',
  args: z.object({ item }).strict(),
  run: (state, args) => {
    const q = quantity(state, args.item);
    if (q === undefined) return { ok: false, error: { code: 'NOT_FOUND', message: `no item "${args.item}"` } };
    return { ok: true, output: { item: args.item, quantity: q, locked: state.base.locked.has(args.item) } };
  },
});

const addStock = defineTool<InventoryState, { item: string; quantity: number }>({
  name: 'add_stock',
  description: 'Adds units to an item (creating it if needed). Returns the new quantity.',
  effect: 'write',
  args: z.object({ item, quantity: amount }).strict(),
  run: (state, args) => {
    const next = (quantity(state, args.item) ?? 0) + args.quantity;
    setQuantity(state, args.item, next);
    return { ok: true, output: { item: args.item, quantity: next } };
  },
});

const removeStock = defineTool<InventoryState, { item: string; quantity: number }>({
  name: 'remove_stock',
  description: 'Removes units from an item. Fails if there are not enough units.',
  effect: 'write',
  args: z.object({ item, quantity: amount }).strict(),
  run: (state, args) => {
    const q = quantity(state, args.item);
    if (q === undefined) return { ok: false, error: { code: 'NOT_FOUND', message: `no item "${args.item}"` } };
    if (q < args.quantity) {
      return { ok: false, error: { code: 'PRECONDITION_FAILED', message: `only ${q} units of ${args.item} in stock, cannot remove ${args.quantity}` } };
    }
    setQuantity(state, args.item, q - args.quantity);
    return { ok: true, output: { item: args.item, quantity: q - args.quantity } };
  },
});

const deleteItem = defineTool<InventoryState, { item: string }>({
  name: 'delete_item',
  description: 'Deletes an item from the catalogue (needs the user to confirm first).',
  effect: 'write',
  args: z.object({ item }).strict(),
  run: (state, args) => {
    if (quantity(state, args.item) === undefined) return { ok: false, error: { code: 'NOT_FOUND', message: `no item "${args.item}"` } };
    setQuantity(state, args.item, null);
    return { ok: true, output: { item: args.item, deleted: true } };
  },
});

const WRITE_TOOLS = new Set(['add_stock', 'remove_stock', 'delete_item']);

const POLICY = `# Inventory desk policy
- Locked items must never be changed.
- Removing more than 10 units at once is discouraged.
- Deleting an item needs the customer's explicit confirmation.`;

/** What the simulated user knows: its request and a closing line. */
export interface InventoryUserGoal {
  request: string;
}

const OPENINGS = ['Hi! {request}', 'Hello, {request}', 'Hey there. {request}', 'Good morning. {request}'];
const CONFIRMS = ['Yes, I confirm.', 'Yes, please go ahead.', 'Confirmed, do it.'];
const ACKS = ['Okay.', 'Sure, thanks.', 'Alright.', 'Got it.'];

/** The rule-based user: confirms when asked to, ends the conversation when offered, acknowledges otherwise. */
class InventoryUser implements SimulatedUser {
  private readonly said: string[] = [];

  constructor(
    private readonly goal: InventoryUserGoal,
    private readonly rng: Rng,
  ) {}

  opening(): string {
    return this.say({ text: this.rng.pick(OPENINGS).replace('{request}', this.goal.request) }).text;
  }

  respond(agentText: string): UserTurn {
    const text = agentText.toLowerCase();
    if (text.includes('confirm')) return this.say({ text: this.rng.pick(CONFIRMS), confirms: true });
    if (text.includes('anything else') || text.includes('bye')) return this.say({ text: 'No, that is all. Bye!', done: true });
    return this.say({ text: this.rng.pick(ACKS) });
  }

  record(): JsonValue {
    return this.said.slice();
  }

  private say(turn: UserTurn): UserTurn {
    this.said.push(turn.text);
    return turn;
  }
}

function createInventoryUser(task: Task, rng: Rng): SimulatedUser {
  return new InventoryUser((task.spec.user ?? { request: task.spec.instructions }) as unknown as InventoryUserGoal, rng);
}

const NAMES = ['widget', 'gadget', 'bolt', 'gear', 'spring', 'valve', 'lever', 'panel'];

/** Distinct item names and quantities for a world of `count` items. */
function sampleItems(rng: Rng, count: number, maxQuantity: number): Record<string, number> {
  const items: Record<string, number> = {};
  let i = 0;
  while (Object.keys(items).length < count) {
    items[`${rng.pick(NAMES)}-${rng.int(1, 9 + count)}`] ??= rng.int(1, maxQuantity);
    if (++i > count * 50) break;
  }
  return items;
}

function num(spec: LevelSpec, key: string): number {
  return spec[key] as number;
}

const restockParams = z.object({
  items: z.record(z.string(), z.number().int()),
  locked: z.array(z.string()),
  target: z.string(),
  amount: z.number().int().positive(),
  faultRate: z.number(),
});
type RestockParams = z.infer<typeof restockParams>;

/** `inventory/restock@1`: add units to one item and tell the user the new stock level. */
export const restockTemplate = defineTemplate<RestockParams>({
  domain: 'inventory',
  name: 'restock',
  version: 1,
  taskType: 'restock',
  description: 'Add units to an item, then report the new quantity to the user.',
  levels: [
    { items: 3, maxAmount: 5, locked: 0, faultRate: 0 },
    { items: 8, maxAmount: 20, locked: 1, faultRate: 0 },
    { items: 20, maxAmount: 50, locked: 2, faultRate: 0.3 },
    { items: 40, maxAmount: 99, locked: 3, faultRate: 0.5 },
  ],
  params: restockParams,
  sample(rng, _level, spec) {
    const items = sampleItems(rng, num(spec, 'items'), 30);
    const names = Object.keys(items).sort();
    const locked = rng.sample(names, num(spec, 'locked')).sort();
    const open = names.filter((n) => !locked.includes(n));
    return { items, locked, target: rng.pick(open), amount: rng.int(1, num(spec, 'maxAmount')), faultRate: num(spec, 'faultRate') };
  },
  build(p, ctx) {
    const total = p.items[p.target]! + p.amount;
    const request = `Please add ${p.amount} units of ${p.target} and tell me the new stock level.`;
    const spec: Omit<TaskSpec, 'solution'> = {
      instructions: request,
      initialState: { items: p.items, locked: p.locked },
      budget: { steps: 8 + 2 * ctx.level, consecutiveErrors: 5, perTool: { add_stock: 2 } },
      acceptance: {
        finalState: true,
        outputs: [String(total)],
        ordering: [{ id: 'check-before-add', before: { tool: 'get_stock' }, after: { tool: 'add_stock' }, message: 'check the stock before adding to it' }],
        subgoals: [
          { id: 'checked', pattern: { tool: 'get_stock', args: { item: p.target } } },
          { id: 'restocked', pattern: { tool: 'add_stock', args: { item: p.target } } },
          { id: 'reported', pattern: { type: 'message' } },
        ],
      },
      user: { request },
      tags: ['restock'],
    };
    if (p.faultRate > 0) spec.faults = { rules: [{ tool: 'get_stock', kind: 'transient', rate: p.faultRate, maxPerEpisode: 2 }] };
    return spec;
  },
  solve(p): Action[] {
    const total = p.items[p.target]! + p.amount;
    return [
      { type: 'tool', tool: 'get_stock', args: { item: p.target } },
      { type: 'tool', tool: 'add_stock', args: { item: p.target, quantity: p.amount } },
      { type: 'message', text: `Done: ${p.target} now has ${total} units.` },
      { type: 'finish' },
    ];
  },
});

const clearanceParams = z.object({
  items: z.record(z.string(), z.number().int()),
  locked: z.array(z.string()),
  target: z.string(),
  restrictTools: z.boolean(),
  faultRate: z.number(),
});
type ClearanceParams = z.infer<typeof clearanceParams>;

/** `inventory/clearance@1`: delete one item after the user confirms; the user ends the conversation. */
export const clearanceTemplate = defineTemplate<ClearanceParams>({
  domain: 'inventory',
  name: 'clearance',
  version: 1,
  taskType: 'clearance',
  description: 'Delete an item from the catalogue, with the user\'s explicit confirmation.',
  levels: [
    { items: 3, locked: 0, restrictTools: false, faultRate: 0 },
    { items: 10, locked: 1, restrictTools: false, faultRate: 0 },
    { items: 25, locked: 2, restrictTools: true, faultRate: 0.2 },
  ],
  params: clearanceParams,
  sample(rng, _level, spec) {
    const items = sampleItems(rng, num(spec, 'items'), 20);
    const names = Object.keys(items).sort();
    const locked = rng.sample(names, num(spec, 'locked')).sort();
    const open = names.filter((n) => !locked.includes(n));
    return { items, locked, target: rng.pick(open), restrictTools: spec['restrictTools'] === true, faultRate: num(spec, 'faultRate') };
  },
  build(p) {
    const request = `Please remove ${p.target} from the catalogue entirely.`;
    const spec: Omit<TaskSpec, 'solution'> = {
      instructions: request,
      initialState: { items: p.items, locked: p.locked },
      budget: { steps: 10 },
      constraints: {
        confirmTools: ['delete_item'],
        ...(p.restrictTools ? { allowedTools: ['get_stock', 'list_items', 'delete_item'] } : {}),
        ...(p.locked.length > 0 ? { forbidden: [{ tool: 'delete_item', args: { item: p.locked[0]! }, reason: 'locked items stay' }] } : {}),
      },
      acceptance: {
        finalState: true,
        ordering: [{ id: 'confirm-before-delete', before: { type: 'message' }, after: { tool: 'delete_item' } }],
        subgoals: [{ id: 'deleted', pattern: { tool: 'delete_item', args: { item: p.target } } }],
      },
      user: { request },
      tags: ['clearance'],
    };
    if (p.faultRate > 0) spec.faults = { rules: [{ tool: 'list_items', kind: 'partial', rate: p.faultRate }, { tool: '*', kind: 'rate_limit', rate: p.faultRate / 2, retryAfterMs: 500 }] };
    return spec;
  },
  solve(p): Action[] {
    return [
      { type: 'tool', tool: 'get_stock', args: { item: p.target } },
      { type: 'message', text: `I am about to delete ${p.target}. Do you confirm?` },
      { type: 'tool', tool: 'delete_item', args: { item: p.target } },
      { type: 'message', text: `${p.target} is deleted. Anything else?` },
    ];
  },
});

/**
 * Creates the inventory test domain. Its tools only mutate the state when they succeed.
 * @example
 * const inventory = createInventoryDomain();
 */
export function createInventoryDomain(): Domain<InventoryState> {
  return defineDomain<InventoryState>({
    name: 'inventory',
    version: 1,
    description: 'A stock list: the runtime test domain.',
    createState(initialState) {
      const parsed = initialStateSchema.parse(initialState);
      const items = new Map(Object.entries(parsed.items));
      const locked = new Set(parsed.locked);
      const hash = digest({ items: parsed.items, locked: [...locked].sort() });
      return { base: { items, locked, hash }, changes: new Map() };
    },
    fork: (state) => ({ base: state.base, changes: new Map(state.changes) }),
    hashState(state) {
      if (state.changes.size === 0) return state.base.hash;
      const changes = [...state.changes.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      return digest({ base: state.base.hash, changes });
    },
    exportState(state) {
      const items: Record<string, number> = {};
      for (const name of allItems(state)) items[name] = quantity(state, name)!;
      return { items, locked: [...state.base.locked].sort() };
    },
    tools: [listItems, getStock, addStock, removeStock, deleteItem],
    policy: {
      text: POLICY,
      rules: [
        {
          id: 'locked_item',
          description: 'Locked items must never be changed.',
          severity: 'high',
          block: true,
          check: (action, ctx) => {
            const target = (action.args as { item?: unknown }).item;
            return WRITE_TOOLS.has(action.tool) && typeof target === 'string' && ctx.state.base.locked.has(target) ? `${target} is locked and cannot be changed` : undefined;
          },
        },
        {
          id: 'large_removal',
          description: 'Removing more than 10 units at once is discouraged.',
          severity: 'low',
          check: (action) => {
            const n = (action.args as { quantity?: unknown }).quantity;
            return action.tool === 'remove_stock' && typeof n === 'number' && n > 10 ? `removing ${n} units at once is discouraged` : undefined;
          },
        },
      ],
    },
    acceptance: [
      {
        id: 'locked_untouched',
        check: (ctx) => {
          for (const name of ctx.state.base.locked) {
            if (quantity(ctx.state, name) !== quantity(ctx.referenceState, name)) return `locked item ${name} changed`;
          }
          return undefined;
        },
      },
    ],
    createUser: createInventoryUser,
    templates: [restockTemplate, clearanceTemplate],
  });
}

/** An `initialState` of `count` items named item-000000... (benchmarks and edge-case tests). */
export function inventoryWorld(count: number): { items: Record<string, number>; locked: string[] } {
  const items: Record<string, number> = {};
  for (let i = 0; i < count; i++) items[`item-${String(i).padStart(6, '0')}`] = (i % 50) + 1;
  return { items, locked: [] };
}
