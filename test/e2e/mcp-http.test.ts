/** The MCP server over stateless Streamable HTTP, mounted in a hono app, with the runtime's inventory domain. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../../src/index.js';
import { createMcpHttpHandler, mcpRoutes, type McpHttpHandler } from '../../src/mcp/index.js';
import { createServer } from '../../src/server/index.js';
import { createInventoryDomain } from '../../src/runtime/testing/index.js';
import { systemClock } from '../../src/cli/clock.js';

let harness: Harness;
let handler: McpHttpHandler;
let app: Hono;
let client: Client;

interface Structured {
  [key: string]: any;
}

async function call(name: string, args: Record<string, unknown> = {}): Promise<{ isError: boolean; text: string; data: Structured }> {
  const result = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: Array<{ type: string; text?: string }>; structuredContent?: Structured };
  return { isError: result.isError === true, text: result.content.map((c) => c.text ?? '').join('\n'), data: result.structuredContent ?? {} };
}

beforeAll(async () => {
  harness = await createHarness({ clock: systemClock, store: ':memory:', domains: [createInventoryDomain()] });
  await harness.initialize({ seed: 1 });
  await harness.generate({ templates: [{ id: 'inventory/restock@1' }], levels: [1], count: 4, seed: 1, split: 'dynamic' });
  await harness.generate({ templates: [{ id: 'inventory/clearance@1' }], levels: [3], count: 2, seed: 1, split: 'dynamic' });
  handler = createMcpHttpHandler({ harness, defaults: { taskType: 'restock', level: 1, seed: 2 } });
  app = new Hono();
  app.all('/v1/mcp', (c) => handler(c.req.raw));
  client = new Client({ name: 'envharness-e2e', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('http://127.0.0.1/v1/mcp'), {
    fetch: async (url, init) => app.request(url instanceof URL ? url.href : String(url), init as RequestInit),
  });
  await client.connect(transport);
});

afterAll(async () => {
  await client?.close();
  await handler?.close();
  await harness?.close();
});

describe('MCP over stateless Streamable HTTP', () => {
  let item = '';
  let amount = 0;
  let episodeId = '';
  let initialStock = 0;

  it('lists the episode\'s domain tools with their zod schemas, object-rooted', async () => {
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(Object.keys(byName).sort()).toEqual(['add_stock', 'delete_item', 'finish', 'get_stock', 'list_items', 'message', 'remove_stock', 'reset', 'status']);
    for (const tool of tools) expect(tool.inputSchema.type).toBe('object');
    expect(byName.add_stock!.inputSchema).toMatchObject({
      type: 'object',
      properties: { item: { type: 'string', minLength: 1 }, quantity: { type: 'integer' } },
      required: ['item', 'quantity'],
      additionalProperties: false,
    });
    expect(byName.get_stock!.annotations?.readOnlyHint).toBe(true);
    expect(byName.add_stock!.annotations?.readOnlyHint).toBe(false);
  });

  it('shows the user\'s opening and the policy', async () => {
    const status = await call('status');
    expect(status.data.task).toMatchObject({ domain: 'inventory', taskType: 'restock', level: 1 });
    const match = /add (\d+) units of (\S+) and/.exec(status.data.observation.text)!;
    expect(match).not.toBeNull();
    amount = Number(match[1]);
    item = match[2]!;
    episodeId = status.data.episodeId;
    expect(status.text).toContain('Policy:');
  });

  it('runs a tool call as an episode step', async () => {
    const stock = await call('get_stock', { item });
    expect(stock.isError).toBe(false);
    expect(stock.data.observation.output).toMatchObject({ item, locked: false });
    expect(stock.data.step).toBe(1);
    initialStock = stock.data.observation.output.quantity;
    expect(stock.data.feedback.map((f: { code: string }) => f.code)).toContain('SUBGOAL_REACHED');
  });

  it('answers bad arguments with an INVALID_ACTION observation naming the argument, and changes nothing', async () => {
    const bad = await call('add_stock', { item, quantity: 'lots' });
    expect(bad.isError).toBe(true);
    expect(bad.data.observation.error).toMatchObject({ code: 'INVALID_ACTION', pointer: '/args/quantity' });
    expect(bad.text).toContain('(at /quantity)');
    expect(bad.data.feedback[0].code).toBe('INVALID_ACTION');
    const extra = await call('get_stock', { item, colour: 'red' });
    expect(extra.isError).toBe(true);
    expect(extra.data.observation.error.code).toBe('INVALID_ACTION');
  });

  it('completes the task: add, tell the user, finish → reward 1', async () => {
    const stock = (await call('get_stock', { item })).data.observation.output.quantity as number;
    expect(stock).toBe(initialStock);
    const added = await call('add_stock', { item, quantity: amount });
    expect(added.isError).toBe(false);
    expect(added.data.observation.output.quantity).toBe(stock + amount);
    const told = await call('message', { text: `Done: ${item} now has ${stock + amount} units.` });
    expect(told.isError).toBe(false);
    expect(told.text).toMatch(/^user: /);
    const done = await call('finish');
    expect(done.data).toMatchObject({ terminated: true, truncated: false });
    expect(done.data.info.outcome).toBe(1);
    const status = await call('status');
    expect(status.data).toMatchObject({ episodeId, status: 'terminated', outcome: 1, endReason: 'finished' });
    expect(status.data.steps).toBe(7);
  });

  it('switches the tool list when reset picks a task with other allowed tools', async () => {
    const reset = await call('reset', { taskType: 'clearance', level: 3, seed: 4 });
    expect(reset.isError).toBe(false);
    expect(reset.data.task).toMatchObject({ taskType: 'clearance', level: 3 });
    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual(['delete_item', 'finish', 'get_stock', 'list_items', 'message', 'reset', 'status']);
  });

  it('reports unknown tasks as error results', async () => {
    const missing = await call('reset', { taskId: 'f'.repeat(64) });
    expect(missing.isError).toBe(true);
    expect(missing.data.error.code).toBe('TASK_NOT_FOUND');
  });

  it('answers GET with 405 (stateless: no server stream)', async () => {
    const response = await app.request('http://127.0.0.1/v1/mcp', { method: 'GET', headers: { accept: 'text/event-stream' } });
    expect(response.status).toBe(405);
  });

  it('recorded the episode', async () => {
    const transitions = await harness.store.listTransitions(episodeId);
    expect(transitions.map((t) => (t.action.type === 'tool' ? t.action.tool : t.action.type))).toEqual([
      'get_stock', 'add_stock', 'get_stock', 'get_stock', 'add_stock', 'message', 'finish',
    ]);
  });
});

describe('MCP mounted in the HTTP API (createServer extraRoutes)', () => {
  it('serves /v1/mcp behind the server token', async () => {
    const mcp = createMcpHttpHandler({ harness, defaults: { taskType: 'restock', level: 1, seed: 9 } });
    const server = createServer({ harness, extraRoutes: mcpRoutes(mcp) });
    const fetchIn = async (url: string | URL, init?: RequestInit) => server.fetch(new Request(url, init));
    try {
      const anonymous = await fetchIn('http://127.0.0.1/v1/mcp', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(anonymous.status).toBe(401);

      const authed = new Client({ name: 'envharness-e2e', version: '1.0.0' });
      await authed.connect(
        new StreamableHTTPClientTransport(new URL('http://127.0.0.1/v1/mcp'), {
          fetch: (url, init) => fetchIn(url, init as RequestInit),
          requestInit: { headers: { authorization: `Bearer ${server.token}` } },
        }),
      );
      const names = (await authed.listTools()).tools.map((t) => t.name);
      expect(names).toContain('get_stock');
      const status = (await authed.callTool({ name: 'status', arguments: {} })) as unknown as { structuredContent: { seed: number; task: { taskType: string } } };
      expect(status.structuredContent).toMatchObject({ seed: 9, task: { taskType: 'restock' } });
      await authed.close();
    } finally {
      await server.close();
      await mcp.close();
    }
  });
});
