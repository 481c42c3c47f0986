import { beforeEach, describe, expect, it } from 'vitest';
import type { JsonObject, ToolOutcome } from '../../core/index.js';
import { itemOf, makeCatalogue, makeOrder, makeRetailWorld, makeUser } from './fixtures.js';
import type { RetailOrder, RetailUser } from './schema.js';
import { createRetailState, forkRetailState, getOrder, getProduct, getUser, hashRetailState, listChanges, putRecord, type RetailState } from './state.js';
import { NO_CONTEXT } from './tau-bench/actions.js';
import { retailTools } from './tools.js';
import type { RetailWorld } from './world.js';

const { lamp, mug } = makeCatalogue();
const LAMP_1 = '2000000001'; // 30.1
const LAMP_2 = '2000000002'; // 35.25
const LAMP_OUT = '2000000003'; // 40.5, unavailable
const MUG_1 = '3000000001'; // 12.2
const MUG_2 = '3000000002'; // 14.45

function fixtureWorld(): RetailWorld {
  const ann = makeUser('ann_lee', {
    payment_methods: {
      credit_card_1: { source: 'credit_card', brand: 'visa', last_four: '1111', id: 'credit_card_1' },
      gift_card_1: { source: 'gift_card', balance: 100, id: 'gift_card_1' },
      paypal_1: { source: 'paypal', id: 'paypal_1' },
      gift_card_2: { source: 'gift_card', balance: 5, id: 'gift_card_2' },
    },
  });
  const bob = makeUser('bob_ray', { email: 'Bob.Ray@Example.com' });
  return makeRetailWorld({
    users: { ann_lee: ann, bob_ray: bob },
    orders: [
      makeOrder('#W1', 'ann_lee', [itemOf(lamp, LAMP_1), itemOf(mug, MUG_1)]),
      makeOrder('#W2', 'ann_lee', [itemOf(mug, MUG_1)], { paidWith: 'gift_card_1' }),
      makeOrder('#W3', 'ann_lee', [itemOf(lamp, LAMP_1), itemOf(lamp, LAMP_1), itemOf(mug, MUG_2)], { status: 'delivered' }),
      makeOrder('#W4', 'ann_lee', [itemOf(mug, MUG_2)], { status: 'processed' }),
      makeOrder('#W5', 'ann_lee', [itemOf(lamp, LAMP_2), itemOf(lamp, LAMP_1)]),
      makeOrder('#W6', 'bob_ray', [itemOf(lamp, LAMP_2)], { paidWith: 'gift_card_1', amount: 500 }),
    ],
  });
}

const tools = new Map(retailTools.map((t) => [t.name, t]));

/** Validates the arguments with the tool's schema (as the runtime does) and runs it. */
function call(state: RetailState, name: string, args: JsonObject): ToolOutcome {
  const tool = tools.get(name)!;
  return tool.run(state, tool.args.parse(args), NO_CONTEXT);
}

function output<T>(outcome: ToolOutcome): T {
  if (!outcome.ok) throw new Error(`expected success, got ${outcome.error.code}: ${outcome.error.message}`);
  return outcome.output as T;
}

/** Asserts a failing call with this code and message, and that it changed nothing. */
function expectRefusal(state: RetailState, name: string, args: JsonObject, code: string, message: string): void {
  const before = hashRetailState(state);
  const changes = listChanges(state).length;
  const outcome = call(state, name, args);
  expect(outcome).toMatchObject({ ok: false, error: { code, message } });
  expect(hashRetailState(state)).toBe(before);
  expect(listChanges(state)).toHaveLength(changes);
}

const ADDRESS = { address1: '1 New Road', address2: '', city: 'Austin', state: 'TX', country: 'USA', zip: '78701' };

let world: RetailWorld;
let state: RetailState;
beforeEach(() => {
  world = fixtureWorld();
  state = createRetailState(world);
});

describe('the tool set', () => {
  it("declares tau-bench's 16 tools with their effects", () => {
    const writes = retailTools.filter((t) => t.effect === 'write').map((t) => t.name);
    expect(retailTools).toHaveLength(16);
    expect(writes).toEqual([
      'cancel_pending_order',
      'exchange_delivered_order_items',
      'modify_pending_order_address',
      'modify_pending_order_items',
      'modify_pending_order_payment',
      'modify_user_address',
      'return_delivered_order_items',
    ]);
  });

  it('refuses missing, extra and mistyped arguments in the schema', () => {
    expect(tools.get('get_order_details')!.args.safeParse({}).success).toBe(false);
    expect(tools.get('get_order_details')!.args.safeParse({ order_id: '#W1', extra: 1 }).success).toBe(false);
    expect(tools.get('return_delivered_order_items')!.args.safeParse({ order_id: '#W3', item_ids: LAMP_1, payment_method_id: 'x' }).success).toBe(false);
    expect(tools.get('cancel_pending_order')!.args.safeParse({ order_id: '#W1', reason: 'changed my mind' }).success).toBe(false);
    expect(tools.get('list_all_product_types')!.args.safeParse({}).success).toBe(true);
  });
});

describe('read tools', () => {
  it('find_user_id_by_email matches case-insensitively and returns the first user in table order', () => {
    expect(output(call(state, 'find_user_id_by_email', { email: 'BOB.RAY@example.COM' }))).toBe('bob_ray');
    expect(output(call(state, 'find_user_id_by_email', { email: 'ann_lee@example.com' }))).toBe('ann_lee');
    expectRefusal(state, 'find_user_id_by_email', { email: 'nobody@example.com' }, 'NOT_FOUND', 'user not found');
  });

  it('find_user_id_by_name_zip matches names case-insensitively and the zip exactly, following address changes', () => {
    const args = { first_name: 'ann', last_name: 'LEE', zip: '02110' };
    expect(output(call(state, 'find_user_id_by_name_zip', args))).toBe('ann_lee');
    expectRefusal(state, 'find_user_id_by_name_zip', { ...args, zip: '2110' }, 'NOT_FOUND', 'user not found');
    output(call(state, 'modify_user_address', { user_id: 'ann_lee', ...ADDRESS }));
    expectRefusal(state, 'find_user_id_by_name_zip', args, 'NOT_FOUND', 'user not found');
    expect(output(call(state, 'find_user_id_by_name_zip', { ...args, zip: '78701' }))).toBe('ann_lee');
  });

  it('find_user_id_by_name_zip returns the first of several matching users, in table order', () => {
    const twin = (id: string): RetailUser => ({ ...makeUser(id), name: { first_name: 'Kim', last_name: 'Park' } });
    const twins = makeRetailWorld({ users: { kim_a: twin('kim_a'), kim_b: twin('kim_b') } });
    const s = createRetailState(twins);
    const args = { first_name: 'Kim', last_name: 'Park', zip: '02110' };
    expect(output(call(s, 'find_user_id_by_name_zip', args))).toBe('kim_a');
    output(call(s, 'modify_user_address', { user_id: 'kim_a', ...ADDRESS }));
    expect(output(call(s, 'find_user_id_by_name_zip', args))).toBe('kim_b');
    output(call(s, 'modify_user_address', { user_id: 'kim_a', ...ADDRESS, zip: '02110' }));
    expect(output(call(s, 'find_user_id_by_name_zip', args))).toBe('kim_a');
  });

  it('get_*_details return the current records', () => {
    expect(output(call(state, 'get_order_details', { order_id: '#W1' }))).toEqual(world.data.orders['#W1']);
    expect(output(call(state, 'get_user_details', { user_id: 'bob_ray' }))).toEqual(world.data.users['bob_ray']);
    expect(output(call(state, 'get_product_details', { product_id: lamp.product_id }))).toEqual(lamp);
    expectRefusal(state, 'get_order_details', { order_id: 'W1' }, 'NOT_FOUND', 'order not found');
    expectRefusal(state, 'get_user_details', { user_id: 'nobody' }, 'NOT_FOUND', 'user not found');
    expectRefusal(state, 'get_product_details', { product_id: LAMP_1 }, 'NOT_FOUND', 'product not found');
    output(call(state, 'cancel_pending_order', { order_id: '#W1', reason: 'no longer needed' }));
    expect(output<RetailOrder>(call(state, 'get_order_details', { order_id: '#W1' })).status).toBe('cancelled');
  });

  it('list_all_product_types maps names to product ids, sorted by name', () => {
    expect(output(call(state, 'list_all_product_types', {}))).toEqual({ 'Desk Lamp': '1000000001', 'Travel Mug': '1000000002' });
    expect(Object.keys(output<object>(call(state, 'list_all_product_types', {})))).toEqual(['Desk Lamp', 'Travel Mug']);
    // Memoised per world and shared, frozen like the records other read tools return: a caller cannot
    // change the listing the next call gets.
    const first = output<Record<string, string>>(call(state, 'list_all_product_types', {}));
    expect(Object.isFrozen(first)).toBe(true);
    expect(() => {
      first['Desk Lamp'] = 'changed';
    }).toThrow(TypeError);
    expect(output(call(state, 'list_all_product_types', {}))).toEqual({ 'Desk Lamp': '1000000001', 'Travel Mug': '1000000002' });
    // With a product changed in the state, the listing is built from the state (a fresh object).
    const changed = forkRetailState(state);
    const product = getProduct(changed, '1000000001')!;
    putRecord(changed, 'products', '1000000001', { ...product, name: 'Floor Lamp' });
    expect(output(call(changed, 'list_all_product_types', {}))).toEqual({ 'Floor Lamp': '1000000001', 'Travel Mug': '1000000002' });
    expect(output(call(state, 'list_all_product_types', {}))).toEqual({ 'Desk Lamp': '1000000001', 'Travel Mug': '1000000002' });
  });

  it('calculate, think and transfer_to_human_agents answer like tau-bench', () => {
    expect(output(call(state, 'calculate', { expression: '2 + 2' }))).toBe('4.0');
    expect(call(state, 'calculate', { expression: '2 + x' })).toEqual({
      ok: false,
      error: { code: 'PRECONDITION_FAILED', message: 'invalid characters in expression', pointer: '/expression' },
    });
    expect(output(call(state, 'think', { thought: 'plan' }))).toBe('');
    expect(output(call(state, 'transfer_to_human_agents', { summary: 'wants a human' }))).toBe('Transfer successful');
    expect(listChanges(state)).toEqual([]);
  });
});

describe('cancel_pending_order', () => {
  it('cancels, appends refunds and the reason, and keeps field positions', () => {
    const order = output<RetailOrder>(call(state, 'cancel_pending_order', { order_id: '#W1', reason: 'ordered by mistake' }));
    expect(order.status).toBe('cancelled');
    expect(order.cancel_reason).toBe('ordered by mistake');
    expect(order.payment_history).toEqual([
      { transaction_type: 'payment', amount: 42.3, payment_method_id: 'credit_card_1' },
      { transaction_type: 'refund', amount: 42.3, payment_method_id: 'credit_card_1' },
    ]);
    expect(Object.keys(order)).toEqual([...Object.keys(world.data.orders['#W1']!), 'cancel_reason']);
    expect(getOrder(state, '#W1')).toBe(order);
    expect(listChanges(state)).toEqual([{ table: 'orders', key: '#W1' }]);
  });

  it('refunds gift-card payments to the card at once, rounded to cents', () => {
    output(call(state, 'cancel_pending_order', { order_id: '#W2', reason: 'no longer needed' }));
    expect(getUser(state, 'ann_lee')!.payment_methods['gift_card_1']).toEqual({ source: 'gift_card', balance: 112.2, id: 'gift_card_1' });
    expect(Object.keys(getUser(state, 'ann_lee')!.payment_methods)).toEqual(Object.keys(world.data.users['ann_lee']!.payment_methods));
  });

  it('refuses unknown and non-pending orders', () => {
    expectRefusal(state, 'cancel_pending_order', { order_id: '#W9', reason: 'no longer needed' }, 'NOT_FOUND', 'order not found');
    expectRefusal(state, 'cancel_pending_order', { order_id: '#W4', reason: 'no longer needed' }, 'PRECONDITION_FAILED', 'non-pending order cannot be cancelled');
    output(call(state, 'cancel_pending_order', { order_id: '#W1', reason: 'no longer needed' }));
    expectRefusal(state, 'cancel_pending_order', { order_id: '#W1', reason: 'no longer needed' }, 'PRECONDITION_FAILED', 'non-pending order cannot be cancelled');
  });

  it('refunds every entry of a payment history changed by modify_pending_order_payment, as tau-bench does', () => {
    output(call(state, 'modify_pending_order_payment', { order_id: '#W1', payment_method_id: 'gift_card_1' }));
    const order = output<RetailOrder>(call(state, 'cancel_pending_order', { order_id: '#W1', reason: 'no longer needed' }));
    expect(order.payment_history.map((p) => [p.transaction_type, p.payment_method_id])).toEqual([
      ['payment', 'credit_card_1'],
      ['payment', 'gift_card_1'],
      ['refund', 'credit_card_1'],
      ['refund', 'credit_card_1'],
      ['refund', 'gift_card_1'],
      ['refund', 'credit_card_1'],
    ]);
    // 100 - 42.3 = 57.7, then +42.3 back.
    expect(getUser(state, 'ann_lee')!.payment_methods['gift_card_1']).toMatchObject({ balance: 100 });
  });
});

describe('modify_pending_order_items', () => {
  it('swaps variants, records the unrounded difference and charges the gift card (rounded)', () => {
    const order = output<RetailOrder>(
      call(state, 'modify_pending_order_items', { order_id: '#W1', item_ids: [LAMP_1], new_item_ids: [LAMP_2], payment_method_id: 'gift_card_1' }),
    );
    const diff = 35.25 - 30.1;
    expect(diff).not.toBe(5.15);
    expect(order.status).toBe('pending (item modified)');
    expect(order.items[0]).toEqual({ name: 'Desk Lamp', product_id: lamp.product_id, item_id: LAMP_2, price: 35.25, options: lamp.variants[LAMP_2]!.options });
    expect(order.items[1]).toBe(world.data.orders['#W1']!.items[1]);
    expect(order.payment_history.at(-1)).toEqual({ transaction_type: 'payment', amount: diff, payment_method_id: 'gift_card_1' });
    expect(getUser(state, 'ann_lee')!.payment_methods['gift_card_1']).toMatchObject({ balance: 94.85 });
    expect(Object.keys(order)).toEqual(Object.keys(world.data.orders['#W1']!));
    expectRefusal(
      state,
      'modify_pending_order_items',
      { order_id: '#W1', item_ids: [MUG_1], new_item_ids: [MUG_2], payment_method_id: 'credit_card_1' },
      'PRECONDITION_FAILED',
      'non-pending order cannot be modified',
    );
  });

  it('records a cheaper swap as a refund and leaves non-gift-card balances alone', () => {
    const order = output<RetailOrder>(
      call(state, 'modify_pending_order_items', { order_id: '#W5', item_ids: [LAMP_2], new_item_ids: [LAMP_1], payment_method_id: 'credit_card_1' }),
    );
    expect(order.payment_history.at(-1)).toEqual({ transaction_type: 'refund', amount: Math.abs(30.1 - 35.25), payment_method_id: 'credit_card_1' });
    expect(listChanges(state)).toEqual([{ table: 'orders', key: '#W5' }]);
  });

  it('swaps one by one on the first item that still has the old id, as tau-bench does', () => {
    // [LAMP_2, LAMP_1] with LAMP_2 -> LAMP_1 then LAMP_1 -> LAMP_2: both swaps hit the first item.
    const order = output<RetailOrder>(
      call(state, 'modify_pending_order_items', {
        order_id: '#W5',
        item_ids: [LAMP_2, LAMP_1],
        new_item_ids: [LAMP_1, LAMP_2],
        payment_method_id: 'credit_card_1',
      }),
    );
    expect(order.items.map((i) => i.item_id)).toEqual([LAMP_2, LAMP_1]);
    expect(order.payment_history.at(-1)).toMatchObject({ transaction_type: 'refund', amount: Math.abs(30.1 - 35.25 + (35.25 - 30.1)) });
  });

  it('checks items, counts, availability, payment method and gift-card balance before changing anything', () => {
    const base = { order_id: '#W1', payment_method_id: 'credit_card_1' };
    expectRefusal(state, 'modify_pending_order_items', { ...base, order_id: '#W0', item_ids: [], new_item_ids: [] }, 'NOT_FOUND', 'order not found');
    expectRefusal(state, 'modify_pending_order_items', { ...base, order_id: '#W3', item_ids: [LAMP_1], new_item_ids: [LAMP_2] }, 'PRECONDITION_FAILED', 'non-pending order cannot be modified');
    expectRefusal(state, 'modify_pending_order_items', { ...base, item_ids: [LAMP_1, LAMP_1], new_item_ids: [LAMP_2, LAMP_2] }, 'NOT_FOUND', `${LAMP_1} not found`);
    expectRefusal(state, 'modify_pending_order_items', { ...base, item_ids: [LAMP_1], new_item_ids: [] }, 'PRECONDITION_FAILED', 'the number of items to be exchanged should match');
    expectRefusal(state, 'modify_pending_order_items', { ...base, item_ids: [LAMP_1], new_item_ids: [LAMP_OUT] }, 'PRECONDITION_FAILED', `new item ${LAMP_OUT} not found or available`);
    expectRefusal(state, 'modify_pending_order_items', { ...base, item_ids: [LAMP_1], new_item_ids: [MUG_2] }, 'NOT_FOUND', `new item ${MUG_2} not found or available`);
    expectRefusal(state, 'modify_pending_order_items', { ...base, item_ids: [LAMP_1], new_item_ids: [LAMP_2], payment_method_id: 'credit_card_9' }, 'NOT_FOUND', 'payment method not found');
    expectRefusal(state, 'modify_pending_order_items', { ...base, item_ids: [LAMP_1], new_item_ids: [LAMP_2], payment_method_id: 'gift_card_2' }, 'PRECONDITION_FAILED', 'insufficient gift card balance to pay for the new item');
  });
});

describe('modify_pending_order_payment', () => {
  it('charges the new method, refunds the old one and moves gift-card balances', () => {
    const order = output<RetailOrder>(call(state, 'modify_pending_order_payment', { order_id: '#W2', payment_method_id: 'paypal_1' }));
    expect(order.status).toBe('pending');
    expect(order.payment_history).toEqual([
      { transaction_type: 'payment', amount: 12.2, payment_method_id: 'gift_card_1' },
      { transaction_type: 'payment', amount: 12.2, payment_method_id: 'paypal_1' },
      { transaction_type: 'refund', amount: 12.2, payment_method_id: 'gift_card_1' },
    ]);
    expect(getUser(state, 'ann_lee')!.payment_methods['gift_card_1']).toMatchObject({ balance: 112.2 });
    output(call(state, 'modify_pending_order_payment', { order_id: '#W1', payment_method_id: 'gift_card_1' }));
    expect(getUser(state, 'ann_lee')!.payment_methods['gift_card_1']).toMatchObject({ balance: 69.9 });
  });

  it('refuses a second change, the same method, unknown methods and short gift cards', () => {
    expectRefusal(state, 'modify_pending_order_payment', { order_id: '#W1', payment_method_id: 'credit_card_1' }, 'PRECONDITION_FAILED', 'the new payment method should be different from the current one');
    expectRefusal(state, 'modify_pending_order_payment', { order_id: '#W1', payment_method_id: 'card' }, 'NOT_FOUND', 'payment method not found');
    expectRefusal(state, 'modify_pending_order_payment', { order_id: '#W1', payment_method_id: 'gift_card_2' }, 'PRECONDITION_FAILED', 'insufficient gift card balance to pay for the order');
    expectRefusal(state, 'modify_pending_order_payment', { order_id: '#W4', payment_method_id: 'paypal_1' }, 'PRECONDITION_FAILED', 'non-pending order cannot be modified');
    output(call(state, 'modify_pending_order_payment', { order_id: '#W1', payment_method_id: 'paypal_1' }));
    expectRefusal(state, 'modify_pending_order_payment', { order_id: '#W1', payment_method_id: 'gift_card_1' }, 'PRECONDITION_FAILED', 'there should be exactly one payment for a pending order');
  });
});

describe('address changes', () => {
  it("modify_pending_order_address replaces the address in tau-bench's key order", () => {
    const order = output<RetailOrder>(call(state, 'modify_pending_order_address', { order_id: '#W1', ...ADDRESS }));
    expect(order.address).toEqual(ADDRESS);
    expect(Object.keys(order.address)).toEqual(['address1', 'address2', 'city', 'state', 'country', 'zip']);
    expect(Object.keys(order)).toEqual(Object.keys(world.data.orders['#W1']!));
    expectRefusal(state, 'modify_pending_order_address', { order_id: '#W3', ...ADDRESS }, 'PRECONDITION_FAILED', 'non-pending order cannot be modified');
    expectRefusal(state, 'modify_pending_order_address', { order_id: '#W0', ...ADDRESS }, 'NOT_FOUND', 'order not found');
  });

  it('modify_pending_order_address keeps working on a pending order after a payment change', () => {
    output(call(state, 'modify_pending_order_payment', { order_id: '#W1', payment_method_id: 'paypal_1' }));
    expect(call(state, 'modify_pending_order_address', { order_id: '#W1', ...ADDRESS }).ok).toBe(true);
  });

  it("modify_user_address replaces the user's default address only", () => {
    const user = output<RetailUser>(call(state, 'modify_user_address', { user_id: 'bob_ray', ...ADDRESS }));
    expect(user.address).toEqual(ADDRESS);
    expect(getOrder(state, '#W6')!.address).toEqual(world.data.orders['#W6']!.address);
    expect(listChanges(state)).toEqual([{ table: 'users', key: 'bob_ray' }]);
    expectRefusal(state, 'modify_user_address', { user_id: 'nobody', ...ADDRESS }, 'NOT_FOUND', 'user not found');
  });
});

describe('return_delivered_order_items', () => {
  it('requests a return to the original method or a gift card, with sorted item ids', () => {
    const order = output<RetailOrder>(
      call(state, 'return_delivered_order_items', { order_id: '#W3', item_ids: [MUG_2, LAMP_1, LAMP_1], payment_method_id: 'credit_card_1' }),
    );
    expect(order.status).toBe('return requested');
    expect(order.return_items).toEqual([LAMP_1, LAMP_1, MUG_2]);
    expect(order.return_payment_method_id).toBe('credit_card_1');
    expect(Object.keys(order).slice(-2)).toEqual(['return_items', 'return_payment_method_id']);
    const other = forkRetailState(createRetailState(world));
    expect(call(other, 'return_delivered_order_items', { order_id: '#W3', item_ids: [MUG_2], payment_method_id: 'gift_card_2' }).ok).toBe(true);
  });

  it('refuses other methods, missing items and non-delivered orders; a delivered order is returned once', () => {
    const base = { order_id: '#W3', item_ids: [LAMP_1] };
    expectRefusal(state, 'return_delivered_order_items', { ...base, payment_method_id: 'paypal_1' }, 'PRECONDITION_FAILED', 'payment method should be either the original payment method or a gift card');
    expectRefusal(state, 'return_delivered_order_items', { ...base, payment_method_id: 'paypal_9' }, 'NOT_FOUND', 'payment method not found');
    expectRefusal(state, 'return_delivered_order_items', { ...base, item_ids: [LAMP_1, LAMP_1, LAMP_1], payment_method_id: 'credit_card_1' }, 'NOT_FOUND', 'some item not found');
    expectRefusal(state, 'return_delivered_order_items', { ...base, order_id: '#W4', payment_method_id: 'credit_card_1' }, 'PRECONDITION_FAILED', 'non-delivered order cannot be returned');
    output(call(state, 'return_delivered_order_items', { ...base, payment_method_id: 'credit_card_1' }));
    expectRefusal(state, 'return_delivered_order_items', { ...base, payment_method_id: 'credit_card_1' }, 'PRECONDITION_FAILED', 'non-delivered order cannot be returned');
    expectRefusal(state, 'exchange_delivered_order_items', { ...base, new_item_ids: [LAMP_2], payment_method_id: 'credit_card_1' }, 'PRECONDITION_FAILED', 'non-delivered order cannot be exchanged');
  });
});

describe('exchange_delivered_order_items', () => {
  it('requests an exchange with sorted ids and the price difference rounded to cents', () => {
    const order = output<RetailOrder>(
      call(state, 'exchange_delivered_order_items', {
        order_id: '#W3',
        item_ids: [MUG_2, LAMP_1],
        new_item_ids: [MUG_1, LAMP_2],
        payment_method_id: 'paypal_1',
      }),
    );
    expect(order.status).toBe('exchange requested');
    expect(order.exchange_items).toEqual([LAMP_1, MUG_2]);
    expect(order.exchange_new_items).toEqual([LAMP_2, MUG_1]);
    expect(order.exchange_payment_method_id).toBe('paypal_1');
    expect(order.exchange_price_difference).toBe(2.9); // (12.2 - 14.45) + (35.25 - 30.1)
    expect(order.payment_history).toBe(world.data.orders['#W3']!.payment_history);
    expect(listChanges(state)).toEqual([{ table: 'orders', key: '#W3' }]);
  });

  it('checks items, counts, availability, payment method and gift-card balance', () => {
    const base = { order_id: '#W3', payment_method_id: 'credit_card_1' };
    expectRefusal(state, 'exchange_delivered_order_items', { ...base, item_ids: [MUG_1], new_item_ids: [MUG_2] }, 'NOT_FOUND', `${MUG_1} not found`);
    expectRefusal(state, 'exchange_delivered_order_items', { ...base, item_ids: [LAMP_1], new_item_ids: [LAMP_2, LAMP_2] }, 'PRECONDITION_FAILED', 'the number of items to be exchanged should match');
    expectRefusal(state, 'exchange_delivered_order_items', { ...base, item_ids: [LAMP_1], new_item_ids: [LAMP_OUT] }, 'PRECONDITION_FAILED', `new item ${LAMP_OUT} not found or available`);
    expectRefusal(state, 'exchange_delivered_order_items', { ...base, item_ids: [LAMP_1], new_item_ids: [LAMP_2], payment_method_id: 'x' }, 'NOT_FOUND', 'payment method not found');
    expectRefusal(state, 'exchange_delivered_order_items', { ...base, item_ids: [LAMP_1, LAMP_1], new_item_ids: [LAMP_2, LAMP_2], payment_method_id: 'gift_card_2' }, 'PRECONDITION_FAILED', 'insufficient gift card balance to pay for the price difference');
    expectRefusal(state, 'exchange_delivered_order_items', { ...base, order_id: '#W1', item_ids: [LAMP_1], new_item_ids: [LAMP_2] }, 'PRECONDITION_FAILED', 'non-delivered order cannot be exchanged');
    // A cheaper exchange is fine even on an empty gift card.
    expect(call(state, 'exchange_delivered_order_items', { ...base, item_ids: [MUG_2], new_item_ids: [MUG_1], payment_method_id: 'gift_card_2' }).ok).toBe(true);
  });
});

describe('immutability of written records', () => {
  function expectDeepFrozen(value: unknown, path = ''): void {
    if (typeof value !== 'object' || value === null) return;
    expect(Object.isFrozen(value), `${path} is frozen`).toBe(true);
    for (const [key, child] of Object.entries(value)) expectDeepFrozen(child, `${path}/${key}`);
  }

  it('freezes every record a write tool stores, down to the leaves', () => {
    output(call(state, 'cancel_pending_order', { order_id: '#W2', reason: 'no longer needed' }));
    output(call(state, 'modify_pending_order_items', { order_id: '#W1', item_ids: [LAMP_1], new_item_ids: [LAMP_2], payment_method_id: 'gift_card_1' }));
    output(call(state, 'modify_pending_order_payment', { order_id: '#W5', payment_method_id: 'gift_card_1' }));
    output(call(state, 'modify_pending_order_address', { order_id: '#W5', ...ADDRESS }));
    output(call(state, 'modify_user_address', { user_id: 'bob_ray', ...ADDRESS }));
    output(call(state, 'return_delivered_order_items', { order_id: '#W3', item_ids: [LAMP_1], payment_method_id: 'gift_card_1' }));
    const other = createRetailState(world);
    output(call(other, 'exchange_delivered_order_items', { order_id: '#W3', item_ids: [LAMP_1], new_item_ids: [LAMP_2], payment_method_id: 'paypal_1' }));
    for (const s of [state, other]) {
      for (const { table, key } of listChanges(s)) expectDeepFrozen(s.overlay[table].get(key), `${table}/${key}`);
    }
    expect(listChanges(state)).toHaveLength(6);
  });
});
