/** reconcile: billing's invoice statuses disagree with the payments service; make billing match, over pages. */
import type { JsonObject } from '../../../core/index.js';
import type { Patch } from '../worlds.js';
import { indexOf } from '../worlds.js';
import { PAGE_SIZE } from '../tools/index.js';
import { defineApiTemplate } from './common.js';

export const reconcileTemplate = defineApiTemplate({
  name: 'reconcile',
  taskType: 'reconcile',
  description: 'Set every invoice of a customer to paid when settled payments cover it and to open otherwise (void ones untouched); planted mismatches, more pages and faults by level.',
  levels: [
    { byEmail: 0, pages: [1, 1], mismatches: 1, distractors: 0, faults: [], faultCount: 0 },
    { byEmail: 1, pages: [1, 1], mismatches: 1, distractors: 3, faults: ['transient', 'partial'], faultCount: 1 },
    { byEmail: 1, pages: [2, 2], mismatches: 2, distractors: 8, faults: ['transient', 'rate_limit', 'partial'], faultCount: 2 },
    { byEmail: 1, pages: [2, 3], mismatches: 3, distractors: 14, faults: ['partial', 'rate_limit', 'timeout'], faultCount: 2 },
    { byEmail: 1, pages: [3, 6], mismatches: 4, distractors: 99, faults: ['partial', 'rate_limit', 'timeout', 'auth_expired', 'transient'], faultCount: 3 },
  ],
  sample(rng, spec, world) {
    const [lo, hi] = spec.pages as [number, number];
    const index = indexOf(world);
    const candidates = world.tables.customers.filter((c) => {
      const pages = Math.ceil((index.invoicesOf.get(c.id)?.length ?? 0) / PAGE_SIZE);
      return pages >= lo && pages <= hi;
    });
    if (candidates.length === 0) return undefined;
    const customer = rng.pick(candidates);
    const invoices = (index.invoicesOf.get(customer.id) ?? []).filter((i) => i.status !== 'void');
    const count = Number(spec.mismatches);
    if (invoices.length < count) return undefined;
    const patches: Patch[] = rng.sample(invoices, count).map((i) => ({ table: 'invoices', id: i.id, set: { status: i.status === 'paid' ? 'open' : 'paid' } }));
    return { goal: { customer_id: customer.id, email: String(customer.email), byEmail: Number(spec.byEmail) }, patches, slots: { ask: Number(spec.byEmail) === 1 ? 'reconcile.email' : 'reconcile.id', email: String(customer.email), customer_id: customer.id }, vague: [], confirmToken: '' };
  },
  drive(goal, d) {
    const customerId = Number(goal.byEmail) === 1 ? ((d.call('find_customers', { email: goal.email as string }).items as JsonObject[])[0]!.id as string) : (goal.customer_id as string);
    for (const invoice of d.all('get_invoices', { customer_id: customerId })) {
      if (invoice.status === 'void') continue;
      let settled = 0;
      for (const p of d.all('list_payments', { invoice_id: invoice.id as string })) if (p.status === 'settled') settled += Number(p.amount_cents);
      const want = settled >= Number(invoice.amount_cents) ? 'paid' : 'open';
      if (invoice.status !== want) d.call('update_invoice_status', { invoice_id: invoice.id as string, status: want, idempotency_key: d.key() });
    }
  },
});
