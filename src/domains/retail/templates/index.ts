/** The retail templates: one per task type with five levels each, plus two held-out templates. */
import { z } from 'zod';
import { defineTemplate, type Action, type JsonObject, type LevelSpec, type RegisteredTemplate, type Rng } from '../../../core/index.js';
import { normalizeWorldParams } from '../generator.js';
import { RETAIL_USER_VERSION, retailGoalSchema, type Intent, type PhraseBankName, type RetailGoal } from '../goal.js';
import type { RetailOrder } from '../schema.js';
import {
  cancelIntent,
  countOf,
  exchangeable,
  exchangeIntent,
  fitsAccount,
  fitsTarget,
  forbiddenRefundMethods,
  identityOf,
  methodRef,
  minCount,
  newAddress,
  orderAddressIntent,
  OUT_OF_SCOPE_TOPICS,
  paymentIntent,
  paymentTargets,
  profileOf,
  RELATIONS,
  returnable,
  returnIntent,
  shareNames,
  statusIntent,
  styleOf,
  describable,
  type Style,
} from './intents.js';
import { referenceSolution as solveGoal, retailSpec as specOf } from './reference.js';
import { pickCandidate, type Customer, type WorldIndex } from './worlds.js';
import { withFastParams } from './params.js';
import { retailSourceDigest } from '../source-digest.js';

/** A retail task's parameters: the world seed and the user's whole goal. */
export const retailParamsSchema = z.strictObject({ world: z.number().int(), goal: retailGoalSchema });
export type RetailParams = z.infer<typeof retailParamsSchema>;

/** What the templates parse sampled params with: `retailParamsSchema`, answered first by a hand-written check (params.ts). */
const templateParamsSchema = withFastParams(retailParamsSchema);

// Build needs the reference solution's length (the budget) and solve the solution: computed once per goal,
// as build and solve run one after the other on the same goal, by keeping the last goal's solution (a pure
// function's memo; a weak-map entry per task cost more, in GC work, than it saved).
// (These two keep the names the template's build and solve call: see `retailTemplate`.)
let lastGoal: RetailGoal | undefined;
let lastSolution: Action[] = [];

function referenceSolution(goal: RetailGoal): Action[] {
  if (goal !== lastGoal) {
    lastSolution = solveGoal(goal);
    lastGoal = goal;
  }
  return lastSolution;
}

function retailSpec(goal: RetailGoal, initialState: JsonObject, level: number, tags: string[]): ReturnType<typeof specOf> {
  return specOf(goal, initialState, level, tags, referenceSolution(goal).length);
}

const ATTEMPTS = 64;

/**
 * Version of every retail template. 2: paraphrased requests by level, compound and conditional level 1
 * raise one request at a time, "someone else's order" graded (retail user 2).
 */
const VERSION = 2;

/** Read once per process (a few milliseconds): see source-digest.ts. */
const RETAIL_SOURCE_DIGEST = retailSourceDigest();

/** `retail/<name>@2` from a sampler; build and solve are shared by every retail template. */
function retailTemplate(definition: {
  name: string;
  taskType: string;
  description: string;
  levels: readonly LevelSpec[];
  heldout?: boolean;
  sample: (rng: Rng, level: number, spec: LevelSpec, key: string) => RetailParams;
}): RegisteredTemplate<RetailParams> {
  const key = `${definition.name}@${VERSION}`;
  const options = definition;
  return defineTemplate<RetailParams>({
    domain: 'retail',
    name: options.name,
    version: VERSION,
    taskType: options.taskType,
    description: options.description,
    levels: options.levels,
    params: templateParamsSchema,
    ...(options.heldout === true ? { heldout: true } : {}),
    // Everything these three depend on lives in the retail folder: its source digest is the content digest.
    ...(RETAIL_SOURCE_DIGEST !== undefined ? { contentDigest: RETAIL_SOURCE_DIGEST } : {}),
    sample: (rng, level, spec) => options.sample(rng, level, spec, `${key}:${level}`),
    build: (params, ctx) => retailSpec(params.goal, worldState(params.world), ctx.level, tagsOf(options.taskType, params.goal)),
    solve: (params) => referenceSolution(params.goal),
  });
}

function worldState(seed: number): JsonObject {
  return { ...normalizeWorldParams({ seed }) };
}

function tagsOf(taskType: string, goal: RetailGoal): string[] {
  const tags = [taskType, `disclosure:${goal.disclosure}`, `identity:${goal.identity}`, `noise:${goal.noise}`];
  for (const kind of new Set(goal.intents.map((i) => i.kind))) tags.push(`intent:${kind}`);
  if (goal.intents.some((i) => (i.kind === 'cancel' && i.trap) || (i.kind === 'return' && i.insist !== undefined) || i.kind === 'other_customer')) tags.push('policy-trap');
  if (goal.conditional !== undefined) tags.push(goal.conditional.pending ? 'branch:pending' : 'branch:shipped');
  if (goal.bank === 'heldout') tags.push('heldout-phrasing');
  if ((goal.paraphrased ?? []).length > 0) tags.push('paraphrased');
  if (goal.intents.some((i) => 'order' in i && i.order.names.length > 1)) tags.push('shared-products');
  if (goal.staggered) tags.push('staggered');
  return tags;
}

function goalFor(rng: Rng, c: Customer, style: Style, intents: Intent[], extra: { bank?: PhraseBankName; staggered?: boolean; conditional?: RetailGoal['conditional'] } = {}): RetailGoal {
  const identity = identityOf(rng, style);
  shareNames(rng, c, intents, style.shared);
  // Each request is worded in other words with the level's probability (conditional: index 0 is the condition).
  const paraphrased: number[] = [];
  for (let i = 0; i < intents.length; i++) if (style.paraphrase > 0 && rng.chance(style.paraphrase)) paraphrased.push(i);
  // Keys in the schema's order, so that zod's parse of the params returns the same JSON.
  const goal: RetailGoal = {
    user: RETAIL_USER_VERSION,
    bank: extra.bank ?? 'train',
    disclosure: style.disclosure,
    noise: style.noise,
    staggered: extra.staggered ?? false,
    ...(paraphrased.length > 0 ? { paraphrased } : {}),
    identity,
    profile: profileOf(c),
    intents,
  };
  if (extra.conditional !== undefined) goal.conditional = extra.conditional;
  return goal;
}

/** Every (customer, order) pair of a world that passes `accept`. */
function pairs(index: WorldIndex, accept: (c: Customer, o: RetailOrder) => boolean): Array<[Customer, RetailOrder]> {
  const out: Array<[Customer, RetailOrder]> = [];
  for (const c of index.customers) for (const o of c.orders) if (accept(c, o)) out.push([c, o]);
  return out;
}

/** Samples a target order that fits the level and turns it into intents (retrying when a builder declines). */
function sampleTarget(
  rng: Rng,
  key: string,
  style: Style,
  accept: (index: WorldIndex, c: Customer, o: RetailOrder) => boolean,
  make: (index: WorldIndex, c: Customer, o: RetailOrder) => Intent[] | undefined,
  extra: { staggered?: boolean } = {},
): RetailParams {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const { index, value } = pickCandidate(rng, key, (ix) => pairs(ix, (c, o) => fitsTarget(c, o, style) && accept(ix, c, o)));
    const intents = make(index, value[0], value[1]);
    if (intents !== undefined) return { world: index.seed, goal: goalFor(rng, value[0], style, intents, extra) };
  }
  throw new Error(`${key}: no task after ${ATTEMPTS} attempts`);
}

// ---- levels ----

/**
 * The level ladder most templates share: disclosure, identity, how orders are named (and whether the named
 * products also occur in other orders: `shared`), noise, share of requests worded in other words
 * (`paraphrase`), account size, distractors.
 */
const LADDER: readonly LevelSpec[] = [
  { disclosure: 'all_at_once', identity: 'email', refer: 'id', noise: 0, paraphrase: 0, orders: [1, 2], distractors: 0 },
  { disclosure: 'on_request', identity: 'email', refer: 'id', noise: 0, paraphrase: 0.2, orders: [1, 3], distractors: 0 },
  { disclosure: 'on_request', identity: 'either', refer: 'items_or_latest', noise: 1, paraphrase: 0.4, orders: [2, 4], distractors: 1 },
  { disclosure: 'one_fact', identity: 'name_zip', refer: 'items_or_latest', noise: 1, paraphrase: 0.6, shared: 0.5, orders: [3, 6], distractors: 1 },
  { disclosure: 'one_fact', identity: 'name_zip', refer: 'items', noise: 2, paraphrase: 0.8, shared: 1, orders: [4, 99], distractors: 2 },
];

const ladder = (extra: ReadonlyArray<Record<string, unknown>>, base: readonly LevelSpec[] = LADDER): LevelSpec[] =>
  base.map((spec, i) => ({ ...spec, ...(extra[i] ?? {}) }) as LevelSpec);

// ---- single-intent templates ----

export const orderStatusTemplate = retailTemplate({
  name: 'order-status',
  taskType: 'order_status',
  description: 'Tell the customer the status of one of their orders (and its tracking number at levels 3+).',
  levels: ladder([{ tracking: false }, { tracking: false }, { tracking: true }, { tracking: true }, { tracking: true }]),
  sample(rng, _level, spec, key) {
    const style = styleOf(spec);
    return sampleTarget(rng, key, style, () => true, (_ix, c, o) => [statusIntent(rng, c, o, style.refer, spec['tracking'] === true)]);
  },
});

export const cancelTemplate = retailTemplate({
  name: 'cancel',
  taskType: 'cancel',
  description: 'Cancel a pending order with the reason the customer gives.',
  levels: LADDER,
  sample(rng, _level, spec, key) {
    const style = styleOf(spec);
    return sampleTarget(rng, key, style, (_ix, _c, o) => o.status === 'pending', (_ix, c, o) => [cancelIntent(rng, c, o, style.refer)]);
  },
});

export const returnRefundTemplate = retailTemplate({
  name: 'return-refund',
  taskType: 'return_refund',
  description: 'Return items of a delivered order, refunded to the original payment method or a gift card.',
  levels: ladder(
    [
      { items: 1, refund: 'original' },
      { items: 1, refund: 'original' },
      { items: [1, 2], refund: 'any' },
      { items: 2, refund: 'any' },
      { items: [2, 3], refund: 'gift_card' },
    ],
    ladder([{}, {}, { orders: [2, 5] }, {}, {}]),
  ),
  sample(rng, _level, spec, key) {
    const style = styleOf(spec);
    const min = minCount(spec['items']);
    return sampleTarget(
      rng,
      key,
      style,
      (_ix, _c, o) => o.status === 'delivered' && returnable(o) >= min,
      (_ix, c, o) => {
        const intent = returnIntent(rng, c, o, style.refer, countOf(rng, spec['items']), spec['refund'] as 'original' | 'any' | 'gift_card');
        return intent === undefined ? undefined : [intent];
      },
    );
  },
});

export const exchangeTemplate = retailTemplate({
  name: 'exchange',
  taskType: 'exchange',
  description: 'Exchange items of a delivered order for other available variants of the same products.',
  levels: ladder([{ items: 1 }, { items: 1 }, { items: 1, orders: [2, 5] }, { items: 2 }, { items: 2 }]),
  sample(rng, _level, spec, key) {
    const style = styleOf(spec);
    const min = minCount(spec['items']);
    return sampleTarget(
      rng,
      key,
      style,
      (ix, _c, o) => o.status === 'delivered' && exchangeable(ix, o).length >= min,
      (ix, c, o) => {
        const intent = exchangeIntent(rng, ix, c, o, style.refer, countOf(rng, spec['items']));
        return intent === undefined ? undefined : [intent];
      },
    );
  },
});

export const addressChangeTemplate = retailTemplate({
  name: 'address-change',
  taskType: 'address_change',
  description: "Change the customer's default address, a pending order's shipping address, or both (levels 4-5).",
  levels: ladder([
    { target: 'user' },
    { target: 'order' },
    { target: 'either', orders: [2, 5], distractors: 0 },
    { target: 'both', orders: [2, 6] },
    { target: 'both', orders: [3, 99], distractors: 1 },
  ]),
  sample(rng, _level, spec, key) {
    const style = styleOf(spec);
    let target = spec['target'] as string;
    if (target === 'either') target = rng.chance(0.5) ? 'user' : 'order';
    if (target === 'user') {
      const accountOnly: Style = { ...style, refer: 'id', distractors: 0 };
      return sampleTarget(rng, `${key}:user`, accountOnly, () => true, (_ix, c) => [{ kind: 'user_address', address: newAddress(rng, c.user.address.zip) }]);
    }
    return sampleTarget(
      rng,
      `${key}:${target}`,
      style,
      (_ix, _c, o) => o.status === 'pending',
      (_ix, c, o) => {
        const address = newAddress(rng, c.user.address.zip);
        const order = orderAddressIntent(rng, c, o, style.refer, address);
        // A copy: a parsed goal never shared objects between intents, and the built one does not either.
        return target === 'both' ? [{ kind: 'user_address', address: { ...address } }, order] : [order];
      },
    );
  },
});

export const paymentChangeTemplate = retailTemplate({
  name: 'payment-change',
  taskType: 'payment_change',
  description: "Pay a pending order with another of the customer's payment methods (a gift card must cover it).",
  levels: ladder([
    { method: 'any', orders: [1, 3] },
    { method: 'any' },
    { method: 'any', orders: [2, 5] },
    { method: 'gift_card', orders: [2, 6] },
    { method: 'gift_card', orders: [3, 99], distractors: 1 },
  ]),
  sample(rng, _level, spec, key) {
    const style = styleOf(spec);
    return sampleTarget(
      rng,
      key,
      style,
      (_ix, c, o) => paymentTargets(c, o).length > 0,
      (_ix, c, o) => {
        const intent = paymentIntent(rng, c, o, style.refer, spec['method'] === 'gift_card');
        return intent === undefined ? undefined : [intent];
      },
    );
  },
});

// ---- compound ----

type Kind = 'status' | 'cancel' | 'return' | 'exchange' | 'order_address' | 'user_address' | 'payment';
const COMPOUND_KINDS: readonly Kind[] = ['status', 'cancel', 'return', 'exchange', 'order_address', 'user_address', 'payment'];

/** One intent of `kind` on `order` (undefined when the order does not allow it). */
function intentOn(rng: Rng, index: WorldIndex, c: Customer, o: RetailOrder, kind: Kind, style: Style): Intent | undefined {
  if (!describable(c, o, style.refer)) return undefined;
  switch (kind) {
    case 'status':
      return statusIntent(rng, c, o, style.refer, false);
    case 'cancel':
      return o.status === 'pending' ? cancelIntent(rng, c, o, style.refer) : undefined;
    case 'order_address':
      return o.status === 'pending' ? orderAddressIntent(rng, c, o, style.refer, newAddress(rng, c.user.address.zip)) : undefined;
    case 'payment':
      return paymentTargets(c, o).length > 0 ? paymentIntent(rng, c, o, style.refer, false) : undefined;
    case 'return':
      return o.status === 'delivered' ? returnIntent(rng, c, o, style.refer, 1, 'any') : undefined;
    case 'exchange':
      return o.status === 'delivered' ? exchangeIntent(rng, index, c, o, style.refer, 1) : undefined;
    case 'user_address':
      return undefined;
  }
}

/** 2-4 intents on different orders of one customer, each kind at most once where possible. */
function sampleCompound(rng: Rng, spec: LevelSpec, key: string, bank: PhraseBankName): RetailParams {
  const style: Style = { ...styleOf(spec), distractors: 0 };
  const count = countOf(rng, spec['intents'], 2);
  const staggered = spec['staggered'] === true;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const { index, value: c } = pickCandidate(rng, key, (ix) => ix.customers.filter((cu) => fitsAccount(cu, style) && cu.orders.length >= count - 1));
    const intents: Intent[] = [];
    const used = new Set<RetailOrder>();
    const kinds = new Set<Kind>();
    for (let slot = 0; slot < count; slot++) {
      const order = rng.shuffle(COMPOUND_KINDS).sort((a, b) => Number(kinds.has(a)) - Number(kinds.has(b)));
      let made: Intent | undefined;
      for (const kind of order) {
        if (kind === 'user_address') {
          if (kinds.has('user_address')) continue;
          made = { kind: 'user_address', address: newAddress(rng, c.user.address.zip) };
        } else {
          for (const o of rng.shuffle(c.orders)) {
            if (used.has(o)) continue;
            made = intentOn(rng, index, c, o, kind, style);
            if (made !== undefined) {
              used.add(o);
              break;
            }
          }
        }
        if (made !== undefined) {
          kinds.add(kind);
          break;
        }
      }
      if (made === undefined) break;
      intents.push(made);
    }
    // The most recent order can be named "my most recent order" by one intent only: ensured by distinct orders.
    if (intents.length === count) return { world: index.seed, goal: goalFor(rng, c, style, intents, { bank, staggered }) };
  }
  throw new Error(`${key}: no compound task after ${ATTEMPTS} attempts`);
}

const COMPOUND_LEVELS: readonly LevelSpec[] = ladder([
  { intents: 2, staggered: true, orders: [2, 99] },
  { intents: 2, staggered: false, orders: [2, 99] },
  { intents: 3, staggered: false, orders: [3, 99] },
  { intents: 3, staggered: false, orders: [3, 99] },
  { intents: 4, staggered: false, orders: [4, 99] },
]);

export const compoundTemplate = retailTemplate({
  name: 'compound',
  taskType: 'compound',
  description: 'Two to four requests in one conversation (status, cancel, return, exchange, address, payment); at level 1 the second is raised once the first is done, above that all in the opening.',
  levels: COMPOUND_LEVELS,
  sample: (rng, _level, spec, key) => sampleCompound(rng, spec, key, 'train'),
});

// ---- conditional ----

const SHIPPED = new Set(['processed', 'delivered']);

/** "Before changing my address, check whether my last order shipped; if it has not, change that order's address too." */
function sampleConditional(rng: Rng, spec: LevelSpec, key: string, bank: PhraseBankName): RetailParams {
  const style: Style = { ...styleOf(spec), refer: 'latest', distractors: 0 };
  const pending = rng.chance(0.5);
  const { index, value: c } = pickCandidate(rng, `${key}:${pending ? 'pending' : 'shipped'}`, (ix) =>
    ix.customers.filter((cu) => {
      const last = cu.orders[cu.orders.length - 1]!;
      return fitsAccount(cu, style) && (pending ? last.status === 'pending' : SHIPPED.has(last.status));
    }),
  );
  const last = c.orders[c.orders.length - 1]!;
  const address = newAddress(rng, c.user.address.zip);
  const intents: Intent[] = [statusIntent(rng, c, last, 'latest', false), { kind: 'user_address', address }];
  if (pending) intents.push(orderAddressIntent(rng, c, last, 'latest', { ...address }));
  const goal = goalFor(rng, c, style, intents, { bank, staggered: spec['staggered'] === true, conditional: { order_id: last.order_id, status: last.status, pending } });
  return { world: index.seed, goal };
}

const CONDITIONAL_LEVELS: readonly LevelSpec[] = ladder([
  { orders: [1, 3], staggered: true },
  { orders: [1, 3] },
  { orders: [2, 5] },
  { orders: [2, 6] },
  { orders: [3, 99] },
]);

export const conditionalTemplate = retailTemplate({
  name: 'conditional',
  taskType: 'conditional',
  description: "Check whether the last order shipped, change the default address, and the order's address too if it is still pending (both branches occur); at level 1 the customer asks about the shipment first and the address after.",
  levels: CONDITIONAL_LEVELS,
  sample: (rng, _level, spec, key) => sampleConditional(rng, spec, key, 'train'),
});

// ---- out of scope ----

export const outOfScopeTemplate = retailTemplate({
  name: 'out-of-scope',
  taskType: 'out_of_scope',
  description: 'A request no tool can carry out: transfer to a human agent or refuse, after authenticating; at levels 4-5 next to a request that must be done.',
  levels: ladder([
    { topics: ['human'], with: 'none', orders: [1, 99], distractors: 0 },
    { topics: ['coupon', 'price_match'], with: 'none', orders: [1, 99], distractors: 0 },
    { topics: ['email_change', 'complaint'], with: 'none', orders: [1, 99], distractors: 0 },
    { topics: [...OUT_OF_SCOPE_TOPICS], with: 'status', orders: [2, 99], distractors: 0 },
    { topics: [...OUT_OF_SCOPE_TOPICS], with: 'cancel', orders: [2, 99], distractors: 1 },
  ]),
  sample(rng, _level, spec, key) {
    const style = styleOf(spec);
    const topic = rng.pick(spec['topics'] as string[]);
    const other: Intent = { kind: 'out_of_scope', topic };
    const withKind = spec['with'] as string;
    return sampleTarget(
      rng,
      key,
      style,
      (_ix, _c, o) => withKind !== 'cancel' || o.status === 'pending',
      (_ix, c, o) => {
        if (withKind === 'status') return [statusIntent(rng, c, o, style.refer, false), other];
        if (withKind === 'cancel') return [cancelIntent(rng, c, o, style.refer), other];
        return [other];
      },
    );
  },
});

// ---- policy traps ----

type Trap = 'cancel_shipped' | 'refund_other_card' | 'other_customer';

function otherCustomerIntent(rng: Rng, index: WorldIndex, c: Customer): Intent {
  for (;;) {
    const other = rng.pick(index.customers);
    if (other.id === c.id) continue;
    return { kind: 'other_customer', order_id: rng.pick(other.orders).order_id, relation: rng.pick(RELATIONS) };
  }
}

export const policyTrapTemplate = retailTemplate({
  name: 'policy-trap',
  taskType: 'policy_trap',
  description: 'Requests the policy forbids (cancel a shipped order, refund to another card, another customer\'s order): refuse, say why, do what is allowed.',
  levels: ladder([
    { traps: ['cancel_shipped'], shipped: ['processed'], distractors: 0 },
    { traps: ['refund_other_card'], shipped: ['processed'], distractors: 0 },
    { traps: ['cancel_shipped', 'refund_other_card'], shipped: ['processed', 'delivered'], distractors: 0 },
    { traps: ['other_customer'], shipped: ['processed'], distractors: 0 },
    { traps: ['cancel_shipped', 'refund_other_card'], also: 'other_customer', shipped: ['processed', 'delivered'], distractors: 0 },
  ]),
  sample(rng, _level, spec, key) {
    const style = styleOf(spec);
    const trap = rng.pick(spec['traps'] as Trap[]);
    const shipped = new Set(spec['shipped'] as string[]);
    const also = spec['also'] === 'other_customer';
    const accept = (_ix: WorldIndex, c: Customer, o: RetailOrder): boolean => {
      if (trap === 'cancel_shipped') return shipped.has(o.status);
      if (trap === 'refund_other_card') return o.status === 'delivered' && returnable(o) > 0 && forbiddenRefundMethods(c, o).length > 0;
      return true;
    };
    return sampleTarget(rng, `${key}:${trap}`, style, accept, (ix, c, o) => {
      const intents: Intent[] = [];
      if (trap === 'cancel_shipped') intents.push(cancelIntent(rng, c, o, style.refer, true));
      else if (trap === 'refund_other_card') {
        const intent = returnIntent(rng, c, o, style.refer, 1, 'any');
        if (intent === undefined || intent.kind !== 'return') return undefined;
        intents.push({ ...intent, insist: methodRef(c, rng.pick(forbiddenRefundMethods(c, o))) });
      } else {
        intents.push(statusIntent(rng, c, o, style.refer, false));
      }
      if (trap === 'other_customer' || also) intents.push(otherCustomerIntent(rng, ix, c));
      return intents;
    });
  },
});

// ---- held-out templates (phrasing never used in training) ----

export const compoundHeldoutTemplate = retailTemplate({
  name: 'compound-heldout',
  taskType: 'compound',
  description: 'Compound requests phrased with the held-out phrase bank (generalisation to unseen wording).',
  levels: COMPOUND_LEVELS,
  heldout: true,
  sample: (rng, _level, spec, key) => sampleCompound(rng, spec, key, 'heldout'),
});

export const conditionalHeldoutTemplate = retailTemplate({
  name: 'conditional-heldout',
  taskType: 'conditional',
  description: 'Conditional requests phrased with the held-out phrase bank (generalisation to unseen wording).',
  levels: CONDITIONAL_LEVELS,
  heldout: true,
  sample: (rng, _level, spec, key) => sampleConditional(rng, spec, key, 'heldout'),
});

/** The ten training templates, one per task type. */
export const retailTrainingTemplates: readonly RegisteredTemplate<RetailParams>[] = [
  orderStatusTemplate,
  cancelTemplate,
  returnRefundTemplate,
  exchangeTemplate,
  addressChangeTemplate,
  paymentChangeTemplate,
  compoundTemplate,
  conditionalTemplate,
  outOfScopeTemplate,
  policyTrapTemplate,
];

/** The held-out templates (`heldout: true`). */
export const retailHeldoutTemplates: readonly RegisteredTemplate<RetailParams>[] = [compoundHeldoutTemplate, conditionalHeldoutTemplate];

/** Every retail template: the ten training templates and the held-out ones. */
export const retailTemplates: readonly RegisteredTemplate<RetailParams>[] = [...retailTrainingTemplates, ...retailHeldoutTemplates];

