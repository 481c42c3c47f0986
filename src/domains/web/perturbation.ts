/** The seeded perturbations: difficulty knobs a level declares, drawn from the task seed and named in the task's tags. */
import { fastRng, type Rng } from '../../core/index.js';
import { memoOn } from './memo.js';

/** Every perturbation a page can carry (public: names appear in task tags as `perturbation:<name>`). */
export const PERTURBATIONS = [
  'reorder',
  'menu',
  'tabs',
  'synonyms',
  'icon-only',
  'cookie-banner',
  'newsletter',
  'confirm-dialog',
  'late-load',
  'scroll-reveal',
  'pagination',
  'infinite-list',
  'validation',
  'ab-variant',
  'session-timeout',
] as const;
export type Perturbation = (typeof PERTURBATIONS)[number];

/** What a page is built with: the perturbations on, their seed, and their numeric knobs. Part of the task (JSON). */
export interface PageConfig {
  /** Seed of every perturbation draw (from the task seed). */
  seed: number;
  perturbations: Perturbation[];
  /** Rows per table page (pagination) or per loaded batch (infinite list). */
  pageSize: number;
  /** Late load: ticks before late elements show. */
  lateTicks: number;
  /** Newsletter modal: the tick it pops up at. */
  newsletterAt: number;
  /** Session timeout: ticks of activity after which the next action lands on the login page. */
  timeoutTicks: number;
  /** Login for the session-timeout perturbation (given to the agent in the instructions). */
  credentials: { user: string; password: string };
}

/** Synonyms a label may be renamed to (the first entry is the plain label). */
export const SYNONYMS: Readonly<Record<string, readonly string[]>> = {
  Save: ['Save', 'Apply', 'Update', 'Store changes'],
  Submit: ['Submit', 'Send', 'Confirm', 'Done'],
  Create: ['Create', 'Add', 'New', 'Register'],
  Search: ['Search', 'Find', 'Look up', 'Filter'],
  Edit: ['Edit', 'Modify', 'Change', 'Manage'],
  View: ['View', 'Open', 'Details', 'Show'],
  Cancel: ['Cancel', 'Abort', 'Call off', 'Void'],
  Name: ['Name', 'Full name', 'Customer name', 'Contact'],
  Email: ['Email', 'E-mail address', 'Mail', 'Contact email'],
  Price: ['Price', 'Unit price', 'Cost', 'Amount'],
  Stock: ['Stock', 'Inventory', 'On hand', 'Quantity'],
  Status: ['Status', 'State', 'Stage', 'Progress'],
  Tier: ['Tier', 'Plan', 'Level', 'Membership'],
  Newsletter: ['Newsletter', 'Mailing list', 'Marketing emails', 'Updates'],
  Phone: ['Phone', 'Telephone', 'Mobile', 'Phone number'],
  Next: ['Next', 'Continue', 'Proceed', 'Go on'],
  Book: ['Book', 'Reserve', 'Select', 'Choose'],
  Passenger: ['Passenger', 'Traveller', 'Guest', 'Rider'],
  From: ['From', 'Origin', 'Departure', 'Leaving from'],
  To: ['To', 'Destination', 'Arrival', 'Going to'],
  Date: ['Date', 'Travel date', 'Day', 'When'],
  Restock: ['Restock', 'Replenish', 'Refill', 'Reorder'],
  Discontinue: ['Discontinue', 'Retire', 'Withdraw', 'Delist'],
  Ship: ['Mark shipped', 'Ship', 'Dispatch', 'Send out', 'Fulfil'],
  Orders: ['Orders', 'Sales', 'Purchases', 'Order list'],
  Products: ['Products', 'Catalogue', 'Items', 'Inventory list'],
  Customers: ['Customers', 'Clients', 'Accounts', 'People'],
  Note: ['Note', 'Comment', 'Remark', 'Memo'],
};

/** Glyphs for icon-only buttons (what is drawn; the name is only in `aria-label`). */
export const ICONS: Readonly<Record<string, string>> = {
  Save: '💾',
  Submit: '➤',
  Create: '＋',
  Search: '🔍',
  Edit: '✎',
  View: '👁',
  Cancel: '✕',
  Next: '→',
  Book: '✓',
  Restock: '⟳',
  Discontinue: '🗑',
  Ship: '🚚',
};

/**
 * A generator for one named draw of a page's perturbations: the same (seed, label) always gives the same
 * stream, `createRng(['web-perturbation', seed, label])`'s. Made by core's `fastRng` (the same generator,
 * the canonical bytes written and hashed without building the canonical string: about 0.85 against 1.25
 * µs a draw), since every label and order a fresh world shows is drawn once, a few a first visit.
 */
export function perturbationRng(config: PageConfig, label: string): Rng {
  return fastRng(['web-perturbation', config.seed, label]);
}

/** Whether a perturbation is on. */
export function has(config: PageConfig, p: Perturbation): boolean {
  return config.perturbations.includes(p);
}

/** The label a page shows for `plain` (a seeded synonym under `synonyms`, stable per label). */
export function labelFor(config: PageConfig, plain: string): string {
  if (!has(config, 'synonyms')) return SYNONYMS[plain]?.[0] ?? plain;
  const memo = configMemo(config);
  const labels = (memo.labels ??= new Map());
  const known = labels.get(plain);
  if (known !== undefined) return known;
  const choices = SYNONYMS[plain];
  const out = choices === undefined ? plain : choices[1 + perturbationRng(config, `label:${plain}`).int(0, choices.length - 2)]!;
  labels.set(plain, out);
  return out;
}

/** `items` in the page's order for `label` (a seeded shuffle under `reorder`, stable per label). */
export function arrange<T>(config: PageConfig, label: string, items: readonly T[]): T[] {
  if (!has(config, 'reorder') || items.length < 2) return items.slice();
  // The permutation depends only on (config, label, length): memoised per config.
  const memo = configMemo(config);
  const orders: Map<string, number[]> = (memo.orders ??= new Map());
  const key = `${label}\u0000${items.length}`;
  let order = orders.get(key);
  if (order === undefined) orders.set(key, (order = perturbationRng(config, `order:${label}`).shuffle(items.map((_, i) => i))));
  return order.map((i: number) => items[i]!);
}

/**
 * What is kept per page config (a pure function of the config's content): drawn labels and orders, and
 * the page's and the sites' kept specs (`site.ts`, `page.ts` fill the fields they own). A config lives as
 * long as its world, and so does this.
 */
export interface ConfigMemo {
  labels?: Map<string, string>;
  orders?: Map<string, number[]>;
  /** Site-side kept specs (table rows), by key. */
  rows?: Map<string, unknown>;
  /** Site-side kept table header rows and pagers, by table key. */
  heads?: Map<string, unknown>;
  pagers?: Map<string, unknown>;
  /** Page-side kept specs (banner, dialogs), by key. */
  stable?: Map<string, unknown>;
}

const MEMO = Symbol('config memo');

/** The memo of a config, kept on the config (memo.ts). */
export function configMemo(config: PageConfig): ConfigMemo {
  return memoOn(config, MEMO, newConfigMemo);
}
const newConfigMemo = (): ConfigMemo => ({});

/** A default config (no perturbations) for tests and the browser half. */
export function plainConfig(seed = 1): PageConfig {
  return { seed, perturbations: [], pageSize: 10, lateTicks: 0, newsletterAt: 0, timeoutTicks: 0, credentials: { user: 'admin', password: 'admin' } };
}
