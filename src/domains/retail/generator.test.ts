import { describe, expect, it } from 'vitest';
import { EnvHarnessError, type JsonObject } from '../../core/index.js';
import { generateRetailWorld, normalizeWorldParams } from './generator.js';
import { pyRound2 } from './py.js';
import type { RetailOrder } from './schema.js';
import { createRetailState, digestRetailExport, getOrder, getUser } from './state.js';
import { NO_CONTEXT } from './tau-bench/actions.js';
import { retailTools } from './tools.js';
import { validateRetailData } from './world.js';

const small = { users: 60, orders: 150, products: 12 };

describe('generateRetailWorld', () => {
  it('gives the same world for the same seed and sizes', () => {
    const a = generateRetailWorld({ seed: 11, ...small });
    const b = generateRetailWorld({ seed: 11, ...small });
    expect(a.digest).toBe(b.digest);
    expect(JSON.stringify(a.data)).toBe(JSON.stringify(b.data));
  });

  it('gives different worlds for different seeds or sizes', () => {
    const digests = new Set([
      generateRetailWorld({ seed: 11, ...small }).digest,
      generateRetailWorld({ seed: 12, ...small }).digest,
      generateRetailWorld({ seed: 11, ...small, orders: 151 }).digest,
    ]);
    expect(digests.size).toBe(3);
  });

  it("defaults to tau-bench's size (500 users, 1,000 orders, 50 products) in tau-bench's schema", () => {
    const world = generateRetailWorld({ seed: 1 });
    expect(Object.keys(world.data.users)).toHaveLength(500);
    expect(Object.keys(world.data.orders)).toHaveLength(1000);
    expect(Object.keys(world.data.products)).toHaveLength(50);
    expect(() => validateRetailData(world.data)).not.toThrow();
    expect(world.params).toEqual({ world: 'generated', generator: 1, seed: 1, users: 500, orders: 1000, products: 50 });
  });

  it('has the variety of the tau-bench world: statuses, payment methods, variants, fulfilments', () => {
    const world = generateRetailWorld({ seed: 3 });
    const orders = Object.values(world.data.orders);
    const statuses = new Set(orders.map((o) => o.status));
    expect([...statuses].sort()).toEqual(['cancelled', 'delivered', 'exchange requested', 'pending', 'processed', 'return requested']);
    const sources = new Set(Object.values(world.data.users).flatMap((u) => Object.values(u.payment_methods).map((m) => m.source)));
    expect([...sources].sort()).toEqual(['credit_card', 'gift_card', 'paypal']);
    const products = Object.values(world.data.products);
    expect(new Set(products.map((p) => p.name)).size).toBe(products.length);
    for (const product of products) {
      const variants = Object.values(product.variants);
      expect(variants.length).toBeGreaterThanOrEqual(4);
      expect(variants.every((v) => Number.isInteger(Math.round(v.price * 100)) && v.price > 0)).toBe(true);
    }
    expect(products.some((p) => Object.values(p.variants).some((v) => !v.available))).toBe(true);
    expect(new Set(orders.map((o) => o.items.length))).toEqual(new Set([1, 2, 3, 4, 5]));
  });

  it('keeps users, orders, payments and fulfilments consistent with each other', () => {
    const world = generateRetailWorld({ seed: 5, ...small });
    const { users, orders, products } = world.data;
    for (const [id, user] of Object.entries(users)) {
      for (const orderId of user.orders) expect(orders[orderId]!.user_id).toBe(id);
      expect(user.email).toMatch(/^[a-z0-9.]+@example\.com$/);
      expect(id).toMatch(/^[a-z_]+_\d{4}$/);
    }
    const itemIds = new Set<string>();
    for (const product of Object.values(products)) for (const id of Object.keys(product.variants)) itemIds.add(id);
    for (const order of Object.values(orders) as RetailOrder[]) {
      expect(users[order.user_id]!.orders).toContain(order.order_id);
      expect(order.order_id).toMatch(/^#W\d{7}$/);
      let sum = 0;
      for (const item of order.items) {
        expect(products[item.product_id]!.variants[item.item_id]!.price).toBe(item.price);
        sum += item.price;
      }
      expect(order.payment_history[0]).toMatchObject({ transaction_type: 'payment', amount: pyRound2(sum) });
      expect(users[order.user_id]!.payment_methods).toHaveProperty([order.payment_history[0]!.payment_method_id]);
      expect(order.fulfillments.length).toBe(order.status === 'pending' ? 0 : 1);
      if (order.status === 'cancelled') expect(order.payment_history[1]).toMatchObject({ transaction_type: 'refund' });
      if (order.status === 'exchange requested') {
        for (const id of order.exchange_new_items!) expect(itemIds.has(id)).toBe(true);
      }
    }
  });

  it('makes worlds the tools work on', () => {
    const world = generateRetailWorld({ seed: 8, ...small });
    const state = createRetailState(world);
    const tools = new Map(retailTools.map((t) => [t.name, t]));
    const run = (name: string, args: JsonObject) => tools.get(name)!.run(state, tools.get(name)!.args.parse(args), NO_CONTEXT);
    const orders = Object.values(world.data.orders);
    const pending = orders.find((o) => o.status === 'pending')!;
    const delivered = orders.find((o) => o.status === 'delivered')!;
    const user = getUser(state, pending.user_id)!;
    expect(run('find_user_id_by_email', { email: user.email.toUpperCase() })).toEqual({ ok: true, output: pending.user_id });
    expect(run('cancel_pending_order', { order_id: pending.order_id, reason: 'no longer needed' }).ok).toBe(true);
    expect(
      run('return_delivered_order_items', {
        order_id: delivered.order_id,
        item_ids: [delivered.items[0]!.item_id],
        payment_method_id: delivered.payment_history[0]!.payment_method_id,
      }).ok,
    ).toBe(true);
    expect(getOrder(state, delivered.order_id)!.status).toBe('return requested');
    expect(digestRetailExport(state)).not.toBe(world.digest);
  });

  it('refuses sizes it cannot build', () => {
    expect(() => normalizeWorldParams({ seed: 1.5 })).toThrow(EnvHarnessError);
    expect(() => normalizeWorldParams({ seed: 1, users: -1 })).toThrow(/users must be an integer/);
    expect(() => generateRetailWorld({ seed: 1, users: 0, orders: 5 })).toThrow(/at least one user/);
    expect(Object.keys(generateRetailWorld({ seed: 1, users: 3, orders: 0, products: 0 }).data.users)).toHaveLength(3);
  });

  it('generates more product types than the catalogue with distinct names', () => {
    const world = generateRetailWorld({ seed: 2, users: 1, orders: 1, products: 130 });
    const names = Object.values(world.data.products).map((p) => p.name);
    expect(new Set(names).size).toBe(130);
  });
});
