import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAIProcess, type FakeOpenAI } from '../../../../test/support/fake-openai.js';
import { createRecordedUser } from '../../../agents/openai.js';
import type { Action, Agent } from '../../../core/index.js';
import { main } from '../../../cli/main.js';
import { createMemoryRecorder, verifyReplay } from '../../../runtime/index.js';
import { createTauBenchDomain } from './domain.js';
import { createTauBenchRunner } from './episode.js';
import { fixtureTrainTasks, writeTauBenchFixture } from './fixtures.js';
import { importTauBench, type TauBenchImport } from './import.js';
import { createTauBenchLlmUser, tauBenchUserSystemPrompt } from './llm-user.js';

function talker(script: Action[]): Agent {
  return {
    name: 'talker',
    version: '1',
    config: () => ({}),
    begin: () => {
      let i = 0;
      return { act: () => script[i++] ?? { type: 'finish' } };
    },
  };
}

describe('the LLM user on imported tasks (fake chat-completions server)', { timeout: 60_000 }, () => {
  let dir: string;
  let imported: TauBenchImport;
  let fake: FakeOpenAI | undefined;
  beforeAll(() => {
    dir = writeTauBenchFixture(mkdtempSync(path.join(tmpdir(), 'envharness-tb-llm-')));
    imported = importTauBench({ dir });
  });
  afterAll(async () => {
    await fake?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("plays tau-bench's user prompt, ends on ###STOP###, records its prompts and replays without a model", async () => {
    fake = await startFakeOpenAIProcess([{ content: 'Hi, I want to cancel my order #W1.' }, { content: 'Yes, please.' }, { content: '###STOP###' }]);
    const llm = createTauBenchLlmUser({ baseUrl: fake.baseURL, model: 'fake-user', env: {} });
    const task = imported.sets[0]!.batch.tasks[0]!;
    const recorder = createMemoryRecorder();
    const observed: string[] = [];
    const agent = talker([
      { type: 'message', text: 'Shall I cancel #W1?' },
      { type: 'tool', tool: 'cancel_pending_order', args: { order_id: '#W1', reason: 'no longer needed' } },
      { type: 'message', text: 'Your order #W1 is cancelled.' },
    ]);
    const watched: Agent = { ...agent, begin: (ctx) => { const s = agent.begin(ctx); return { act: (o) => { observed.push(o.text ?? ''); return s.act(o); } }; } };
    try {
      const result = await createTauBenchRunner(imported.domain, { user: llm.user }).runEpisode(task, watched, { seed: 0, recorder });
      expect([result.endReason, result.outcome, result.tauBench.reward]).toEqual(['user_done', 1, 1]);
      expect(observed.slice(0, 2)).toEqual(['Hi, I want to cancel my order #W1.', 'Yes, please.']);
    } finally {
      await llm.close();
    }
    await fake.close(); // every request line the fake wrote is read once it has closed
    const first = fake.requests[0]!.body as { model: string; messages: Array<{ role: string; content: string }> };
    expect(first.model).toBe('fake-user');
    expect(first.messages).toEqual([
      { role: 'system', content: tauBenchUserSystemPrompt(fixtureTrainTasks()[0]!.instruction) },
      { role: 'user', content: 'Hi! How can I help you today?' },
    ]);
    expect(fake.requests).toHaveLength(3);

    // The recording is in the last step's info.user; a recorded user replays the episode exactly.
    const transitions = recorder.transitions(recorder.episodes()[0]!.id);
    const recording = transitions.at(-1)!.info.user as { exchanges: unknown[] };
    expect(recording.exchanges).toHaveLength(3);
    const replay = createTauBenchDomain(imported.domain, { user: () => createRecordedUser(recording) });
    expect(verifyReplay(replay, task, 0, transitions)).toEqual([]);
  });

  it('runs `tau-bench eval --user llm` against the endpoint', async () => {
    await fake?.close();
    fake = await startFakeOpenAIProcess([{ content: 'Hello, please cancel my order #W1.' }, { content: 'Thanks! ###STOP###' }]);
    const store = `sqlite:${path.join(dir, 'store.db')}`;
    const out: string[] = [];
    const io = { out: (s: string) => out.push(s), err: () => undefined, isTTY: false };
    expect(await main(['node', 'envharness', '--store', store, 'import', 'tau-bench', '--data', dir], io, {})).toBe(0);
    out.length = 0;
    const code = await main(['node', 'envharness', '--store', store, '--json', 'tau-bench', 'eval', '--set', 'train', '--limit', '1', '--user', 'llm', '--base-url', fake.baseURL, '--model', 'fake-user'], io, {});
    expect(code).toBe(0);
    expect((JSON.parse(out.join('\n')) as { passK: number[]; user: string }).passK).toEqual([1]);
    // The opening, then the user's answer to the oracle's gold message, which ends the conversation. Closing
    // the fake first reads every request line it wrote.
    await fake.close();
    expect(fake.requests).toHaveLength(2);
  });
});
