import { describe, expect, it } from 'vitest';
import { EnvHarnessError, type JsonObject, type Tool, type ToolOutcome } from '../../core/index.js';
import { apiTools, apiWorkflows, hashApiState, type ApiState } from './index.js';
import type { Scenario } from './scenario.js';

const tools = new Map<string, Tool<ApiState, any>>(apiTools.map((t) => [t.name, t]));
const ctx = { task: undefined as never, rng: undefined as never };
const fresh = (scenario: Scenario = { faults: [], events: [] }): ApiState => apiWorkflows.fork(apiWorkflows.createState({ world: 3, patches: [], scenario }));
const run = (state: ApiState, tool: string, args: JsonObject): ToolOutcome => tools.get(tool)!.run(state, tools.get(tool)!.args.parse(args), ctx);
const out = (o: ToolOutcome): JsonObject => {
  if (!o.ok) throw new Error(`${o.error.code}: ${o.error.message}`);
  return o.output as JsonObject;
};

describe('api-workflows tools', () => {
  it('declares 25-40 tools with read/write effects and an idempotency key on every write', () => {
    expect(apiTools.length).toBeGreaterThanOrEqual(25);
    expect(apiTools.length).toBeLessThanOrEqual(40);
    for (const tool of apiTools.filter((t) => t.effect === 'write' && !t.description.startsWith('DEPRECATED'))) {
      expect(Object.keys((tool.args as unknown as { shape: object }).shape), tool.name).toContain('idempotency_key');
    }
  });

  it('pages through a list with next_cursor and refuses a cursor it never returned', () => {
    const state = fresh();
    const first = out(run(state, 'get_invoices', { customer_id: 'cus_0001' }));
    const total = first.total as number;
    expect(total).toBeGreaterThan(5);
    const seen = [...(first.items as JsonObject[])];
    let cursor = first.next_cursor as string | null;
    while (cursor !== null) {
      const page = out(run(state, 'get_invoices', { customer_id: 'cus_0001', cursor }));
      seen.push(...(page.items as JsonObject[]));
      cursor = page.next_cursor as string | null;
    }
    expect(seen.length).toBe(total);
    expect(new Set(seen.map((i) => i.id)).size).toBe(total);
    const bad = run(state, 'get_invoices', { customer_id: 'cus_0001', cursor: 'cur_99999' });
    expect(bad).toMatchObject({ ok: false, error: { code: 'INVALID_ACTION', pointer: '/cursor' } });
  });

  it('applies a write once per idempotency key and refuses the key for another request', () => {
    const state = fresh();
    const invoice = (out(run(state, 'get_invoices', { status: 'open', customer_id: 'cus_0001' })).items as JsonObject[])[0]!;
    const args = { invoice_id: invoice.id as string, amount_cents: 100, idempotency_key: 'k1' };
    const a = out(run(state, 'create_payment', args));
    const b = out(run(state, 'create_payment', args));
    expect(b).toMatchObject({ id: a.id, idempotent_replay: true });
    expect(out(run(state, 'list_payments', { invoice_id: invoice.id as string })).items).toHaveLength((out(run(fresh(), 'list_payments', { invoice_id: invoice.id as string })).items as unknown[]).length + 1);
    const before = hashApiState(state);
    expect(run(state, 'create_payment', { ...args, amount_cents: 200 })).toMatchObject({ ok: false, error: { code: 'PRECONDITION_FAILED' } });
    expect(hashApiState(state)).toBe(before);
  });

  it('answers a deprecated tool with a notice naming its replacement', () => {
    const state = fresh();
    const invoice = out(run(state, 'lookup_invoice', { number: 'INV-2026-0001' }));
    expect(invoice.deprecation).toContain('get_invoices');
  });

  it('hashes a state back to its world digest when a change is undone', () => {
    const state = fresh();
    const base = hashApiState(state);
    const ticket = out(run(state, 'get_ticket', { ticket_id: 'tkt_0001' }));
    out(run(state, 'update_ticket', { ticket_id: 'tkt_0001', priority: ticket.priority === 'high' ? 'low' : 'high' }));
    expect(hashApiState(state)).not.toBe(base);
    out(run(state, 'update_ticket', { ticket_id: 'tkt_0001', priority: ticket.priority as string }));
    expect(hashApiState(state)).toBe(base);
  });

  it('serves a lagging replica until a consistent read, and a 429 window until it has passed', () => {
    const state = fresh({ faults: [{ kind: 'stale', tool: 'get_ticket', lag: 5 }, { kind: 'rate_limit', tool: 'get_invoice', call: 1, retry_after: 3 }], events: [] });
    const id = ((out(run(state, 'search_tickets', { status: 'open' })).items as JsonObject[])[0]!.id as string);
    out(run(state, 'update_ticket', { ticket_id: id, status: 'closed' }));
    const stale = out(run(state, 'get_ticket', { ticket_id: id }));
    expect(stale.replica_lag_s).toBeGreaterThan(0);
    expect(stale.status).not.toBe('closed');
    expect(out(run(state, 'get_ticket', { ticket_id: id, consistent: true })).status).toBe('closed');
    expect((out(run(state, 'get_invoice', { invoice_id: 'inv_0001' })).error as JsonObject).retry_after).toBe(3);
    expect((out(run(state, 'get_invoice', { invoice_id: 'inv_0001' })).error as JsonObject).code).toBe('rate_limited');
    out(run(state, 'wait', { seconds: 3 }));
    expect(out(run(state, 'get_invoice', { invoice_id: 'inv_0001' })).id).toBe('inv_0001');
  });

  it('refuses a malformed initialState with PARAMS_INVALID naming the field', () => {
    let error: unknown;
    try {
      apiWorkflows.createState({ world: 3, patches: [], scenario: { faults: [{ kind: 'timeout', tool: 'send_email', call: 0, applied: true }], events: [] } });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(EnvHarnessError);
    expect((error as EnvHarnessError).code).toBe('PARAMS_INVALID');
    expect((error as EnvHarnessError).details).toMatchObject({ pointer: '/scenario/faults/0/call' });
  });
});
