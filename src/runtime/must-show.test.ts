/** The "must show" tests of the runtime issue: bad calls (T6), determinism (T12), replay (T15), malformed-action fuzz (T5). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_BUDGET, canonicalize, createRng, isEnvHarnessError } from '../core/index.js';
import type { Action, StepResult, Task, Transition } from '../core/index.js';
import { createSqliteStore } from '../storage/sqlite/index.js';
import { createEpisode, createMemoryRecorder, createStoreRecorder, verifyReplay } from './index.js';
import { resolvesIn } from '../core/index.js';
import type { Recorder } from './index.js';
import { clearanceTemplate, createInventoryDomain, instantiate, makeInventoryTask, restockTemplate } from './testing/index.js';
import { systemClock } from '../cli/clock.js';

const inventory = createInventoryDomain();

/** One of the three kinds of well-formed bad call, chosen by `rng`. */
function badCall(rng: ReturnType<typeof createRng>): Action {
  switch (rng.int(0, 2)) {
    case 0:
      return { type: 'tool', tool: rng.pick(['refund_everything', 'get_stocks', 'DROP_TABLE', 'list']), args: { item: 'widget-1' } };
    case 1:
      return rng.pick<Action>([
        { type: 'tool', tool: 'add_stock', args: { item: 'widget-1', quantity: 'lots' } },
        { type: 'tool', tool: 'get_stock', args: { item: 42 } },
        { type: 'tool', tool: 'remove_stock', args: { item: ['gadget-2'], quantity: 1 } },
        { type: 'tool', tool: 'add_stock', args: { item: 'widget-1', quantity: -3 } },
      ]);
    default:
      return rng.pick<Action>([
        { type: 'tool', tool: 'remove_stock', args: { item: 'gadget-2', quantity: 4 } },
        { type: 'tool', tool: 'get_stock', args: { item: 'unobtainium-7' } },
        { type: 'tool', tool: 'delete_item', args: { item: 'nothing-here' } },
      ]);
  }
}

describe('T6: 1,000 well-formed bad calls', () => {
  it('answers each with a recorded error observation, leaves the state alone, and ends at exactly the error limit', () => {
    const rng = createRng(['t6']);
    const recorder = createMemoryRecorder();
    const task = makeInventoryTask();
    const limit = DEFAULT_BUDGET.consecutiveErrors;
    let calls = 0;
    for (let e = 0; e < 1000 / limit; e++) {
      const episode = createEpisode(inventory, task, { recorder });
      episode.reset({ seed: e });
      const initial = episode.stateHash();
      const results: StepResult[] = [];
      while (episode.status === 'running') {
        results.push(episode.step(badCall(rng)));
        calls++;
      }
      expect(results).toHaveLength(limit);
      expect(results.every((r) => r.observation.error !== undefined && r.info.stateHash === initial)).toBe(true);
      expect(results.every((r) => r.feedback.some((f) => f.code === 'INVALID_ACTION' || f.code === 'PRECONDITION_FAILED'))).toBe(true);
      expect(results.slice(0, -1).every((r) => !r.truncated && !r.terminated)).toBe(true);
      expect(results.at(-1)).toMatchObject({ truncated: true, truncation: 'errors', info: { endReason: 'too_many_errors' } });
      expect(recorder.transitions(episode.id!)).toHaveLength(limit);
    }
    expect(calls).toBe(1000);
  });

  it('ends a long streak at exactly a configured limit of 1,000', () => {
    const task = makeInventoryTask({ budget: { steps: 5000, consecutiveErrors: 1000 } });
    const recorder = createMemoryRecorder();
    const episode = createEpisode(inventory, task, { recorder });
    episode.reset({ seed: 3 });
    const rng = createRng(['t6-long']);
    const initial = episode.stateHash();
    let last: StepResult | undefined;
    let steps = 0;
    while (episode.status === 'running') {
      last = episode.step(badCall(rng));
      steps++;
      if (last.info.stateHash !== initial || last.observation.error === undefined) throw new Error(`step ${steps} changed the state or had no error`);
    }
    expect(steps).toBe(1000);
    expect(last).toMatchObject({ truncation: 'errors', info: { endReason: 'too_many_errors' } });
    expect(recorder.transitions(episode.id!)).toHaveLength(1000);
  });
});

/** 50 scripted steps touching every path: reads, writes, bad calls, refusals, faults, the user, and a finish. */
function script(): Action[] {
  const rng = createRng(['t12-script']);
  const pool: Action[] = [
    { type: 'tool', tool: 'get_stock', args: { item: 'widget-1' } },
    { type: 'tool', tool: 'list_items', args: { prefix: 'g' } },
    { type: 'tool', tool: 'list_items', args: {} },
    { type: 'tool', tool: 'add_stock', args: { item: 'widget-1', quantity: 1 } },
    { type: 'tool', tool: 'remove_stock', args: { item: 'gadget-2', quantity: 1 } },
    { type: 'tool', tool: 'remove_stock', args: { item: 'gadget-2', quantity: 99 } },
    { type: 'tool', tool: 'add_stock', args: { item: 'bolt-3', quantity: 1 } },
    { type: 'tool', tool: 'delete_item', args: { item: 'widget-1' } },
    { type: 'tool', tool: 'teleport', args: {} },
    { type: 'message', text: 'Please confirm the change.', usage: { inputTokens: 12, outputTokens: 3 } },
    { type: 'message', text: 'Working on it.' },
  ];
  const actions = Array.from({ length: 49 }, () => rng.pick(pool));
  actions.push({ type: 'finish', answer: 'done' });
  return actions;
}

describe('T12: determinism over 200 seeds', () => {
  const task = makeInventoryTask({
    budget: { steps: 60, consecutiveErrors: 60, tokens: 10_000 },
    constraints: { confirmTools: ['delete_item'] },
    faults: {
      rules: [
        { tool: 'get_stock', kind: 'transient', rate: 0.2 },
        { tool: 'list_items', kind: 'partial', rate: 0.3 },
        { tool: 'get_stock', kind: 'stale', rate: 0.3 },
        { tool: '*', kind: 'rate_limit', rate: 0.1, retryAfterMs: 200 },
      ],
    },
  });
  const actions = script();

  const run = (episode: ReturnType<typeof createEpisode>, seed: number): string => {
    const parts = [canonicalize(episode.reset({ seed }))];
    for (const action of actions) {
      if (episode.status !== 'running') break;
      const r = episode.step(action);
      if (!Number.isFinite(r.reward)) throw new Error(`non-finite reward ${r.reward}`);
      parts.push(canonicalize([r.observation, r.reward, r.terminated, r.truncated, r.truncation ?? null, r.feedback, r.info]));
    }
    return parts.join('\n');
  };

  it('gives byte-identical (observation, reward, terminated, truncated, info) for each seed, reset twice and in a fresh episode', () => {
    const traces = new Set<string>();
    let steps = 0;
    for (let seed = 0; seed < 200; seed++) {
      const episode = createEpisode(inventory, task);
      const first = run(episode, seed);
      const second = run(episode, seed);
      const fresh = run(createEpisode(inventory, task), seed);
      expect(second).toBe(first);
      expect(fresh).toBe(first);
      traces.add(first);
      steps += first.split('\n').length - 1;
    }
    expect(steps).toBe(200 * 50);
    // Seeds matter: the user's phrasing and the faults differ between seeds.
    expect(traces.size).toBeGreaterThan(190);
  });

  it('refuses a step before reset', () => {
    const episode = createEpisode(inventory, task);
    expect(() => episode.step(actions[0]!)).toThrow(expect.objectContaining({ code: 'EPISODE_NOT_FOUND' }));
  });
});

/** A seeded agent that mostly follows the reference solution but wanders, retries and errs. */
function wanderer(task: Task, seed: number): Action[] {
  const rng = createRng([task.id, seed, 'wanderer']);
  const out: Action[] = [];
  for (const action of task.spec.solution) {
    while (rng.chance(0.3)) {
      out.push(
        rng.pick<Action>([
          { type: 'tool', tool: 'list_items', args: {} },
          { type: 'tool', tool: 'get_stock', args: { item: 'nothing-1' } },
          { type: 'message', text: 'One moment please.' },
          { type: 'tool', tool: 'fly', args: {} },
        ]),
      );
    }
    out.push(action);
    // Retry calls, as an agent does after an injected fault.
    if (action.type === 'tool' && rng.chance(0.5)) out.push(action);
  }
  return out;
}

describe('T15: recorded episodes replay exactly', () => {
  it('replays 100 episodes recorded to SQLite to identical per-step observations, rewards and hashes', async () => {
    const store = createSqliteStore(':memory:', { now: systemClock });
    try {
      const recorder = createStoreRecorder(store, { maxBatch: 64 });
      const episodes: Array<{ id: string; task: Task; seed: number }> = [];
      for (let i = 0; i < 100; i++) {
        const template = i % 2 === 0 ? restockTemplate : clearanceTemplate;
        const task = instantiate(template as typeof restockTemplate, 1 + (i % template.levels.length), 100 + i);
        const episode = createEpisode(inventory, task, { recorder });
        episode.reset({ seed: i });
        for (const action of wanderer(task, i)) if (episode.status === 'running') episode.step(action);
        if (episode.status === 'running') episode.step({ type: 'finish' });
        episodes.push({ id: episode.id!, task, seed: i });
      }
      await recorder.flush();
      let steps = 0;
      let successes = 0;
      for (const { id, task, seed } of episodes) {
        const stored = await store.listTransitions(id);
        steps += stored.length;
        if (stored.at(-1)?.info.outcome === 1) successes++;
        expect(verifyReplay(inventory, task, seed, stored)).toEqual([]);
      }
      expect(steps).toBeGreaterThan(500);
      // The mix is real: some episodes succeed, some fail.
      expect(successes).toBeGreaterThan(10);
      expect(successes).toBeLessThan(100);
    } finally {
      await store.close();
    }
  });
});

describe('T5: malformed-action fuzz (10,000 in-process cases)', () => {
  const valid: Action[] = [
    { type: 'tool', tool: 'get_stock', args: { item: 'widget-1' } },
    { type: 'tool', tool: 'add_stock', args: { item: 'widget-1', quantity: 2 } },
    { type: 'message', text: 'hello' },
    { type: 'finish', answer: 'x' },
  ];
  let deepest: unknown = 1;
  for (let i = 0; i < 10_000; i++) deepest = { a: deepest };
  const mutated = fc.tuple(fc.constantFrom(...valid), fc.integer({ min: 0, max: 9 }), fc.anything({ maxDepth: 3 }), fc.string()).map(([action, how, junk, key]) => {
    const copy = JSON.parse(JSON.stringify(action)) as Record<string, unknown>;
    const fields = Object.keys(copy);
    const field = fields[Math.abs(key.length) % fields.length]!;
    switch (how) {
      case 0:
        delete copy[field];
        return copy;
      case 1:
        copy[field] = junk;
        return copy;
      case 2:
        copy[key] = junk;
        return copy;
      case 3:
        return { ...copy, args: JSON.stringify(copy['args'] ?? {}) };
      case 4:
        return { ...copy, args: { ...(copy['args'] as object), [key]: junk } };
      case 5:
        return JSON.parse(`{"type":"tool","tool":"get_stock","args":{"item":"widget-1","__proto__":{"polluted":true}},"__proto__":{"polluted":true}}`);
      case 6:
        return { type: 'tool', tool: 'get_stock', args: { item: deepest } };
      case 7:
        return JSON.stringify(copy).slice(0, Math.max(0, key.length));
      case 8:
        return { ...copy, usage: junk };
      default:
        return { type: 'tool', tool: 'get_stock', args: { item: `\uD800${key}` } };
    }
  });
  const input = fc.oneof(fc.anything({ maxDepth: 4, withNullPrototype: true, withBoxedValues: true }), mutated, fc.jsonValue({ maxDepth: 4 }));

  it('never throws, names a pointer that resolves in the input, and rejects without a state change', () => {
    const task = makeInventoryTask({ budget: { steps: 1_000_000, consecutiveErrors: 1_000_000 } });
    let last: Transition | undefined;
    const recorder: Recorder = { begin() {}, record: (t) => void (last = t), end() {}, flush: () => Promise.resolve() };
    const episode = createEpisode(inventory, task, { recorder });
    episode.reset({ seed: 0 });
    let rejected = 0;
    fc.assert(
      fc.property(input, (action) => {
        if (episode.status !== 'running') episode.reset({ seed: 0 });
        const before = episode.stateHash();
        let result: StepResult;
        try {
          result = episode.step(action);
        } catch (error) {
          // The only acceptable throws are typed caller errors, and none applies to a running episode.
          throw new Error(`step threw ${isEnvHarnessError(error) ? error.code : String(error)}`);
        }
        // Plain checks: vitest's expect() costs more than a step here.
        const error = result.observation.error;
        if (error?.pointer !== undefined && !resolvesIn(action, error.pointer)) throw new Error(`pointer ${error.pointer} does not resolve in the input`);
        if (error?.code === 'INVALID_ACTION') {
          rejected++;
          if (result.info.stateHash !== before) throw new Error('a rejected action changed the state');
          if (result.feedback[0]?.code !== 'INVALID_ACTION' || result.feedback[0].pointer !== error.pointer) throw new Error('missing INVALID_ACTION feedback');
        }
        canonicalize(last);
        if (({} as Record<string, unknown>)['polluted'] !== undefined) throw new Error('prototype pollution');
      }),
      { numRuns: 10_000, seed: 20260101 },
    );
    expect(rejected).toBeGreaterThan(5_000);
  });
});
