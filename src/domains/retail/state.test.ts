import { describe, expect, it } from 'vitest';
import { canonicalize, digest, type JsonObject } from '../../core/index.js';
import { itemOf, makeCatalogue, makeOrder, makeRetailWorld, makeUser } from './fixtures.js';
import type { RetailOrder } from './schema.js';
import {
  createRetailState,
  digestRetailExport,
  exportRetailState,
  forkRetailState,
  getOrder,
  getUser,
  hashRetailState,
  listChanges,
  listKeys,
  putRecord,
  type RetailState,
} from './state.js';
import { NO_CONTEXT } from './tau-bench/actions.js';
import { retailTools } from './tools.js';
import { createRetailWorld } from './world.js';

const { lamp, mug } = makeCatalogue();
const tools = new Map(retailTools.map((t) => [t.name, t]));
const run = (state: RetailState, name: string, args: JsonObject) => {
  const tool = tools.get(name)!;
  const outcome = tool.run(state, tool.args.parse(args), NO_CONTEXT);
  if (!outcome.ok) throw new Error(outcome.error.message);
  return outcome.output;
};

function world() {
  return makeRetailWorld({
    users: { ann_lee: makeUser('ann_lee'), bob_ray: makeUser('bob_ray') },
    orders: [
      makeOrder('#W1', 'ann_lee', [itemOf(lamp, '2000000001'), itemOf(mug, '3000000001')]),
      makeOrder('#W2', 'bob_ray', [itemOf(mug, '3000000002')], { paidWith: 'gift_card_1' }),
    ],
  });
}

const NEW_ADDRESS = { address1: '9 Elm', address2: '', city: 'Reno', state: 'NV', country: 'USA', zip: '89501' };

describe('copy-on-write state', () => {
  it('deep-freezes the world so nothing can write to it', () => {
    const w = world();
    expect(Object.isFrozen(w.data.orders['#W1']!.items[0]!.options)).toBe(true);
    expect(() => {
      (w.data.orders['#W1'] as RetailOrder).status = 'cancelled';
    }).toThrow(TypeError);
  });

  it('keeps writes on a fork away from the parent, the world and sibling forks', () => {
    const w = world();
    const parent = createRetailState(w);
    const before = canonicalize(w.data);
    const a = forkRetailState(parent);
    const b = forkRetailState(parent);
    run(a, 'cancel_pending_order', { order_id: '#W2', reason: 'no longer needed' });
    expect(getOrder(a, '#W2')!.status).toBe('cancelled');
    expect(getUser(a, 'bob_ray')!.payment_methods['gift_card_1']).toMatchObject({ balance: 114.45 });
    expect(getOrder(parent, '#W2')!.status).toBe('pending');
    expect(getOrder(b, '#W2')!.status).toBe('pending');
    expect(getUser(b, 'bob_ray')).toBe(w.data.users['bob_ray']);
    expect(canonicalize(w.data)).toBe(before);
    expect(hashRetailState(parent)).toBe(w.digest);
    expect(hashRetailState(b)).toBe(w.digest);
    expect(hashRetailState(a)).not.toBe(w.digest);
    // Unchanged tables share one empty overlay: a write gives the written table its own.
    const fresh = createRetailState(w);
    expect(listChanges(fresh)).toEqual([]);
    expect(getOrder(forkRetailState(fresh), '#W2')!.status).toBe('pending');
    expect(a.overlay.orders).not.toBe(b.overlay.orders);
    expect(b.overlay.orders.size + fresh.overlay.orders.size + fresh.overlay.users.size).toBe(0);
  });

  it('forks of forks carry the changes made so far and then diverge', () => {
    const s = createRetailState(world());
    run(s, 'modify_user_address', { user_id: 'ann_lee', ...NEW_ADDRESS });
    const child = forkRetailState(s);
    expect(getUser(child, 'ann_lee')!.address).toEqual(NEW_ADDRESS);
    run(child, 'cancel_pending_order', { order_id: '#W1', reason: 'no longer needed' });
    expect(getOrder(s, '#W1')!.status).toBe('pending');
    expect(listChanges(s)).toEqual([{ table: 'users', key: 'ann_lee' }]);
    expect(listChanges(child)).toEqual([
      { table: 'orders', key: '#W1' },
      { table: 'users', key: 'ann_lee' },
    ]);
  });

  it('shares records it has not changed (fork cost does not grow with the world)', () => {
    const s = createRetailState(world());
    const f = forkRetailState(s);
    expect(f.world).toBe(s.world);
    expect(getOrder(f, '#W1')).toBe(s.world.data.orders['#W1']);
    expect(f.overlay.orders.size + f.overlay.users.size + f.overlay.products.size).toBe(0);
  });
});

describe('hashRetailState', () => {
  it('is the world digest (tau-bench digest of the data) while nothing changed', () => {
    const w = world();
    expect(hashRetailState(createRetailState(w))).toBe(digest(w.data));
  });

  it('is stable: the same state hashes the same, repeatedly and after forking', () => {
    const s = createRetailState(world());
    run(s, 'cancel_pending_order', { order_id: '#W1', reason: 'no longer needed' });
    const h = hashRetailState(s);
    expect(hashRetailState(s)).toBe(h);
    expect(hashRetailState(forkRetailState(s))).toBe(h);
    s.hash = undefined;
    expect(hashRetailState(s)).toBe(h);
  });

  it('is equal for equal worlds reached by different paths', () => {
    const w = world();
    const a = createRetailState(w);
    run(a, 'modify_pending_order_address', { order_id: '#W1', ...NEW_ADDRESS });
    run(a, 'modify_pending_order_payment', { order_id: '#W1', payment_method_id: 'gift_card_1' });
    const b = createRetailState(w);
    run(b, 'modify_pending_order_payment', { order_id: '#W1', payment_method_id: 'gift_card_1' });
    run(b, 'modify_pending_order_address', { order_id: '#W1', ...NEW_ADDRESS });
    expect(hashRetailState(a)).toBe(hashRetailState(b));
    expect(digestRetailExport(a)).toBe(digestRetailExport(b));
  });

  it('returns to the world digest when a change is undone (key order does not matter, as in canonical JSON)', () => {
    const w = world();
    const s = createRetailState(w);
    const original = w.data.users['ann_lee']!.address;
    run(s, 'modify_user_address', { user_id: 'ann_lee', ...NEW_ADDRESS });
    expect(hashRetailState(s)).not.toBe(w.digest);
    run(s, 'modify_user_address', { user_id: 'ann_lee', ...original });
    // tau-bench's address dict has a different key order than the data file; the content is equal.
    expect(Object.keys(getUser(s, 'ann_lee')!.address)).not.toEqual(Object.keys(original));
    expect(hashRetailState(s)).toBe(w.digest);
    expect(digestRetailExport(s)).toBe(w.digest);
    expect(listChanges(s)).toEqual([]);
  });

  it('differs for different changes and is recomputed after each write', () => {
    const w = world();
    const a = createRetailState(w);
    const b = createRetailState(w);
    run(a, 'cancel_pending_order', { order_id: '#W1', reason: 'no longer needed' });
    run(b, 'cancel_pending_order', { order_id: '#W1', reason: 'ordered by mistake' });
    expect(hashRetailState(a)).not.toBe(hashRetailState(b));
    const h = hashRetailState(a);
    run(a, 'modify_user_address', { user_id: 'bob_ray', ...NEW_ADDRESS });
    expect(hashRetailState(a)).not.toBe(h);
  });
});

describe('exportRetailState and digestRetailExport', () => {
  it("exports tau-bench's tables, sharing unchanged records, and digests like core's canonical JSON", () => {
    const w = world();
    const s = createRetailState(w);
    run(s, 'cancel_pending_order', { order_id: '#W2', reason: 'no longer needed' });
    const exported = exportRetailState(s);
    expect(Object.keys(exported)).toEqual(['orders', 'products', 'users']);
    expect(Object.keys(exported.orders)).toEqual(['#W1', '#W2']);
    expect(exported.orders['#W1']).toBe(w.data.orders['#W1']);
    expect(exported.products).toBe(w.data.products);
    expect(Object.keys(exported.orders['#W2']!).at(-1)).toBe('cancel_reason');
    expect(digestRetailExport(s)).toBe(digest(exported));
    expect(digestRetailExport(createRetailState(w))).toBe(w.digest);
  });

  it('appends records added under a new key, as a Python dict would', () => {
    const s = createRetailState(world());
    const extra = makeOrder('#W0', 'ann_lee', [itemOf(mug, '3000000001')]);
    putRecord(s, 'orders', '#W0', extra);
    expect(listKeys(s, 'orders')).toEqual(['#W1', '#W2', '#W0']);
    expect(Object.keys(exportRetailState(s).orders)).toEqual(['#W1', '#W2', '#W0']);
    expect(digestRetailExport(s)).toBe(digest(exportRetailState(s)));
    expect(listChanges(s)).toEqual([{ table: 'orders', key: '#W0' }]);
    expect(Object.isFrozen(getOrder(s, '#W0')!.items[0])).toBe(true);
  });

  it('keeps a loaded key named __proto__ as data', () => {
    const data = JSON.parse('{"orders":{},"products":{},"users":{"__proto__":' + JSON.stringify(makeUser('x_y')) + '}}');
    const w = createRetailWorld(data, { source: 'fixture' });
    const s = createRetailState(w);
    run(s, 'modify_user_address', { user_id: '__proto__', ...NEW_ADDRESS });
    expect(Object.keys(exportRetailState(s).users)).toEqual(['__proto__']);
    expect(digestRetailExport(s)).toBe(digest(exportRetailState(s)));
  });
});
