/** CRM tools: customers and staff. */
import { z } from 'zod';
import { serve } from '../service.js';
import { listRecords, listWhere, putRecord } from '../state.js';
import { TIME_ZONES } from '../world.js';
import { consistentArg, cursorArg, id, invalid, keyArg, notFound, ok, page, pageSizeArg } from './common.js';

export const crmTools = [
  serve({
    name: 'find_customers',
    service: 'crm',
    effect: 'read',
    description: 'Search customers by exact email, or by name/company substring. Paginated.',
    args: z.strictObject({ email: z.string().max(120).optional(), name: z.string().max(80).optional(), company: z.string().max(80).optional(), cursor: cursorArg, page_size: pageSizeArg }),
    run(state, args) {
      if (args.email === undefined && args.name === undefined && args.company === undefined) return invalid('email', 'give at least one of email, name, company');
      const name = args.name?.toLowerCase();
      const company = args.company?.toLowerCase();
      const hits = (args.email !== undefined ? listWhere(state, 'customers', 'email', args.email.toLowerCase()) : listRecords(state, 'customers')).filter(
        (c) => (args.email === undefined || c.email === args.email.toLowerCase()) && (name === undefined || String(c.name).toLowerCase().includes(name)) && (company === undefined || String(c.company).toLowerCase().includes(company)),
      );
      return page(hits, args.cursor, args.page_size);
    },
  }),
  serve({
    name: 'get_customer',
    service: 'crm',
    effect: 'read',
    description: 'One customer by id (cus_XXXX): name, email, tier, timezone, account_manager (a staff id).',
    args: z.strictObject({ customer_id: id('cus'), consistent: consistentArg }),
    run(state, args, call) {
      const c = call.read('customers', args.customer_id, args.consistent);
      return c === undefined ? notFound('customer', args.customer_id) : ok(c);
    },
  }),
  serve({
    name: 'update_customer',
    service: 'crm',
    effect: 'write',
    description: 'Change a customer\'s tier, timezone or email.',
    args: z.strictObject({ customer_id: id('cus'), tier: z.enum(['standard', 'gold']).optional(), timezone: z.string().optional(), email: z.string().email().optional(), idempotency_key: keyArg }),
    targets: (a) => [`customers/${a.customer_id}`],
    run(state, args, call) {
      const c = call.read('customers', args.customer_id, true);
      if (c === undefined) return notFound('customer', args.customer_id);
      if (args.timezone !== undefined && !(args.timezone in TIME_ZONES)) return invalid('timezone', `unknown time zone ${args.timezone}; known: ${Object.keys(TIME_ZONES).join(', ')}`);
      const next = { ...c, ...(args.tier ? { tier: args.tier } : {}), ...(args.timezone ? { timezone: args.timezone } : {}), ...(args.email ? { email: args.email } : {}) };
      putRecord(state, 'customers', next);
      return ok(next);
    },
  }),
  serve({
    name: 'list_staff',
    service: 'crm',
    effect: 'read',
    description: 'Staff members (id, name, email, team, timezone, working hours in local time). Paginated.',
    args: z.strictObject({ team: z.enum(['billing', 'support', 'logistics', 'accounts']).optional(), name: z.string().max(80).optional(), cursor: cursorArg, page_size: pageSizeArg }),
    run(state, args) {
      const name = args.name?.toLowerCase();
      return page(listRecords(state, 'staff').filter((s) => (args.team === undefined || s.team === args.team) && (name === undefined || String(s.name).toLowerCase().includes(name))), args.cursor, args.page_size);
    },
  }),
  serve({
    name: 'get_staff',
    service: 'crm',
    effect: 'read',
    description: 'One staff member by id (stf_XXXX).',
    args: z.strictObject({ staff_id: id('stf') }),
    run(state, args, call) {
      const s = call.read('staff', args.staff_id);
      return s === undefined ? notFound('staff member', args.staff_id) : ok(s);
    },
  }),
];
