/** Mail outbox and platform tools (token refresh, waiting). */
import { z } from 'zod';
import { serve } from '../service.js';
import { insertRecord, listRecords } from '../state.js';
import { cursorArg, invalid, keyArg, ok, page, pageSizeArg } from './common.js';

const email = z.string().email().max(120);

export const mailTools = [
  serve({
    name: 'send_email',
    service: 'mail',
    effect: 'write',
    description: 'Send an email (to; API v2 calls it recipient). It lands in the outbox.',
    args: z.strictObject({ to: email.optional(), recipient: email.optional().describe('API v2 name of to'), subject: z.string().min(1).max(160), body: z.string().min(1).max(2000), idempotency_key: keyArg }),
    run(state, args) {
      const to = args.recipient ?? args.to;
      if (to === undefined) return invalid('to', 'to (API v2: recipient) is required');
      return ok(insertRecord(state, 'outbox', { to, subject: args.subject, body: args.body }));
    },
  }),
  serve({
    name: 'send_mail',
    service: 'mail',
    effect: 'write',
    deprecatedBy: 'send_email',
    description: 'Send an email (old endpoint).',
    args: z.strictObject({ to: email, subject: z.string().min(1).max(160), body: z.string().min(1).max(2000) }),
    run(state, args) {
      return ok(insertRecord(state, 'outbox', { to: args.to, subject: args.subject, body: args.body }));
    },
  }),
  serve({
    name: 'list_outbox',
    service: 'mail',
    effect: 'read',
    description: 'Sent emails, optionally only those to one address. Paginated.',
    args: z.strictObject({ to: email.optional(), cursor: cursorArg, page_size: pageSizeArg }),
    run(state, args) {
      return page(listRecords(state, 'outbox').filter((m) => args.to === undefined || m.to === args.to), args.cursor, args.page_size);
    },
  }),
  serve({
    name: 'refresh_token',
    service: 'platform',
    effect: 'read',
    description: 'Renew the API access token (after a 401 token_expired).',
    args: z.strictObject({}),
    run(state) {
      state.session.refreshed = true;
      return ok({ token: 'renewed', expires_in_s: 3600 });
    },
  }),
  serve({
    name: 'wait',
    service: 'platform',
    effect: 'read',
    description: 'Wait a number of seconds (every call takes one second of the services\' clock), e.g. for a retry_after.',
    args: z.strictObject({ seconds: z.number().int().min(1).max(30) }),
    run(state, args) {
      state.session.clock += args.seconds - 1;
      return ok({ waited_s: args.seconds });
    },
  }),
];
