/** Ticketing tools. */
import { z } from 'zod';
import { serve } from '../service.js';
import { getRecord, insertRecord, listRecords, listWhere, putRecord } from '../state.js';
import { consistentArg, cursorArg, id, invalid, keyArg, notFound, ok, page, pageSizeArg } from './common.js';

const status = z.enum(['open', 'pending', 'closed']);
const priority = z.enum(['low', 'normal', 'high']);

export const ticketTools = [
  serve({
    name: 'get_ticket',
    service: 'tickets',
    effect: 'read',
    description: 'One ticket by id (tkt_XXXX): customer_id, subject, status, priority, assignee (a staff id).',
    args: z.strictObject({ ticket_id: id('tkt'), consistent: consistentArg }),
    run(state, args, call) {
      const t = call.read('tickets', args.ticket_id, args.consistent);
      return t === undefined ? notFound('ticket', args.ticket_id) : ok(t);
    },
  }),
  serve({
    name: 'search_tickets',
    service: 'tickets',
    effect: 'read',
    description: 'Tickets filtered by customer_id, assignee, status and priority. Paginated.',
    args: z.strictObject({ customer_id: id('cus').optional(), assignee: id('stf').optional(), status: status.optional(), priority: priority.optional(), cursor: cursorArg, page_size: pageSizeArg }),
    run(state, args) {
      return page(
        (args.assignee !== undefined ? listWhere(state, 'tickets', 'assignee', args.assignee) : args.customer_id !== undefined ? listWhere(state, 'tickets', 'customer_id', args.customer_id) : listRecords(state, 'tickets')).filter((t) => (args.customer_id === undefined || t.customer_id === args.customer_id) && (args.assignee === undefined || t.assignee === args.assignee) && (args.status === undefined || t.status === args.status) && (args.priority === undefined || t.priority === args.priority)),
        args.cursor,
        args.page_size,
      );
    },
  }),
  serve({
    name: 'create_ticket',
    service: 'tickets',
    effect: 'write',
    description: 'Open a ticket for a customer (customer_id; API v2 calls it account_id), optionally assigned to a staff member.',
    args: z.strictObject({ customer_id: id('cus').optional(), account_id: id('cus').optional().describe('API v2 name of customer_id'), subject: z.string().min(1).max(120), priority: priority.optional(), assignee: id('stf').optional(), idempotency_key: keyArg }),
    run(state, args) {
      const customer = args.account_id ?? args.customer_id;
      if (customer === undefined) return invalid('customer_id', 'customer_id (API v2: account_id) is required');
      if (getRecord(state, 'customers', customer) === undefined) return notFound('customer', customer);
      if (args.assignee !== undefined && getRecord(state, 'staff', args.assignee) === undefined) return notFound('staff member', args.assignee);
      return ok(insertRecord(state, 'tickets', { customer_id: customer, subject: args.subject, status: 'open', priority: args.priority ?? 'normal', assignee: args.assignee ?? null }));
    },
  }),
  serve({
    name: 'update_ticket',
    service: 'tickets',
    effect: 'write',
    description: 'Change a ticket\'s status, priority or assignee.',
    args: z.strictObject({ ticket_id: id('tkt'), status: status.optional(), priority: priority.optional(), assignee: id('stf').optional(), idempotency_key: keyArg }),
    targets: (a) => [`tickets/${a.ticket_id}`],
    run(state, args) {
      const t = getRecord(state, 'tickets', args.ticket_id);
      if (t === undefined) return notFound('ticket', args.ticket_id);
      if (args.assignee !== undefined && getRecord(state, 'staff', args.assignee) === undefined) return notFound('staff member', args.assignee);
      const next = { ...t, ...(args.status ? { status: args.status } : {}), ...(args.priority ? { priority: args.priority } : {}), ...(args.assignee ? { assignee: args.assignee } : {}) };
      putRecord(state, 'tickets', next);
      return ok(next);
    },
  }),
];
