/** conditional: charge an invoice only if it is still open, then email the right message (a payment may settle mid-way). */
import type { JsonObject } from '../../../core/index.js';
import type { EventSpec, FaultSpec } from '../scenario.js';
import type { Patch } from '../worlds.js';
import { indexOf } from '../worlds.js';
import { defineApiTemplate, money } from './common.js';

export const conditionalTemplate = defineApiTemplate({
  name: 'conditional',
  taskType: 'conditional',
  description: 'If an invoice is still open, charge its remaining balance and email a receipt; otherwise email that nothing is due. At higher levels a pending payment settles mid-way (the right branch is the one after the event) behind a lagging replica.',
  levels: [
    { charge: 0, partial: 0, event: 0, confirm: [], distractors: 0, faults: [], faultCount: 0, ambiguity: 0 },
    { charge: 1, partial: 0, event: 0, confirm: [], distractors: 3, faults: ['transient'], faultCount: 1, ambiguity: 0 },
    { charge: 1, partial: 1, event: 0, confirm: ['create_payment'], distractors: 8, faults: ['transient', 'timeout', 'tool_down'], faultCount: 2, ambiguity: 0 },
    { charge: 1, partial: 1, event: 1, confirm: ['create_payment'], distractors: 14, faults: ['timeout', 'rate_limit', 'schema_drift'], faultCount: 2, ambiguity: 0 },
    { charge: 1, partial: 1, event: 1, stale: 1, confirm: ['create_payment'], distractors: 99, faults: ['timeout', 'schema_drift', 'auth_expired', 'tool_down'], faultCount: 2, ambiguity: 1 },
  ],
  sample(rng, spec, world) {
    const index = indexOf(world);
    const event = Number(spec.event) === 1;
    const wantPartial = Number(spec.partial) === 1;
    const open = world.tables.invoices.filter((i) => i.status === 'open');
    const invoice = rng.pick(event || wantPartial ? open.filter((i) => (index.paymentsOf.get(i.id) ?? []).some((p) => p.status === 'pending')) : Number(spec.charge) === 0 ? world.tables.invoices.filter((i) => i.status !== 'void') : open.filter((i) => (index.paymentsOf.get(i.id) ?? []).length === 0));
    const customer = world.byId.customers.get(String(invoice.customer_id))!;
    const patches: Patch[] = [];
    const events: EventSpec[] = [];
    const faults: FaultSpec[] = [];
    const pending = (index.paymentsOf.get(invoice.id) ?? []).find((p) => p.status === 'pending');
    if (wantPartial && pending !== undefined) {
      // Half the invoice is already settled; event levels plant a pending payment of the rest that settles on its own.
      patches.push({ table: 'payments', id: pending.id, set: { status: 'settled' } });
      if (event) {
        const other = world.tables.payments.find((p) => p.status === 'pending' && p.id !== pending.id && String(p.invoice_id) !== invoice.id)!;
        const rest = Number(invoice.amount_cents) - Number(pending.amount_cents);
        patches.push({ table: 'payments', id: other.id, set: { invoice_id: invoice.id, amount_cents: rest, status: 'pending' } });
        events.push({ at: 2, kind: 'payment_settles', table: 'payments', id: other.id, set: { status: 'settled' } });
        events.push({ at: 2, kind: 'invoice_paid', table: 'invoices', id: invoice.id, set: { status: 'paid' } });
        if (Number(spec.stale ?? 0) === 1) faults.push({ kind: 'stale', tool: 'get_invoice', lag: 30 });
      }
    }
    const goal: JsonObject = { number: String(invoice.number), email: String(customer.email), recheck: event ? 1 : 0, charge: Number(spec.charge) };
    return { goal, patches, events, faults, slots: { ask: Number(spec.charge) === 0 ? 'conditional.0' : event ? 'conditional.recheck' : 'conditional.1', invoice_number: String(invoice.number), email: String(customer.email) }, vague: ['invoice_number'], confirmToken: String(invoice.number) };
  },
  drive(goal, d) {
    let invoice = (d.call('get_invoices', { number: goal.number as string }).items as JsonObject[] | undefined)?.[0] ?? d.call('get_invoices', { number: goal.number as string });
    const number = goal.number as string;
    if (Number(goal.charge) === 0) {
      const text = invoice.status === 'open' ? `Invoice ${number} is still open.` : `Invoice ${number} is ${String(invoice.status)}: nothing is due.`;
      d.call('send_email', { to: goal.email as string, subject: `Invoice ${number}`, body: text, idempotency_key: d.key() });
      return;
    }
    let due = 0;
    if (invoice.status === 'open') {
      due = Number(invoice.amount_cents);
      const payments = d.all('list_payments', { invoice_id: invoice.id as string });
      for (const p of payments) if (p.status === 'settled') due -= Number(p.amount_cents);
      // A payment in flight may settle at any moment: re-read the invoice right before charging.
      if (Number(goal.recheck) === 1) invoice = d.call('get_invoice', { invoice_id: invoice.id as string });
    }
    if (invoice.status === 'open' && due > 0) {
      const payment = d.call('create_payment', { invoice_id: invoice.id as string, amount_cents: due, method: 'card', idempotency_key: d.key() });
      d.call('send_email', { to: goal.email as string, subject: `Receipt for invoice ${number}`, body: `We charged ${money(due, String(invoice.currency))} to your card for invoice ${number} (payment ${String(payment.id)}).`, idempotency_key: d.key() });
    } else {
      d.call('send_email', { to: goal.email as string, subject: `Invoice ${number}`, body: `Invoice ${number} is paid: nothing is due.`, idempotency_key: d.key() });
    }
  },
  mentions: (goal) => [String(goal.number)],
});
