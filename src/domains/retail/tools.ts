/** tau-bench's 16 retail tools, ported to copy-on-write state with the same arguments, checks, texts and effects. */
import { z } from 'zod';
import { defineTool, type JsonValue, type Tool, type ToolOutcome } from '../../core/index.js';
import { evaluateExpression } from './calculate.js';
import { comparePyStrings, pyCount, pyRound2, pySorted, pyTruthy } from './py.js';
import type { GiftCard, OrderItem, PaymentMethod, PaymentTransaction, RetailOrder, RetailProduct, RetailUser, RetailVariant } from './schema.js';
import { getOrder, getProduct, getUser, listKeys, putFrozenRecord, type RetailState } from './state.js';
import type { RetailWorld } from './world.js';

// Outcomes. Messages are tau-bench's error texts without its "Error: " prefix.

const ok = (output: unknown): ToolOutcome => ({ ok: true, output: output as JsonValue });
const notFound = (message: string): ToolOutcome => ({ ok: false, error: { code: 'NOT_FOUND', message } });
const refused = (message: string, pointer?: string): ToolOutcome => ({
  ok: false,
  error: pointer === undefined ? { code: 'PRECONDITION_FAILED', message } : { code: 'PRECONDITION_FAILED', message, pointer },
});
/** Python's `str(KeyError(key))`, which tau-bench's step loop turns into "Error: 'key'". */
const keyError = (key: string): ToolOutcome => notFound(key.includes("'") && !key.includes('"') ? `"${key}"` : `'${key}'`);

// Argument schemas: tau-bench's names; extra arguments are refused as Python would refuse them.

const orderId = z.string().describe("Order id, including its leading '#', e.g. '#W0000000'.");
const userId = z.string().describe("User id, e.g. 'sara_doe_496'.");
const itemIds = z.array(z.string());
const paymentMethodId = z
  .string()
  .describe("Payment method id from the user's profile, e.g. 'gift_card_0000000' or 'credit_card_0000000'.");
const addressFields = {
  address1: z.string().describe("Street line, e.g. '123 Main St'."),
  address2: z.string().describe("Second line, e.g. 'Apt 1', or ''."),
  city: z.string().describe("City, e.g. 'San Francisco'."),
  state: z.string().describe("State or province, e.g. 'CA'."),
  country: z.string().describe("Country, e.g. 'USA'."),
  zip: z.string().describe("Zip code, e.g. '12345'."),
};

// Records are immutable and shared between forks: every object a tool builds is frozen as it is
// stored (one Object.freeze each, cheaper than walking the record).
const freeze = <T>(value: T): T => Object.freeze(value);

type AddressArgs = { address1: string; address2: string; city: string; state: string; country: string; zip: string };

/** The address object tau-bench builds, in its key order. */
function addressOf(args: AddressArgs): RetailOrder['address'] {
  return freeze({
    address1: args.address1,
    address2: args.address2,
    city: args.city,
    state: args.state,
    country: args.country,
    zip: args.zip,
  });
}

function saveOrder(state: RetailState, orderId: string, order: RetailOrder): RetailOrder {
  putFrozenRecord(state, 'orders', orderId, freeze(order));
  return order;
}

/** Stores a draft user (see `draftUser`): its payment-method map and the user are frozen here. */
function saveUser(state: RetailState, userId: string, user: RetailUser): void {
  freeze(user.payment_methods);
  putFrozenRecord(state, 'users', userId, freeze(user));
}

/** A user copy whose payment methods can be replaced one by one within a tool call. */
function draftUser(user: RetailUser): RetailUser {
  return { ...user, payment_methods: { ...user.payment_methods } };
}

/** Replaces a payment method of a draft user (also under a loaded key named `__proto__`). */
function setMethod(user: RetailUser, id: string, method: PaymentMethod): void {
  Object.defineProperty(user.payment_methods, id, { value: freeze(method), enumerable: true, writable: true, configurable: true });
}

function ownEntry<V>(record: Record<string, V>, key: string): V | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

/** A variant of the current version of a product (Python's `variants[item_id]` after an `in` check). */
function variantOf(state: RetailState, product: RetailProduct, itemId: string): RetailVariant | undefined {
  const world = state.world;
  if (world.cache.byKey.products.get(product.product_id) !== product) return ownEntry(product.variants, itemId);
  const byProduct = (world.cache.variants ??= new Map());
  let variants = byProduct.get(product.product_id);
  if (variants === undefined) {
    variants = new Map(Object.entries(product.variants));
    byProduct.set(product.product_id, variants);
  }
  return variants.get(itemId);
}

/** tau-bench's duplicate-aware check that every id in `ids` is in the order (as often as listed). */
function missingItem(order: RetailOrder, ids: readonly string[]): string | undefined {
  const present = order.items.map((item) => item.item_id);
  for (const id of ids) if (pyCount(ids, id) > pyCount(present, id)) return id;
  return undefined;
}

/**
 * The price difference of swapping `itemIds[i]` for `newItemIds[i]` (same product, available
 * variant), summed in tau-bench's order; or the failing outcome.
 */
function priceDifference(
  state: RetailState,
  order: RetailOrder,
  ids: readonly string[],
  newIds: readonly string[],
): { ok: true; diff: number } | { ok: false; outcome: ToolOutcome } {
  let diff = 0;
  for (let i = 0; i < ids.length; i++) {
    const item = order.items.find((it) => it.item_id === ids[i])!;
    const product = getProduct(state, item.product_id);
    if (product === undefined) return { ok: false, outcome: keyError(item.product_id) };
    const newId = newIds[i]!;
    const variant = variantOf(state, product, newId);
    if (variant === undefined) return { ok: false, outcome: notFound(`new item ${newId} not found or available`) };
    if (!pyTruthy(variant.available)) return { ok: false, outcome: refused(`new item ${newId} not found or available`) };
    diff += variant.price - item.price;
  }
  return { ok: true, diff };
}

function isGiftCard(method: PaymentMethod): method is GiftCard {
  return method.source === 'gift_card';
}

// Read tools.

export const calculate = defineTool({
  name: 'calculate',
  description:
    'Evaluate an arithmetic expression (numbers, + - * /, parentheses, spaces) and return the result rounded to 2 decimals.',
  effect: 'read',
  args: z.strictObject({ expression: z.string().describe("The expression, e.g. '(19.99 + 5) * 3'.") }),
  run: (_state: RetailState, { expression }) => {
    const result = evaluateExpression(expression);
    return result.ok ? ok(result.value) : refused(result.message, '/expression');
  },
});

export const findUserIdByEmail = defineTool({
  name: 'find_user_id_by_email',
  description: "Look up a customer's user id from their email address (case-insensitive).",
  effect: 'read',
  args: z.strictObject({ email: z.string().describe("The customer's email, e.g. 'someone@example.com'.") }),
  run: (state: RetailState, { email }) => {
    const id = findFirstUser(state, email.toLowerCase(), emailIndex, emailKey);
    return id === undefined ? notFound('user not found') : ok(id);
  },
});

export const findUserIdByNameZip = defineTool({
  name: 'find_user_id_by_name_zip',
  description:
    "Look up a customer's user id from their first name, last name and zip code; use it when the email is unknown or not found.",
  effect: 'read',
  args: z.strictObject({
    first_name: z.string().describe("First name, e.g. 'John'."),
    last_name: z.string().describe("Last name, e.g. 'Doe'."),
    zip: z.string().describe("Zip code of the customer's default address, e.g. '12345'."),
  }),
  run: (state: RetailState, args) => {
    const key = nameZipKey(args.first_name, args.last_name, args.zip);
    const id = findFirstUser(state, key, nameZipIndex, (user) => nameZipKey(user.name.first_name, user.name.last_name, user.address.zip));
    return id === undefined ? notFound('user not found') : ok(id);
  },
});

export const getOrderDetails = defineTool({
  name: 'get_order_details',
  description: "Show an order: status, items, shipping address, fulfilments and payments.",
  effect: 'read',
  args: z.strictObject({ order_id: orderId }),
  run: (state: RetailState, { order_id }) => {
    const order = getOrder(state, order_id);
    return order === undefined ? notFound('order not found') : ok(order);
  },
});

export const getProductDetails = defineTool({
  name: 'get_product_details',
  description: 'Show a product type and all its variants (item ids, options, availability, prices). Takes a product id, not an item id.',
  effect: 'read',
  args: z.strictObject({ product_id: z.string().describe("Product id, e.g. '6086499569'.") }),
  run: (state: RetailState, { product_id }) => {
    const product = getProduct(state, product_id);
    return product === undefined ? notFound('product not found') : ok(product);
  },
});

export const getUserDetails = defineTool({
  name: 'get_user_details',
  description: "Show a customer's profile: name, default address, email, payment methods and order ids.",
  effect: 'read',
  args: z.strictObject({ user_id: userId }),
  run: (state: RetailState, { user_id }) => {
    const user = getUser(state, user_id);
    return user === undefined ? notFound('user not found') : ok(user);
  },
});

export const listAllProductTypes = defineTool({
  name: 'list_all_product_types',
  description: 'List every product type in the store as a map from product name to product id, sorted by name.',
  effect: 'read',
  args: z.strictObject({}),
  run: (state: RetailState) => {
    // No tool writes products: the world's listing is built once and shared, frozen, like its records
    // (adding each name to a fresh object cost more than the rest of the call).
    if (state.overlay.products.size > 0) return ok(productTypesObject(productTypes(state)));
    const cache = state.world.cache;
    return ok((cache.productTypesOutput ??= freeze(productTypesObject((cache.productTypes ??= productTypes(state))))));
  },
});

export const think = defineTool({
  name: 'think',
  description: 'Write down a thought, e.g. a plan or an intermediate result. Reads and changes nothing; returns an empty string.',
  effect: 'read',
  args: z.strictObject({ thought: z.string().describe('The thought.') }),
  run: () => ok(''),
});

export const transferToHumanAgents = defineTool({
  name: 'transfer_to_human_agents',
  description:
    "Hand the conversation to a human agent with a summary of the customer's issue. Only when the customer asks for a human or the issue cannot be solved with these tools.",
  effect: 'read',
  args: z.strictObject({ summary: z.string().describe("A summary of the customer's issue.") }),
  run: () => ok('Transfer successful'),
});

// Write tools.

export const cancelPendingOrder = defineTool({
  name: 'cancel_pending_order',
  description:
    "Cancel a pending order and refund every payment: gift-card payments go back to the card's balance at once, other methods within 5-7 business days. Needs the customer's explicit confirmation. Returns the updated order.",
  effect: 'write',
  args: z.strictObject({
    order_id: orderId,
    reason: z.enum(['no longer needed', 'ordered by mistake']).describe("Either 'no longer needed' or 'ordered by mistake'."),
  }),
  run: (state: RetailState, { order_id, reason }) => {
    const order = getOrder(state, order_id);
    if (order === undefined) return notFound('order not found');
    if (order.status !== 'pending') return refused('non-pending order cannot be cancelled');
    if (reason !== 'no longer needed' && reason !== 'ordered by mistake') return refused('invalid reason', '/reason');

    const refunds: PaymentTransaction[] = [];
    let user: RetailUser | undefined;
    for (const payment of order.payment_history) {
      const id = payment.payment_method_id;
      refunds.push(freeze({ transaction_type: 'refund', amount: payment.amount, payment_method_id: id }));
      if (id.includes('gift_card')) {
        if (user === undefined) {
          const current = getUser(state, order.user_id);
          if (current === undefined) return keyError(order.user_id);
          user = draftUser(current);
        }
        const method = ownEntry(user.payment_methods, id);
        if (method === undefined) return keyError(id);
        if (!isGiftCard(method)) return keyError('balance');
        setMethod(user, id, { ...method, balance: pyRound2(method.balance + payment.amount) });
      }
    }
    const next = saveOrder(state, order_id, {
      ...order,
      status: 'cancelled',
      cancel_reason: reason,
      payment_history: freeze([...order.payment_history, ...refunds]),
    });
    if (user !== undefined) saveUser(state, order.user_id, user);
    return ok(next);
  },
});

export const exchangeDeliveredOrderItems = defineTool({
  name: 'exchange_delivered_order_items',
  description:
    "Request an exchange of items of a delivered order for other variants of the same products. A delivered order can be returned or exchanged only once. Needs the customer's explicit confirmation.",
  effect: 'write',
  args: z.strictObject({
    order_id: orderId,
    item_ids: itemIds.describe("Item ids to exchange, e.g. '1008292230'; repeat an id to exchange several of it."),
    new_item_ids: itemIds.describe('The new item ids, position by position: each a variant of the same product as the item it replaces.'),
    payment_method_id: paymentMethodId.describe(
      'Payment method that pays or receives the price difference, e.g. a gift card or credit card of the customer.',
    ),
  }),
  run: (state: RetailState, { order_id, item_ids, new_item_ids, payment_method_id }) => {
    const order = getOrder(state, order_id);
    if (order === undefined) return notFound('order not found');
    if (order.status !== 'delivered') return refused('non-delivered order cannot be exchanged');
    const missing = missingItem(order, item_ids);
    if (missing !== undefined) return notFound(`${missing} not found`);
    if (item_ids.length !== new_item_ids.length) return refused('the number of items to be exchanged should match');
    const price = priceDifference(state, order, item_ids, new_item_ids);
    if (!price.ok) return price.outcome;
    const diff = pyRound2(price.diff);

    const user = getUser(state, order.user_id);
    if (user === undefined) return keyError(order.user_id);
    const method = ownEntry(user.payment_methods, payment_method_id);
    if (method === undefined) return notFound('payment method not found');
    if (isGiftCard(method) && method.balance < diff) {
      return refused('insufficient gift card balance to pay for the price difference');
    }
    const next = saveOrder(state, order_id, {
      ...order,
      status: 'exchange requested',
      exchange_items: freeze(pySorted(item_ids)),
      exchange_new_items: freeze(pySorted(new_item_ids)),
      exchange_payment_method_id: payment_method_id,
      exchange_price_difference: diff,
    });
    return ok(next);
  },
});

export const modifyPendingOrderAddress = defineTool({
  name: 'modify_pending_order_address',
  description: "Change the shipping address of a pending order. Needs the customer's explicit confirmation. Returns the updated order.",
  effect: 'write',
  args: z.strictObject({ order_id: orderId, ...addressFields }),
  run: (state: RetailState, args) => {
    const order = getOrder(state, args.order_id);
    if (order === undefined) return notFound('order not found');
    if (order.status !== 'pending') return refused('non-pending order cannot be modified');
    return ok(saveOrder(state, args.order_id, { ...order, address: addressOf(args) }));
  },
});

export const modifyPendingOrderItems = defineTool({
  name: 'modify_pending_order_items',
  description:
    "Swap items of a pending order for other variants of the same products, paying or refunding the difference. Possible once per order. Needs the customer's explicit confirmation.",
  effect: 'write',
  args: z.strictObject({
    order_id: orderId,
    item_ids: itemIds.describe("Item ids to change, e.g. '1008292230'; repeat an id to change several of it."),
    new_item_ids: itemIds.describe('The new item ids, position by position: each a variant of the same product as the item it replaces.'),
    payment_method_id: paymentMethodId.describe('Payment method that pays or receives the price difference.'),
  }),
  run: (state: RetailState, { order_id, item_ids, new_item_ids, payment_method_id }) => {
    const order = getOrder(state, order_id);
    if (order === undefined) return notFound('order not found');
    if (order.status !== 'pending') return refused('non-pending order cannot be modified');
    const missing = missingItem(order, item_ids);
    if (missing !== undefined) return notFound(`${missing} not found`);
    if (item_ids.length !== new_item_ids.length) return refused('the number of items to be exchanged should match');
    const price = priceDifference(state, order, item_ids, new_item_ids);
    if (!price.ok) return price.outcome;
    // tau-bench does not round this difference; the raw float lands in the payment history.
    const diff = price.diff;

    const current = getUser(state, order.user_id);
    if (current === undefined) return keyError(order.user_id);
    const method = ownEntry(current.payment_methods, payment_method_id);
    if (method === undefined) return notFound('payment method not found');
    if (isGiftCard(method) && method.balance < diff) return refused('insufficient gift card balance to pay for the new item');

    // Swap items one by one, each time on the first item that still has the old id (as tau-bench does).
    const items: OrderItem[] = order.items.slice();
    for (let i = 0; i < item_ids.length; i++) {
      const index = items.findIndex((it) => it.item_id === item_ids[i]);
      if (index < 0) return refused('list index out of range');
      const item = items[index]!;
      const newId = new_item_ids[i]!;
      const product = getProduct(state, item.product_id);
      const variant = product === undefined ? undefined : variantOf(state, product, newId);
      if (variant === undefined) return keyError(product === undefined ? item.product_id : newId);
      items[index] = freeze({ ...item, item_id: newId, price: variant.price, options: variant.options });
    }
    const payment: PaymentTransaction = { transaction_type: diff > 0 ? 'payment' : 'refund', amount: Math.abs(diff), payment_method_id };
    const next = saveOrder(state, order_id, {
      ...order,
      items: freeze(items),
      status: 'pending (item modified)',
      payment_history: freeze([...order.payment_history, freeze(payment)]),
    });
    if (isGiftCard(method)) {
      const user = draftUser(current);
      setMethod(user, payment_method_id, { ...method, balance: pyRound2(method.balance - diff) });
      saveUser(state, order.user_id, user);
    }
    return ok(next);
  },
});

export const modifyPendingOrderPayment = defineTool({
  name: 'modify_pending_order_payment',
  description:
    "Pay a pending order with another of the customer's payment methods: the new method is charged and the old one refunded. Needs the customer's explicit confirmation.",
  effect: 'write',
  args: z.strictObject({ order_id: orderId, payment_method_id: paymentMethodId.describe('The new payment method.') }),
  run: (state: RetailState, { order_id, payment_method_id }) => {
    const order = getOrder(state, order_id);
    if (order === undefined) return notFound('order not found');
    if (order.status !== 'pending') return refused('non-pending order cannot be modified');
    const current = getUser(state, order.user_id);
    if (current === undefined) return keyError(order.user_id);
    const method = ownEntry(current.payment_methods, payment_method_id);
    if (method === undefined) return notFound('payment method not found');
    const first = order.payment_history[0];
    if (first === undefined) return refused('list index out of range');
    if (order.payment_history.length > 1 || first.transaction_type !== 'payment') {
      return refused('there should be exactly one payment for a pending order');
    }
    if (first.payment_method_id === payment_method_id) {
      return refused('the new payment method should be different from the current one');
    }
    const amount = first.amount;
    if (isGiftCard(method) && method.balance < amount) return refused('insufficient gift card balance to pay for the order');
    const oldId = first.payment_method_id;
    const refundsToGiftCard = oldId.includes('gift_card');
    const oldMethod = refundsToGiftCard ? ownEntry(current.payment_methods, oldId) : undefined;
    if (refundsToGiftCard && oldMethod === undefined) return keyError(oldId);
    if (oldMethod !== undefined && !isGiftCard(oldMethod)) return keyError('balance');

    const next = saveOrder(state, order_id, {
      ...order,
      payment_history: freeze([
        ...order.payment_history,
        freeze({ transaction_type: 'payment', amount, payment_method_id }),
        freeze({ transaction_type: 'refund', amount, payment_method_id: oldId }),
      ]),
    });
    if (isGiftCard(method) || oldMethod !== undefined) {
      const user = draftUser(current);
      if (isGiftCard(method)) setMethod(user, payment_method_id, { ...method, balance: pyRound2(method.balance - amount) });
      if (oldMethod !== undefined && isGiftCard(oldMethod)) {
        setMethod(user, oldId, { ...oldMethod, balance: pyRound2(oldMethod.balance + amount) });
      }
      saveUser(state, order.user_id, user);
    }
    return ok(next);
  },
});

export const modifyUserAddress = defineTool({
  name: 'modify_user_address',
  description: "Change a customer's default address. Needs the customer's explicit confirmation. Returns the updated profile.",
  effect: 'write',
  args: z.strictObject({ user_id: userId, ...addressFields }),
  run: (state: RetailState, args) => {
    const user = getUser(state, args.user_id);
    if (user === undefined) return notFound('user not found');
    const next: RetailUser = freeze({ ...user, address: addressOf(args) });
    putFrozenRecord(state, 'users', args.user_id, next);
    return ok(next);
  },
});

export const returnDeliveredOrderItems = defineTool({
  name: 'return_delivered_order_items',
  description:
    "Request a return of items of a delivered order; the refund goes to the original payment method or to a gift card. The customer is emailed return instructions. Needs the customer's explicit confirmation.",
  effect: 'write',
  args: z.strictObject({
    order_id: orderId,
    item_ids: itemIds.describe("Item ids to return, e.g. '1008292230'; repeat an id to return several of it."),
    payment_method_id: paymentMethodId.describe("Where the refund goes: the order's original payment method or a gift card."),
  }),
  run: (state: RetailState, { order_id, item_ids, payment_method_id }) => {
    const order = getOrder(state, order_id);
    if (order === undefined) return notFound('order not found');
    if (order.status !== 'delivered') return refused('non-delivered order cannot be returned');
    const user = getUser(state, order.user_id);
    if (user === undefined) return keyError(order.user_id);
    if (!Object.hasOwn(user.payment_methods, payment_method_id)) return notFound('payment method not found');
    if (!payment_method_id.includes('gift_card')) {
      const first = order.payment_history[0];
      if (first === undefined) return refused('list index out of range');
      if (payment_method_id !== first.payment_method_id) {
        return refused('payment method should be either the original payment method or a gift card');
      }
    }
    if (missingItem(order, item_ids) !== undefined) return notFound('some item not found');
    const next = saveOrder(state, order_id, {
      ...order,
      status: 'return requested',
      return_items: freeze(pySorted(item_ids)),
      return_payment_method_id: payment_method_id,
    });
    return ok(next);
  },
});

/** All 16 tools, in tau-bench's order. */
export const retailTools: readonly Tool<RetailState, any>[] = [
  calculate,
  cancelPendingOrder,
  exchangeDeliveredOrderItems,
  findUserIdByEmail,
  findUserIdByNameZip,
  getOrderDetails,
  getProductDetails,
  getUserDetails,
  listAllProductTypes,
  modifyPendingOrderAddress,
  modifyPendingOrderItems,
  modifyPendingOrderPayment,
  modifyUserAddress,
  returnDeliveredOrderItems,
  think,
  transferToHumanAgents,
];

function productTypesObject(types: ReadonlyArray<readonly [string, string]>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, id] of types) out[name] = id;
  return out;
}

function productTypes(state: RetailState): Array<readonly [string, string]> {
  const byName = new Map<string, string>();
  for (const key of listKeys(state, 'products')) {
    const product = getProduct(state, key)!;
    byName.set(product.name, product.product_id);
  }
  return [...byName.keys()].sort(comparePyStrings).map((name) => [name, byName.get(name)!] as const);
}

export const RETAIL_TOOL_NAMES: readonly string[] = retailTools.map((tool) => tool.name);

// User lookups: tau-bench returns the first matching user in table order. The base world is indexed
// once; users replaced in the overlay are checked against their current record.

const emailKey = (user: RetailUser): string => user.email.toLowerCase();

function nameZipKey(first: string, last: string, zip: string): string {
  return JSON.stringify([first.toLowerCase(), last.toLowerCase(), zip]);
}

function emailIndex(world: RetailWorld): Map<string, string[]> {
  return (world.cache.emailIndex ??= indexUsers(world, emailKey));
}

function nameZipIndex(world: RetailWorld): Map<string, string[]> {
  return (world.cache.nameZipIndex ??= indexUsers(world, (u) => nameZipKey(u.name.first_name, u.name.last_name, u.address.zip)));
}

function indexUsers(world: RetailWorld, keyOf: (user: RetailUser) => string): Map<string, string[]> {
  const index = new Map<string, string[]>();
  for (const [id, user] of Object.entries(world.data.users)) {
    const key = keyOf(user);
    const ids = index.get(key);
    if (ids === undefined) index.set(key, [id]);
    else ids.push(id);
  }
  return index;
}

function findFirstUser(
  state: RetailState,
  key: string,
  indexOf: (world: RetailWorld) => Map<string, string[]>,
  keyOf: (user: RetailUser) => string,
): string | undefined {
  const hits = indexOf(state.world).get(key);
  const overlay = state.overlay.users;
  if (overlay.size === 0) return hits?.[0];
  let best: string | undefined;
  let bestPosition = Infinity;
  const positions = (state.world.cache.userPositions ??= new Map(Object.keys(state.world.data.users).map((id, i) => [id, i])));
  for (const id of hits ?? []) {
    const changed = overlay.get(id);
    if (changed !== undefined && keyOf(changed) !== key) continue;
    best = id;
    bestPosition = positions.get(id)!;
    break;
  }
  let added = positions.size;
  for (const [id, user] of overlay) {
    const position = positions.get(id) ?? added++;
    if (position < bestPosition && keyOf(user) === key) {
      best = id;
      bestPosition = position;
    }
  }
  return best;
}
