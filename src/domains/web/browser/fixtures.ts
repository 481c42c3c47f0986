/** Small worlds for the browser half's tests, docs screenshots and bench fallbacks: both sites, a few records each. */
import { openPage, type PageState } from '../page.js';
import { plainConfig, type PageConfig, type Perturbation } from '../perturbation.js';
import { bookingSite } from '../sites/booking.js';
import { shopSite } from '../sites/shop.js';
import { createStore, type Tables } from '../store.js';

/** The shop back office's records. */
export const SHOP_TABLES: Tables = {
  orders: {
    'O-1001': { customer: 'Ada Byron', total: 1250, status: 'pending', note: '' },
    'O-1002': { customer: 'Alan Turing', total: 990, status: 'shipped', note: '' },
    'O-1003': { customer: 'Grace Hopper', total: 4200, status: 'pending', note: '' },
  },
  products: {
    'P-1001': { name: 'Blue Mug', sku: 'MUG-1', price: 1250, stock: 3, active: true },
    'P-1002': { name: 'Red Kettle', sku: 'KET-2', price: 3900, stock: 0, active: true },
    'P-1003': { name: 'Green Teapot', sku: 'TEA-3', price: 2450, stock: 7, active: true },
  },
  customers: {},
};

/** The booking site's records. */
export const BOOKING_TABLES: Tables = {
  trips: {
    'T-1': { from: 'Berlin', to: 'Paris', date: '2026-03-01', depart: '08:15', price: 5900, seats: 2 },
    'T-2': { from: 'Berlin', to: 'Paris', date: '2026-03-01', depart: '13:40', price: 4900, seats: 0 },
  },
  bookings: { 'B-1': { trip: 'T-1', passenger: 'Ada Byron', seats: 1, status: 'confirmed' } },
};

/** A page config with `perturbations` on and small knobs (late load after 2 ticks, 2 rows a page). */
export function fixtureConfig(seed: number, perturbations: Perturbation[], extra: Partial<PageConfig> = {}): PageConfig {
  return { ...plainConfig(seed), perturbations, lateTicks: 2, newsletterAt: 1, timeoutTicks: 9, pageSize: 2, ...extra };
}

/** The shop at `url` with `config`. */
export const shopPage = (config: PageConfig, url = '/orders'): PageState => openPage(shopSite, config, createStore(SHOP_TABLES), url);

/** The booking site at `url` with `config`. */
export const bookingPage = (config: PageConfig, url = '/search'): PageState => openPage(bookingSite, config, createStore(BOOKING_TABLES), url);
