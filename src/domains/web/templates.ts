/**
 * The web task types: eight templates (one held out) over the shop and booking sites, each with five
 * levels that add seeded perturbations and more rows. Reference solutions are key-level plans played on
 * the simulated page (plan.ts), so they follow every perturbation the task drew.
 */
import { z } from 'zod';
import { defineTemplate, type Action, type JsonValue, type LevelSpec, type Rng, type TaskSpec } from '../../core/index.js';
import { observe } from './observation.js';
import { PERTURBATIONS, type PageConfig, type Perturbation } from './perturbation.js';
import { playPlan, type Plan, type PlanStep } from './plan.js';
import { TIERS } from './sites/shop.js';
import { initialPage, type WebWorld } from './state.js';
import { fromWebAction, type ProcessHints } from './tools.js';
import { bookingTables, emailOf, people, shopTables } from './worlds.js';

/** The parameters of every web task: the world, what to tell the agent, the plan, and process hints. */
export interface WebParams {
  world: WebWorld;
  goal: string;
  plan: PlanStep[][];
  outputs: string[];
  hints: ProcessHints;
}

const paramsSchema = z.object({
  world: z.any(),
  goal: z.string(),
  plan: z.array(z.array(z.any())),
  outputs: z.array(z.string()),
  hints: z.object({ paths: z.array(z.string()), distractors: z.array(z.string()) }),
}) as unknown as z.ZodType<WebParams>;

/** The perturbation ladder: what is always on and what is drawn (p = 1/2) at each level. */
const LADDER: ReadonlyArray<{ rows: number; on: Perturbation[]; maybe: Perturbation[] }> = [
  { rows: 6, on: [], maybe: [] },
  { rows: 12, on: [], maybe: ['reorder', 'icon-only', 'cookie-banner'] },
  { rows: 24, on: ['cookie-banner', 'pagination'], maybe: ['synonyms', 'reorder', 'icon-only'] },
  { rows: 36, on: ['synonyms', 'cookie-banner', 'pagination'], maybe: ['reorder', 'icon-only', 'late-load', 'menu', 'tabs', 'newsletter', 'confirm-dialog', 'scroll-reveal', 'validation'] },
  { rows: 48, on: ['synonyms', 'cookie-banner', 'pagination', 'late-load', 'newsletter', 'confirm-dialog', 'session-timeout'], maybe: ['reorder', 'icon-only', 'menu', 'tabs', 'scroll-reveal', 'infinite-list', 'ab-variant', 'validation'] },
];

/** Levels for a template: the ladder restricted to the perturbations that touch its pages, plus its own. */
function levels(applies: readonly Perturbation[], always: readonly Perturbation[] = []): LevelSpec[] {
  return LADDER.map((l) => ({
    rows: l.rows,
    on: [...new Set([...always, ...l.on.filter((p) => applies.includes(p))])],
    maybe: l.maybe.filter((p) => applies.includes(p) && !always.includes(p)),
  }));
}

/** Draws the page config of a level: perturbations on, knobs and the login. */
function drawConfig(rng: Rng, spec: LevelSpec): PageConfig {
  const on = new Set(spec['on'] as Perturbation[]);
  for (const p of spec['maybe'] as Perturbation[]) if (rng.chance(0.5)) on.add(p);
  if (on.has('infinite-list')) on.delete('pagination');
  return {
    seed: rng.int(0, 2 ** 31 - 1),
    perturbations: PERTURBATIONS.filter((p) => on.has(p)),
    pageSize: on.has('infinite-list') ? 6 : rng.pick([5, 8]),
    lateTicks: rng.int(2, 4),
    newsletterAt: rng.int(1, 5),
    timeoutTicks: rng.int(7, 12),
    credentials: { user: rng.pick(['admin', 'manager', 'clerk']), password: `pw-${rng.int(1000, 9999)}` },
  };
}

// The played reference for a params object: build sizes the budget from it, solve returns it.
const played = new WeakMap<WebParams, { actions: Action[]; observation: string }>();
function reference(p: WebParams): { actions: Action[]; observation: string } {
  let out = played.get(p);
  if (out === undefined) {
    const start = initialPage(p.world as unknown as JsonValue);
    const run = playPlan(start, p.plan as Plan);
    const o = observe(start);
    out = { actions: [...run.actions.map(fromWebAction), { type: 'finish' }], observation: `URL: ${o.url}\nTitle: ${o.title}\n${o.axtree}` };
    played.set(p, out);
  }
  return out;
}

const has = (p: WebParams, x: Perturbation): boolean => p.world.config.perturbations.includes(x);

function buildSpec(p: WebParams, taskType: string): Omit<TaskSpec, 'solution'> {
  const ref = reference(p);
  const login = has(p, 'session-timeout') ? `\nIf the site asks you to sign in, use user name "${p.world.config.credentials.user}" and password "${p.world.config.credentials.password}".` : '';
  return {
    instructions: `${p.goal}${login}\nUse the page tools with the [bid] ids of the accessibility tree; say results to the user with a message; finish when done.\n\nThe page now:\n${ref.observation}`,
    initialState: p.world as unknown as JsonValue,
    budget: { steps: Math.ceil(ref.actions.length * 1.5) + 8, consecutiveErrors: 6 },
    acceptance: { finalState: true, ...(p.outputs.length > 0 ? { outputs: p.outputs } : {}) },
    tags: [`site:${p.world.site}`, `task:${taskType}`, ...p.world.config.perturbations.map((x) => `perturbation:${x}`)],
  };
}

interface Authored {
  name: string;
  taskType: string;
  description: string;
  applies: Perturbation[];
  always?: Perturbation[];
  heldout?: boolean;
  sample(rng: Rng, config: PageConfig, rows: number): Omit<WebParams, 'world'> & { world: Omit<WebWorld, 'config'> };
}

function webTemplate(a: Authored) {
  return defineTemplate<WebParams>({
    domain: 'web',
    name: a.name,
    version: 1,
    taskType: a.taskType,
    description: a.description,
    levels: levels(a.applies, a.always),
    params: paramsSchema,
    ...(a.heldout === true ? { heldout: true } : {}),
    sample(rng, _level, spec) {
      const config = drawConfig(rng.fork('config'), spec);
      const s = a.sample(rng.fork('world'), config, spec['rows'] as number);
      return { ...s, world: { ...s.world, config } };
    },
    build: (p) => buildSpec(p, a.taskType),
    solve: (p) => reference(p).actions,
  });
}

const COMMON: Perturbation[] = ['synonyms', 'reorder', 'icon-only', 'cookie-banner', 'newsletter', 'late-load', 'scroll-reveal', 'session-timeout', 'ab-variant'];
const TABLED: Perturbation[] = [...COMMON, 'pagination', 'infinite-list'];
const DISTRACT = ['layer.newsletter.subscribe', 'layer.cookie.settings'];
const dollars = (cents: number): string => `$${(cents / 100).toFixed(2)}`;

function customerGoal(rng: Rng, rows: number, messyPhone: boolean) {
  const tables = shopTables(rng, rows);
  const known = new Set(Object.values(tables['customers']!).map((c) => c['name']));
  const name = people(rng, 40).find((n) => !known.has(n))!;
  const email = emailOf(name);
  const digits = [rng.int(200, 999), rng.int(100, 999), rng.int(1000, 9999)];
  const phone = digits.join('-');
  const shown = messyPhone ? `(${digits[0]}) ${digits[1]} ${digits[2]}` : phone;
  const tier = rng.pick(TIERS);
  const newsletter = rng.chance(0.5);
  return { tables, name, email, phone, shown, tier, newsletter };
}

function customerPlan(c: { name: string; email: string; phone: string; tier: string; newsletter: boolean }, wizard: boolean): PlanStep[][] {
  const contact: PlanStep[] = [
    { do: 'fill', key: 'customer.name', text: c.name },
    { do: 'fill', key: 'customer.email', text: c.email },
    { do: 'fill', key: 'customer.phone', text: c.phone },
  ];
  const prefs: PlanStep[] = [
    { do: 'select', key: 'customer.tier', value: c.tier },
    { do: 'check', key: 'customer.newsletter', on: c.newsletter },
  ];
  return [[{ do: 'click', key: 'customers.new' }], [...contact, ...(wizard ? [{ do: 'click' as const, key: 'customer.next' }] : []), ...prefs, { do: 'click', key: 'customer.create' }]];
}

/** `web/fill-form@1`: create a customer through the shop's form. */
export const fillFormTemplate = webTemplate({
  name: 'fill-form',
  taskType: 'fill-form',
  description: 'Open the new-customer form, fill every field (text, select, checkbox) and submit it.',
  applies: [...COMMON, 'tabs'],
  sample(rng, config, rows) {
    const c = customerGoal(rng, rows, false);
    return {
      world: { site: 'shop', url: '/customers', tables: c.tables },
      goal: `Create a new customer: name "${c.name}", email "${c.email}", phone "${c.phone}", tier "${c.tier}", and ${c.newsletter ? 'subscribe them to' : 'do not subscribe them to'} the newsletter.`,
      plan: customerPlan(c, config.perturbations.includes('ab-variant')),
      outputs: [],
      hints: { paths: ['/customers'], distractors: DISTRACT },
    };
  },
});

/** `web/fix-validation@1`: the same form, but the phone is given in a format the form rejects until it is fixed. */
export const fixValidationTemplate = webTemplate({
  name: 'fix-validation',
  taskType: 'fix-validation',
  description: 'Fill the new-customer form with a phone number written the wrong way, read the validation error and fix it.',
  applies: [...COMMON, 'tabs', 'validation'],
  always: ['validation'],
  sample(rng, config, rows) {
    const c = customerGoal(rng, rows, true);
    return {
      world: { site: 'shop', url: '/customers', tables: c.tables },
      goal: `Add the customer ${c.name} (email ${c.email}, phone ${c.shown}) on the ${c.tier} tier, ${c.newsletter ? 'with' : 'without'} the newsletter.`,
      plan: customerPlan(c, config.perturbations.includes('ab-variant')),
      outputs: [],
      hints: { paths: ['/customers'], distractors: DISTRACT },
    };
  },
});

/** `web/search-act@1`: search orders by customer, open the pending one, ship it. */
export const searchActTemplate = webTemplate({
  name: 'search-act',
  taskType: 'search-act',
  description: 'Search the orders by customer, open the pending order and mark it shipped.',
  applies: [...TABLED, 'menu', 'confirm-dialog'],
  sample(rng, _config, rows) {
    const tables = shopTables(rng, rows);
    const orders = tables['orders']!;
    const ids = Object.keys(orders).sort();
    const target = rng.pick(ids);
    const customer = orders[target]!['customer'] as string;
    orders[target] = { ...orders[target]!, status: 'pending' };
    const others = ids.filter((id) => id !== target && orders[id]!['customer'] === customer);
    return {
      world: { site: 'shop', url: '/orders', tables },
      goal: `${customer} is waiting for an order: mark their pending order as shipped.`,
      plan: [[{ do: 'fill', key: 'orders.q', text: customer }, { do: 'click', key: 'orders.q.go' }, { do: 'click', key: `orders.view.${target}` }], [{ do: 'click', key: 'order.ship' }]],
      outputs: [],
      hints: { paths: ['/orders'], distractors: [...DISTRACT, 'order.cancel', ...others.map((o) => `orders.view.${o}`)] },
    };
  },
});

/** `web/edit-record@1`: find a product in the (paged, sortable) table and change its price. */
export const editRecordTemplate = webTemplate({
  name: 'edit-record',
  taskType: 'edit-record',
  description: 'Find a product in the products table (through pages) and change its price on its edit form.',
  applies: [...TABLED, 'validation'],
  sample(rng, config, rows) {
    const tables = shopTables(rng, rows);
    const products = tables['products']!;
    const id = rng.pick(Object.keys(products).sort());
    const old = products[id]!['price'] as number;
    let cents = rng.int(4, 200) * 50;
    if (cents === old) cents += 50;
    // Under `validation` the price is written the short way (12.5) that the form rejects.
    const shown = config.perturbations.includes('validation') && cents % 100 !== 0 && cents % 10 === 0 ? `$${(cents / 100).toString()}` : dollars(cents);
    return {
      world: { site: 'shop', url: '/products', tables },
      goal: `Change the price of "${products[id]!['name'] as string}" to ${shown}.`,
      plan: [[{ do: 'click', key: `products.edit.${id}` }], [{ do: 'fill', key: 'product.price', text: (cents / 100).toFixed(2) }, { do: 'click', key: 'product.save' }]],
      outputs: [],
      hints: { paths: ['/products'], distractors: [...DISTRACT, 'products.discontinue', 'products.restock'] },
    };
  },
});

/** `web/bulk-action@1`: tick every out-of-stock product across the pages and discontinue them in one bulk action. */
export const bulkActionTemplate = webTemplate({
  name: 'bulk-action',
  taskType: 'bulk-action',
  description: 'Select every product with stock 0 across the paginated table and discontinue them with the bulk action.',
  applies: [...TABLED, 'menu', 'confirm-dialog'],
  sample(rng, _config, rows) {
    const tables = shopTables(rng, rows);
    const products = tables['products']!;
    const ids = Object.keys(products).sort();
    for (const id of rng.sample(ids, Math.max(2, Math.round(rows / 8)))) products[id] = { ...products[id]!, stock: 0 };
    const zero = ids.filter((id) => products[id]!['stock'] === 0);
    return {
      world: { site: 'shop', url: '/products', tables },
      goal: 'Discontinue every product that is out of stock (stock 0), in one bulk action.',
      plan: [[...zero.map((id): PlanStep => ({ do: 'check', key: `products.sel.${id}`, on: true })), { do: 'click', key: 'products.discontinue' }]],
      outputs: [],
      hints: { paths: ['/products'], distractors: [...DISTRACT, 'products.restock'] },
    };
  },
});

/** `web/compare-report@1`: open two products' pages and tell the user which costs more, and its price. */
export const compareReportTemplate = webTemplate({
  name: 'compare-report',
  taskType: 'compare-report',
  description: 'Open two product pages, compare their prices and report the pricier one (name and price) to the user.',
  applies: TABLED,
  sample(rng, _config, rows) {
    const tables = shopTables(rng, rows);
    const products = tables['products']!;
    const [a, b] = rng.sample(Object.keys(products).sort(), 2) as [string, string];
    if (products[a]!['price'] === products[b]!['price']) products[b] = { ...products[b]!, price: (products[b]!['price'] as number) + 150 };
    const win = (products[a]!['price'] as number) > (products[b]!['price'] as number) ? a : b;
    const name = (id: string): string => products[id]!['name'] as string;
    const price = dollars(products[win]!['price'] as number);
    return {
      world: { site: 'shop', url: '/products', tables },
      goal: `Which costs more, "${name(a)}" or "${name(b)}"? Look at both product pages and tell me its name and price.`,
      plan: [[{ do: 'click', key: `products.edit.${a}` }], [{ do: 'click', key: 'product.back' }], [{ do: 'click', key: `products.edit.${b}` }], [{ do: 'say', text: `${name(win)} costs more: ${price}.` }]],
      outputs: [name(win), price],
      hints: { paths: ['/products'], distractors: [...DISTRACT, 'product.save', 'products.discontinue', 'products.restock'] },
    };
  },
});

const DAYS = ['2026-03-02', '2026-03-03', '2026-03-04', '2026-03-05'];

/** `web/checkout@1`: search a trip, pick it, give passenger details and confirm: a multi-page booking. */
export const checkoutTemplate = webTemplate({
  name: 'checkout',
  taskType: 'checkout',
  description: 'Search trips, choose the one asked for, fill in the passenger and confirm the booking on the review page.',
  applies: [...TABLED, 'confirm-dialog'],
  sample(rng, _config, rows) {
    const tables = bookingTables(rng, rows, DAYS);
    const trips = tables['trips']!;
    const id = rng.pick(Object.keys(trips).sort());
    trips[id] = { ...trips[id]!, seats: Math.max(2, trips[id]!['seats'] as number) };
    const t = trips[id]!;
    const taken = new Set(Object.values(tables['bookings']!).map((b) => b['passenger']));
    const name = people(rng, 40).find((n) => !taken.has(n))!;
    const seats = String(rng.int(1, 2));
    const email = emailOf(name);
    const rivals = Object.keys(trips).filter((o) => o !== id && trips[o]!['from'] === t['from'] && trips[o]!['to'] === t['to'] && trips[o]!['date'] === t['date']);
    return {
      world: { site: 'booking', url: '/search', tables },
      goal: `Book ${seats} seat${seats === '1' ? '' : 's'} on the ${t['depart'] as string} trip from ${t['from'] as string} to ${t['to'] as string} on ${t['date'] as string} for ${name} (email ${email}).`,
      plan: [
        [{ do: 'select', key: 'search.from', value: t['from'] as string }, { do: 'select', key: 'search.to', value: t['to'] as string }, { do: 'fill', key: 'search.date', text: t['date'] as string }, { do: 'click', key: 'search.go' }],
        [{ do: 'click', key: `results.book.${id}` }],
        [{ do: 'fill', key: 'passenger.name', text: name }, { do: 'fill', key: 'passenger.email', text: email }, { do: 'select', key: 'passenger.seats', value: seats }, { do: 'click', key: 'passenger.next' }],
        [{ do: 'click', key: 'review.confirm' }],
      ],
      outputs: [],
      hints: { paths: ['/search', '/results', '/book'], distractors: [...DISTRACT, ...rivals.map((o) => `results.book.${o}`)] },
    };
  },
});

/** `web/cancel-booking@1` (held out): find a passenger's booking in the list and cancel it. */
export const cancelBookingTemplate = webTemplate({
  name: 'cancel-booking',
  taskType: 'cancel-booking',
  description: "Find a passenger's confirmed booking in the bookings table (through pages) and cancel it.",
  applies: [...TABLED, 'menu', 'confirm-dialog'],
  heldout: true,
  sample(rng, _config, rows) {
    const tables = bookingTables(rng, rows, DAYS);
    const bookings = tables['bookings']!;
    const id = rng.pick(Object.keys(bookings).sort());
    bookings[id] = { ...bookings[id]!, status: 'confirmed' };
    const others = Object.keys(bookings).filter((o) => o !== id);
    return {
      world: { site: 'booking', url: '/bookings', tables },
      goal: `Cancel the booking of ${bookings[id]!['passenger'] as string}.`,
      plan: [[{ do: 'click', key: `bookings.cancel.${id}` }]],
      outputs: [],
      hints: { paths: ['/bookings'], distractors: [...DISTRACT, ...others.map((o) => `bookings.cancel.${o}`)] },
    };
  },
});

/** Every web template (the last is held out). */
export const WEB_TEMPLATES = [fillFormTemplate, searchActTemplate, checkoutTemplate, editRecordTemplate, bulkActionTemplate, compareReportTemplate, fixValidationTemplate, cancelBookingTemplate];
