/** Billing tools: invoices (amounts in integer cents) and payments. */
import { z } from 'zod';
import { serve } from '../service.js';
import { getRecord, insertRecord, listRecords, listWhere, putRecord } from '../state.js';
import { consistentArg, cursorArg, id, invalid, isoDate, keyArg, notFound, ok, page, pageSizeArg, refused } from './common.js';
import type { ApiState } from '../state.js';
import type { WorldRecord } from '../world.js';

const cents = z.number().int().min(1).max(100_000_000);

/** Settled payments of an invoice, in cents. */
export function settledCents(state: ApiState, invoiceId: string): number {
  return listWhere(state, 'payments', 'invoice_id', invoiceId)
    .filter((p) => p.status === 'settled')
    .reduce((sum, p) => sum + Number(p.amount_cents), 0);
}

function invoiceFilter(args: { customer_id?: string; status?: string; due_before?: string; number?: string }) {
  return (i: WorldRecord): boolean =>
    (args.customer_id === undefined || i.customer_id === args.customer_id) &&
    (args.status === undefined || i.status === args.status) &&
    (args.due_before === undefined || String(i.due_date) < args.due_before) &&
    (args.number === undefined || i.number === args.number);
}

export const billingTools = [
  serve({
    name: 'get_invoice',
    service: 'billing',
    effect: 'read',
    description: 'One invoice by id (inv_XXXX): number, customer_id, amount_cents, currency, status (open|paid|void), due_date.',
    args: z.strictObject({ invoice_id: id('inv'), consistent: consistentArg }),
    run(state, args, call) {
      const i = call.read('invoices', args.invoice_id, args.consistent);
      return i === undefined ? notFound('invoice', args.invoice_id) : ok(i);
    },
  }),
  serve({
    name: 'get_invoices',
    service: 'billing',
    effect: 'read',
    description: 'List invoices filtered by customer_id, status, due_before (ISO date, exclusive) or number (INV-2026-XXXX). Paginated.',
    args: z.strictObject({ customer_id: id('cus').optional(), status: z.enum(['open', 'paid', 'void']).optional(), due_before: isoDate.optional(), number: z.string().max(20).optional(), cursor: cursorArg, page_size: pageSizeArg }),
    run(state, args) {
      const pool = args.number !== undefined ? listWhere(state, 'invoices', 'number', args.number) : args.customer_id !== undefined ? listWhere(state, 'invoices', 'customer_id', args.customer_id) : listRecords(state, 'invoices');
      return page(pool.filter(invoiceFilter(args)), args.cursor, args.page_size);
    },
  }),
  serve({
    name: 'get_invoice_pdf',
    service: 'billing',
    effect: 'read',
    description: 'A download link for the PDF rendering of an invoice (no invoice data).',
    args: z.strictObject({ invoice_id: id('inv') }),
    run(state, args) {
      const i = getRecord(state, 'invoices', args.invoice_id);
      return i === undefined ? notFound('invoice', args.invoice_id) : ok({ invoice_id: i.id, url: `https://billing.example/pdf/${i.id}.pdf`, expires_in_s: 600 });
    },
  }),
  serve({
    name: 'lookup_invoice',
    service: 'billing',
    effect: 'read',
    deprecatedBy: 'get_invoices',
    description: 'One invoice by its number (INV-2026-XXXX).',
    args: z.strictObject({ number: z.string().max(20) }),
    run(state, args) {
      const i = listWhere(state, 'invoices', 'number', args.number)[0];
      return i === undefined ? notFound('invoice number', args.number) : ok(i);
    },
  }),
  serve({
    name: 'create_invoice',
    service: 'billing',
    effect: 'write',
    description: 'Create an open invoice for a customer.',
    args: z.strictObject({ customer_id: id('cus'), amount_cents: cents, currency: z.enum(['EUR', 'USD', 'GBP']), due_date: isoDate, idempotency_key: keyArg }),
    run(state, args) {
      if (getRecord(state, 'customers', args.customer_id) === undefined) return notFound('customer', args.customer_id);
      const number = `INV-2026-${String(state.seq.invoices).padStart(4, '0')}`;
      return ok(insertRecord(state, 'invoices', { number, customer_id: args.customer_id, amount_cents: args.amount_cents, currency: args.currency, status: 'open', due_date: args.due_date }));
    },
  }),
  serve({
    name: 'update_invoice_status',
    service: 'billing',
    effect: 'write',
    description: 'Set an invoice\'s status (open, paid or void). Voiding a paid invoice is refused.',
    args: z.strictObject({ invoice_id: id('inv'), status: z.enum(['open', 'paid', 'void']), idempotency_key: keyArg }),
    targets: (a) => [`invoices/${a.invoice_id}`],
    run(state, args) {
      const i = getRecord(state, 'invoices', args.invoice_id);
      if (i === undefined) return notFound('invoice', args.invoice_id);
      if (i.status === 'paid' && args.status === 'void') return refused(`invoice ${i.id} is paid; refund its payment before voiding`);
      const next = { ...i, status: args.status };
      putRecord(state, 'invoices', next);
      return ok(next);
    },
  }),
  serve({
    name: 'list_payments',
    service: 'billing',
    effect: 'read',
    description: 'Payments (id, invoice_id, amount_cents, status pending|settled|refunded, method) filtered by invoice_id or status. Paginated.',
    args: z.strictObject({ invoice_id: id('inv').optional(), status: z.enum(['pending', 'settled', 'refunded']).optional(), cursor: cursorArg, page_size: pageSizeArg }),
    run(state, args) {
      if (args.invoice_id === undefined && args.status === undefined) return invalid('invoice_id', 'filter by invoice_id or status');
      return page((args.invoice_id !== undefined ? listWhere(state, 'payments', 'invoice_id', args.invoice_id) : listRecords(state, 'payments')).filter((p) => (args.invoice_id === undefined || p.invoice_id === args.invoice_id) && (args.status === undefined || p.status === args.status)), args.cursor, args.page_size);
    },
  }),
  serve({
    name: 'create_payment',
    service: 'billing',
    effect: 'write',
    description: 'Charge an open invoice. amount_cents is an integer number of cents (12.50 EUR = 1250); API v2 calls it amount_minor. A full charge marks the invoice paid.',
    args: z.strictObject({ invoice_id: id('inv'), amount_cents: cents.optional(), amount_minor: cents.optional().describe('API v2 name of amount_cents'), method: z.enum(['card', 'transfer', 'direct_debit']).optional(), idempotency_key: keyArg }),
    targets: (a) => [`invoices/${a.invoice_id}`],
    run(state, args) {
      const amount = args.amount_minor ?? args.amount_cents;
      if (amount === undefined) return invalid('amount_cents', 'amount_cents (API v2: amount_minor) is required');
      const i = getRecord(state, 'invoices', args.invoice_id);
      if (i === undefined) return notFound('invoice', args.invoice_id);
      if (i.status !== 'open') return refused(`invoice ${i.id} is ${i.status}; only open invoices can be charged`);
      const payment = insertRecord(state, 'payments', { invoice_id: i.id, amount_cents: amount, status: 'settled', method: args.method ?? 'card' });
      if (settledCents(state, i.id) >= Number(i.amount_cents)) putRecord(state, 'invoices', { ...i, status: 'paid' });
      return ok(payment);
    },
  }),
  serve({
    name: 'refund_payment',
    service: 'billing',
    effect: 'write',
    description: 'Refund a settled payment in full; the invoice goes back to open.',
    args: z.strictObject({ payment_id: id('pay'), idempotency_key: keyArg }),
    targets: (a) => [`payments/${a.payment_id}`],
    run(state, args) {
      const p = getRecord(state, 'payments', args.payment_id);
      if (p === undefined) return notFound('payment', args.payment_id);
      if (p.status !== 'settled') return refused(`payment ${p.id} is ${p.status}; only settled payments can be refunded`);
      const next = { ...p, status: 'refunded' };
      putRecord(state, 'payments', next);
      const i = getRecord(state, 'invoices', String(p.invoice_id));
      if (i !== undefined && i.status === 'paid') putRecord(state, 'invoices', { ...i, status: 'open' });
      return ok(next);
    },
  }),
];
