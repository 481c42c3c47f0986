/** The booking site: search trips, book one through a multi-page checkout (passenger, then review), and cancel bookings. */
import { getRow, nextId, putRow, rowsOf, rowsWhere, type Row } from '../store.js';
import { actionButton, actions, button, delayed, form, heading, input, link, section, select, table, text, type Effect, type HandleContext, type RenderContext, type Site, type Spec } from '../site.js';

export const CITIES = ['Amsterdam', 'Berlin', 'Lisbon', 'Madrid', 'Oslo', 'Paris', 'Prague', 'Rome', 'Vienna', 'Zurich'] as const;
export const SEAT_OPTIONS = ['1', '2', '3', '4'] as const;

const money = (cents: number): string => `$${(cents / 100).toFixed(2)}`;
const str = (v: unknown): string => (typeof v === 'string' ? v : String(v ?? ''));
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[a-z]{2,}$/i;
const q = (params: Record<string, string>): string =>
  Object.keys(params)
    .sort()
    .map((k) => `${encodeURIComponent(k)}=${encodeURIComponent(params[k]!)}`)
    .join('&');

/** Table cells by column (module-level: a render hands the same functions, and makes none). */
const CELLS = {
  id: (_r: Row, id: string): string => id,
  depart: (r: Row): string => str(r['depart']),
  priceMoney: (r: Row): string => money(Number(r['price'])),
  seats: (r: Row): string => str(r['seats']),
  trip: (r: Row): string => str(r['trip']),
  passenger: (r: Row): string => str(r['passenger']),
  status: (r: Row): string => str(r['status']),
};

function searchPage(ctx: RenderContext): { title: string; main: Spec[] } {
  const v = ctx.view;
  const fields = ctx.arrange('search.fields', [
    select(v, 'search.from', ctx.label('From'), CITIES),
    select(v, 'search.to', ctx.label('To'), CITIES, { value: CITIES[1] }),
    input(v, 'search.date', ctx.label('Date'), { required: true, placeholder: 'YYYY-MM-DD', inputType: 'date' }),
  ]);
  return {
    title: 'Find a trip',
    main: [heading('search.h', 'Find a trip'), form('search.form', 'Trip search', 'find-trips', [...fields, actionButton(ctx, 'search.go', 'Search', 'find-trips')])],
  };
}

function results(ctx: RenderContext): { title: string; main: Spec[] } {
  const { from = '', to = '', date = '' } = ctx.params;
  const rows = rowsWhere(ctx.store, 'trips', `${from.length}:${from}:${to.length}:${to}:${date}`, (row) => row['from'] === from && row['to'] === to && row['date'] === date);
  const book = ctx.label('Book');
  return {
    title: `${from} to ${to}`,
    main: [
      heading('results.h', `Trips from ${from} to ${to} on ${date}`),
      ...(rows.length === 0 ? [text('results.none', 'No trips found. Try another date.')] : []),
      ...table(
        ctx,
        'results.t',
        'Trips',
        [
          { key: 'id', label: 'Trip', cell: CELLS.id },
          { key: 'depart', label: 'Departs', cell: CELLS.depart, sortable: true },
          { key: 'price', label: 'Price', cell: CELLS.priceMoney, sortable: true },
          { key: 'seats', label: 'Seats left', cell: CELLS.seats, sortable: true },
        ],
        rows,
        (id, r) => [button(`results.book.${id}`, `${book} ${str(r['depart'])}`, `book:${id}`, { disabled: Number(r['seats']) <= 0 })],
      ),
      link('results.back', 'New search', '/search'),
    ],
  };
}

function passenger(ctx: RenderContext, id: string): { title: string; main: Spec[] } {
  const trip = getRow(ctx.store, 'trips', id);
  if (trip === undefined) return { title: 'Not found', main: [heading('nf', `No trip ${id}`)] };
  const v = ctx.view;
  const fields = ctx.arrange('passenger.fields', [
    input(v, 'passenger.name', `${ctx.label('Passenger')} name`, { required: true }),
    input(v, 'passenger.email', 'Email', { required: true, inputType: 'email' }),
    select(v, 'passenger.seats', 'Seats', SEAT_OPTIONS),
  ]);
  return {
    title: 'Passenger details',
    main: [
      heading('passenger.h', 'Passenger details'),
      text('passenger.trip', `${str(trip['from'])} to ${str(trip['to'])}, ${str(trip['date'])} ${str(trip['depart'])}, ${money(Number(trip['price']))} a seat`),
      form('passenger.form', 'Passenger', `passenger:${id}`, [...fields, actionButton(ctx, 'passenger.next', 'Next', `passenger:${id}`, delayed(ctx))]),
    ],
  };
}

function review(ctx: RenderContext, id: string): { title: string; main: Spec[] } {
  const trip = getRow(ctx.store, 'trips', id);
  if (trip === undefined) return { title: 'Not found', main: [heading('nf', `No trip ${id}`)] };
  const { name = '', email = '', seats = '1' } = ctx.params;
  return {
    title: 'Review booking',
    main: [
      heading('review.h', 'Review your booking'),
      section('review.facts', 'Summary', [
        text('review.trip', `${str(trip['from'])} to ${str(trip['to'])} on ${str(trip['date'])} at ${str(trip['depart'])}`),
        text('review.who', `${ctx.label('Passenger')}: ${name} (${email})`),
        text('review.seats', `Seats: ${seats}, total ${money(Number(trip['price']) * Number(seats))}`),
      ]),
      section('review.actions', 'Confirm', [actionButton(ctx, 'review.confirm', 'Book', `confirm-booking:${id}`, delayed(ctx))]),
      link('review.back', 'Change passenger details', `/book/${id}`),
    ],
  };
}

function bookings(ctx: RenderContext): { title: string; main: Spec[] } {
  const rows = rowsOf(ctx.store, 'bookings');
  // The booking whose menu is open (its row's state), without a key built per row.
  const menu = ctx.view.menu;
  const open = menu !== undefined && menu.startsWith('bookings.more.') ? menu.slice('bookings.more.'.length) : undefined;
  return {
    title: 'My bookings',
    main: [
      heading('bookings.h', 'My bookings'),
      ...table(
        ctx,
        'bookings.t',
        'Bookings',
        [
          { key: 'id', label: 'Ref', cell: CELLS.id, sortable: true },
          { key: 'trip', label: 'Trip', cell: CELLS.trip },
          { key: 'passenger', label: ctx.label('Passenger'), cell: CELLS.passenger, sortable: true },
          { key: 'status', label: 'Status', cell: CELLS.status },
        ],
        rows,
        (id, r) => actions(ctx, `bookings.more.${id}`, [actionButton(ctx, `bookings.cancel.${id}`, 'Cancel', `cancel-booking:${id}`, { disabled: r['status'] !== 'confirmed' })]),
        (id) => (id === open ? 'open' : ''),
      ),
    ],
  };
}

function handle(event: string, ctx: HandleContext): Effect {
  const colon = event.indexOf(':');
  const verb = colon < 0 ? event : event.slice(0, colon);
  const id = colon < 0 ? '' : event.slice(colon + 1);
  switch (verb) {
    case 'find-trips': {
      const date = ctx.value('search.date').trim();
      if (!DATE.test(date)) return { view: { errors: { 'search.date': 'Enter the date as YYYY-MM-DD, e.g. 2026-03-05' } }, notes: ['validation-error:search'] };
      const from = ctx.value('search.from') || CITIES[0];
      const to = ctx.value('search.to') || CITIES[1];
      return { go: `/results?${q({ from, to, date })}`, notes: ['submitted:search'] };
    }
    case 'book':
      return getRow(ctx.store, 'trips', id) === undefined ? {} : { go: `/book/${id}` };
    case 'passenger': {
      const name = ctx.value('passenger.name').trim();
      const email = ctx.value('passenger.email').trim();
      const errors: Record<string, string> = {};
      if (name === '') errors['passenger.name'] = 'Name is required';
      if (!EMAIL.test(email)) errors['passenger.email'] = 'Enter a valid email address, like name@example.com';
      if (Object.keys(errors).length > 0) return { view: { errors }, notes: ['validation-error:passenger'] };
      return { go: `/book/${id}/confirm?${q({ name, email, seats: ctx.value('passenger.seats') || '1' })}`, notes: ['submitted:passenger'] };
    }
    case 'confirm-booking': {
      const trip = getRow(ctx.store, 'trips', id);
      const seats = Number(ctx.params['seats'] ?? '1');
      if (trip === undefined || !(seats >= 1) || Number(trip['seats']) < seats) return { toast: 'Not enough seats left' };
      const { id: ref, store } = nextId(ctx.store, 'bookings', 'B-');
      const row: Row = { trip: id, passenger: ctx.params['name'] ?? '', email: (ctx.params['email'] ?? '').toLowerCase(), seats, status: 'confirmed' };
      const next = putRow(putRow(store, 'bookings', ref, row), 'trips', id, { ...trip, seats: Number(trip['seats']) - seats });
      return { store: next, go: '/bookings', toast: `Booking ${ref} confirmed`, notes: ['submitted:booking'] };
    }
    case 'cancel-booking': {
      const row = getRow(ctx.store, 'bookings', id);
      if (row === undefined || row['status'] !== 'confirmed') return {};
      const trip = getRow(ctx.store, 'trips', str(row['trip']));
      let next = putRow(ctx.store, 'bookings', id, { ...row, status: 'cancelled' });
      if (trip !== undefined) next = putRow(next, 'trips', str(row['trip']), { ...trip, seats: Number(trip['seats']) + Number(row['seats']) });
      return { store: next, toast: `Booking ${id} cancelled`, go: '/bookings' };
    }
  }
  return {};
}

/** The booking site. */
export const bookingSite: Site = {
  name: 'booking',
  title: 'TripBook',
  home: '/search',
  nav: [
    { label: 'Search', href: '/search' },
    { label: 'My bookings', href: '/bookings' },
  ],
  confirmEvents: new Set(['cancel-booking', 'confirm-booking']),
  hasRoute(path) {
    return path === '/search' || path === '/results' || path === '/bookings' || /^\/book\/[A-Za-z0-9-]+(\/confirm)?$/.test(path);
  },
  render(ctx) {
    const [section, id, sub] = ctx.parts;
    if (section === 'search') return searchPage(ctx);
    if (section === 'results') return results(ctx);
    if (section === 'bookings') return bookings(ctx);
    if (section === 'book' && id !== undefined) return sub === 'confirm' ? review(ctx, id) : passenger(ctx, id);
    return { title: 'Not found', main: [heading('nf', 'Page not found')] };
  },
  handle,
};
