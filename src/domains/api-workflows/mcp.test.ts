/** The api-workflows tools served unchanged through the existing MCP server (stateless Streamable HTTP, in-process). */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../../harness/harness.js';
import { createMcpHttpHandler, type McpHttpHandler } from '../../mcp/index.js';
import { createApiWorkflowsDomain } from './index.js';
import { systemClock } from '../../cli/clock.js';

let harness: Harness;
let handler: McpHttpHandler;
let client: Client;

async function call(name: string, args: Record<string, unknown> = {}): Promise<{ isError: boolean; data: Record<string, any> }> {
  const result = (await client.callTool({ name, arguments: args })) as { isError?: boolean; structuredContent?: Record<string, any> };
  return { isError: result.isError === true, data: result.structuredContent ?? {} };
}

beforeAll(async () => {
  harness = await createHarness({ clock: systemClock, store: ':memory:', domains: [createApiWorkflowsDomain({ regression: false })] });
  await harness.initialize({ seed: 1 });
  await harness.generate({ templates: [{ id: 'api-workflows/recovery@1' }], levels: [2], count: 3, seed: 1, split: 'dynamic' });
  handler = createMcpHttpHandler({ harness, defaults: { taskType: 'recovery', level: 2, seed: 2 } });
  const app = new Hono();
  app.all('/v1/mcp', (c) => handler(c.req.raw));
  client = new Client({ name: 'api-workflows-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('http://127.0.0.1/v1/mcp'), { fetch: async (url, init) => app.request(url instanceof URL ? url.href : String(url), init as RequestInit) }));
});

afterAll(async () => {
  await client?.close();
  await handler?.close();
  await harness?.close();
});

describe('api-workflows over MCP', () => {
  it('lists the task\'s allowed tools with their schemas and read/write hints', async () => {
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    for (const name of ['get_invoices', 'create_payment', 'send_email', 'refresh_token', 'wait', 'status', 'finish']) expect(byName[name], name).toBeDefined();
    expect(byName.create_payment!.inputSchema.properties).toHaveProperty('idempotency_key');
    expect(byName.create_payment!.annotations?.readOnlyHint).toBe(false);
    expect(byName.get_invoices!.annotations?.readOnlyHint).toBe(true);
  });

  it('runs the task through MCP calls, faults included, to outcome 1', async () => {
    const status = await call('status');
    const number = /INV-\d{4}-\d{4}/.exec(status.data.observation.text)![0];
    const email = /[a-z0-9.]+@[a-z0-9.-]+\.example/.exec(status.data.observation.text)![0];
    // A small careful client: retries service errors the way the operating notes say.
    const robust = async (tool: string, args: Record<string, unknown>): Promise<Record<string, any>> => {
      for (let i = 0; i < 6; i++) {
        const r = await call(tool, args);
        expect(r.isError).toBe(false);
        const error = r.data.observation.output?.error;
        if (error === undefined) return r.data.observation.output;
        if (error.code === 'rate_limited') await call('wait', { seconds: error.retry_after });
      }
      throw new Error(`${tool} kept failing`);
    };
    const invoice = (await robust('get_invoices', { number })).items[0];
    expect(invoice.number).toBe(number);
    await robust('create_payment', { invoice_id: invoice.id, amount_cents: invoice.amount_cents, idempotency_key: 'mcp-1' });
    await robust('send_email', { to: email, subject: `Receipt for invoice ${number}`, body: `Paid invoice ${number}.`, idempotency_key: 'mcp-2' });
    const done = await call('finish');
    expect(done.data.info.outcome).toBe(1);
    expect(done.data.info.report).toMatchObject({ goal: true, duplicates: 0 });
  });
});
