/** The generated company world of the api-workflows domain: customers, staff, billing, inventory, shipping, tickets, calendar, mail. */
import { createRng, digest, type Rng } from '../../core/index.js';

/** Tables of the world; every record has a string `id`. */
export const TABLES = ['customers', 'staff', 'invoices', 'payments', 'products', 'shipments', 'tickets', 'events', 'outbox'] as const;
export type Table = (typeof TABLES)[number];

/** Tables whose new records are side effects a retried call must not duplicate. */
export const SIDE_EFFECT_TABLES: readonly Table[] = ['payments', 'shipments', 'tickets', 'events', 'outbox'];

/** Id prefix of each table (ids of new records are `<prefix>_<sequence>`). */
export const ID_PREFIX: Readonly<Record<Table, string>> = {
  customers: 'cus',
  staff: 'stf',
  invoices: 'inv',
  payments: 'pay',
  products: 'sku',
  shipments: 'shp',
  tickets: 'tkt',
  events: 'evt',
  outbox: 'msg',
};

/** A record: flat JSON with an id. */
export type WorldRecord = { readonly id: string; readonly [field: string]: string | number | boolean | null };

/**
 * Time zones of the simulated week (2026-03-02 .. 2026-03-08) with their fixed UTC offsets in minutes:
 * no daylight-saving change falls in that week, so no tz database (and no locale) is consulted.
 */
export const TIME_ZONES: Readonly<Record<string, number>> = {
  UTC: 0,
  'Europe/London': 0,
  'Europe/Berlin': 60,
  'America/New_York': -300,
  'Asia/Tokyo': 540,
  'Asia/Kolkata': 330,
};
const ZONES = Object.keys(TIME_ZONES);

/** The simulated week's days (Monday..Friday). */
export const WEEK_DAYS = ['2026-03-02', '2026-03-03', '2026-03-04', '2026-03-05', '2026-03-06'];

/** World size knobs (counts per table). */
export interface WorldSize {
  customers: number;
  staff: number;
  invoices: number;
  products: number;
  shipments: number;
  tickets: number;
  events: number;
}

export const DEFAULT_WORLD_SIZE: WorldSize = { customers: 240, staff: 16, invoices: 720, products: 120, shipments: 360, tickets: 360, events: 160 };

/** An immutable generated world with lookups. */
export interface World {
  seed: number;
  /** Records by table, in id order. */
  tables: { readonly [T in Table]: readonly WorldRecord[] };
  byId: { readonly [T in Table]: ReadonlyMap<string, WorldRecord> };
  /** Next free sequence number per table (new records continue from here). */
  nextSeq: Readonly<Record<Table, number>>;
  /** sha256 of the canonical JSON of the tables. */
  digest: string;
  /** sha256 per record (`table/id`), for the incremental state hash. */
  recordDigests: ReadonlyMap<string, string>;
}

const FIRST = ['Ada', 'Ben', 'Chloe', 'Dmitri', 'Elena', 'Farid', 'Grace', 'Hiro', 'Ines', 'Jonas', 'Kira', 'Luca', 'Maya', 'Noah', 'Olga', 'Priya', 'Quinn', 'Rosa', 'Sven', 'Tara', 'Umar', 'Vera', 'Wen', 'Yusuf', 'Zoe'];
const LAST = ['Abbott', 'Berg', 'Costa', 'Dubois', 'Eriksen', 'Fischer', 'Garcia', 'Hughes', 'Ito', 'Jensen', 'Kowalski', 'Lopez', 'Moreau', 'Nakamura', 'Okafor', 'Petrov', 'Quist', 'Rossi', 'Sato', 'Tanaka', 'Ueda', 'Varga', 'Weber', 'Young'];
const COMPANIES = ['Acme', 'Borealis', 'Cobalt', 'Dynamo', 'Evergreen', 'Fjord', 'Granite', 'Helix', 'Indigo', 'Juniper', 'Kestrel', 'Lumen', 'Monarch', 'Nimbus', 'Orbit', 'Pioneer'];
const PRODUCTS = ['sensor', 'cable', 'router', 'adapter', 'battery', 'charger', 'switch', 'camera', 'badge', 'keyboard', 'monitor', 'dock'];
const SUBJECTS = ['login problem', 'late delivery', 'billing question', 'damaged item', 'feature request', 'password reset', 'refund request', 'wrong address'];
const WAREHOUSES = ['north', 'south', 'east'];
const CARRIERS = ['dhl', 'ups', 'fedex'];

const pad = (n: number, width = 4): string => String(n).padStart(width, '0');
/** The id of record `seq` of a table. */
export const idOf = (table: Table, seq: number): string => `${ID_PREFIX[table]}_${pad(seq)}`;

/** ISO date `days` after 2026-03-01 (negative goes back), pure arithmetic on a fixed calendar. */
export function isoDay(days: number): string {
  return new Date(Date.UTC(2026, 2, 1) + days * 86_400_000).toISOString().slice(0, 10);
}

/**
 * Generates the world of `seed`: a pure function of (seed, size).
 * @example
 * const world = generateWorld(11);
 */
export function generateWorld(seed: number, size: WorldSize = DEFAULT_WORLD_SIZE): World {
  const rng = createRng(['api-workflows/world', seed]);
  const t: Record<Table, WorldRecord[]> = { customers: [], staff: [], invoices: [], payments: [], products: [], shipments: [], tickets: [], events: [], outbox: [] };
  const name = (r: Rng): string => `${r.pick(FIRST)} ${r.pick(LAST)}`;
  for (let i = 1; i <= size.staff; i++) {
    const n = name(rng);
    const zone = ZONES[(i - 1) % ZONES.length]!;
    t.staff.push({ id: idOf('staff', i), name: n, email: `${n.toLowerCase().replace(' ', '.')}.${i}@ops.example`, timezone: zone, team: rng.pick(['billing', 'support', 'logistics', 'accounts']), work_start: '09:00', work_end: '17:00' });
  }
  for (let i = 1; i <= size.customers; i++) {
    const n = name(rng);
    const company = rng.pick(COMPANIES);
    t.customers.push({
      id: idOf('customers', i),
      name: n,
      company: `${company} ${rng.pick(['GmbH', 'Ltd', 'Inc', 'KK', 'AB'])}`,
      email: `${n.toLowerCase().replace(' ', '.')}${i}@${company.toLowerCase()}.example`,
      tier: rng.chance(0.2) ? 'gold' : 'standard',
      timezone: rng.pick(ZONES),
      account_manager: idOf('staff', rng.int(1, size.staff)),
      status: rng.chance(0.05) ? 'suspended' : 'active',
    });
  }
  for (let i = 1; i <= size.products; i++) {
    t.products.push({ id: idOf('products', i), name: `${rng.pick(PRODUCTS)} ${rng.pick(['mini', 'pro', 'max', 'lite', 'xl'])} ${i}`, stock: rng.int(0, 80), warehouse: rng.pick(WAREHOUSES), price_cents: rng.int(5, 400) * 100 - rng.pick([0, 1, 5, 50]) });
  }
  let pay = 0;
  for (let i = 1; i <= size.invoices; i++) {
    // Skewed: a few customers have many invoices (several pages), most have a handful.
    const customer = idOf('customers', 1 + Math.floor(size.customers * rng.next() ** 2));
    const amount = rng.int(20, 2_000) * 100 + rng.pick([0, 0, 50, 99, 25]);
    const roll = rng.next();
    const status = roll < 0.45 ? 'open' : roll < 0.9 ? 'paid' : 'void';
    t.invoices.push({ id: idOf('invoices', i), number: `INV-2026-${pad(i)}`, customer_id: customer, amount_cents: amount, currency: rng.pick(['EUR', 'EUR', 'USD', 'GBP']), status, due_date: isoDay(rng.int(-40, 30)) });
    if (status === 'paid' || (status === 'open' && rng.chance(0.15))) {
      pay++;
      t.payments.push({ id: idOf('payments', pay), invoice_id: idOf('invoices', i), amount_cents: status === 'paid' ? amount : Math.floor(amount / 2), status: status === 'paid' ? 'settled' : 'pending', method: rng.pick(['card', 'transfer', 'direct_debit']) });
    }
  }
  for (let i = 1; i <= size.shipments; i++) {
    const roll = rng.next();
    t.shipments.push({
      id: idOf('shipments', i),
      customer_id: idOf('customers', rng.int(1, size.customers)),
      sku: idOf('products', rng.int(1, size.products)),
      quantity: rng.int(1, 5),
      status: roll < 0.3 ? 'label_created' : roll < 0.6 ? 'in_transit' : roll < 0.7 ? 'delayed' : 'delivered',
      carrier: rng.pick(CARRIERS),
      eta: isoDay(rng.int(-10, 12)),
    });
  }
  for (let i = 1; i <= size.tickets; i++) {
    const roll = rng.next();
    t.tickets.push({
      id: idOf('tickets', i),
      customer_id: idOf('customers', rng.int(1, size.customers)),
      subject: rng.pick(SUBJECTS),
      status: roll < 0.5 ? 'open' : roll < 0.7 ? 'pending' : 'closed',
      priority: rng.pick(['low', 'normal', 'normal', 'high']),
      assignee: idOf('staff', rng.int(1, size.staff)),
    });
  }
  for (let i = 1; i <= size.events; i++) {
    const day = rng.pick(WEEK_DAYS);
    const hour = rng.int(0, 22);
    const minutes = rng.pick([0, 30]);
    const start = `${day}T${pad(hour, 2)}:${pad(minutes, 2)}:00Z`;
    t.events.push({ id: idOf('events', i), staff_id: idOf('staff', rng.int(1, size.staff)), title: rng.pick(['standup', 'review', 'customer call', 'planning', '1:1']), start, end: addMinutes(start, rng.pick([30, 60, 90])) });
  }
  const tables = Object.fromEntries(TABLES.map((name) => [name, t[name].map((r) => Object.freeze(r))])) as unknown as World['tables'];
  const byId = Object.fromEntries(TABLES.map((name) => [name, new Map(tables[name].map((r) => [r.id, r]))])) as unknown as World['byId'];
  const nextSeq = Object.fromEntries(TABLES.map((name) => [name, tables[name].length + 1])) as Record<Table, number>;
  const recordDigests = new Map<string, string>();
  for (const name of TABLES) for (const r of tables[name]) recordDigests.set(`${name}/${r.id}`, digest(r));
  return { seed, tables, byId, nextSeq, digest: digest([...recordDigests.entries()]), recordDigests };
}

// `THH:MM:00Z` of every minute of a day, and the `YYYY-MM-DD` of days seen so far (bounded: dates come from agents).
const MINUTE_OF_DAY: readonly string[] = Array.from({ length: 1440 }, (_, m) => `T${pad(Math.floor(m / 60), 2)}:${pad(m % 60, 2)}:00Z`);
const DAY_TEXT_LIMIT = 4096;
/** The largest epoch milliseconds a `Date` holds. */
const MAX_TIME = 8.64e15;
const dayText = new Map<number, string>();

/**
 * Epoch milliseconds as UTC text without milliseconds (`Date#toISOString` minus `.000`). Whole minutes, all a
 * tool serves, are a day-text lookup plus a table read; anything else (seconds, NaN) goes through `Date`.
 */
export function utcText(ms: number): string {
  if (ms % 60_000 !== 0 || ms > MAX_TIME || ms < -MAX_TIME) return new Date(ms).toISOString().replace('.000Z', 'Z');
  const minutes = ms / 60_000;
  const day = Math.floor(minutes / 1440);
  let text = dayText.get(day);
  if (text === undefined) {
    const iso = new Date(day * 86_400_000).toISOString();
    text = iso.slice(0, iso.indexOf('T'));
    if (dayText.size >= DAY_TEXT_LIMIT) dayText.clear();
    dayText.set(day, text);
  }
  return text + MINUTE_OF_DAY[minutes - day * 1440]!;
}

/** `iso` (YYYY-MM-DDTHH:MM:00Z) plus `minutes`. */
export function addMinutes(iso: string, minutes: number): string {
  return utcText(Date.parse(iso) + minutes * 60_000);
}
