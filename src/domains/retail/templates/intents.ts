/** Building blocks of retail templates: level styles, order references, payment methods and one builder per intent. */
import type { JsonValue, LevelSpec, Rng } from '../../../core/index.js';
import type { Disclosure, GoalAddress, Intent, ItemRef, MethodRef, OrderRef, RetailGoal } from '../goal.js';
import { pyRound2 } from '../py.js';
import type { OrderItem, PaymentMethod, RetailOrder } from '../schema.js';
import { CITIES, STREETS } from '../vocab.js';
import type { Customer, WorldIndex } from './worlds.js';

/** How the user refers to the order: by id, by products, as their most recent order, or either of the last two. */
export type Refer = 'id' | 'items' | 'latest' | 'items_or_latest';

/** The level knobs every retail template declares. */
export interface Style {
  disclosure: Disclosure;
  identity: 'email' | 'name_zip' | 'either';
  refer: Refer;
  noise: number;
  /** Orders on the account: [min, max]. */
  orders: readonly [number, number];
  /** Other orders on the account in the same status as the target (at least). */
  distractors: number;
  /** Probability that a request is worded in other, less common words (the phrase bank's `alt` lines). */
  paraphrase: number;
  /** Probability that an order named by its products also names one it shares with another order. */
  shared: number;
}

/** The style part of a level spec. */
export function styleOf(spec: LevelSpec): Style {
  const orders = spec['orders'] as [number, number];
  return {
    disclosure: spec['disclosure'] as Disclosure,
    identity: spec['identity'] as Style['identity'],
    refer: (spec['refer'] ?? 'id') as Refer,
    noise: spec['noise'] as number,
    orders: [orders[0], orders[1]],
    distractors: (spec['distractors'] ?? 0) as number,
    paraphrase: (spec['paraphrase'] ?? 0) as number,
    shared: (spec['shared'] ?? 0) as number,
  };
}

/** A count drawn from a level value that is a number or a [min, max] range. */
export function countOf(rng: Rng, value: JsonValue | undefined, fallback = 1): number {
  if (typeof value === 'number') return value;
  if (Array.isArray(value) && typeof value[0] === 'number' && typeof value[1] === 'number') return rng.int(value[0], value[1]);
  return fallback;
}

/** The smallest count a level value allows. */
export function minCount(value: JsonValue | undefined, fallback = 1): number {
  if (typeof value === 'number') return value;
  if (Array.isArray(value) && typeof value[0] === 'number') return value[0];
  return fallback;
}

export function fitsAccount(c: Customer, style: Style): boolean {
  return c.orders.length >= style.orders[0] && c.orders.length <= style.orders[1];
}

/** Other orders of the customer in the same status as `order`. */
export function distractors(c: Customer, order: RetailOrder): number {
  let n = 0;
  for (const o of c.orders) if (o !== order && o.status === order.status) n++;
  return n;
}

// Pure memoisation keyed by the frozen world's records (an order has one customer, an item one order).
const uniqueNamesMemo = new WeakMap<RetailOrder, readonly string[]>();
const sharedNamesMemo = new WeakMap<RetailOrder, readonly string[]>();
const singleItemsMemo = new WeakMap<RetailOrder, readonly OrderItem[]>();
const exchangeableMemo = new WeakMap<RetailOrder, readonly OrderItem[]>();
const alternativesMemo = new WeakMap<OrderItem, readonly string[]>();

/** Product names of `order` that appear in no other order of its customer `c` (so they identify it). */
export function uniqueNames(c: Customer, order: RetailOrder): readonly string[] {
  let names = uniqueNamesMemo.get(order);
  if (names === undefined) {
    const elsewhere = new Set<string>();
    for (const o of c.orders) if (o !== order) for (const item of o.items) elsewhere.add(item.name);
    names = [...new Set(order.items.map((i) => i.name))].filter((n) => !elsewhere.has(n));
    uniqueNamesMemo.set(order, names);
  }
  return names;
}

export function isLatest(c: Customer, order: RetailOrder): boolean {
  return c.orders[c.orders.length - 1] === order;
}

/** Whether the user can refer to `order` the way the level asks. */
export function describable(c: Customer, order: RetailOrder, refer: Refer): boolean {
  switch (refer) {
    case 'id':
      return true;
    case 'latest':
      return isLatest(c, order);
    case 'items':
      return uniqueNames(c, order).length > 0;
    case 'items_or_latest':
      return isLatest(c, order) || uniqueNames(c, order).length > 0;
  }
}

/** Whether `order` is a fitting target at this style: account size, distractors and a usable reference. */
export function fitsTarget(c: Customer, order: RetailOrder, style: Style): boolean {
  return fitsAccount(c, style) && distractors(c, order) >= style.distractors && describable(c, order, style.refer);
}

/** How the user names `order` (the level decides among id, products and "my most recent order"). */
export function orderRef(rng: Rng, c: Customer, order: RetailOrder, refer: Refer): OrderRef {
  const names = uniqueNames(c, order);
  let mode: OrderRef['refer'] = 'id';
  if (refer === 'latest' && isLatest(c, order)) mode = 'latest';
  else if (refer === 'items' && names.length > 0) mode = 'items';
  else if (refer === 'items_or_latest') {
    if (isLatest(c, order) && (names.length === 0 || rng.chance(0.5))) mode = 'latest';
    else if (names.length > 0) mode = 'items';
  }
  return { order_id: order.order_id, refer: mode, names: mode === 'items' ? [rng.pick(names)] : [] };
}

/**
 * With probability `p` per order named by its products, also names a product the order shares with another
 * of the customer's orders, first ("the order with the Air Fryer and the Toaster", the Air Fryer in two
 * orders): only the combination tells the order apart.
 */
export function shareNames(rng: Rng, c: Customer, intents: readonly Intent[], p: number): void {
  if (p <= 0) return;
  for (const intent of intents) {
    if (!('order' in intent) || intent.order.refer !== 'items' || !rng.chance(p)) continue;
    const target = c.orders.find((o) => o.order_id === intent.order.order_id);
    if (target === undefined) continue;
    const shared = sharedNames(c, target);
    if (shared.length > 0) intent.order.names = [rng.pick(shared), ...intent.order.names];
  }
}

/** Product names of `order` that also appear in another order of its customer `c`. */
function sharedNames(c: Customer, order: RetailOrder): readonly string[] {
  let names = sharedNamesMemo.get(order);
  if (names === undefined) {
    const elsewhere = new Set<string>();
    for (const o of c.orders) if (o !== order) for (const item of o.items) elsewhere.add(item.name);
    names = [...new Set(order.items.map((i) => i.name))].filter((n) => elsewhere.has(n));
    sharedNamesMemo.set(order, names);
  }
  return names;
}

export function identityOf(rng: Rng, style: Style): RetailGoal['identity'] {
  return style.identity === 'either' ? (rng.chance(0.5) ? 'email' : 'name_zip') : style.identity;
}

export function profileOf(c: Customer): RetailGoal['profile'] {
  const u = c.user;
  return { user_id: c.id, first_name: u.name.first_name, last_name: u.name.last_name, zip: u.address.zip, email: u.email };
}

const original = (order: RetailOrder): string | undefined => order.payment_history[0]?.payment_method_id;

/** How the user names a payment method, and the words that name it in an agent's proposal. */
export function methodRef(c: Customer, method: PaymentMethod, options: { original?: boolean; sayOriginal?: boolean } = {}): MethodRef {
  let text: string;
  let cues: string[];
  if (method.source === 'gift_card') {
    const several = c.methods.filter((m) => m.source === 'gift_card').length > 1;
    text = several ? `my gift card ending in ${method.id.slice(-4)}` : 'my gift card';
    cues = several ? [method.id.slice(-4)] : ['gift card'];
  } else if (method.source === 'paypal') {
    text = 'my PayPal account';
    cues = ['paypal'];
  } else {
    text = `my ${method.brand} card ending in ${method.last_four}`;
    cues = [method.last_four];
  }
  if (options.original === true) {
    cues.push('original payment method');
    if (options.sayOriginal === true) text = 'the original payment method';
  }
  return { id: method.id, text, cues };
}

const CITY_KEYS = CITIES;

/** A new address, different from the customer's current one. */
export function newAddress(rng: Rng, avoidZip: string): GoalAddress {
  for (;;) {
    const [city, state, zip3] = rng.pick(CITY_KEYS);
    const zip = `${zip3}${String(rng.int(0, 99)).padStart(2, '0')}`;
    if (zip === avoidZip) continue;
    const roll = rng.int(0, 2);
    return {
      address1: `${rng.int(100, 9999)} ${rng.pick(STREETS)}`,
      address2: roll === 0 ? '' : roll === 1 ? `Apt ${rng.int(1, 60)}` : `Suite ${rng.int(100, 999)}`,
      city,
      state,
      country: 'USA',
      zip,
    };
  }
}

/** Items of an order the user can single out: item ids that occur once in the order. */
function singleItems(order: RetailOrder): readonly OrderItem[] {
  let items = singleItemsMemo.get(order);
  if (items === undefined) {
    items = order.items.filter((i) => order.items.filter((j) => j.item_id === i.item_id).length === 1);
    singleItemsMemo.set(order, items);
  }
  return items;
}

/** The option values that tell `item` apart from another item of the same name in the order (none if unique). */
function telling(order: RetailOrder, item: OrderItem): string[] {
  return order.items.some((j) => j !== item && j.name === item.name) ? Object.values(item.options) : [];
}

function itemRef(order: RetailOrder, item: OrderItem): ItemRef {
  return { item_id: item.item_id, product_id: item.product_id, name: item.name, options: telling(order, item) };
}

/** Items with another available variant of their product (exchange targets). */
export function exchangeable(index: WorldIndex, order: RetailOrder): readonly OrderItem[] {
  let items = exchangeableMemo.get(order);
  if (items === undefined) {
    items = singleItems(order).filter((item) => alternatives(index, item).length > 0);
    exchangeableMemo.set(order, items);
  }
  return items;
}

/** Other available variants of `item`'s product (`index` is the world the item's order belongs to). */
function alternatives(index: WorldIndex, item: OrderItem): readonly string[] {
  let ids = alternativesMemo.get(item);
  if (ids === undefined) {
    const product = index.world.data.products[item.product_id];
    ids = product === undefined ? [] : Object.values(product.variants).filter((v) => v.item_id !== item.item_id && v.available === true).map((v) => v.item_id);
    alternativesMemo.set(item, ids);
  }
  return ids;
}

export function returnable(order: RetailOrder): number {
  return singleItems(order).length;
}

/** A status question, optionally with the tracking number of a shipped order. */
export function statusIntent(rng: Rng, c: Customer, order: RetailOrder, refer: Refer, tracking: boolean): Intent {
  const intent: Intent = { kind: 'status', order: orderRef(rng, c, order, refer), status: order.status };
  const id = order.fulfillments[0]?.tracking_id[0];
  if (tracking && id !== undefined) intent.tracking = id;
  return intent;
}

export function cancelIntent(rng: Rng, c: Customer, order: RetailOrder, refer: Refer, trap = false): Intent {
  return {
    kind: 'cancel',
    order: orderRef(rng, c, order, refer),
    reason: rng.pick(['no longer needed', 'ordered by mistake'] as const),
    status: order.status,
    trap,
  };
}

/** Returning `count` items of a delivered order; refund to the original method or (by `refund`) a gift card. */
export function returnIntent(
  rng: Rng,
  c: Customer,
  order: RetailOrder,
  refer: Refer,
  count: number,
  refund: 'original' | 'any' | 'gift_card',
): Intent | undefined {
  const items = singleItems(order);
  if (items.length === 0) return undefined;
  const chosen = rng.sample(items, Math.min(count, items.length));
  const originalId = original(order);
  const gifts = c.methods.filter((m) => m.source === 'gift_card' && m.id !== originalId);
  const first = c.methods.find((m) => m.id === originalId);
  if (first === undefined) return undefined;
  const useGift = gifts.length > 0 && (refund === 'gift_card' || (refund === 'any' && rng.chance(0.5)));
  const method = useGift
    ? methodRef(c, rng.pick(gifts))
    : methodRef(c, first, { original: true, sayOriginal: refund !== 'original' && rng.chance(0.5) });
  return { kind: 'return', order: orderRef(rng, c, order, refer), items: chosen.map((i) => itemRef(order, i)), method };
}

/** Exchanging `count` items for other available variants; the difference paid with a method that covers it. */
export function exchangeIntent(rng: Rng, index: WorldIndex, c: Customer, order: RetailOrder, refer: Refer, count: number): Intent | undefined {
  const items = exchangeable(index, order);
  if (items.length === 0) return undefined;
  const chosen = rng.sample(items, Math.min(count, items.length));
  const refs: ItemRef[] = [];
  let diff = 0;
  for (const item of chosen) {
    const product = index.world.data.products[item.product_id]!;
    const next = product.variants[rng.pick(alternatives(index, item))]!;
    const changed: Array<[string, string]> = Object.keys(next.options)
      .filter((k) => next.options[k] !== item.options[k])
      .map((k) => [k, next.options[k]!]);
    refs.push({ ...itemRef(order, item), new_item_id: next.item_id, new_options: changed });
    diff += next.price - item.price;
  }
  const needed = pyRound2(diff);
  const originalId = original(order);
  const usable = c.methods.filter((m) => m.source !== 'gift_card' || m.balance >= needed);
  if (usable.length === 0) return undefined;
  const method = usable.find((m) => m.id === originalId) ?? rng.pick(usable);
  return { kind: 'exchange', order: orderRef(rng, c, order, refer), items: refs, method: methodRef(c, method, { original: method.id === originalId }) };
}

export function orderAddressIntent(rng: Rng, c: Customer, order: RetailOrder, refer: Refer, address: GoalAddress): Intent {
  return { kind: 'order_address', order: orderRef(rng, c, order, refer), address };
}

/** Methods a pending order can switch to: another of the customer's methods that covers the amount. */
export function paymentTargets(c: Customer, order: RetailOrder): PaymentMethod[] {
  const history = order.payment_history;
  if (order.status !== 'pending' || history.length !== 1 || history[0]!.transaction_type !== 'payment') return [];
  const amount = history[0]!.amount;
  return c.methods.filter((m) => m.id !== history[0]!.payment_method_id && (m.source !== 'gift_card' || m.balance >= amount));
}

export function paymentIntent(rng: Rng, c: Customer, order: RetailOrder, refer: Refer, preferGift: boolean): Intent | undefined {
  const targets = paymentTargets(c, order);
  if (targets.length === 0) return undefined;
  const gifts = targets.filter((m) => m.source === 'gift_card');
  const method = preferGift && gifts.length > 0 ? rng.pick(gifts) : rng.pick(targets);
  return { kind: 'payment', order: orderRef(rng, c, order, refer), method: methodRef(c, method), current: original(order)! };
}

/** Methods of the customer a refund of `order` must not go to (neither the original nor a gift card). */
export function forbiddenRefundMethods(c: Customer, order: RetailOrder): PaymentMethod[] {
  const originalId = original(order);
  return c.methods.filter((m) => m.id !== originalId && m.source !== 'gift_card');
}

export const RELATIONS: readonly string[] = ['sister', 'partner', 'roommate', 'neighbour', 'father', 'friend'];
export const OUT_OF_SCOPE_TOPICS: readonly string[] = ['human', 'coupon', 'price_match', 'email_change', 'complaint'];
/** Topics a refusal fits better than a transfer (the reference refuses them; either is accepted). */
export const REFUSE_TOPICS: ReadonlySet<string> = new Set(['coupon', 'price_match']);
