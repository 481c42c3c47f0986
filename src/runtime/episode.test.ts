import { describe, expect, it } from 'vitest';
import { isEnvHarnessError } from '../core/index.js';
import type { Action, Domain, StepResult, Tool, TraceEntry } from '../core/index.js';
import { createEpisode, createMemoryRecorder, createRuntimeCache } from './index.js';
import { resolvesIn } from '../core/index.js';
import type { EpisodeOptions } from './index.js';
import { createInventoryDomain, createNullDomain, createNullTask, makeInventoryTask } from './testing/index.js';
import type { InventoryState } from './testing/index.js';
import { TRACE_SHARING_FROM } from './episode.js';

const inventory = createInventoryDomain();
const get = (item: string): Action => ({ type: 'tool', tool: 'get_stock', args: { item } });
const add = (item: string, quantity: number): Action => ({ type: 'tool', tool: 'add_stock', args: { item, quantity } });
const remove = (item: string, quantity: number): Action => ({ type: 'tool', tool: 'remove_stock', args: { item, quantity } });
const say = (text: string): Action => ({ type: 'message', text });
const codes = (r: StepResult): string[] => r.feedback.map((f) => f.code);

function start(overrides: Parameters<typeof makeInventoryTask>[0] = {}, options: EpisodeOptions = {}, domain: Domain<any> = inventory) {
  const episode = createEpisode(domain, makeInventoryTask(overrides), options);
  const observation = episode.reset({ seed: 1 });
  return { episode, observation };
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('reset', () => {
  it("returns the simulated user's opening, JSON-Schema tools, the policy and the budget", () => {
    const { observation } = start();
    expect(observation.kind).toBe('reset');
    expect(observation.text).toContain('Please add 2 units of widget-1.');
    expect(observation.tools?.map((t) => t.name)).toEqual(['list_items', 'get_stock', 'add_stock', 'remove_stock', 'delete_item']);
    const addSpec = observation.tools!.find((t) => t.name === 'add_stock')!;
    expect(addSpec.effect).toBe('write');
    expect(addSpec.parameters).toMatchObject({ type: 'object', required: ['item', 'quantity'], properties: { quantity: { type: 'integer' } } });
    expect(observation.policy).toContain('Locked items');
    expect(observation.budget).toEqual({ steps: 20, consecutiveErrors: 10 });
  });

  it('shows the instructions when the domain has no simulated user', () => {
    const episode = createEpisode(createNullDomain(), createNullTask());
    expect(episode.reset({ seed: 0 }).text).toBe('Call noop, then finish.');
  });

  it('lists only the allowed tools', () => {
    const { observation } = start({ constraints: { allowedTools: ['get_stock', 'add_stock'] } });
    expect(observation.tools?.map((t) => t.name)).toEqual(['get_stock', 'add_stock']);
  });

  it('is deterministic in the seed, and the seed changes what the user says', () => {
    const episode = createEpisode(inventory, makeInventoryTask());
    expect(episode.reset({ seed: 5 })).toEqual(episode.reset({ seed: 5 }));
    const openings = new Set(Array.from({ length: 20 }, (_, seed) => episode.reset({ seed }).text));
    expect(openings.size).toBeGreaterThan(1);
  });

  it('refuses a seed that is not an integer', () => {
    const episode = createEpisode(inventory, makeInventoryTask());
    expect(isEnvHarnessError(thrown(() => episode.reset({ seed: 1.5 })), 'PARAMS_INVALID')).toBe(true);
  });

  it('closes a running episode when reset again', () => {
    const recorder = createMemoryRecorder();
    const { episode } = start({}, { recorder });
    const first = episode.id!;
    episode.step(get('widget-1'));
    episode.reset({ seed: 2 });
    expect(episode.id).not.toBe(first);
    expect(recorder.episode(first)?.status).toBe('closed');
    expect(recorder.episode(episode.id!)?.status).toBe('running');
  });
});

describe('step contract', () => {
  it('throws EPISODE_NOT_FOUND before reset and EPISODE_FINISHED after the end', () => {
    const episode = createEpisode(inventory, makeInventoryTask());
    expect(isEnvHarnessError(thrown(() => episode.step(get('widget-1'))), 'EPISODE_NOT_FOUND')).toBe(true);
    episode.reset({ seed: 1 });
    expect(episode.step({ type: 'finish' }).terminated).toBe(true);
    expect(isEnvHarnessError(thrown(() => episode.step(get('widget-1'))), 'EPISODE_FINISHED')).toBe(true);
    episode.reset({ seed: 1 });
    expect(episode.step(get('widget-1')).observation.output).toEqual({ item: 'widget-1', quantity: 5, locked: false });
  });

  it('scores the reference solution 1 and reports outcome, shaping and the end separately', () => {
    const task = makeInventoryTask();
    const episode = createEpisode(inventory, task);
    episode.reset({ seed: 1 });
    const results = task.spec.solution.map((a) => episode.step(a));
    const last = results.at(-1)!;
    expect(last).toMatchObject({ reward: 1, terminated: true, truncated: false, info: { outcome: 1, shaping: 0, endReason: 'finished', excludeFromStats: false } });
    expect(last.truncation).toBeUndefined();
    expect(last.info['acceptance']).toEqual({ finalState: true, missingOutputs: [], orderViolations: [], failedChecks: [] });
    expect(results.slice(0, -1).every((r) => !r.terminated && !r.truncated && r.reward === 0 && r.info.endReason === undefined)).toBe(true);
    expect(results.map((r) => r.info.step)).toEqual([1, 2, 3, 4]);
  });

  it('changes the state hash only when a write succeeds', () => {
    const { episode } = start();
    const initial = episode.stateHash();
    const read = episode.step(get('widget-1'));
    expect(read.info.stateHash).toBe(initial);
    const write = episode.step(add('widget-1', 1));
    expect(write.info.stateHash).not.toBe(initial);
    const undo = episode.step(remove('widget-1', 1));
    // Equal worlds hash equal, whatever path led there.
    expect(undo.info.stateHash).toBe(initial);
  });
});

describe('invalid actions', () => {
  const cases: Array<[string, unknown, string]> = [
    ['an unknown tool', { type: 'tool', tool: 'launch_rocket', args: {} }, '/tool'],
    ['a wrong argument type', { type: 'tool', tool: 'add_stock', args: { item: 'widget-1', quantity: 'two' } }, '/args/quantity'],
    ['an extra argument', { type: 'tool', tool: 'get_stock', args: { item: 'widget-1', verbose: true } }, '/args'],
    ['a missing argument', { type: 'tool', tool: 'add_stock', args: { item: 'widget-1' } }, '/args'],
    ['args given as JSON text', { type: 'tool', tool: 'get_stock', args: '{"item":"widget-1"}' }, '/args'],
    ['args as an array', { type: 'tool', tool: 'get_stock', args: [] }, '/args'],
    ['no args', { type: 'tool', tool: 'get_stock' }, ''],
    ['an unknown action type', { type: 'dance' }, '/type'],
    ['no type', { tool: 'get_stock', args: {} }, ''],
    ['an extra envelope field', { type: 'message', text: 'hi', id: 3 }, '/id'],
    ['a non-object', 'get_stock widget-1', ''],
    ['null', null, ''],
    ['negative token usage', { type: 'finish', usage: { inputTokens: -1 } }, '/usage/inputTokens'],
    ['a non-finite number in args', { type: 'tool', tool: 'get_stock', args: { item: Number.NaN } }, '/args/item'],
  ];

  for (const [name, action, pointer] of cases) {
    it(`answers ${name} with an error observation naming ${pointer || 'the root'}, and changes nothing`, () => {
      const recorder = createMemoryRecorder();
      const { episode } = start({}, { recorder });
      const before = episode.stateHash();
      const result = episode.step(action);
      expect(result.observation.error).toMatchObject({ code: 'INVALID_ACTION', pointer });
      expect(resolvesIn(action, pointer)).toBe(true);
      expect(result.feedback).toEqual([expect.objectContaining({ code: 'INVALID_ACTION', pointer })]);
      expect(result.info.stateHash).toBe(before);
      expect(result.terminated || result.truncated).toBe(false);
      expect(recorder.transitions(episode.id!)).toHaveLength(1);
    });
  }

  it('names the missing argument in the message', () => {
    const { episode } = start();
    expect(episode.step({ type: 'tool', tool: 'add_stock', args: { item: 'widget-1' } }).observation.error?.message).toContain('quantity');
  });

  it('answers a failed precondition with PRECONDITION_FAILED and no state change', () => {
    const { episode } = start();
    const before = episode.stateHash();
    const result = episode.step(remove('gadget-2', 4));
    expect(result.observation.error).toMatchObject({ code: 'PRECONDITION_FAILED' });
    expect(codes(result)).toContain('PRECONDITION_FAILED');
    expect(result.info.stateHash).toBe(before);
    const missing = episode.step(get('nothing-9'));
    expect(missing.observation.error?.code).toBe('NOT_FOUND');
    expect(missing.feedback.find((f) => f.code === 'PRECONDITION_FAILED')?.details).toEqual({ code: 'NOT_FOUND' });
  });

  it('truncates at exactly the configured number of consecutive errors', () => {
    const { episode } = start({ budget: { steps: 50, consecutiveErrors: 3 } });
    const a = episode.step({ type: 'tool', tool: 'nope', args: {} });
    const b = episode.step(remove('gadget-2', 99));
    expect(a.truncated || b.truncated).toBe(false);
    const c = episode.step({ type: 'bogus' });
    expect(c).toMatchObject({ truncated: true, terminated: false, truncation: 'errors', info: { endReason: 'too_many_errors', outcome: 0 } });
    expect(c.feedback.find((f) => f.code === 'BUDGET_EXHAUSTED')).toMatchObject({ ref: 'errors' });
  });

  it('resets the error streak after a successful step', () => {
    const { episode } = start({ budget: { steps: 50, consecutiveErrors: 2 } });
    episode.step({ type: 'tool', tool: 'nope', args: {} });
    episode.step(get('widget-1'));
    expect(episode.step({ type: 'tool', tool: 'nope', args: {} }).truncated).toBe(false);
    expect(episode.step({ type: 'tool', tool: 'nope', args: {} }).truncated).toBe(true);
  });
});

describe('feedback', () => {
  it('flags REDUNDANT_CALL for the same call with no change in between, and not after a write', () => {
    const { episode } = start();
    expect(codes(episode.step(get('widget-1')))).not.toContain('REDUNDANT_CALL');
    expect(codes(episode.step({ type: 'tool', tool: 'get_stock', args: { item: 'widget-1' } }))).toContain('REDUNDANT_CALL');
    episode.step(add('widget-1', 2));
    expect(codes(episode.step(get('widget-1')))).not.toContain('REDUNDANT_CALL');
    expect(codes(episode.step(get('gadget-2')))).not.toContain('REDUNDANT_CALL');
  });

  it('flags NO_PROGRESS every k steps without a subgoal', () => {
    const { episode } = start({}, { noProgressSteps: 3 });
    const results = [say('hello'), say('one moment'), say('still here'), say('hm'), say('hm'), say('hm')].map((a) => episode.step(a));
    expect(results.map((r) => codes(r).includes('NO_PROGRESS'))).toEqual([false, false, true, false, false, true]);
    expect(codes(episode.step(get('widget-1')))).toContain('SUBGOAL_REACHED');
  });

  it('flags OFF_PATH for calls on no reference path, ignoring argument order', () => {
    const { episode } = start();
    expect(codes(episode.step(get('gadget-2')))).toContain('OFF_PATH');
    expect(codes(episode.step(get('widget-1')))).not.toContain('OFF_PATH');
    expect(codes(episode.step({ type: 'tool', tool: 'add_stock', args: { quantity: 2, item: 'widget-1' } }))).not.toContain('OFF_PATH');
  });

  it('flags ORDER_VIOLATION once and fails the outcome even when the final state is right', () => {
    const { episode } = start();
    const first = episode.step(add('widget-1', 2));
    expect(first.feedback.find((f) => f.code === 'ORDER_VIOLATION')).toMatchObject({ ref: 'check-first', severity: 'medium' });
    expect(codes(episode.step(get('widget-1')))).not.toContain('ORDER_VIOLATION');
    episode.step(say('now 7'));
    const end = episode.step({ type: 'finish' });
    expect(end.info.outcome).toBe(0);
    expect(end.info['acceptance']).toMatchObject({ finalState: true, orderViolations: ['check-first'] });
  });

  it('reports each subgoal once', () => {
    const { episode } = start();
    const results = [get('widget-1'), get('widget-1'), add('widget-1', 2)].map((a) => episode.step(a));
    expect(results.map((r) => r.feedback.filter((f) => f.code === 'SUBGOAL_REACHED').map((f) => f.ref))).toEqual([['checked'], [], ['added']]);
  });

  it('lets a non-blocking policy violation run and refuses a blocking one', () => {
    const { episode } = start({ initialState: { items: { 'widget-1': 50, 'bolt-3': 9 }, locked: ['bolt-3'] } });
    const soft = episode.step(remove('widget-1', 20));
    expect(soft.feedback.find((f) => f.code === 'POLICY_VIOLATION')).toMatchObject({ ref: 'large_removal', severity: 'low' });
    expect(soft.observation.output).toEqual({ item: 'widget-1', quantity: 30 });
    const before = episode.stateHash();
    const hard = episode.step(add('bolt-3', 1));
    expect(hard.feedback.find((f) => f.code === 'POLICY_VIOLATION')).toMatchObject({ ref: 'locked_item', severity: 'high' });
    expect(hard.observation.error?.code).toBe('POLICY_VIOLATION');
    expect(hard.info.stateHash).toBe(before);
  });

  it('runs extra feedback producers', () => {
    const { episode } = start({}, { feedback: [({ action }) => (action.type === 'message' ? [{ code: 'OFF_PATH', message: 'chatty', ref: 'custom' }] : [])] });
    expect(episode.step(say('hi')).feedback).toContainEqual({ code: 'OFF_PATH', message: 'chatty', ref: 'custom' });
  });

  it('adds configured shaping to the reward and reports it apart from the outcome', () => {
    const task = makeInventoryTask();
    const episode = createEpisode(inventory, task, { shaping: { SUBGOAL_REACHED: 0.1, INVALID_ACTION: -0.2 } });
    episode.reset({ seed: 1 });
    const bad = episode.step({ type: 'tool', tool: 'nope', args: {} });
    expect(bad).toMatchObject({ reward: -0.2, info: { outcome: 0, shaping: -0.2 } });
    const results = task.spec.solution.map((a) => episode.step(a));
    expect(results[0]).toMatchObject({ reward: 0.1, info: { shaping: 0.1, outcome: 0 } });
    expect(results.at(-1)).toMatchObject({ reward: 1, info: { outcome: 1, shaping: 0 } });
  });
});

describe('constraints', () => {
  it('treats a tool outside the allowlist as unavailable', () => {
    const { episode } = start({ constraints: { allowedTools: ['get_stock', 'add_stock'] } });
    const result = episode.step(remove('widget-1', 1));
    expect(result.observation.error).toMatchObject({ code: 'INVALID_ACTION', pointer: '/tool' });
    expect(result.observation.error?.message).toContain('not available in this task');
  });

  it('refuses a confirm tool until the user confirms, and again after each write', () => {
    const { episode } = start({ constraints: { confirmTools: ['delete_item', 'add_stock'] } });
    const refused = episode.step({ type: 'tool', tool: 'delete_item', args: { item: 'gadget-2' } });
    expect(refused.observation.error?.code).toBe('CONFIRMATION_REQUIRED');
    expect(refused.feedback.find((f) => f.code === 'POLICY_VIOLATION')).toMatchObject({ severity: 'medium', ref: 'confirmation_required' });
    const reply = episode.step(say('Shall I delete gadget-2? Please confirm.'));
    expect(reply.observation.kind).toBe('message');
    expect(episode.trace.at(-1)?.userReply?.confirms).toBe(true);
    expect(episode.step({ type: 'tool', tool: 'delete_item', args: { item: 'gadget-2' } }).observation.output).toEqual({ item: 'gadget-2', deleted: true });
    expect(episode.step(add('widget-1', 1)).observation.error?.code).toBe('CONFIRMATION_REQUIRED');
  });

  it('refuses forbidden calls with a high-severity POLICY_VIOLATION', () => {
    const { episode } = start({ constraints: { forbidden: [{ tool: 'remove_stock', args: { item: 'widget-1' }, reason: 'reserved stock' }] } });
    const before = episode.stateHash();
    const result = episode.step(remove('widget-1', 1));
    expect(result.observation.error?.code).toBe('FORBIDDEN');
    expect(result.feedback.find((f) => f.code === 'POLICY_VIOLATION')).toMatchObject({ severity: 'high', ref: 'forbidden' });
    expect(result.info.stateHash).toBe(before);
    expect(episode.step(remove('gadget-2', 1)).observation.output).toEqual({ item: 'gadget-2', quantity: 2 });
  });

  it('refuses calls beyond a per-tool quota, with a warning before', () => {
    const { episode } = start({ budget: { steps: 20, perTool: { get_stock: 5 } } });
    const results = ['widget-1', 'gadget-2', 'bolt-3', 'widget-1', 'gadget-2', 'bolt-3'].map((i) => episode.step(get(i)));
    expect(results[3]!.feedback.find((f) => f.code === 'BUDGET_WARNING')).toMatchObject({ ref: 'perTool:get_stock' });
    expect(results[4]!.observation.output).toBeDefined();
    expect(results[5]!.observation.error?.code).toBe('QUOTA_EXCEEDED');
    expect(results[5]!.feedback.find((f) => f.code === 'BUDGET_EXHAUSTED')).toMatchObject({ ref: 'perTool:get_stock' });
    expect(results[5]!.truncated).toBe(false);
  });

  it('truncates when the step budget is spent, after warning at 80%', () => {
    const { episode } = start({ budget: { steps: 5 } });
    const results = Array.from({ length: 5 }, () => episode.step(say('hm')));
    expect(results.map((r) => r.feedback.some((f) => f.code === 'BUDGET_WARNING' && f.ref === 'steps'))).toEqual([false, false, false, true, false]);
    expect(results[4]).toMatchObject({ truncated: true, terminated: false, truncation: 'steps', info: { endReason: 'budget', outcome: 0 } });
  });

  it('counts reported tokens against the token budget', () => {
    const { episode } = start({ budget: { steps: 20, tokens: 100 } });
    expect(episode.step({ type: 'message', text: 'a', usage: { inputTokens: 40, outputTokens: 10 } }).truncated).toBe(false);
    const warned = episode.step({ type: 'message', text: 'b', usage: { outputTokens: 35 } });
    expect(warned.feedback.some((f) => f.code === 'BUDGET_WARNING' && f.ref === 'tokens')).toBe(true);
    expect(episode.step({ type: 'message', text: 'c', usage: { inputTokens: 15 } })).toMatchObject({ truncated: true, truncation: 'tokens' });
  });

  it('truncates on wall time from the injected clock, without running a late action', () => {
    let now = 1000;
    const { episode } = start({ budget: { steps: 20, timeMs: 100 } }, { clock: () => now });
    now = 1050;
    expect(episode.step(get('widget-1')).truncated).toBe(false);
    now = 1085;
    expect(episode.step(get('gadget-2')).feedback.some((f) => f.code === 'BUDGET_WARNING' && f.ref === 'time')).toBe(true);
    now = 1200;
    const before = episode.stateHash();
    const late = episode.step(add('widget-1', 2));
    expect(late).toMatchObject({ truncated: true, truncation: 'time', observation: { error: { code: 'BUDGET_EXHAUSTED' } } });
    expect(late.info.stateHash).toBe(before);
  });

  it('truncates when the tool-call budget is spent', () => {
    const { episode } = start({ budget: { steps: 20, toolCalls: 2 } });
    expect(episode.step(get('widget-1')).truncated).toBe(false);
    expect(episode.step(say('hm')).truncated).toBe(false);
    expect(episode.step(get('gadget-2'))).toMatchObject({ truncated: true, truncation: 'tool_calls' });
  });

  it('takes budget overrides from the options', () => {
    const { episode, observation } = start({}, { budget: { steps: 2 } });
    expect(observation.budget?.steps).toBe(2);
    episode.step(say('a'));
    expect(episode.step(say('b')).truncation).toBe('steps');
  });

  it('lets terminated win over a budget spent on the same step', () => {
    const task = makeInventoryTask({ budget: { steps: 4 } });
    const episode = createEpisode(inventory, task);
    episode.reset({ seed: 1 });
    const last = task.spec.solution.map((a) => episode.step(a)).at(-1)!;
    expect(last).toMatchObject({ terminated: true, truncated: false, reward: 1 });
  });
});

describe('outcome', () => {
  it('matches required outputs after normalisation (case, commas)', () => {
    const { episode } = start({ acceptance: { finalState: false, outputs: ['Widget-1: 1,007'] } });
    episode.step(say('WIDGET-1: 1007 units'));
    expect(episode.step({ type: 'finish' }).info.outcome).toBe(1);
    const { episode: other } = start({ acceptance: { finalState: false, outputs: ['1007'] } });
    other.step(say('100 7'));
    expect(other.step({ type: 'finish' }).info['acceptance']).toMatchObject({ missingOutputs: ['1007'] });
  });

  it('compares the finish answer after normalisation', () => {
    const acceptance = { finalState: false, answer: 'Five' };
    const { episode } = start({ acceptance });
    expect(episode.step({ type: 'finish', answer: ' five ' }).info.outcome).toBe(1);
    const { episode: wrong } = start({ acceptance });
    expect(wrong.step({ type: 'finish', answer: '5' }).info.outcome).toBe(0);
  });

  it('scores 0 when truncated, even with the right state', () => {
    const { episode } = start({ budget: { steps: 3 }, acceptance: { finalState: true } });
    episode.step(get('widget-1'));
    episode.step(add('widget-1', 2));
    expect(episode.step(say('done'))).toMatchObject({ truncated: true, info: { outcome: 0 } });
  });

  it('terminates with user_done when the simulated user ends the conversation', () => {
    const { episode } = start({ acceptance: { finalState: false } });
    expect(episode.step(say('Anything else I can do?'))).toMatchObject({ terminated: true, info: { endReason: 'user_done', outcome: 1 } });
  });

  it('applies the domain acceptance checks', () => {
    const strict: Domain<InventoryState> = { ...inventory, acceptance: [{ id: 'never', check: () => 'always fails' }] };
    const { episode } = start({}, {}, strict);
    const end = episode.step({ type: 'finish' });
    expect(end.info['acceptance']).toMatchObject({ failedChecks: [{ id: 'never', message: 'always fails' }] });
  });
});

describe('simulator errors', () => {
  it('ends the episode as simulator_error, excluded from statistics, when a tool throws', () => {
    const boom: Tool<InventoryState, any> = { ...inventory.tools[1]!, run: () => { throw new Error('disk on fire'); } };
    const broken: Domain<InventoryState> = { ...inventory, tools: inventory.tools.map((t) => (t.name === 'get_stock' ? boom : t)) };
    const task = makeInventoryTask({ solution: [{ type: 'finish' }] });
    const episode = createEpisode(broken, task);
    episode.reset({ seed: 1 });
    const result = episode.step(get('widget-1'));
    expect(result).toMatchObject({ truncated: true, truncation: 'errors', info: { endReason: 'simulator_error', excludeFromStats: true } });
    expect(result.observation.error?.code).toBe('SIMULATOR_ERROR');
  });
});

describe('fast state', () => {
  function counting() {
    const counts = { create: 0, fork: 0, hash: 0 };
    const domain: Domain<InventoryState> = {
      ...inventory,
      createState: (s) => (counts.create++, inventory.createState(s)),
      fork: (s) => (counts.fork++, inventory.fork(s)),
      hashState: (s) => (counts.hash++, inventory.hashState(s)),
    };
    return { domain, counts };
  }

  it('builds each distinct initial state once and replays each reference solution once', () => {
    const { domain, counts } = counting();
    const cache = createRuntimeCache(domain);
    const a = makeInventoryTask();
    const b = makeInventoryTask({ instructions: 'same world, another task' });
    for (let i = 0; i < 20; i++) {
      for (const task of [a, b]) {
        const episode = createEpisode(domain, task, { cache });
        episode.reset({ seed: i });
        episode.step(get('widget-1'));
      }
    }
    expect(counts.create).toBe(1);
    expect(cache.stats).toMatchObject({ statesBuilt: 1, tasksPrepared: 2, states: 1, tasks: 2 });
    // One fork per task for its reference, one per reset; no hashing on reads.
    expect(counts.fork).toBe(2 + 40);
    expect(counts.hash).toBe(1 + 2);
  });

  it('rejects a task that does not fit the domain with TASK_INVALID and a pointer', () => {
    const bad = makeInventoryTask({ constraints: { allowedTools: ['get_stock', 'teleport'] } });
    const error = thrown(() => createEpisode(inventory, bad));
    expect(isEnvHarnessError(error, 'TASK_INVALID') && error.details?.pointer).toBe('/spec/constraints/allowedTools/1');
    const unsolvable = makeInventoryTask({ solution: [remove('gadget-2', 10), { type: 'finish' }] });
    const error2 = thrown(() => createEpisode(inventory, unsolvable));
    expect(isEnvHarnessError(error2, 'TASK_INVALID') && error2.details?.pointer).toBe('/spec/solution/0');
  });
});

describe('flush', () => {
  /** A recorder whose flushes the test settles by hand, in order. */
  function manualRecorder() {
    const pending: Array<{ resolve: () => void; reject: (e: unknown) => void }> = [];
    const recorder = {
      begin: () => undefined,
      record: () => undefined,
      end: () => undefined,
      flush: () => new Promise<void>((resolve, reject) => pending.push({ resolve, reject })),
    };
    return { recorder, pending };
  }

  it("waits for an ended attempt's flush, and rejects with its failure even when later flushes succeed", async () => {
    const { recorder, pending } = manualRecorder();
    const episode = createEpisode(inventory, makeInventoryTask(), { recorder });
    episode.reset({ seed: 1 });
    // A step of a running attempt: the recorder's own flush.
    const running = episode.flush();
    expect(pending).toHaveLength(1);
    pending[0]!.resolve();
    await running;
    episode.step({ type: 'finish' });
    // The end flushed (pending[1]); a flush now waits for it before asking the recorder again.
    expect(pending).toHaveLength(2);
    let settled = false;
    const afterEnd = episode.flush().then(
      () => (settled = true),
      (error: unknown) => error,
    );
    await Promise.resolve();
    expect(pending).toHaveLength(2);
    pending[1]!.reject(new Error('disk full'));
    expect(await afterEnd).toMatchObject({ message: 'disk full' });
    expect(settled).toBe(false);
    // Still the end's failure on every later flush, whatever the recorder answers now.
    const again = episode.flush().catch((error: unknown) => error);
    expect(await again).toMatchObject({ message: 'disk full' });
  });

  it("asks the recorder directly once an ended attempt's flush succeeded", async () => {
    const { recorder, pending } = manualRecorder();
    const episode = createEpisode(inventory, makeInventoryTask(), { recorder });
    episode.reset({ seed: 1 });
    episode.step({ type: 'finish' });
    pending[0]!.resolve();
    await new Promise((r) => setImmediate(r));
    episode.reset({ seed: 2 });
    const flushed = episode.flush();
    // No turn in between: the recorder was asked during the call.
    expect(pending).toHaveLength(2);
    pending[1]!.resolve();
    await flushed;
  });
});

describe('trace of repeated calls', () => {
  /** An inventory episode whose trace already holds TRACE_SHARING_FROM entries (other calls), so that sharing is on. */
  const long = () => {
    const { episode } = start({ budget: { steps: 2 * TRACE_SHARING_FROM, consecutiveErrors: 2 * TRACE_SHARING_FROM } });
    for (let i = 0; i < TRACE_SHARING_FROM; i++) episode.step(get(`gadget-2`));
    return episode;
  };
  const last = (episode: { trace: readonly TraceEntry[] }, n: number) => episode.trace.slice(-n);

  it('keeps the objects of the first equal call and observation, and the same JSON, past TRACE_SHARING_FROM entries', () => {
    const episode = createEpisode(createNullDomain(), createNullTask());
    episode.reset({ seed: 1 });
    for (let i = 0; i < TRACE_SHARING_FROM + 3; i++) episode.step({ type: 'tool', tool: 'noop', args: {} });
    const [a, b, c] = last(episode, 3);
    expect(b!.action).toBe(a!.action);
    expect(c!.action).toBe(a!.action);
    expect(b!.observation).toBe(a!.observation);
    expect(JSON.stringify(b)).toBe(`{"step":${TRACE_SHARING_FROM + 2},"action":{"type":"tool","tool":"noop","args":{}},"observation":{"kind":"tool","output":null},"ok":true}`);
    // Before that, every entry holds its own objects (a short attempt pays no comparison).
    const [first, second] = episode.trace;
    expect(second!.observation).not.toBe(first!.observation);
    expect(JSON.stringify(second!.observation)).toBe(JSON.stringify(first!.observation));
  });

  it('shares only what is equal member for member, in the same order', () => {
    const episode = long();
    episode.step(get('widget-1'));
    episode.step(get('widget-1'));
    episode.step({ type: 'tool', tool: 'get_stock', args: { item: 'widget-1' }, usage: { inputTokens: 3 } } as Action);
    episode.step({ args: { item: 'widget-1' }, type: 'tool', tool: 'get_stock' } as Action);
    const [first, same, withUsage, reordered] = last(episode, 4);
    expect(same!.action).toBe(first!.action);
    // get_stock answers a new object each call: equal members, the same values.
    expect(same!.observation).toBe(first!.observation);
    expect(withUsage!.action).not.toBe(first!.action);
    expect(withUsage!.action).toMatchObject({ usage: { inputTokens: 3 } });
    // The trace holds the call with parsed arguments, built in one order whatever the order sent.
    expect(reordered!.action).toBe(first!.action);
    expect(JSON.stringify(reordered!.action)).toBe('{"type":"tool","tool":"get_stock","args":{"item":"widget-1"}}');
  });

  it('does not share an observation whose output changed, nor across attempts', () => {
    const episode = long();
    episode.step(get('widget-1'));
    episode.step(add('widget-1', 2));
    episode.step(get('widget-1'));
    const [before, , after] = last(episode, 3);
    expect(after!.action).toBe(before!.action);
    expect(after!.observation).not.toBe(before!.observation);
    expect((after!.observation.output as { quantity: number }).quantity).toBe((before!.observation.output as { quantity: number }).quantity + 2);
    episode.reset({ seed: 2 });
    for (let i = 0; i < TRACE_SHARING_FROM; i++) episode.step(get('gadget-2'));
    episode.step(get('widget-1'));
    expect(last(episode, 1)[0]!.action).not.toBe(before!.action);
  });
});

describe('call feedback objects', () => {
  it('gives REDUNDANT_CALL and OFF_PATH of a tool as the same frozen objects, in the same JSON', () => {
    const { episode } = start();
    episode.step(get('nothing-like-this'));
    const second = episode.step(get('nothing-like-this'));
    const third = episode.step(get('nothing-like-this'));
    const redundant = second.feedback.find((f) => f.code === 'REDUNDANT_CALL')!;
    expect(Object.isFrozen(redundant)).toBe(true);
    expect(third.feedback.find((f) => f.code === 'REDUNDANT_CALL')).toBe(redundant);
    expect(JSON.stringify(redundant)).toBe('{"code":"REDUNDANT_CALL","message":"the same call (tool and arguments) was already made and nothing has changed since","ref":"get_stock"}');
    const offPath = third.feedback.find((f) => f.code === 'OFF_PATH')!;
    expect(Object.isFrozen(offPath)).toBe(true);
    expect(JSON.stringify(offPath)).toBe('{"code":"OFF_PATH","message":"this call (tool and arguments) is not on the reference path","ref":"get_stock"}');
  });
});
