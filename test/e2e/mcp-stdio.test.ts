/** `envharness mcp` end to end: the MCP SDK's own client drives a real stdio child process. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness } from '../../src/index.js';
import { math } from '../../src/domains/math/index.js';
import { systemClock } from '../../src/cli/clock.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
let dir: string;
let store: string;
let client: Client;
let transport: StdioClientTransport;
let stderr = '';

interface Structured {
  [key: string]: any;
}

async function call(name: string, args: Record<string, unknown> = {}): Promise<{ isError: boolean; text: string; data: Structured }> {
  const result = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: Array<{ type: string; text?: string }>; structuredContent?: Structured };
  return { isError: result.isError === true, text: result.content.map((c) => c.text ?? '').join('\n'), data: result.structuredContent ?? {} };
}

/** Evaluates "What is 3 + 4 - -5? ..." from chain-sum's instructions. */
function chainSumAnswer(text: string): string {
  const expression = /What is (.+)\? Answer/.exec(text)![1]!;
  const tokens = expression.split(' ');
  let sum = Number(tokens[0]);
  for (let i = 1; i < tokens.length; i += 2) sum += (tokens[i] === '-' ? -1 : 1) * Number(tokens[i + 1]);
  return String(sum);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'envharness-mcp-'));
  store = `sqlite:${join(dir, 'envharness.db')}`;
  const harness = await createHarness({ clock: systemClock, store, domains: [math] });
  await harness.initialize({ seed: 1 });
  await harness.generate({ templates: [{ id: 'math/chain-sum@1' }], levels: [1], count: 6, seed: 1, split: 'dynamic' });
  await harness.close();

  transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(root, 'bin/envharness.js'), '--store', store, 'mcp', '--task-type', 'arithmetic', '--level', '1', '--seed', '3'],
    cwd: root,
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  client = new Client({ name: 'envharness-e2e', version: '1.0.0' });
  await client.connect(transport);
});

afterAll(async () => {
  await client?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('envharness mcp over stdio', () => {
  let firstEpisode = '';
  let question = '';

  it('lists the control tools with object-rooted input schemas', async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name).sort();
    expect(names).toEqual(['finish', 'message', 'reset', 'status']);
    for (const tool of tools) expect(tool.inputSchema.type).toBe('object');
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(Object.keys(byName.reset!.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(['taskId', 'taskType', 'level', 'seed']));
    expect(byName.finish!.inputSchema.properties).toHaveProperty('answer');
    expect(byName.message!.inputSchema.required).toEqual(['text']);
    expect(stderr).toContain('serving on stdio');
  });

  it('reports the started episode in status', async () => {
    const status = await call('status');
    expect(status.isError).toBe(false);
    expect(status.data.task.taskType).toBe('arithmetic');
    expect(status.data.task.level).toBe(1);
    expect(status.data.seed).toBe(3);
    expect(status.data.steps).toBe(0);
    expect(status.data.observation.kind).toBe('reset');
    expect(status.data.observation.text).toMatch(/^What is /);
    expect(status.data.task).not.toHaveProperty('spec');
    firstEpisode = status.data.episodeId;
    question = status.data.observation.text;
  });

  it('answers bad control arguments with an error result and keeps the episode', async () => {
    const bad = await call('reset', { level: 'high' });
    expect(bad.isError).toBe(true);
    expect(bad.text).toMatch(/level/);
    const status = await call('status');
    expect(status.data.episodeId).toBe(firstEpisode);
  });

  it('turns a mistyped finish into an INVALID_ACTION step with a pointer', async () => {
    const bad = await call('finish', { answer: 42 });
    expect(bad.isError).toBe(true);
    expect(bad.data.observation.error.code).toBe('INVALID_ACTION');
    expect(bad.data.observation.error.pointer).toBe('/answer');
    expect(bad.data.feedback.map((f: { code: string }) => f.code)).toContain('INVALID_ACTION');
    expect(bad.data.step).toBe(1);
    expect(bad.data.terminated).toBe(false);
  });

  it('finishes with the right answer for reward 1, then refuses further steps', async () => {
    const answer = chainSumAnswer(question);
    const done = await call('finish', { answer });
    expect(done.isError).toBe(false);
    expect(done.data.terminated).toBe(true);
    expect(done.data.reward).toBe(1);
    expect(done.data.info.outcome).toBe(1);
    expect(done.text).toContain('episode terminated');

    const after = await call('status');
    expect(after.data).toMatchObject({ episodeId: firstEpisode, status: 'terminated', steps: 2, reward: 1, outcome: 1, terminated: true, truncated: false, endReason: 'finished' });

    const again = await call('message', { text: 'hello?' });
    expect(again.isError).toBe(true);
    expect(again.data.error.code).toBe('EPISODE_FINISHED');
  });

  it('starts a new episode on reset', async () => {
    const reset = await call('reset', { seed: 5 });
    expect(reset.isError).toBe(false);
    expect(reset.data.episodeId).not.toBe(firstEpisode);
    expect(reset.data.seed).toBe(5);
    expect(reset.text).toMatch(/What is /);
    const status = await call('status');
    expect(status.data).toMatchObject({ steps: 0, status: 'running', seed: 5 });
  });

  it('recorded every step to the store', async () => {
    await client.close();
    const harness = await createHarness({ clock: systemClock, store, domains: [math] });
    try {
      const record = await harness.store.getEpisode(firstEpisode);
      expect(record).toMatchObject({ status: 'terminated', steps: 2, outcome: 1, agent: 'mcp' });
      const transitions = await harness.store.listTransitions(firstEpisode);
      expect(transitions.map((t) => t.action.type)).toEqual(['invalid', 'finish']);
    } finally {
      await harness.close();
    }
    expect(stderr).toContain('stopped');
  });
});
