/** lookup: a question answered by chaining reads across CRM and billing (chain length 1 → 6). */
import type { JsonObject } from '../../../core/index.js';
import { indexOf } from '../worlds.js';
import { defineApiTemplate, money, type Sampled } from './common.js';

export const lookupTemplate = defineApiTemplate({
  name: 'lookup',
  taskType: 'lookup',
  description: 'Answer a question about invoices by chaining reads: invoice status, amount, open total, outstanding after payments, plus the account manager.',
  levels: [
    { chain: 1, distractors: 0, faults: [], faultCount: 0, ambiguity: 0 },
    { chain: 2, distractors: 3, faults: ['transient'], faultCount: 1, ambiguity: 0 },
    { chain: 3, distractors: 8, faults: ['transient', 'rate_limit', 'partial'], faultCount: 2, ambiguity: 0 },
    { chain: 4, distractors: 14, faults: ['rate_limit', 'partial', 'auth_expired'], faultCount: 2, ambiguity: 1 },
    { chain: 6, distractors: 99, faults: ['transient', 'rate_limit', 'partial', 'auth_expired', 'tool_down'], faultCount: 3, ambiguity: 1 },
  ],
  sample(rng, spec, world): Sampled | undefined {
    const chain = Number(spec.chain);
    const index = indexOf(world);
    if (chain <= 2) {
      const invoice = rng.pick(world.tables.invoices);
      const goal: JsonObject = { chain, invoice_id: invoice.id, number: String(invoice.number) };
      return { goal, slots: { ask: `lookup.${chain}`, invoice_id: invoice.id, invoice_number: String(invoice.number) }, vague: [chain === 1 ? 'invoice_id' : 'invoice_number'], confirmToken: '' };
    }
    const customer = rng.pick(world.tables.customers);
    const open = (index.invoicesOf.get(customer.id) ?? []).filter((i) => i.status === 'open');
    if (open.length === 0 || new Set(open.map((i) => i.currency)).size > 1) return undefined;
    if (chain >= 4 && !open.some((i) => (index.paymentsOf.get(i.id) ?? []).length > 0) && rng.chance(0.7)) return undefined;
    return { goal: { chain, email: String(customer.email) }, slots: { ask: `lookup.${chain}`, email: String(customer.email) }, vague: ['email'], confirmToken: '' };
  },
  drive(goal, d) {
    const chain = Number(goal.chain);
    if (chain === 1) return String(d.call('get_invoice', { invoice_id: goal.invoice_id as string }).status);
    if (chain === 2) {
      const invoice = (d.call('get_invoices', { number: goal.number as string }).items as JsonObject[] | undefined)?.[0] ?? d.call('get_invoices', { number: goal.number as string });
      return money(Number(invoice.amount_cents), String(invoice.currency));
    }
    const customer = (d.call('find_customers', { email: goal.email as string }).items as JsonObject[])[0]!;
    const open = d.all('get_invoices', { customer_id: customer.id as string, status: 'open' });
    let total = 0;
    for (const invoice of open) {
      total += Number(invoice.amount_cents);
      if (chain >= 4) {
        for (const p of d.all('list_payments', { invoice_id: invoice.id as string })) if (p.status === 'settled') total -= Number(p.amount_cents);
      }
    }
    const amount = money(total, String(open[0]!.currency));
    if (chain < 6) return amount;
    const manager = d.call('get_staff', { staff_id: customer.account_manager as string });
    return `${amount}; ${String(manager.email)}`;
  },
});
