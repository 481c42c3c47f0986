import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { isEnvHarnessError, type Task, type Transition } from '../core/index.js';
import { createHarness, type Harness } from '../harness/harness.js';
import { chainSum, math } from '../domains/math/index.js';
import { createEpisode, createMemoryRecorder, verifyReplay } from '../runtime/index.js';
import { clearanceTemplate, createInventoryDomain, instantiate, makeInventoryTask } from '../runtime/testing/index.js';
import { startFakeOpenAI, startFakeOpenAIProcess, type FakeOpenAI, type FakeReply } from '../../test/support/fake-openai.js';
import {
  createAsyncLlmUser,
  createChatClient,
  createLlmUser,
  createOpenAIAgent,
  createRecordedUser,
  LLM_USER_RECORDING_FORMAT,
  openaiAgentFromOptions,
  retryDelayMs,
  userGoal,
  withSimulatedUser,
  type LlmUserRecording,
} from './openai.js';
import { systemClock } from '../cli/clock.js';

let fake: FakeOpenAI | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

/** A sleep that records the delays and does not wait. */
function recordingSleep(): { sleep: (ms: number) => Promise<void>; delays: number[] } {
  const delays: number[] = [];
  return { delays, sleep: async (ms) => void delays.push(ms) };
}

const ok: FakeReply = { content: 'hello', usage: { prompt_tokens: 3, completion_tokens: 1 } };
const hi = { model: 'm', messages: [{ role: 'user' as const, content: 'hi' }] };

describe('createChatClient retries', () => {
  it('retries 429 and 500, honouring retry-after, then succeeds', async () => {
    fake = await startFakeOpenAI([{ status: 429, retryAfter: '2' }, { status: 500 }, ok]);
    const { sleep, delays } = recordingSleep();
    const client = createChatClient({ baseURL: fake.baseURL, sleep });
    const reply = await client.complete(hi);
    expect(reply).toMatchObject({ content: 'hello', attempts: 3, usage: { inputTokens: 3, outputTokens: 1 } });
    expect(delays).toEqual([2000, 1000]);
    expect(fake.requests).toHaveLength(3);
  });

  it('honours retry-after-ms and retries dropped connections', async () => {
    fake = await startFakeOpenAI([{ status: 503, retryAfterMs: 1500 }, { drop: true }, ok]);
    const { sleep, delays } = recordingSleep();
    const reply = await createChatClient({ baseURL: fake.baseURL, sleep }).complete(hi);
    expect(reply.attempts).toBe(3);
    expect(delays).toEqual([1500, 1000]);
  });

  it('gives up with UPSTREAM_FAILED after maxRetries', async () => {
    fake = await startFakeOpenAI(() => ({ status: 500, message: 'overloaded' }));
    const { sleep, delays } = recordingSleep();
    const error = await createChatClient({ baseURL: fake.baseURL, sleep, maxRetries: 2 }).complete(hi).catch((e: unknown) => e);
    expect(isEnvHarnessError(error, 'UPSTREAM_FAILED')).toBe(true);
    expect((error as Error).message).toMatch(/after 3 attempts: HTTP 500/);
    expect((error as { details: object }).details).toMatchObject({ attempts: 3, status: 500, transient: true, model: 'm' });
    expect(delays).toEqual([500, 1000]);
    expect(fake.requests).toHaveLength(3);
  });

  it('does not retry a client error', async () => {
    fake = await startFakeOpenAI([{ status: 400, message: 'bad model' }, ok]);
    const { sleep, delays } = recordingSleep();
    const error = await createChatClient({ baseURL: fake.baseURL, sleep }).complete(hi).catch((e: unknown) => e);
    expect(isEnvHarnessError(error, 'UPSTREAM_FAILED')).toBe(true);
    expect(delays).toEqual([]);
    expect(fake.requests).toHaveLength(1);
  });

  it('computes backoff from the attempt number alone, capped', () => {
    const policy = { baseDelayMs: 500, maxDelayMs: 4000, maxRetryAfterMs: 10_000 };
    expect([0, 1, 2, 3, 4].map((n) => retryDelayMs(new Error('x'), n, policy))).toEqual([500, 1000, 2000, 4000, 4000]);
  });

  it('refuses a base URL that is not http(s)', () => {
    expect(() => createChatClient({ baseURL: 'localhost:8000' })).toThrow(/not a URL|http or https/);
  });
});

/** The sum asked for in chain-sum's instructions. */
function answerOf(question: string): number {
  const tokens = /What is (.+)\? Answer/.exec(question)![1]!.split(' ');
  let sum = Number(tokens[0]);
  for (let i = 1; i < tokens.length; i += 2) sum += (tokens[i] === '-' ? -1 : 1) * Number(tokens[i + 1]);
  return sum;
}

describe('createOpenAIAgent', () => {
  let harness: Harness;
  const inventory = createInventoryDomain();
  beforeAll(async () => {
    harness = await createHarness({ clock: systemClock, store: ':memory:', domains: [math, inventory] });
  });
  afterAll(async () => {
    await harness.close();
  });

  it('answers a math task through finish', async () => {
    fake = await startFakeOpenAI((request) => ({ toolCalls: [{ name: 'finish', arguments: { answer: answerOf(request.body.messages[1].content) } }] }));
    const task = instantiate(chainSum, 3, 11);
    const agent = createOpenAIAgent({ baseURL: fake.baseURL, model: 'tiny', temperature: 0 });
    const outcome = await harness.runEpisode(task, agent, { seed: 0, record: false });
    expect(outcome).toMatchObject({ outcome: 1, terminated: true, steps: 1 });
    const body = fake.requests[0]!.body;
    expect(body).toMatchObject({ model: 'tiny', temperature: 0 });
    expect(body.messages[0].role).toBe('system');
    expect(body.messages[1]).toEqual({ role: 'user', content: task.spec.instructions });
    expect(body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(['send_message_to_user', 'finish']);
    expect(agent.config()).toMatchObject({ model: 'tiny', baseURL: fake.baseURL, temperature: 0 });
  });

  it('completes an inventory task: queued parallel calls, plain text as a message, usage with each completion', async () => {
    const usage = (n: number) => ({ prompt_tokens: n, completion_tokens: 10 });
    fake = await startFakeOpenAI([
      { toolCalls: [{ name: 'get_stock', arguments: { item: 'widget-1' } }, { name: 'list_items', arguments: {} }], usage: usage(100) },
      { toolCalls: [{ name: 'add_stock', arguments: { item: 'widget-1', quantity: 2 } }], usage: usage(200) },
      { content: 'Done: widget-1 now has 7 units.', usage: usage(300) },
      { toolCalls: [{ name: 'finish', arguments: {} }], usage: usage(400) },
    ]);
    const task = makeInventoryTask();
    const agent = createOpenAIAgent({ baseURL: fake.baseURL, model: 'tiny' });
    const outcome = await harness.runEpisode(task, agent, { seed: 1, episodeId: 'openai-inventory' });
    expect(outcome).toMatchObject({ outcome: 1, terminated: true, steps: 5 });

    const transitions = await harness.store.listTransitions('openai-inventory');
    expect(transitions.map((t) => (t.action as { usage?: unknown }).usage)).toEqual([
      { inputTokens: 100, outputTokens: 10 },
      undefined,
      { inputTokens: 200, outputTokens: 10 },
      { inputTokens: 300, outputTokens: 10 },
      { inputTokens: 400, outputTokens: 10 },
    ]);
    const second = fake.requests[1]!.body.messages;
    expect(second.slice(-3).map((m: { role: string }) => m.role)).toEqual(['assistant', 'tool', 'tool']);
    expect(second.at(-2)).toMatchObject({ tool_call_id: 'call_0_0' });
    expect(JSON.parse(second.at(-2).content)).toEqual({ item: 'widget-1', quantity: 5, locked: false });
    expect(second.at(-1)).toMatchObject({ tool_call_id: 'call_0_1' });
    const fourth = fake.requests[3]!.body.messages;
    expect(fourth.at(-2)).toEqual({ role: 'assistant', content: 'Done: widget-1 now has 7 units.' });
    expect(fourth.at(-1).role).toBe('user');
    expect(fourth.at(-1).content).toBe(transitions[3]!.observation.text);
  });

  it('counts reported tokens against the token budget', async () => {
    const usage = { prompt_tokens: 100, completion_tokens: 10 };
    fake = await startFakeOpenAI(() => ({ toolCalls: [{ name: 'list_items', arguments: {} }], usage }));
    const agent = createOpenAIAgent({ baseURL: fake.baseURL, model: 'tiny' });
    const outcome = await harness.runEpisode(makeInventoryTask(), agent, { seed: 2, episodeId: 'openai-tokens', dynamics: { budget: { tokens: 300 } } });
    expect(outcome).toMatchObject({ truncated: true, steps: 3, endReason: 'budget' });
    const transitions = await harness.store.listTransitions('openai-tokens');
    expect(transitions.at(-1)!.truncation).toBe('tokens');
  });

  it('sends malformed tool calls to the runtime and feeds the error back with the argument pointer', async () => {
    fake = await startFakeOpenAI([
      { toolCalls: [{ name: 'add_stock', arguments: '{"item":"widget-1","quantity":"two"}' }] },
      { toolCalls: [{ name: 'get_stock', arguments: 'not json' }] },
      { toolCalls: [{ name: 'finish', arguments: {} }] },
    ]);
    const agent = createOpenAIAgent({ baseURL: fake.baseURL, model: 'tiny' });
    const outcome = await harness.runEpisode(makeInventoryTask(), agent, { seed: 3, record: false });
    expect(outcome).toMatchObject({ outcome: 0, steps: 3 });
    expect(outcome.feedback.INVALID_ACTION).toBe(2);
    const quantity = JSON.parse(fake.requests[1]!.body.messages.at(-1).content);
    expect(quantity.error).toMatchObject({ code: 'INVALID_ACTION', pointer: '/quantity' });
    const notJson = JSON.parse(fake.requests[2]!.body.messages.at(-1).content);
    expect(notJson.error).toMatchObject({ code: 'INVALID_ACTION', pointer: '' });
  });

  it('fails the episode with UPSTREAM_FAILED when the server keeps failing', async () => {
    fake = await startFakeOpenAI(() => ({ status: 502 }));
    const { sleep, delays } = recordingSleep();
    const agent = createOpenAIAgent({ baseURL: fake.baseURL, model: 'tiny', maxRetries: 1, sleep });
    const error = await harness.runEpisode(makeInventoryTask(), agent, { seed: 4, record: false }).catch((e: unknown) => e);
    expect(isEnvHarnessError(error, 'UPSTREAM_FAILED')).toBe(true);
    expect(delays).toEqual([500]);
  });

  it('builds from CLI flags: key from the environment, model required', async () => {
    fake = await startFakeOpenAI([{ toolCalls: [{ name: 'finish', arguments: { answer: '0' } }] }]);
    const agent = openaiAgentFromOptions({ baseUrl: fake.baseURL, model: 'tiny' }, { OPENAI_API_KEY: 'sk-test' });
    await harness.runEpisode(instantiate(chainSum, 1, 1), agent, { seed: 0, record: false });
    expect(fake.requests[0]!.headers.authorization).toBe('Bearer sk-test');
    expect(JSON.stringify(agent.config())).not.toContain('sk-test');
    expect(() => openaiAgentFromOptions({ baseUrl: fake!.baseURL }, {})).toThrow(/--model/);
    expect(() => openaiAgentFromOptions({ model: 'gpt-4o-mini' }, {})).toThrow(/OPENAI_API_KEY/);
    expect(() => openaiAgentFromOptions({ baseUrl: 'nope', model: 'x' }, {})).toThrow(/not a URL/);
  });
});

describe('LLM simulated user', () => {
  it('finds the hidden goal in the task', () => {
    const base = makeInventoryTask();
    expect(userGoal({ ...base, spec: { ...base.spec, user: 'I want a refund.' } })).toBe('I want a refund.');
    const tau = userGoal({ ...base, spec: { ...base.spec, user: { instruction: 'Return order #W1.', user_id: 'u1' } } });
    expect(tau).toMatch(/^Return order #W1\.\n\nWhat you know/);
    expect(tau).toContain('"user_id": "u1"');
    expect(userGoal({ ...base, spec: { ...base.spec, user: undefined } })).toBe(base.spec.instructions);
  });

  it('plays the user through the chat server, and its recording replays the episode without it', async () => {
    const task: Task = instantiate(clearanceTemplate, 1, 0);
    const target = (task.params as { target: string }).target;
    const server = await startFakeOpenAIProcess([
      { content: `Hi, please remove ${target} from the catalogue.` },
      { content: 'Yes, I confirm.' },
      { content: USER_DONE },
    ]);
    const client = createChatClient({ baseURL: server.baseURL });
    const inventory = createInventoryDomain();
    const domain = withSimulatedUser(inventory, (t) => createLlmUser({ client, model: 'user-sim', task: t }));
    const recorder = createMemoryRecorder();
    const episode = createEpisode(domain, task, { recorder });
    let transitions: Transition[];
    try {
      const opening = episode.reset({ seed: 0 });
      expect(opening.text).toBe(`Hi, please remove ${target} from the catalogue.`);
      const results = task.spec.solution.map((action) => episode.step(action));
      expect(results[1]!.observation.text).toBe('Yes, I confirm.');
      expect(results[2]!.observation.error).toBeUndefined();
      const last = results.at(-1)!;
      expect(last).toMatchObject({ terminated: true, info: { outcome: 1, endReason: 'user_done' } });
      const recording = last.info.user as unknown as LlmUserRecording;
      expect(recording.format).toBe(LLM_USER_RECORDING_FORMAT);
      expect(recording.exchanges).toHaveLength(3);
      expect(recording.exchanges[0]!.prompt[0]!.content).toContain(`Please remove ${target} from the catalogue entirely.`);
      expect(recording.exchanges[2]!.prompt.at(-1)).toEqual({ role: 'user', content: `${target} is deleted. Anything else?` });
      await vi.waitFor(() => expect(server.requests).toHaveLength(3));
      expect(server.requests[1]!.body.messages.at(-1)).toEqual({ role: 'user', content: `I am about to delete ${target}. Do you confirm?` });
      // Nothing scripted is left: the next call is an upstream failure, thrown through the worker thread.
      expect(() => client.completeSync({ model: 'user-sim', messages: [{ role: 'user', content: 'more?' }] })).toThrow(/UPSTREAM_FAILED|failed after 1 attempt/);
      transitions = recorder.transitions(episode.id!);
    } finally {
      await client.close();
      await server.close();
    }

    const recording = transitions.at(-1)!.info.user;
    const replayed = withSimulatedUser(inventory, () => createRecordedUser(recording));
    expect(verifyReplay(replayed, task, 0, transitions)).toEqual([]);
  });

  it('has an awaitable variant with a custom prompt, recorded the same way', async () => {
    fake = await startFakeOpenAI([{ content: 'I want to return order #W1.' }, { content: `Thanks. ${USER_DONE}` }]);
    const user = createAsyncLlmUser({
      client: createChatClient({ baseURL: fake.baseURL }),
      model: 'user-sim',
      goal: 'Return order #W1.',
      systemPrompt: (goal) => `Instruction: ${goal}`,
    });
    expect(await user.opening()).toBe('I want to return order #W1.');
    expect(await user.respond('Done, it is returned.', { trace: [] })).toEqual({ text: 'Thanks.', done: true });
    expect(fake.requests[0]!.body.messages).toEqual([
      { role: 'system', content: 'Instruction: Return order #W1.' },
      { role: 'user', content: 'Hi! How can I help you today?' },
    ]);
    expect(fake.requests[1]!.body.messages.slice(2)).toEqual([
      { role: 'assistant', content: 'I want to return order #W1.' },
      { role: 'user', content: 'Done, it is returned.' },
    ]);
    const replay = createRecordedUser(user.record());
    expect(replay.opening()).toBe('I want to return order #W1.');
    expect(replay.respond('Done, it is returned.', { trace: [] })).toEqual({ text: 'Thanks.', done: true });
    expect(replay.record()).toEqual(user.record());
  });

  it('refuses to replay a different conversation', () => {
    const prompt = [{ role: 'system' as const, content: 'goal' }, { role: 'user' as const, content: 'Hi! How can I help you today?' }];
    const recording: LlmUserRecording = {
      format: LLM_USER_RECORDING_FORMAT,
      model: 'm',
      exchanges: [
        { prompt, completion: 'I need help.', usage: {} },
        { prompt: [...prompt, { role: 'assistant', content: 'I need help.' }, { role: 'user', content: 'With what?' }], completion: `Nothing. ${USER_DONE}`, usage: {} },
      ],
    };
    const same = createRecordedUser(recording);
    expect(same.opening()).toBe('I need help.');
    expect(same.respond('With what?', { trace: [] })).toEqual({ text: 'Nothing.', done: true });
    const other = createRecordedUser(recording);
    other.opening();
    expect(() => other.respond('Something else', { trace: [] })).toThrow(/diverged at exchange 1/);
    expect(() => createRecordedUser({ exchanges: [] })).toThrow(/not an LLM user recording/);
  });
});

const USER_DONE = '###STOP###';
