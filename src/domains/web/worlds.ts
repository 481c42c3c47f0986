/** Seeded world generation: the shop's and the booking site's tables, from an rng and a size. */
import type { JsonValue, Rng } from '../../core/index.js';
import { CITIES } from './sites/booking.js';
import { ORDER_STATUSES, TIERS } from './sites/shop.js';

type Tables = Record<string, Record<string, Record<string, JsonValue>>>;

const FIRST = ['Ada', 'Alan', 'Grace', 'Kurt', 'Emmy', 'Rosalind', 'Niels', 'Hedy', 'Marie', 'Carl', 'Lise', 'Enrico', 'Barbara', 'John', 'Katherine', 'Edsger'];
const LAST = ['Byron', 'Turing', 'Hopper', 'Goedel', 'Noether', 'Franklin', 'Bohr', 'Lamarr', 'Curie', 'Gauss', 'Meitner', 'Fermi', 'Liskov', 'Backus', 'Johnson', 'Dijkstra'];
const ADJ = ['Blue', 'Red', 'Green', 'Tall', 'Small', 'Round', 'Square', 'Wooden', 'Steel', 'Glass', 'Soft', 'Bright', 'Dark', 'Silver', 'Golden', 'Paper'];
const NOUN = ['Mug', 'Lamp', 'Chair', 'Desk', 'Shelf', 'Clock', 'Vase', 'Bowl', 'Plate', 'Candle', 'Frame', 'Basket', 'Pillow', 'Rug', 'Kettle', 'Teapot'];

/** `n` distinct person names. */
export function people(rng: Rng, n: number): string[] {
  const all = FIRST.flatMap((f) => LAST.map((l) => `${f} ${l}`));
  return rng.sample(all, n);
}

/** `n` distinct product names. */
export function productNames(rng: Rng, n: number): string[] {
  const all = ADJ.flatMap((a) => NOUN.map((b) => `${a} ${b}`));
  return rng.sample(all, n);
}

export const emailOf = (name: string): string => `${name.toLowerCase().replace(/[^a-z]+/g, '.')}@example.com`;

/** The shop's tables: `rows` orders, `rows` products (a few out of stock) and a handful of customers. */
export function shopTables(rng: Rng, rows: number): Tables {
  const names = people(rng, Math.min(40, Math.max(6, Math.ceil(rows / 2))));
  const orders: Tables[string] = {};
  for (let i = 0; i < rows; i++) {
    orders[`O-${1001 + i}`] = { customer: rng.pick(names), total: rng.int(5, 400) * 25, status: rng.pick(ORDER_STATUSES.filter((s) => s !== 'pending')), note: '' };
  }
  const products: Tables[string] = {};
  productNames(rng, rows).forEach((name, i) => {
    products[`P-${1001 + i}`] = { name, sku: `${name.split(' ')[1]!.toUpperCase().slice(0, 3)}-${100 + i}`, price: rng.int(4, 200) * 50, stock: rng.chance(0.15) ? 0 : rng.int(1, 60), active: true };
  });
  const customers: Tables[string] = {};
  names.slice(0, 4).forEach((name, i) => {
    customers[`C-${1001 + i}`] = { name, email: emailOf(name), phone: `555-${rng.int(100, 999)}-${rng.int(1000, 9999)}`, tier: rng.pick(TIERS), newsletter: rng.chance(0.5) };
  });
  return { orders, products, customers };
}

/** Departure times trips leave at. */
const TIMES = ['06:15', '07:40', '09:05', '10:30', '12:00', '13:45', '15:20', '17:10', '18:55', '20:30'];

/** The booking site's tables: trips on a few routes and dates, and `rows` existing bookings. */
export function bookingTables(rng: Rng, rows: number, days: readonly string[]): Tables {
  const trips: Tables[string] = {};
  let n = 1001;
  const routes = Array.from({ length: Math.max(3, Math.ceil(rows / 4)) }, () => rng.sample(CITIES, 2) as [string, string]);
  for (const [from, to] of routes) {
    for (const date of days) {
      for (const depart of rng.sample(TIMES, rng.int(2, 4)).sort()) trips[`T-${n++}`] = { from, to, date, depart, price: rng.int(20, 180) * 100, seats: rng.int(1, 9) };
    }
  }
  const ids = Object.keys(trips).sort();
  const bookings: Tables[string] = {};
  people(rng, rows).forEach((name, i) => {
    bookings[`B-${1001 + i}`] = { trip: rng.pick(ids), passenger: name, email: emailOf(name), seats: rng.int(1, 2), status: rng.chance(0.2) ? 'cancelled' : 'confirmed' };
  });
  return { trips, bookings };
}
