/** Small hand-built retail worlds for tests: `makeRetailWorld({ orders: [...] })`. */
import type {
  OrderItem,
  PaymentMethod,
  RetailAddress,
  RetailData,
  RetailOrder,
  RetailProduct,
  RetailUser,
  RetailVariant,
} from './schema.js';
import { createRetailWorld, type RetailWorld } from './world.js';

export const FIXTURE_ADDRESS: RetailAddress = {
  address1: '12 Harbor View',
  address2: 'Suite 300',
  city: 'Boston',
  country: 'USA',
  state: 'MA',
  zip: '02110',
};

/** A product with variants given as `[itemId, price, available?, options?]`. */
export function makeProduct(
  productId: string,
  name: string,
  variants: ReadonlyArray<readonly [string, number, boolean?, Record<string, string>?]>,
): RetailProduct {
  const byId: Record<string, RetailVariant> = {};
  for (const [itemId, price, available = true, options = { color: `c${itemId}` }] of variants) {
    byId[itemId] = { item_id: itemId, options, available, price };
  }
  return { name, product_id: productId, variants: byId };
}

/** A user; payment methods default to one credit card and one gift card with balance 100. */
export function makeUser(userId: string, overrides: Partial<RetailUser> = {}): RetailUser {
  const [first = 'Ann', last = 'Lee'] = userId.split('_').map((s) => s.charAt(0).toUpperCase() + s.slice(1));
  const methods: Record<string, PaymentMethod> = {
    credit_card_1: { source: 'credit_card', brand: 'visa', last_four: '1111', id: 'credit_card_1' },
    gift_card_1: { source: 'gift_card', balance: 100, id: 'gift_card_1' },
  };
  return {
    name: { first_name: first, last_name: last },
    address: { ...FIXTURE_ADDRESS },
    email: `${userId}@example.com`,
    payment_methods: methods,
    orders: [],
    ...overrides,
  };
}

/** An order of `items` (item ids of the fixture's products), paid once with `paidWith`. */
export function makeOrder(
  orderId: string,
  userId: string,
  items: OrderItem[],
  options: { status?: string; paidWith?: string; amount?: number } = {},
): RetailOrder {
  const status = options.status ?? 'pending';
  let sum = 0;
  for (const item of items) sum += item.price;
  return {
    order_id: orderId,
    user_id: userId,
    address: { ...FIXTURE_ADDRESS },
    items,
    fulfillments: status === 'pending' ? [] : [{ tracking_id: ['100000000001'], item_ids: items.map((i) => i.item_id) }],
    status,
    payment_history: [
      { transaction_type: 'payment', amount: options.amount ?? Math.round(sum * 100) / 100, payment_method_id: options.paidWith ?? 'credit_card_1' },
    ],
  };
}

/** An order line for a variant of a product. */
export function itemOf(product: RetailProduct, itemId: string): OrderItem {
  const variant = product.variants[itemId]!;
  return { name: product.name, product_id: product.product_id, item_id: itemId, price: variant.price, options: variant.options };
}

/** The default fixture catalogue: a lamp (3 variants, one unavailable) and a mug (2 variants). */
export function makeCatalogue(): { lamp: RetailProduct; mug: RetailProduct } {
  return {
    lamp: makeProduct('1000000001', 'Desk Lamp', [
      ['2000000001', 30.1],
      ['2000000002', 35.25],
      ['2000000003', 40.5, false],
    ]),
    mug: makeProduct('1000000002', 'Travel Mug', [
      ['3000000001', 12.2],
      ['3000000002', 14.45],
    ]),
  };
}

/**
 * A small world: given users, orders and products (defaults: user `ann_lee` with a credit card and
 * a gift card, the fixture catalogue, no orders). Orders are also listed on their users.
 * @example
 * const { lamp } = makeCatalogue();
 * const world = makeRetailWorld({ orders: [makeOrder('#W1', 'ann_lee', [itemOf(lamp, '2000000001')])] });
 */
export function makeRetailWorld(parts: { users?: RetailUser[] | Record<string, RetailUser>; orders?: RetailOrder[]; products?: RetailProduct[] } = {}): RetailWorld {
  const { lamp, mug } = makeCatalogue();
  const products: Record<string, RetailProduct> = {};
  for (const product of parts.products ?? [lamp, mug]) products[product.product_id] = product;
  const users: Record<string, RetailUser> = Array.isArray(parts.users)
    ? Object.fromEntries(parts.users.map((u) => [u.email.split('@')[0]!, u]))
    : (parts.users ?? { ann_lee: makeUser('ann_lee') });
  const orders: Record<string, RetailOrder> = {};
  for (const order of parts.orders ?? []) {
    orders[order.order_id] = order;
    const user = users[order.user_id];
    if (user !== undefined && !user.orders.includes(order.order_id)) user.orders.push(order.order_id);
  }
  const data: RetailData = { orders, products, users };
  return createRetailWorld(data, { source: 'fixture' });
}
