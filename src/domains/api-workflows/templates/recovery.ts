/** recovery: a short charge-and-notify workflow whose every level is built around injected faults. */
import type { JsonObject } from '../../../core/index.js';
import { indexOf } from '../worlds.js';
import { defineApiTemplate, money } from './common.js';

export const recoveryTemplate = defineApiTemplate({
  name: 'recovery',
  taskType: 'recovery',
  description: 'Charge an open invoice in full and email the receipt, through transient errors, rate limits, timeouts, expired auth, schema drift, a partial page and a tool that is down.',
  levels: [
    { viaCustomer: 0, distractors: 0, faults: ['transient'], faultCount: 1 },
    { viaCustomer: 0, distractors: 3, faults: ['rate_limit', 'transient'], faultCount: 2 },
    { viaCustomer: 1, distractors: 8, faults: ['timeout', 'auth_expired', 'rate_limit'], faultCount: 2 },
    { viaCustomer: 1, distractors: 14, faults: ['timeout', 'schema_drift', 'tool_down', 'partial'], faultCount: 3 },
    { viaCustomer: 1, distractors: 99, faults: ['timeout', 'schema_drift', 'tool_down', 'auth_expired', 'rate_limit', 'transient'], faultCount: 5 },
  ],
  sample(rng, _spec, world) {
    const index = indexOf(world);
    const invoice = rng.pick(world.tables.invoices.filter((i) => i.status === 'open' && (index.paymentsOf.get(i.id) ?? []).length === 0));
    const customer = world.byId.customers.get(String(invoice.customer_id))!;
    return { goal: { number: String(invoice.number), email: String(customer.email), viaCustomer: Number(_spec.viaCustomer) }, slots: { ask: `recovery.${Number(_spec.viaCustomer)}`, invoice_number: String(invoice.number), email: String(customer.email) }, vague: [], confirmToken: String(invoice.number) };
  },
  drive(goal, d) {
    const found = d.call('get_invoices', { number: goal.number as string });
    const invoice = (found.items as JsonObject[] | undefined)?.[0] ?? found;
    const payment = d.call('create_payment', { invoice_id: invoice.id as string, amount_cents: Number(invoice.amount_cents), method: 'card', idempotency_key: d.key() });
    const to = Number(goal.viaCustomer) === 1 ? (d.call('get_customer', { customer_id: invoice.customer_id as string }).email as string) : (goal.email as string);
    d.call('send_email', { to, subject: `Receipt for invoice ${String(goal.number)}`, body: `We charged ${money(Number(invoice.amount_cents), String(invoice.currency))} for invoice ${String(goal.number)} (payment ${String(payment.id)}).`, idempotency_key: d.key() });
  },
  mentions: (goal) => [String(goal.number)],
});
