/** create-with-deps: open a ticket whose fields come from earlier reads, then tell people its id. */
import type { JsonObject } from '../../../core/index.js';
import { defineApiTemplate } from './common.js';

const SUBJECTS = ['invoice shows the wrong address', 'parcel arrived opened', 'cannot download the invoice', 'duplicate charge on my card', 'need a delivery date change'];

export const createTemplate = defineApiTemplate({
  name: 'create-with-deps',
  taskType: 'create',
  description: 'Open a ticket for a customer found by email, assigned to their account manager, then email the customer (and the manager) the new ticket id.',
  levels: [
    { chain: 1, distractors: 0, faults: [], faultCount: 0, ambiguity: 0 },
    { chain: 2, distractors: 3, faults: ['transient'], faultCount: 1, ambiguity: 0 },
    { chain: 3, distractors: 8, faults: ['transient', 'timeout', 'tool_down'], faultCount: 2, ambiguity: 0 },
    { chain: 4, distractors: 14, faults: ['timeout', 'schema_drift', 'rate_limit'], faultCount: 2, ambiguity: 0 },
    { chain: 5, distractors: 99, faults: ['timeout', 'schema_drift', 'tool_down', 'auth_expired'], faultCount: 3, ambiguity: 1 },
  ],
  sample(rng, spec, world) {
    const customer = rng.pick(world.tables.customers);
    const subject = rng.pick(SUBJECTS);
    const chain = Number(spec.chain);
    return {
      goal: { chain, customer_id: customer.id, email: String(customer.email), subject, priority: chain >= 3 ? 'high' : 'normal' },
      slots: { ask: `create.${chain}`, customer_id: customer.id, email: String(customer.email), subject },
      vague: ['subject'],
      confirmToken: '',
    };
  },
  drive(goal, d) {
    const chain = Number(goal.chain);
    let customer: JsonObject = { id: goal.customer_id as string };
    if (chain >= 2) customer = (d.call('find_customers', { email: goal.email as string }).items as JsonObject[])[0]!;
    const args: JsonObject = { customer_id: customer.id as string, subject: goal.subject as string, idempotency_key: d.key() };
    if (chain >= 3) {
      args.priority = 'high';
      args.assignee = customer.account_manager as string;
    }
    const ticket = d.call('create_ticket', args);
    if (chain >= 4) d.call('send_email', { to: goal.email as string, subject: `Ticket ${String(ticket.id)} opened`, body: `We opened ticket ${String(ticket.id)} about "${String(goal.subject)}".`, idempotency_key: d.key() });
    if (chain >= 5) {
      const manager = d.call('get_staff', { staff_id: customer.account_manager as string });
      d.call('send_email', { to: manager.email as string, subject: `New ticket ${String(ticket.id)} for you`, body: `Ticket ${String(ticket.id)} (${String(goal.subject)}) is assigned to you.`, idempotency_key: d.key() });
    }
  },
  mentions: (_goal, outputs) => {
    const ticket = outputs.find((o) => typeof o.id === 'string' && o.id.startsWith('tkt_'));
    return ticket === undefined ? [] : [String(ticket.id)];
  },
});
