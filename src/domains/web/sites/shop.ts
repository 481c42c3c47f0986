/** The shop back office: orders (search, ship, cancel), products (table, bulk actions, edit with validation) and customers (a create form). */
import { getRow, nextId, putRow, rowsOf, rowsWhere, type Row } from '../store.js';
import {
  button,
  checkbox,
  checkboxOf,
  form,
  heading,
  input,
  link,
  menu,
  search,
  section,
  select,
  table,
  tabs,
  text,
  actionButton,
  actions,
  delayed,
  type Effect,
  type HandleContext,
  type RenderContext,
  type Site,
  type Spec,
} from '../site.js';

export const ORDER_STATUSES = ['pending', 'shipped', 'delivered', 'cancelled'] as const;
export const TIERS = ['Basic', 'Pro', 'Enterprise'] as const;

const money = (cents: number): string => `$${(cents / 100).toFixed(2)}`;
const str = (v: unknown): string => (typeof v === 'string' ? v : String(v ?? ''));

const EMAIL = /^[^\s@]+@[^\s@]+\.[a-z]{2,}$/i;
const PHONE = /^\d{3}-\d{3}-\d{4}$/;
const PRICE = /^\d+\.\d{2}$/;

/** Table cells by column (module-level: a render hands the same functions, and makes none). */
const CELLS = {
  id: (_r: Row, id: string): string => id,
  customer: (r: Row): string => str(r['customer']),
  totalMoney: (r: Row): string => money(Number(r['total'])),
  status: (r: Row): string => str(r['status']),
  name: (r: Row): string => str(r['name']),
  sku: (r: Row): string => str(r['sku']),
  priceMoney: (r: Row): string => money(Number(r['price'])),
  stock: (r: Row): string => str(r['stock']),
  email: (r: Row): string => str(r['email']),
  tier: (r: Row): string => str(r['tier']),
};

function orders(ctx: RenderContext): { title: string; main: Spec[] } {
  const q = ctx.view.query.toLowerCase();
  const status = ctx.view.values['orders.status'] ?? 'all';
  const rows = rowsWhere(ctx.store, 'orders', `customer:${q.length}:${q}:${status}`, (row) => (q === '' || str(row['customer']).toLowerCase().includes(q)) && (status === 'all' || row['status'] === status));
  const view = ctx.label('View');
  return {
    title: ctx.label('Orders'),
    main: [
      heading('orders.h', ctx.label('Orders')),
      section('orders.filters', 'Filters', [
        ...search(ctx.view, 'orders.q', `${ctx.label('Search')} by customer`, ctx.label('Search')),
      ]),
      ...table(
        ctx,
        'orders.t',
        ctx.label('Orders'),
        [
          { key: 'id', label: 'Order', cell: CELLS.id, sortable: true },
          { key: 'customer', label: 'Customer', cell: CELLS.customer, sortable: true },
          { key: 'total', label: 'Total', cell: CELLS.totalMoney, sortable: true },
          { key: 'status', label: ctx.label('Status'), cell: CELLS.status, sortable: true },
        ],
        rows,
        (id) => [link(`orders.view.${id}`, `${view} ${id}`, `/orders/${id}`)],
      ),
    ],
  };
}

function order(ctx: RenderContext, id: string): { title: string; main: Spec[] } {
  const row = getRow(ctx.store, 'orders', id);
  if (row === undefined) return { title: 'Not found', main: [heading('nf', `No order ${id}`)] };
  const done = row['status'] === 'cancelled' || row['status'] === 'delivered';
  const facts = ctx.arrange('order.facts', [
    text('order.customer', `Customer: ${str(row['customer'])}`),
    text('order.total', `Total: ${money(Number(row['total']))}`),
    text('order.status', `${ctx.label('Status')}: ${str(row['status'])}`),
    text('order.note', `${ctx.label('Note')}: ${str(row['note']) || '(none)'}`),
  ]);
  const buttons = [
    actionButton(ctx, 'order.ship', 'Ship', `ship:${id}`, { disabled: row['status'] !== 'pending' }),
    actionButton(ctx, `order.cancel`, 'Cancel', `cancel-order:${id}`, { disabled: done }),
  ];
  return {
    title: `Order ${id}`,
    main: [
      heading('order.h', `Order ${id}`),
      section('order.facts', 'Details', facts),
      form('order.form', `${ctx.label('Note')}`, `save-order:${id}`, [
        input(ctx.view, 'order.noteInput', ctx.label('Note'), { value: str(row['note']) }),
        actionButton(ctx, 'order.save', 'Save', `save-order:${id}`),
      ]),
      section('order.actions', 'Actions', actions(ctx, 'order.more', buttons), delayed(ctx)),
      link('order.back', `Back to ${ctx.label('Orders').toLowerCase()}`, '/orders'),
    ],
  };
}

function products(ctx: RenderContext): { title: string; main: Spec[] } {
  const q = ctx.view.query.toLowerCase();
  const rows = rowsWhere(ctx.store, 'products', `active:${q}`, (row) => row['active'] !== false && (q === '' || str(row['name']).toLowerCase().includes(q)));
  const edit = ctx.label('Edit');
  const selected = ticked(ctx.view.checks, 'products.sel.');
  const bulk = [
    actionButton(ctx, 'products.restock', 'Restock', 'bulk-restock'),
    actionButton(ctx, 'products.discontinue', 'Discontinue', 'bulk-discontinue'),
  ];
  return {
    title: ctx.label('Products'),
    main: [
      heading('products.h', ctx.label('Products')),
      section('products.filters', 'Filters', search(ctx.view, 'products.q', `${ctx.label('Search')} products`, ctx.label('Search'))),
      ...table(
        ctx,
        'products.t',
        ctx.label('Products'),
        [
          { key: 'name', label: 'Product', cell: CELLS.name, sortable: true },
          { key: 'sku', label: 'SKU', cell: CELLS.sku },
          { key: 'price', label: ctx.label('Price'), cell: CELLS.priceMoney, sortable: true },
          { key: 'stock', label: ctx.label('Stock'), cell: CELLS.stock, sortable: true },
        ],
        rows,
        (id, r) => [checkboxOf(`products.sel.${id}`, `Select ${str(r['name'])}`, selected.has(id)), link(`products.edit.${id}`, `${edit} ${str(r['name'])}`, `/products/${id}`)],
        (id) => (selected.has(id) ? 'selected' : ''),
      ),
      section('products.bulk', 'Bulk actions', actions(ctx, 'products.more', bulk), delayed(ctx)),
    ],
  };
}

/** The ids whose box is ticked, of the checks keyed `prefix` + id (a row's state, without a key built per row). */
function ticked(checks: Readonly<Record<string, boolean>>, prefix: string): Set<string> {
  const out = new Set<string>();
  for (const key in checks) if (checks[key] === true && key.startsWith(prefix)) out.add(key.slice(prefix.length));
  return out;
}

function product(ctx: RenderContext, id: string): { title: string; main: Spec[] } {
  const row = getRow(ctx.store, 'products', id);
  if (row === undefined) return { title: 'Not found', main: [heading('nf', `No product ${id}`)] };
  const fields = ctx.arrange('product.fields', [
    input(ctx.view, 'product.price', `${ctx.label('Price')} (USD)`, { value: (Number(row['price']) / 100).toFixed(2), required: true, inputType: 'text', placeholder: '12.50' }),
    input(ctx.view, 'product.stock', ctx.label('Stock'), { value: str(row['stock']), required: true, inputType: 'number' }),
  ]);
  return {
    title: str(row['name']),
    main: [
      heading('product.h', str(row['name'])),
      text('product.sku', `SKU ${str(row['sku'])}`),
      form('product.form', ctx.label('Edit'), `save-product:${id}`, [...fields, actionButton(ctx, 'product.save', 'Save', `save-product:${id}`, delayed(ctx))]),
      link('product.back', `Back to ${ctx.label('Products').toLowerCase()}`, '/products'),
    ],
  };
}

function customers(ctx: RenderContext): { title: string; main: Spec[] } {
  return {
    title: ctx.label('Customers'),
    main: [
      heading('customers.h', ctx.label('Customers')),
      link('customers.new', `${ctx.label('Create')} customer`, '/customers/new'),
      ...table(
        ctx,
        'customers.t',
        ctx.label('Customers'),
        [
          { key: 'name', label: ctx.label('Name'), cell: CELLS.name, sortable: true },
          { key: 'email', label: ctx.label('Email'), cell: CELLS.email },
          { key: 'tier', label: ctx.label('Tier'), cell: CELLS.tier },
        ],
        rowsOf(ctx.store, 'customers'),
        () => [],
      ),
    ],
  };
}

function newCustomer(ctx: RenderContext): { title: string; main: Spec[] } {
  const v = ctx.view;
  const contact = ctx.arrange('customer.contact', [
    input(v, 'customer.name', ctx.label('Name'), { required: true }),
    input(v, 'customer.email', ctx.label('Email'), { required: true, inputType: 'email' }),
    input(v, 'customer.phone', ctx.label('Phone'), { inputType: 'tel', placeholder: '555-123-4567' }),
  ]);
  const prefs = ctx.arrange('customer.prefs', [select(v, 'customer.tier', ctx.label('Tier'), TIERS), checkbox(v, 'customer.newsletter', ctx.label('Newsletter'))]);
  const create = actionButton(ctx, 'customer.create', 'Create', 'create-customer', delayed(ctx));
  let body: Spec[];
  if (ctx.has('ab-variant')) {
    // Variant B: a two-step wizard (contact, then preferences) instead of one form.
    body = v.stepNo === 1 ? [...contact, actionButton(ctx, 'customer.next', 'Next', 'customer-next')] : [...prefs, create];
  } else if (ctx.has('tabs')) {
    body = [tabs(ctx, 'customer.tabs', [
      { key: 'contact', label: 'Contact', children: contact },
      { key: 'prefs', label: 'Preferences', children: prefs },
    ]), create];
  } else body = [...ctx.arrange('customer.sections', [section('customer.s1', 'Contact', contact), section('customer.s2', 'Preferences', prefs)]), create];
  return { title: `${ctx.label('Create')} customer`, main: [heading('customer.h', `${ctx.label('Create')} customer`), form('customer.form', 'Customer', 'create-customer', body)] };
}

function validateCustomer(ctx: HandleContext, fields: readonly string[]): Record<string, string> {
  const errors: Record<string, string> = {};
  const name = ctx.value('customer.name').trim();
  const email = ctx.value('customer.email').trim();
  const phone = ctx.value('customer.phone').trim();
  if (fields.includes('name') && name === '') errors['customer.name'] = 'Name is required';
  if (fields.includes('email') && !EMAIL.test(email)) errors['customer.email'] = 'Enter a valid email address, like name@example.com';
  if (fields.includes('phone') && phone !== '' && !PHONE.test(phone)) errors['customer.phone'] = 'Use the format 555-123-4567 (digits and dashes only)';
  return errors;
}

function handle(event: string, ctx: HandleContext): Effect {
  const colon = event.indexOf(':');
  const verb = colon < 0 ? event : event.slice(0, colon);
  const id = colon < 0 ? '' : event.slice(colon + 1);
  const store = ctx.store;
  switch (verb) {
    case 'ship':
    case 'cancel-order': {
      const row = getRow(store, 'orders', id);
      if (row === undefined) return {};
      const status = verb === 'ship' ? 'shipped' : 'cancelled';
      if (verb === 'ship' && row['status'] !== 'pending') return { toast: `Order ${id} cannot be shipped` };
      return { store: putRow(store, 'orders', id, { ...row, status }), toast: `Order ${id} ${status}`, go: `/orders/${id}` };
    }
    case 'save-order': {
      const row = getRow(store, 'orders', id);
      if (row === undefined) return {};
      return { store: putRow(store, 'orders', id, { ...row, note: ctx.value('order.noteInput').trim() }), toast: 'Order saved', go: `/orders/${id}` };
    }
    case 'save-product': {
      const row = getRow(store, 'products', id);
      if (row === undefined) return {};
      const price = ctx.value('product.price').trim();
      const stock = ctx.value('product.stock').trim();
      const errors: Record<string, string> = {};
      if (!PRICE.test(price)) errors['product.price'] = 'Enter the price with two decimals, e.g. 12.50';
      if (!/^\d+$/.test(stock)) errors['product.stock'] = 'Stock must be a whole number';
      if (Object.keys(errors).length > 0) return { view: { errors }, notes: ['validation-error:product'] };
      const next: Row = { ...row, price: Math.round(Number(price) * 100), stock: Number(stock) };
      return { store: putRow(store, 'products', id, next), toast: `${str(row['name'])} saved`, go: '/products', notes: ['submitted:product'] };
    }
    case 'bulk-restock':
    case 'bulk-discontinue': {
      let next = store;
      let n = 0;
      for (const [key, on] of Object.entries(ctx.view.checks)) {
        if (!on || !key.startsWith('products.sel.')) continue;
        const pid = key.slice('products.sel.'.length);
        const row = getRow(next, 'products', pid);
        if (row === undefined) continue;
        next = putRow(next, 'products', pid, verb === 'bulk-restock' ? { ...row, stock: Number(row['stock']) + 50 } : { ...row, active: false });
        n++;
      }
      if (n === 0) return { toast: 'Select at least one product first' };
      return { store: next, toast: `${n} product(s) updated`, view: { checks: {} } };
    }
    case 'customer-next': {
      const errors = validateCustomer(ctx, ['name', 'email', 'phone']);
      if (Object.keys(errors).length > 0) return { view: { errors }, notes: ['validation-error:customer'] };
      return { view: { stepNo: 2, errors: {} } };
    }
    case 'create-customer': {
      const errors = validateCustomer(ctx, ['name', 'email', 'phone']);
      if (Object.keys(errors).length > 0) return { view: { errors, stepNo: 1 }, notes: ['validation-error:customer'] };
      const { id: cid, store: s } = nextId(store, 'customers', 'C-');
      const row: Row = {
        name: ctx.value('customer.name').trim(),
        email: ctx.value('customer.email').trim().toLowerCase(),
        phone: ctx.value('customer.phone').trim(),
        tier: ctx.value('customer.tier') || TIERS[0],
        newsletter: ctx.checked('customer.newsletter'),
      };
      return { store: putRow(s, 'customers', cid, row), toast: `Customer ${row['name']} created`, go: '/customers', notes: ['submitted:customer'] };
    }
  }
  return {};
}

/** The shop back office site. */
export const shopSite: Site = {
  name: 'shop',
  title: 'Shop admin',
  home: '/orders',
  nav: [
    { label: 'Orders', href: '/orders' },
    { label: 'Products', href: '/products' },
    { label: 'Customers', href: '/customers' },
  ],
  confirmEvents: new Set(['ship', 'cancel-order', 'bulk-discontinue', 'bulk-restock']),
  hasRoute(path) {
    return /^\/(orders|products|customers)(\/[A-Za-z0-9-]+)?$/.test(path) && path !== '/customers/edit';
  },
  render(ctx) {
    const [section, id] = ctx.parts;
    if (section === 'orders') return id === undefined ? orders(ctx) : order(ctx, id);
    if (section === 'products') return id === undefined ? products(ctx) : product(ctx, id);
    if (section === 'customers') return id === 'new' ? newCustomer(ctx) : customers(ctx);
    return { title: 'Not found', main: [heading('nf', 'Page not found')] };
  },
  handle,
};
