/** replacement (held out): refund + reship + close, a composition no training template produces, in the held-out phrasing. */
import type { JsonObject } from '../../../core/index.js';
import { indexOf } from '../worlds.js';
import { defineApiTemplate } from './common.js';

export const replacementTemplate = defineApiTemplate({
  name: 'replacement',
  taskType: 'replacement',
  heldout: true,
  description: 'A shipment arrived damaged: refund the invoice\'s payment, ship the same product and quantity again, close the ticket (and email the customer at higher levels). Held out: refund_payment and create_shipment appear in no training template.',
  levels: [
    { byNumber: 0, email: 0, distractors: 0, faults: [], faultCount: 0, ambiguity: 0 },
    { byNumber: 1, email: 0, distractors: 3, faults: ['transient'], faultCount: 1, ambiguity: 0 },
    { byNumber: 1, email: 1, distractors: 8, faults: ['transient', 'timeout'], faultCount: 1, ambiguity: 0 },
    { byNumber: 1, email: 1, distractors: 14, faults: ['timeout', 'rate_limit', 'schema_drift'], faultCount: 2, ambiguity: 0 },
    { byNumber: 1, email: 1, distractors: 99, faults: ['timeout', 'rate_limit', 'schema_drift', 'auth_expired', 'tool_down'], faultCount: 3, ambiguity: 1 },
  ],
  sample(rng, _spec, world) {
    const index = indexOf(world);
    const shipment = rng.pick(world.tables.shipments.filter((s) => s.status === 'delivered'));
    const customer = world.byId.customers.get(String(shipment.customer_id))!;
    const product = world.byId.products.get(String(shipment.sku))!;
    if (Number(product.stock) < Number(shipment.quantity)) return undefined;
    const invoice = (index.invoicesOf.get(customer.id) ?? []).find((i) => i.status === 'paid' && (index.paymentsOf.get(i.id) ?? []).length === 1);
    const ticket = (index.ticketsOf.get(customer.id) ?? []).find((t) => t.status !== 'closed');
    if (invoice === undefined || ticket === undefined) return undefined;
    const goal: JsonObject = { shipment_id: shipment.id, invoice_id: invoice.id, number: String(invoice.number), ticket_id: ticket.id, email: String(customer.email), byNumber: Number(_spec.byNumber), notify: Number(_spec.email) };
    return { goal, slots: { ask: `replacement.${Number(_spec.byNumber) === 0 ? 0 : Number(_spec.email) === 1 ? 2 : 1}`, shipment_id: shipment.id, invoice_number: String(invoice.number), invoice_id: invoice.id, ticket_id: ticket.id, email: String(customer.email) }, vague: ['ticket_id'], confirmToken: String(invoice.number) };
  },
  drive(goal, d) {
    const shipment = d.call('get_shipment', { shipment_id: goal.shipment_id as string });
    let invoiceId = goal.invoice_id as string;
    if (Number(goal.byNumber) === 1) {
      const found = d.call('get_invoices', { number: goal.number as string });
      invoiceId = ((found.items as JsonObject[] | undefined)?.[0] ?? found).id as string;
    }
    const payment = d.all('list_payments', { invoice_id: invoiceId }).find((p) => p.status === 'settled')!;
    d.call('refund_payment', { payment_id: payment.id as string, idempotency_key: d.key() });
    const replacement = d.call('create_shipment', { customer_id: shipment.customer_id as string, sku: shipment.sku as string, quantity: Number(shipment.quantity), idempotency_key: d.key() });
    d.call('update_ticket', { ticket_id: goal.ticket_id as string, status: 'closed', idempotency_key: d.key() });
    if (Number(goal.notify) === 1) d.call('send_email', { to: goal.email as string, subject: `Replacement ${String(replacement.id)} on its way`, body: `We refunded invoice ${String(goal.number)} and shipped replacement ${String(replacement.id)}.`, idempotency_key: d.key() });
  },
  mentions: (goal) => [String(goal.number)],
});
