/**
 * MCP over Streamable HTTP under a real `envharness serve` process: the SDK's own client, over loopback,
 * with the server token; and a fresh store whose empty pool must not break the rest of the protocol.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareStore, spawnServe, stopServe } from '../../src/server/testing/fixture.js';

const TOKEN = 'mcp-serve-token-0123456789abcdef';

interface Served {
  child: ChildProcess;
  url: string;
}

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'envharness-e2e', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = (await client.callTool({ name, arguments: args })) as { isError?: boolean; structuredContent?: Record<string, any>; content: Array<{ text?: string }> };
  return { isError: result.isError === true, data: result.structuredContent ?? {}, text: result.content.map((c) => c.text ?? '').join('\n') };
}

describe('envharness serve mounts MCP at /v1/mcp', () => {
  let dir = '';
  let served: Served;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'envharness-mcp-serve-'));
    const { path } = await prepareStore(dir);
    const { child, port } = await spawnServe(path, TOKEN, ['--no-fill', '--mcp-task-type', 'restock', '--mcp-level', '1', '--mcp-seed', '3']);
    served = { child, url: `http://127.0.0.1:${port}` };
  }, 60_000);

  afterAll(async () => {
    if (served) await stopServe(served.child);
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a request without the server token (401) and a foreign Host (403)', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const anonymous = await fetch(`${served.url}/v1/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body });
    expect(anonymous.status).toBe(401);
    const foreign = await fetch(`${served.url}/v1/mcp`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, origin: 'https://evil.example', 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body });
    expect(foreign.status).toBe(403);
  });

  it('lists the domain tools of the configured task type and steps the episode', async () => {
    const client = await connect(served.url, TOKEN);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name).sort();
      expect(names).toEqual(['add_stock', 'delete_item', 'finish', 'get_stock', 'list_items', 'message', 'remove_stock', 'reset', 'status']);
      const status = await call(client, 'status');
      expect(status.data).toMatchObject({ seed: 3, task: { domain: 'inventory', taskType: 'restock', level: 1 }, status: 'running', steps: 0 });
      const item = /units of (\S+) and/.exec(status.data.observation.text)![1]!;
      const stock = await call(client, 'get_stock', { item });
      expect(stock.isError).toBe(false);
      expect(stock.data).toMatchObject({ step: 1, observation: { output: { item } } });
      // The episode is one shared session: a second client sees the step the first one took.
      const other = await connect(served.url, TOKEN);
      try {
        expect((await call(other, 'status')).data).toMatchObject({ episodeId: status.data.episodeId, steps: 1 });
      } finally {
        await other.close();
      }
    } finally {
      await client.close();
    }
  });
});

describe('envharness serve with MCP on a fresh store', () => {
  let dir = '';
  let served: Served;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'envharness-mcp-fresh-'));
    // No pool prepared: serve fills the built-in domains' pools at start-up (issue 13: it did not).
    const { child, port } = await spawnServe(join(dir, 'fresh.db'), TOKEN);
    served = { child, url: `http://127.0.0.1:${port}` };
  }, 180_000);

  afterAll(async () => {
    if (served) await stopServe(served.child);
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives a working episode of the built-in retail domain with the defaults', async () => {
    const client = await connect(served.url, TOKEN);
    try {
      const status = await call(client, 'status');
      expect(status.isError, status.text).toBe(false);
      expect(status.data).toMatchObject({ task: { domain: 'retail' }, status: 'running', steps: 0 });
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['get_order_details', 'message', 'finish', 'reset', 'status']));
    } finally {
      await client.close();
    }
  });
});
