/** Deterministic retail worlds in tau-bench's schema, from a seed and a size. */
import { createRng, EnvHarnessError, type Rng } from '../../core/index.js';
import { pyRound2, pySorted } from './py.js';
import type {
  Fulfillment,
  OrderItem,
  PaymentMethod,
  PaymentTransaction,
  RetailAddress,
  RetailData,
  RetailOrder,
  RetailProduct,
  RetailUser,
  RetailVariant,
} from './schema.js';
import { CARD_BRANDS, CATALOGUE, CITIES, FIRST_NAMES, LAST_NAMES, MODEL_SUFFIXES, STREETS } from './vocab.js';
import { createRetailWorld, type RetailWorld } from './world.js';

/** Changing what the generator produces for a seed means bumping this (it is part of the params). */
export const RETAIL_GENERATOR_VERSION = 1;

export interface GenerateRetailWorldOptions {
  seed: number;
  /** Default 500. */
  users?: number;
  /** Default 1,000. */
  orders?: number;
  /** Product types; default 50. */
  products?: number;
}

/** The generator parameters with defaults filled in: what a task's `initialState` holds. */
export interface GeneratedWorldParams {
  world: 'generated';
  generator: number;
  seed: number;
  users: number;
  orders: number;
  products: number;
}

/** Fills in defaults and checks sizes; throws PARAMS_INVALID on bad input. */
export function normalizeWorldParams(options: GenerateRetailWorldOptions): GeneratedWorldParams {
  const params: GeneratedWorldParams = {
    world: 'generated',
    generator: RETAIL_GENERATOR_VERSION,
    seed: options.seed,
    users: options.users ?? 500,
    orders: options.orders ?? 1000,
    products: options.products ?? 50,
  };
  for (const key of ['seed', 'users', 'orders', 'products'] as const) {
    const value = params[key];
    if (!Number.isSafeInteger(value) || (key !== 'seed' && (value < 0 || value > 1_000_000))) {
      throw new EnvHarnessError('PARAMS_INVALID', `generateRetailWorld: ${key} must be an integer${key === 'seed' ? '' : ' in [0, 1000000]'}, got ${value}`, {
        details: { pointer: `/${key}` },
      });
    }
  }
  if (params.orders > 0 && (params.users === 0 || params.products === 0)) {
    throw new EnvHarnessError('PARAMS_INVALID', 'generateRetailWorld: orders need at least one user and one product', {
      details: { pointer: '/orders' },
    });
  }
  return params;
}

type StatusKind = 'pending' | 'processed' | 'delivered' | 'cancelled' | 'return requested' | 'exchange requested';
const STATUSES: readonly StatusKind[] = ['pending', 'processed', 'delivered', 'cancelled', 'return requested', 'exchange requested'];
const STATUS_WEIGHTS: readonly number[] = [40, 10, 33, 10, 3.5, 3.5];

/**
 * A new world in tau-bench's schema: users with addresses and payment methods (credit cards,
 * PayPal, gift cards with balances), products with option variants, availability and prices, and
 * orders in every status with items, payments and fulfilments. Same seed and sizes, same world.
 * @example
 * const world = generateRetailWorld({ seed: 7 }); // 500 users, 1,000 orders, 50 products
 */
export function generateRetailWorld(options: GenerateRetailWorldOptions): RetailWorld {
  const params = normalizeWorldParams(options);
  const rng = createRng(['envharness/retail-world', params.generator, params.seed]);
  const ids = new IdMaker(rng.fork('ids'));
  const products = makeProducts(rng.fork('products'), ids, params.products);
  const users = makeUsers(rng.fork('users'), ids, params.users);
  const orders = makeOrders(rng.fork('orders'), ids, params.orders, users, products);
  const data: RetailData = { orders, products, users };
  return createRetailWorld(data, { source: 'generated', params: { ...params }, validate: false });
}

/** Unique random digit strings and ids. */
class IdMaker {
  private readonly used = new Set<string>();
  constructor(private readonly rng: Rng) {}

  digits(n: number): string {
    for (;;) {
      let text = String(this.rng.int(1, 9));
      while (text.length < n) text += String(this.rng.int(0, 9));
      if (!this.used.has(text)) {
        this.used.add(text);
        return text;
      }
    }
  }

  unique(make: () => string): string {
    for (;;) {
      const id = make();
      if (!this.used.has(id)) {
        this.used.add(id);
        return id;
      }
    }
  }
}

function makeProducts(rng: Rng, ids: IdMaker, count: number): Record<string, RetailProduct> {
  const products: Record<string, RetailProduct> = {};
  const order = rng.shuffle(CATALOGUE);
  for (let i = 0; i < count; i++) {
    const spec = order[i % order.length]!;
    const round = Math.floor(i / order.length);
    const name = round === 0 ? spec.name : `${spec.name} ${MODEL_SUFFIXES[(round - 1) % MODEL_SUFFIXES.length]}${round > MODEL_SUFFIXES.length ? ` ${round}` : ''}`;
    const productId = ids.digits(10);
    const combos = optionCombos(spec.options);
    const wanted = rng.int(Math.min(5, combos.length), Math.min(20, combos.length));
    const variants: Record<string, RetailVariant> = {};
    for (const options of rng.sample(combos, wanted)) {
      const itemId = ids.digits(10);
      variants[itemId] = {
        item_id: itemId,
        options,
        available: rng.chance(0.68),
        price: rng.int(spec.cents[0], spec.cents[1]) / 100,
      };
    }
    products[productId] = { name, product_id: productId, variants };
  }
  return products;
}

function optionCombos(options: ReadonlyArray<readonly [string, readonly string[]]>): Record<string, string>[] {
  let combos: Record<string, string>[] = [{}];
  for (const [dimension, values] of options) {
    combos = combos.flatMap((combo) => values.map((value) => ({ ...combo, [dimension]: value })));
  }
  return combos;
}

function makeAddress(rng: Rng): RetailAddress {
  const [city, state, zip3] = rng.pick(CITIES);
  return {
    address1: `${rng.int(100, 999)} ${rng.pick(STREETS)}`,
    address2: rng.chance(0.85) ? `Suite ${rng.int(100, 999)}` : rng.chance(0.5) ? `Apt ${rng.int(1, 40)}` : '',
    city,
    country: 'USA',
    state,
    zip: `${zip3}${String(rng.int(0, 99)).padStart(2, '0')}`,
  };
}

function makeUsers(rng: Rng, ids: IdMaker, count: number): Record<string, RetailUser> {
  const users: Record<string, RetailUser> = {};
  for (let i = 0; i < count; i++) {
    const first = rng.pick(FIRST_NAMES);
    const last = rng.pick(LAST_NAMES);
    const handle = `${first}_${last}`.toLowerCase().replace(/[^a-z_]/g, '');
    const userId = ids.unique(() => `${handle}_${rng.int(1000, 9999)}`);
    const email = ids.unique(() => `${first}.${last}${rng.int(1000, 9999)}@example.com`.toLowerCase().replace(/[^a-z0-9.@]/g, ''));
    users[userId] = {
      name: { first_name: first, last_name: last },
      address: makeAddress(rng),
      email,
      payment_methods: makePaymentMethods(rng, ids),
      orders: [],
    };
  }
  return users;
}

function makePaymentMethods(rng: Rng, ids: IdMaker): Record<string, PaymentMethod> {
  // About two thirds of customers keep one method; a few keep two cards.
  const count = [1, 2, 3, 4][rng.weightedIndex([66, 26, 6, 2])]!;
  const kinds = rng.sample(['credit_card', 'paypal', 'gift_card', 'credit_card'] as const, count);
  const methods: Record<string, PaymentMethod> = {};
  for (const kind of kinds) {
    const id = `${kind}_${ids.digits(7)}`;
    if (kind === 'credit_card') {
      methods[id] = { source: 'credit_card', brand: rng.pick(CARD_BRANDS), last_four: String(rng.int(0, 9999)).padStart(4, '0'), id };
    } else if (kind === 'paypal') {
      methods[id] = { source: 'paypal', id };
    } else {
      methods[id] = { source: 'gift_card', balance: rng.int(0, 100), id };
    }
  }
  return methods;
}

function makeOrders(
  rng: Rng,
  ids: IdMaker,
  count: number,
  users: Record<string, RetailUser>,
  products: Record<string, RetailProduct>,
): Record<string, RetailOrder> {
  const orders: Record<string, RetailOrder> = {};
  const userIds = Object.keys(users);
  const productList = Object.values(products);
  // Some customers never order; the rest order at different rates.
  const cumulative: number[] = [];
  let total = 0;
  for (let i = 0; i < userIds.length; i++) {
    total += rng.chance(0.05) ? 0 : 0.25 + rng.next() * 1.75;
    cumulative.push(total);
  }
  if (total === 0) cumulative[cumulative.length - 1] = total = 1;
  for (let i = 0; i < count; i++) {
    const userId = userIds[lowerBound(cumulative, rng.next() * total)]!;
    const user = users[userId]!;
    const orderId = `#W${ids.digits(7)}`;
    const items: OrderItem[] = [];
    const itemCount = rng.int(1, 5);
    for (let k = 0; k < itemCount; k++) {
      const product = rng.pick(productList);
      const variant = rng.pick(Object.values(product.variants));
      items.push({ name: product.name, product_id: product.product_id, item_id: variant.item_id, price: variant.price, options: variant.options });
    }
    const status = STATUSES[rng.weightedIndex(STATUS_WEIGHTS)]!;
    const methodIds = Object.keys(user.payment_methods);
    const paidWith = rng.pick(methodIds);
    let sum = 0;
    for (const item of items) sum += item.price;
    const amount = pyRound2(sum);
    const fulfillments: Fulfillment[] =
      status === 'pending' ? [] : [{ tracking_id: [ids.digits(12)], item_ids: items.map((item) => item.item_id) }];
    const payment_history: PaymentTransaction[] = [{ transaction_type: 'payment', amount, payment_method_id: paidWith }];
    const order: RetailOrder = {
      order_id: orderId,
      user_id: userId,
      address: rng.chance(0.8) ? { ...user.address } : makeAddress(rng),
      items,
      fulfillments,
      status,
      payment_history,
    };
    if (status === 'cancelled') {
      payment_history.push({ transaction_type: 'refund', amount, payment_method_id: paidWith });
      order.cancel_reason = rng.pick(['no longer needed', 'ordered by mistake']);
    } else if (status === 'return requested') {
      const returned = rng.sample(items, rng.int(1, items.length)).map((item) => item.item_id);
      const giftCards = methodIds.filter((id) => id.includes('gift_card'));
      order.return_items = pySorted(returned);
      order.return_payment_method_id = giftCards.length > 0 && rng.chance(0.3) ? rng.pick(giftCards) : paidWith;
    } else if (status === 'exchange requested') {
      addExchange(rng, order, products, methodIds);
    }
    orders[orderId] = order;
    user.orders.push(orderId);
  }
  return orders;
}

/** Turns a delivered order into an exchange request, as exchange_delivered_order_items would. */
function addExchange(rng: Rng, order: RetailOrder, products: Record<string, RetailProduct>, methodIds: string[]): void {
  const swaps: Array<[string, string]> = [];
  let diff = 0;
  for (const item of rng.sample(order.items, rng.int(1, order.items.length))) {
    const others = Object.values(products[item.product_id]!.variants).filter((v) => v.item_id !== item.item_id && v.available);
    if (others.length === 0) continue;
    const next = rng.pick(others);
    swaps.push([item.item_id, next.item_id]);
    diff += next.price - item.price;
  }
  if (swaps.length === 0) {
    order.status = 'delivered';
    return;
  }
  order.exchange_items = pySorted(swaps.map(([from]) => from));
  order.exchange_new_items = pySorted(swaps.map(([, to]) => to));
  order.exchange_payment_method_id = rng.pick(methodIds);
  order.exchange_price_difference = pyRound2(diff);
}

/** First index whose cumulative weight exceeds x. */
function lowerBound(cumulative: readonly number[], x: number): number {
  let lo = 0;
  let hi = cumulative.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cumulative[mid]! > x) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
