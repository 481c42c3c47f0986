// The generic agents (random, learner, rule-based, oracle) and the MCP server play the web domain unchanged.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { createAgent, createLearnerAgent, createRandomAgent } from '../../agents/index.js';
import { mean, runMany } from '../../agents/testing.js';
import { instantiateTask } from '../../generation/index.js';
import { createHarness } from '../../harness/harness.js';
import { createMcpHttpHandler } from '../../mcp/index.js';
import { web, webTemplates } from './index.js';
import { systemClock } from '../../cli/clock.js';

const tasks = webTemplates.flatMap((t) => [1, 2].map((level) => instantiateTask(t, { level, seed: 5, index: 0 })));

describe('generic agents on the web domain', () => {
  it('random fails, the oracle and the rule-based baseline (delegated to the domain) succeed, the learner runs', async () => {
    expect(mean(await runMany(web, tasks, createRandomAgent({ seed: 3 }), tasks.length))).toBeLessThan(0.2);
    expect(mean(await runMany(web, tasks, createAgent('oracle'), tasks.length))).toBe(1);
    expect(mean(await runMany(web, tasks, createAgent('rule-based', { domains: [web] }), tasks.length))).toBeGreaterThan(0.8);
    const learner = createLearnerAgent({ seed: 1 });
    const scores = await runMany(web, tasks, learner, tasks.length);
    expect(scores).toHaveLength(tasks.length);
  }, 120_000);
});

describe('the web domain over MCP', () => {
  it('exposes the action set as tools and plays a task to outcome 1 with bids read from the observation', async () => {
    const harness = await createHarness({ clock: systemClock, store: ':memory:', domains: [{ ...web, regressionSet: undefined }] });
    await harness.initialize({ seed: 1 });
    await harness.generate({ templates: [{ id: 'web/cancel-booking@1' }], levels: [1], count: 1, seed: 1, split: 'dynamic' });
    const handler = createMcpHttpHandler({ harness, defaults: { taskType: 'cancel-booking', level: 1, seed: 2 } });
    const app = new Hono();
    app.all('/v1/mcp', (c) => handler(c.req.raw));
    const client = new Client({ name: 'web-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL('http://127.0.0.1/v1/mcp'), { fetch: async (url, init) => app.request(url instanceof URL ? url.href : String(url), init as RequestInit) }));
    try {
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      for (const name of ['click', 'fill', 'select_option', 'check', 'uncheck', 'press', 'scroll', 'goto', 'go_back', 'noop', 'message', 'finish']) expect(names).toContain(name);
      const call = async (name: string, args: Record<string, unknown> = {}) => ((await client.callTool({ name, arguments: args })) as { structuredContent?: Record<string, any> }).structuredContent ?? {};
      const text: string = (await call('status')).observation.text;
      const who = /booking of (.+?)\./.exec(text)![1]!;
      // The row of that passenger, then its Cancel button: all from the accessibility tree text.
      const lines = text.split('\n');
      const at = lines.findIndex((l) => l.includes(`cell '${who}'`));
      const button = lines.slice(at).find((l) => /button 'Cancel'/.test(l))!;
      const bid = /\[(\d+)\]/.exec(button)![1]!;
      const unknown = await call('click', { bid: '99999' });
      expect(unknown.observation.error.message).toMatch(/UNKNOWN_BID/);
      const clicked = await call('click', { bid });
      expect(clicked.observation.output.axtree).toContain('cancelled');
      expect((await call('finish')).info.outcome).toBe(1);
    } finally {
      await client.close();
      await handler.close();
      await harness.close();
    }
  }, 60_000);
});
