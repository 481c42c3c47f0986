import { describe, expect, it } from 'vitest';
import { createRng } from '../core/index.js';
import type { Action, FaultRule, JsonValue, StepResult } from '../core/index.js';
import { partialOutput } from './faults.js';
import { createEpisode, createMemoryRecorder } from './index.js';
import type { EpisodeOptions } from './index.js';
import { createInventoryDomain, makeInventoryTask } from './testing/index.js';

const inventory = createInventoryDomain();
const get = (item: string): Action => ({ type: 'tool', tool: 'get_stock', args: { item } });
const add = (item: string, quantity: number): Action => ({ type: 'tool', tool: 'add_stock', args: { item, quantity } });
const list: Action = { type: 'tool', tool: 'list_items', args: {} };

function faulty(rules: FaultRule[], options: EpisodeOptions = {}, seed = 1) {
  const task = makeInventoryTask({ faults: { rules }, budget: { steps: 200, consecutiveErrors: 200 } });
  const episode = createEpisode(inventory, task, options);
  episode.reset({ seed });
  return episode;
}

/** Which of `n` calls get a fault, for one seed. */
function pattern(seed: number, n = 40, interleave = false): string[] {
  const recorder = createMemoryRecorder();
  const episode = faulty([{ tool: 'get_stock', kind: 'transient', rate: 0.3 }, { tool: '*', kind: 'timeout', rate: 0.1 }], { recorder }, seed);
  for (let i = 0; i < n; i++) {
    if (interleave) episode.step({ type: 'message', text: 'hold on' });
    episode.step(i % 2 === 0 ? get('widget-1') : list);
  }
  return recorder.transitions(episode.id!).flatMap((t) => (t.faults ?? []).map((f) => `${f.call}:${f.tool}:${f.kind}`));
}

describe('fault injection', () => {
  it('injects the same faults at the same calls for the same seed', () => {
    const first = pattern(11);
    expect(first.length).toBeGreaterThan(3);
    expect(pattern(11)).toEqual(first);
  });

  it('draws different faults for different seeds', () => {
    const patterns = new Set(Array.from({ length: 10 }, (_, seed) => pattern(seed).join(',')));
    expect(patterns.size).toBeGreaterThan(5);
  });

  it('decides by tool-call index, so messages in between do not move faults', () => {
    expect(pattern(3, 30, true)).toEqual(pattern(3, 30, false));
  });

  it('turns a timeout into an error observation, records it, and does not apply a faulted write', () => {
    const recorder = createMemoryRecorder();
    const episode = faulty([{ tool: 'add_stock', kind: 'timeout', rate: 1, maxPerEpisode: 1 }], { recorder });
    const before = episode.stateHash();
    const result = episode.step(add('widget-1', 2));
    expect(result.observation.error?.code).toBe('TIMEOUT');
    expect(result.feedback.find((f) => f.code === 'FAULT_INJECTED')).toMatchObject({ ref: 'timeout', details: { tool: 'add_stock', call: 0, persistent: false } });
    expect(result.info.stateHash).toBe(before);
    expect(recorder.transitions(episode.id!)[0]?.faults).toEqual([{ kind: 'timeout', tool: 'add_stock', call: 0 }]);
    const retry = episode.step(add('widget-1', 2));
    expect(retry.observation.output).toEqual({ item: 'widget-1', quantity: 7 });
    expect(retry.feedback.map((f) => f.code)).toContain('RECOVERED');
    expect(retry.feedback.map((f) => f.code)).not.toContain('REDUNDANT_CALL');
  });

  it('does not count injected faults as agent errors', () => {
    const task = makeInventoryTask({ faults: { rules: [{ tool: 'get_stock', kind: 'transient', rate: 1 }] }, budget: { steps: 50, consecutiveErrors: 2 } });
    const episode = createEpisode(inventory, task);
    episode.reset({ seed: 1 });
    const results = Array.from({ length: 5 }, () => episode.step(get('widget-1')));
    expect(results.every((r) => !r.truncated && r.observation.error?.code === 'TRANSIENT_ERROR')).toBe(true);
  });

  it('tells the agent when to retry after a rate limit', () => {
    const episode = faulty([{ tool: 'get_stock', kind: 'rate_limit', rate: 1, retryAfterMs: 750, maxPerEpisode: 1 }]);
    const result = episode.step(get('widget-1'));
    expect(result.observation.error).toMatchObject({ code: 'RATE_LIMITED', retryAfterMs: 750 });
    expect(result.feedback[0]).toMatchObject({ code: 'FAULT_INJECTED', ref: 'rate_limit', details: { retryAfterMs: 750 } });
  });

  it('returns partial results that a clean retry recovers from', () => {
    const episode = faulty([{ tool: 'list_items', kind: 'partial', rate: 1, maxPerEpisode: 1 }]);
    const partial = episode.step(list);
    expect(partial.observation.output).toHaveLength(1);
    expect(partial.feedback.map((f) => f.code)).toContain('FAULT_INJECTED');
    const full = episode.step(list);
    expect(full.observation.output).toHaveLength(3);
    expect(full.feedback.map((f) => f.code)).toContain('RECOVERED');
  });

  it('returns stale reads from the state before the last write', () => {
    const episode = faulty([{ tool: 'get_stock', kind: 'stale', rate: 1, maxPerEpisode: 1 }]);
    // No write yet: nothing to be stale about, so no fault.
    expect(episode.step(get('widget-1')).observation.output).toMatchObject({ quantity: 5 });
    episode.step(add('widget-1', 2));
    const stale = episode.step(get('widget-1'));
    expect(stale.observation.output).toMatchObject({ quantity: 5 });
    expect(stale.feedback.find((f) => f.code === 'FAULT_INJECTED')?.ref).toBe('stale');
    const fresh = episode.step(get('widget-1'));
    expect(fresh.observation.output).toMatchObject({ quantity: 7 });
    expect(fresh.feedback.map((f) => f.code)).toContain('RECOVERED');
  });

  it('respects maxPerEpisode', () => {
    const episode = faulty([{ tool: 'get_stock', kind: 'transient', rate: 1, maxPerEpisode: 2 }]);
    const errors = Array.from({ length: 5 }, () => episode.step(get('widget-1')).observation.error?.code ?? 'ok');
    expect(errors).toEqual(['TRANSIENT_ERROR', 'TRANSIENT_ERROR', 'ok', 'ok', 'ok']);
  });

  it('gives up on a persistent fault after the retries and marks the episode unrecoverable', () => {
    const episode = faulty([{ tool: 'get_stock', kind: 'transient', rate: 1, persistent: true }], { faultRetries: 2 });
    const results: StepResult[] = [];
    while (episode.status === 'running') results.push(episode.step(get('widget-1')));
    expect(results).toHaveLength(3);
    expect(results.at(-1)).toMatchObject({ truncated: true, truncation: 'errors', info: { endReason: 'unrecoverable_fault', excludeFromStats: true, outcome: 0 } });
  });

  it('marks an episode that fails after a persistent fault as unrecoverable', () => {
    const episode = faulty([{ tool: 'get_stock', kind: 'timeout', rate: 1, persistent: true }], { faultRetries: 5 });
    episode.step(get('widget-1'));
    expect(episode.step({ type: 'finish' })).toMatchObject({ terminated: true, info: { endReason: 'unrecoverable_fault', excludeFromStats: true } });
  });

  it('keeps a success after a persistent fault counted normally', () => {
    const task = makeInventoryTask({ faults: { rules: [{ tool: 'list_items', kind: 'timeout', rate: 1, persistent: true }] } });
    const episode = createEpisode(inventory, task);
    episode.reset({ seed: 1 });
    episode.step(list);
    const last = task.spec.solution.map((a) => episode.step(a)).at(-1)!;
    expect(last.info).toMatchObject({ outcome: 1, endReason: 'finished', excludeFromStats: false });
  });

  it('injects nothing when faults are turned off', () => {
    const episode = faulty([{ tool: '*', kind: 'timeout', rate: 1 }], { faults: false });
    expect(episode.step(get('widget-1')).observation.error).toBeUndefined();
  });
});

describe('partialOutput', () => {
  const rng = () => createRng(['partial-test']);
  it('halves arrays, halves the longest array field, or drops one field', () => {
    expect(partialOutput([1, 2, 3, 4, 5], rng())).toEqual([1, 2]);
    expect(partialOutput({ a: [1, 2], b: [1, 2, 3, 4], c: 'x' }, rng())).toEqual({ a: [1, 2], b: [1, 2], c: 'x' });
    const dropped = partialOutput({ a: 1, b: 2, c: 3 }, rng()) as Record<string, JsonValue>;
    expect(Object.keys(dropped)).toHaveLength(2);
    expect(partialOutput({ a: 1, b: 2, c: 3 }, rng())).toEqual(dropped);
    expect(partialOutput('text', rng())).toBe('text');
  });
});
