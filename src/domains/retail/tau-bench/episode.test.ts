import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256, type Action, type Agent, type Task } from '../../../core/index.js';
import { digestRetailExport, type RetailDomain } from '../index.js';
import { createHarness } from '../../../harness/harness.js';
import { createMemoryRecorder, createStoreRecorder } from '../../../runtime/index.js';
import { createSqliteStore } from '../../../storage/sqlite/index.js';
import { createTauBenchRunner, type AwaitableUser } from './episode.js';
import { evaluateTauBench } from './evaluate.js';
import { fixtureTrainTasks, writeTauBenchFixture } from './fixtures.js';
import { tauBenchGoldState } from './grade.js';
import { importTauBench, type TauBenchImport } from './import.js';
import { formatEpisodeState, loadEpisodeState } from './state.js';
import { systemClock } from '../../../cli/clock.js';

/** A privileged agent that plays `script(task, seed)` and then finishes. */
function scripted(script: (task: Task, seed: number) => Action[], name = 'scripted'): Agent {
  return {
    name,
    version: '1',
    privileged: true,
    config: () => ({}),
    begin(ctx) {
      const actions = script(ctx.task!, ctx.seed);
      let i = 0;
      return { act: () => actions[i++] ?? { type: 'finish' } };
    },
  };
}
const gold = scripted((task) => task.spec.solution, 'gold');

describe('createTauBenchRunner', () => {
  let dir: string;
  let imported: TauBenchImport;
  let train: Task[];
  let dev: Task[];
  beforeAll(() => {
    dir = writeTauBenchFixture(mkdtempSync(path.join(tmpdir(), 'envharness-tb-episode-')));
    imported = importTauBench({ dir });
    train = imported.sets[0]!.batch.tasks;
    dev = imported.sets[1]!.batch.tasks;
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("reports tau-bench's reward beside EnvHarness's outcome, equal on gold replays", async () => {
    const runner = createTauBenchRunner(imported.domain);
    for (const task of [...train, ...dev]) {
      const result = await runner.runEpisode(task, gold, { seed: 0 });
      expect([result.outcome, result.tauBench.reward, result.terminated]).toEqual([1, 1, true]);
      expect(result.messages).toEqual(task.spec.solution.flatMap((a) => (a.type === 'message' ? [a.text] : [])));
    }
  });

  it('scores a wrong output and a missing write 0 in both gradings', async () => {
    const runner = createTauBenchRunner(imported.domain);
    const info = train[1]!;
    const wrong = await runner.runEpisode(info, scripted(() => [{ type: 'message', text: 'It costs 20 dollars.' }]), { seed: 0 });
    expect([wrong.outcome, wrong.tauBench.reward]).toEqual([0, 0]);
    expect(wrong.tauBench).toMatchObject({ finalState: true, outputs: { '30.1': false } });
    const missing = await runner.runEpisode(train[2]!, scripted((t) => t.spec.solution.slice(1)), { seed: 0 });
    expect([missing.outcome, missing.tauBench.reward, missing.tauBench.finalState]).toEqual([0, 0, false]);
    // EnvHarness's process feedback is there too, and changes neither.
    const detour = await runner.runEpisode(train[0]!, scripted((t) => [{ type: 'tool', tool: 'get_order_details', args: { order_id: '#W9' } }, ...t.spec.solution]), { seed: 0 });
    expect([detour.outcome, detour.tauBench.reward]).toEqual([1, 1]);
    expect(detour.feedback.PRECONDITION_FAILED ?? detour.feedback.OFF_PATH).toBeGreaterThan(0);
  });

  it('ends the episode after a transfer to a human agent, as tau-bench does', async () => {
    const transfer = dev[0]!;
    const result = await createTauBenchRunner(imported.domain).runEpisode(transfer, scripted((t) => [...t.spec.solution.slice(0, 1), { type: 'tool', tool: 'cancel_pending_order', args: { order_id: '#W1', reason: 'no longer needed' } }]), { seed: 0 });
    expect([result.steps, result.endReason, result.outcome, result.tauBench.reward]).toEqual([2, 'finished', 1, 1]);
    const going = await createTauBenchRunner(imported.domain, { endOnTransfer: false }).runEpisode(transfer, scripted((t) => [...t.spec.solution.slice(0, 1), { type: 'tool', tool: 'cancel_pending_order', args: { order_id: '#W1', reason: 'no longer needed' } }]), { seed: 0 });
    expect([going.steps, going.outcome, going.tauBench.reward]).toEqual([3, 0, 0]);
  });

  it('awaits an asynchronous simulated user, delivers its turns and records it for replay', async () => {
    const seen: string[] = [];
    const user = (): AwaitableUser => {
      const turns: string[] = [];
      return {
        opening: async () => 'I want to cancel #W1.',
        respond: async (text) => {
          seen.push(text);
          turns.push(text);
          return text.includes('cancelled') ? { text: '###STOP###', done: true } : { text: 'Yes, please.' };
        },
        record: () => ({ turns }),
      };
    };
    const runner = createTauBenchRunner(imported.domain, { user });
    const recorder = createMemoryRecorder();
    const observed: string[] = [];
    const agent: Agent = {
      name: 'talker',
      version: '1',
      config: () => ({}),
      begin: () => {
        const script: Action[] = [
          { type: 'message', text: 'Shall I cancel #W1?' },
          { type: 'tool', tool: 'cancel_pending_order', args: { order_id: '#W1', reason: 'no longer needed' } },
          { type: 'message', text: 'Your order #W1 is cancelled.' },
        ];
        let i = 0;
        return {
          act: (o) => {
            observed.push(o.text ?? '');
            return script[i++] ?? { type: 'finish' };
          },
        };
      },
    };
    const result = await runner.runEpisode(train[0]!, agent, { seed: 3, recorder });
    expect(observed[0]).toBe('I want to cancel #W1.');
    expect(observed[1]).toBe('Yes, please.');
    expect(seen).toEqual(['Shall I cancel #W1?', 'Your order #W1 is cancelled.']);
    expect([result.endReason, result.outcome, result.tauBench.reward]).toEqual(['user_done', 1, 1]);
    expect(recorder.transitions(result.episodeId).at(-1)!.info.user).toEqual({ turns: seen });
  });

  it('ends an episode whose user fails as a simulator error, excluded from statistics', async () => {
    const runner = createTauBenchRunner(imported.domain, {
      user: () => ({ opening: () => 'hello', respond: async () => Promise.reject(new Error('upstream 503')) }),
    });
    const result = await runner.runEpisode(train[0]!, scripted(() => [{ type: 'message', text: 'hi' }]), { seed: 0 });
    expect([result.endReason, result.excluded, result.outcome, result.tauBench.reward]).toEqual(['simulator_error', true, 0, 0]);
  });

  it("rebuilds a recorded episode's final world from the store, in tau-bench's shape", async () => {
    const store = createSqliteStore(':memory:', { now: systemClock });
    try {
      await store.saveBatch(imported.sets[0]!.batch);
      const recorder = createStoreRecorder(store);
      const runner = createTauBenchRunner(imported.domain, { digests: true });
      const task = train[2]!;
      const result = await runner.runEpisode(task, gold, { seed: 5, recorder, episodeId: 'ep-1' });
      await recorder.close();
      const exported = await loadEpisodeState(store, imported.domain, result.episodeId);
      const expected = digestRetailExport(tauBenchGoldState(task, imported.world));
      expect(exported.sha256).toBe(expected);
      expect(exported.sha256).toBe(result.tauBench.sha256);
      expect(sha256(formatEpisodeState(imported.domain, exported.state, 'tau-bench'))).toBe(expected);
      expect(Object.keys(JSON.parse(formatEpisodeState(imported.domain, exported.state, 'json')) as object)).toEqual(['orders', 'products', 'users']);
      await expect(loadEpisodeState(store, imported.domain, 'nope')).rejects.toThrow(/no episode nope/);
    } finally {
      await store.close();
    }
  });
});

describe('pass^k on imported tasks', () => {
  let dir: string;
  let imported: TauBenchImport;
  // Task 0 succeeds on trials 0 and 1 of 3, task 1 on trial 0 only:
  // pass^1 = (2/3 + 1/3) / 2 = 1/2; pass^2 = (C(2,2)/C(3,2) + C(1,2)/C(3,2)) / 2 = (1/3 + 0) / 2 = 1/6; pass^3 = 0.
  const wins: Record<number, number[]> = { 0: [0, 1], 1: [0] };
  const flaky = scripted((task, seed) => {
    const index = (task.params as { index: number }).index;
    return wins[index]!.includes(seed) ? task.spec.solution : [{ type: 'finish' }];
  }, 'flaky');

  beforeAll(() => {
    const [cancel, , compound] = fixtureTrainTasks();
    dir = writeTauBenchFixture(mkdtempSync(path.join(tmpdir(), 'envharness-tb-passk-')), { train: [cancel!, compound!] });
    imported = importTauBench({ dir });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("computes tau-bench's C(c,k)/C(n,k) averaged over tasks (hand-computed example)", async () => {
    const tasks = imported.sets[0]!.batch.tasks;
    const result = await evaluateTauBench({ runner: createTauBenchRunner(imported.domain), tasks, agent: flaky, k: 3 });
    expect(result.passK[0]).toBeCloseTo(1 / 2, 12);
    expect(result.passK[1]).toBeCloseTo(1 / 6, 12);
    expect(result.passK[2]).toBe(0);
    expect(result.rows.at(-1)!.passK).toEqual(result.passK);
    expect(result.runtimeRows.at(-1)!.passK).toEqual(result.passK);
    expect(result.disagreements).toEqual([]);
  });

  it('gives the same numbers through harness.evaluate on the imported split', async () => {
    // Only the imported split matters here: leave out the retail domain's own shipped regression set.
    const { regressionSet: _shipped, ...retail } = imported.domain;
    const harness = await createHarness({ clock: systemClock, store: ':memory:', domains: [retail as RetailDomain] });
    try {
      await harness.store.saveBatch(imported.sets[0]!.batch);
      await harness.initialize({ seed: 0 });
      const { rows } = await harness.evaluate({ agent: flaky, split: 'dynamic', k: 3 });
      const all = rows.at(-1)!;
      expect(all.passK[0]).toBeCloseTo(1 / 2, 12);
      expect(all.passK[1]).toBeCloseTo(1 / 6, 12);
      expect(all.passK[2]).toBe(0);
    } finally {
      await harness.close();
    }
  });
});
