/**
 * The api-workflows scripted baseline: a rule-based bot built only on the observation contract (the user's
 * text, tool outputs and errors). It parses the request, follows a fixed plan per request kind and handles
 * the common faults (401, 429, 503, 504 with its idempotency key, renamed fields, confirmations). It does
 * not ask clarifying questions, re-request partial pages, distrust replicas or look for another endpoint.
 */
import type { Action, Agent, AgentEpisode, JsonObject, Observation } from '../../core/index.js';

type Plan = Generator<Action, void, Observation>;
type Call = Generator<Action, JsonObject | undefined, Observation>;

const money = (cents: number, currency: string): string => `${(cents / 100).toFixed(2)} ${currency}`;

/** What the bot reads from a request. */
interface Parsed {
  text: string;
  emails: string[];
  numbers: string[];
  ids: (prefix: string) => string[];
  quoted?: string;
  date?: string;
  duration?: number;
  names: string[];
}

function parse(text: string): Parsed {
  const ids = (prefix: string) => [...text.matchAll(new RegExp(`\\b${prefix}_\\d{4}\\b`, 'g'))].map((m) => m[0]);
  const names = [...text.matchAll(/\b([A-Z][a-z]+ [A-Z][a-z]+)\b/g)].map((m) => m[1]!).filter((n) => !/^(Good|Hello|Book|Put|Set|Please|Could|Create|Charge|Invoice|Billing|My|Staff|Shipment|Right|Hey)\b/.test(n));
  return {
    text,
    emails: [...text.matchAll(/[a-z0-9.]+@[a-z0-9.-]+\.[a-z]+/gi)].map((m) => m[0].replace(/\.$/, '')),
    numbers: [...text.matchAll(/INV-\d{4}-\d{4}/g)].map((m) => m[0]),
    ids,
    quoted: /"([^"]+)"/.exec(text)?.[1],
    date: /\b(\d{4}-\d{2}-\d{2})\b/.exec(text)?.[1],
    duration: Number(/(\d+)-minute/.exec(text)?.[1] ?? 0) || undefined,
    names,
  };
}

/**
 * The scripted baseline for api-workflows.
 * @example
 * const outcome = await runEpisode(apiWorkflows, task, createApiBaselineAgent(), { seed: 0 });
 */
export function createApiBaselineAgent(): Agent {
  return {
    name: 'api-workflows-baseline',
    version: '1',
    config: () => ({}),
    begin(): AgentEpisode {
      let plan: Plan | undefined;
      let keys = 0;
      const renamed = new Map<string, string>();

      function* call(tool: string, args: JsonObject, confirmToken = ''): Call {
        let current = rename(args);
        for (let attempt = 0; attempt < 6; attempt++) {
          const obs = yield { type: 'tool', tool, args: current };
          if (obs.error !== undefined) {
            if (obs.error.code === 'CONFIRMATION_REQUIRED') {
              const reply = yield { type: 'message', text: `Please confirm: I am about to call ${tool} for ${confirmToken}. Shall I proceed?` };
              if (!/yes|confirmed/i.test(reply.text ?? '')) return undefined;
              continue;
            }
            return undefined;
          }
          const out = (obs.output ?? {}) as JsonObject;
          const error = out.error as JsonObject | undefined;
          if (error === undefined || error.code === 'partial_content') return out;
          if (error.code === 'token_expired') yield { type: 'tool', tool: 'refresh_token', args: {} };
          else if (error.code === 'rate_limited') yield { type: 'tool', tool: 'wait', args: { seconds: Number(error.retry_after ?? 1) } };
          else if (error.code === 'field_renamed') {
            renamed.set(String(error.renamed_from), String(error.renamed_to));
            current = rename(current);
          } else if (error.code !== 'upstream_error' && error.code !== 'gateway_timeout') return undefined;
        }
        return undefined;
      }
      function rename(args: JsonObject): JsonObject {
        const out: JsonObject = {};
        for (const [k, v] of Object.entries(args)) out[renamed.get(k) ?? k] = v!;
        return out;
      }
      const key = () => `bot-${++keys}`;
      function* all(tool: string, args: JsonObject): Generator<Action, JsonObject[], Observation> {
        const items: JsonObject[] = [];
        let cursor: string | null = null;
        for (let page = 0; page < 12; page++) {
          const out: JsonObject | undefined = yield* call(tool, cursor === null ? args : { ...args, cursor });
          if (out === undefined) break;
          items.push(...((out.items as JsonObject[]) ?? []));
          cursor = (out.next_cursor as string | null) ?? null;
          if (cursor === null) break;
        }
        return items;
      }
      function* invoiceByNumber(number: string): Call {
        const out = yield* call('get_invoices', { number });
        return (out?.items as JsonObject[] | undefined)?.[0];
      }
      function* customerByEmail(email: string): Call {
        const out = yield* call('find_customers', { email });
        return (out?.items as JsonObject[] | undefined)?.[0];
      }
      function* staffByName(name: string): Call {
        const out = yield* call('list_staff', { name });
        return (out?.items as JsonObject[] | undefined)?.[0];
      }

      function* solve(p: Parsed): Plan {
        const t = p.text.toLowerCase();
        if (/reassign|move every/.test(t)) {
          const from = p.ids('stf')[0] ?? ((yield* staffByName(p.names[0] ?? ''))?.id as string | undefined);
          const to = p.ids('stf')[1] ?? ((yield* staffByName(p.names[1] ?? ''))?.id as string | undefined);
          if (from === undefined || to === undefined) return;
          const statuses = /pending/.test(t) ? ['open', 'pending'] : ['open'];
          const priority: JsonObject = /high-priority/.test(t) ? { priority: 'high' } : {};
          const tickets: JsonObject[] = [];
          for (const status of statuses) tickets.push(...(yield* all('search_tickets', { assignee: from, status, ...priority })));
          for (const ticket of tickets) {
            if (/re-?check/.test(t)) {
              const now = yield* call('get_ticket', { ticket_id: ticket.id as string });
              if (now?.assignee !== from) continue;
            }
            yield* call('update_ticket', { ticket_id: ticket.id as string, assignee: to, idempotency_key: key() });
          }
          return;
        }
        if (/book|calendar|set up a/.test(t) && p.duration !== undefined && p.date !== undefined) {
          const ids = p.ids('stf');
          const people: string[] = [];
          if (ids.length > 0) people.push(...ids);
          else for (const name of p.names.slice(0, /\bwith\b/.test(t) ? 2 : 1)) {
            const s = yield* staffByName(name);
            if (s !== undefined) people.push(s.id as string);
          }
          if (people.length === 0) return;
          let slots: string[] | undefined;
          for (const who of people) {
            const out = yield* call('find_free_slots', { staff_id: who, date: p.date, duration_minutes: p.duration });
            const mine = (out?.slots as string[] | undefined) ?? [];
            slots = slots === undefined ? mine : slots.filter((s) => mine.includes(s));
          }
          if (slots === undefined || slots.length === 0) return;
          yield* call('create_event', { staff_id: people[0]!, start: slots[0]!, duration_minutes: p.duration, title: p.quoted ?? 'meeting', ...(people[1] ? { attendee_id: people[1] } : {}), idempotency_key: key() });
          return;
        }
        if (/out of sync|disagree/.test(t)) {
          const customer = p.ids('cus')[0] ?? ((yield* customerByEmail(p.emails[0] ?? ''))?.id as string | undefined);
          if (customer === undefined) return;
          for (const invoice of yield* all('get_invoices', { customer_id: customer })) {
            if (invoice.status === 'void') continue;
            let settled = 0;
            for (const pay of yield* all('list_payments', { invoice_id: invoice.id as string })) if (pay.status === 'settled') settled += Number(pay.amount_cents);
            const want = settled >= Number(invoice.amount_cents) ? 'paid' : 'open';
            if (want !== invoice.status) yield* call('update_invoice_status', { invoice_id: invoice.id as string, status: want, idempotency_key: key() });
          }
          return;
        }
        if (/ticket/.test(t) && /(open|create) a/.test(t) && p.quoted !== undefined) {
          const customer = p.ids('cus')[0] !== undefined ? { id: p.ids('cus')[0]! } : yield* customerByEmail(p.emails[0] ?? '');
          if (customer === undefined) return;
          const high = /high/.test(t);
          const ticket = yield* call('create_ticket', { customer_id: customer.id as string, subject: p.quoted, ...(high ? { priority: 'high', assignee: customer.account_manager as string } : {}), idempotency_key: key() });
          if (ticket === undefined || !/email/.test(t.replace(p.emails[0] ?? '', ''))) return;
          yield* call('send_email', { to: p.emails[0]!, subject: `Ticket ${String(ticket.id)} opened`, body: `We opened ticket ${String(ticket.id)}.`, idempotency_key: key() });
          if (/manager/.test(t) && /(both|too|and to the account manager)/.test(t)) {
            const manager = yield* call('get_staff', { staff_id: customer.account_manager as string });
            if (manager !== undefined) yield* call('send_email', { to: manager.email as string, subject: `Ticket ${String(ticket.id)}`, body: `Ticket ${String(ticket.id)} is yours.`, idempotency_key: key() });
          }
          return;
        }
        const number = p.numbers[0];
        if (number !== undefined && /charge/.test(t)) {
          const invoice = yield* invoiceByNumber(number);
          if (invoice === undefined) return;
          let due = Number(invoice.amount_cents);
          if (invoice.status === 'open') {
            for (const pay of yield* all('list_payments', { invoice_id: invoice.id as string })) if (pay.status === 'settled') due -= Number(pay.amount_cents);
          }
          const to = p.emails[0] ?? ((yield* call('get_customer', { customer_id: invoice.customer_id as string }))?.email as string | undefined);
          if (to === undefined) return;
          if (invoice.status === 'open' && due > 0) {
            const paid = yield* call('create_payment', { invoice_id: invoice.id as string, amount_cents: due, method: 'card', idempotency_key: key() }, number);
            if (paid === undefined) return;
            yield* call('send_email', { to, subject: `Receipt for invoice ${number}`, body: `We charged ${money(due, String(invoice.currency))} for invoice ${number}.`, idempotency_key: key() });
          } else {
            yield* call('send_email', { to, subject: `Invoice ${number}`, body: `Invoice ${number} is paid: nothing is due.`, idempotency_key: key() });
          }
          return;
        }
        if (number !== undefined && /whether|open or/.test(t)) {
          const invoice = yield* invoiceByNumber(number);
          if (invoice === undefined || p.emails[0] === undefined) return;
          const body = invoice.status === 'open' ? `Invoice ${number} is still open.` : `Invoice ${number} is ${String(invoice.status)}: nothing is due.`;
          yield* call('send_email', { to: p.emails[0], subject: `Invoice ${number}`, body, idempotency_key: key() });
          return;
        }
        // Questions.
        const invoiceId = p.ids('inv')[0];
        if (invoiceId !== undefined && /status/.test(t)) {
          const out = yield* call('get_invoice', { invoice_id: invoiceId });
          yield { type: 'finish', answer: String(out?.status ?? '') };
          return;
        }
        if (number !== undefined) {
          const invoice = yield* invoiceByNumber(number);
          yield { type: 'finish', answer: invoice === undefined ? '' : money(Number(invoice.amount_cents), String(invoice.currency)) };
          return;
        }
        if (p.emails[0] !== undefined && /open invoices/.test(t)) {
          const customer = yield* customerByEmail(p.emails[0]);
          if (customer === undefined) return;
          const open = yield* all('get_invoices', { customer_id: customer.id as string, status: 'open' });
          let total = 0;
          for (const invoice of open) {
            total += Number(invoice.amount_cents);
            if (/settled|owe|left to pay/.test(t)) for (const pay of yield* all('list_payments', { invoice_id: invoice.id as string })) if (pay.status === 'settled') total -= Number(pay.amount_cents);
          }
          let answer = money(total, String(open[0]?.currency ?? 'EUR'));
          if (/account manager/.test(t)) {
            const manager = yield* call('get_staff', { staff_id: customer.account_manager as string });
            answer = `${answer}; ${String(manager?.email ?? '')}`;
          }
          yield { type: 'finish', answer };
        }
      }

      return {
        act(observation: Observation): Action {
          if (plan === undefined) plan = solve(parse(observation.text ?? ''));
          const next = plan.next(observation);
          return next.done ? { type: 'finish' } : next.value;
        },
      };
    },
  };
}
