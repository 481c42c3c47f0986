import { describe, expect, it } from 'vitest';
import { canonicalize } from '../core/index.js';
import type { Action, StepResult } from '../core/index.js';
import { createEpisode, createMemoryRecorder, replayEpisode, verifyReplay } from './index.js';
import { createInventoryDomain, instantiate, makeInventoryTask, restockTemplate } from './testing/index.js';

const inventory = createInventoryDomain();

function record(seed: number) {
  const task = instantiate(restockTemplate, 4, 12);
  const recorder = createMemoryRecorder();
  const episode = createEpisode(inventory, task, { recorder });
  episode.reset({ seed });
  const actions: Action[] = [task.spec.solution[0]!, task.spec.solution[0]!, ...task.spec.solution];
  const results: StepResult[] = [];
  for (const action of actions) if (episode.status === 'running') results.push(episode.step(action));
  return { task, transitions: recorder.transitions(episode.id!), results };
}

describe('replay', () => {
  it('reproduces every step of a recorded episode from (task, seed, actions)', () => {
    const { task, transitions, results } = record(5);
    const replayed = replayEpisode(inventory, task, 5, transitions.map((t) => t.action));
    expect(canonicalize(replayed)).toBe(canonicalize(results));
    expect(verifyReplay(inventory, task, 5, transitions)).toEqual([]);
  });

  it('reports where a replay differs', () => {
    const { task, transitions } = record(5);
    const other = verifyReplay(inventory, task, 6, transitions);
    const tampered = transitions.map((t, i) => (i === 1 ? { ...t, info: { ...t.info, stateHash: 'x' } } : t));
    expect(verifyReplay(inventory, task, 5, tampered)).toEqual([expect.objectContaining({ step: 2, field: 'info' })]);
    // Another seed changes the user's words (and possibly the faults).
    expect(other.length).toBeGreaterThan(0);
  });

  it('records rejected inputs wrapped, and replays them as they were sent', () => {
    const task = makeInventoryTask();
    const recorder = createMemoryRecorder();
    const episode = createEpisode(inventory, task, { recorder });
    episode.reset({ seed: 2 });
    const inputs: unknown[] = [{ type: 'dance' }, 'get_stock widget-1', { type: 'tool', tool: 'get_stock', args: '{"item":"widget-1"}' }, { type: 'tool', tool: 'get_stock', args: { item: () => 1 } }];
    for (const input of inputs) episode.step(input);
    const transitions = recorder.transitions(episode.id!);
    expect(transitions.map((t) => t.action)).toEqual([
      { type: 'invalid', input: { type: 'dance' } },
      { type: 'invalid', input: 'get_stock widget-1' },
      { type: 'invalid', input: { type: 'tool', tool: 'get_stock', args: '{"item":"widget-1"}' } },
      { type: 'invalid', input: 'an object' },
    ]);
    // The last input was not JSON, so only its description is kept: that step replays as a different rejection.
    expect(verifyReplay(inventory, task, 2, transitions.slice(0, 3))).toEqual([]);
    expect(verifyReplay(inventory, task, 2, transitions).map((m) => m.step)).toContain(4);
  });

  it('refuses actions after the end unless asked to ignore them', () => {
    const task = makeInventoryTask();
    const actions: Action[] = [{ type: 'finish' }, { type: 'message', text: 'late' }];
    expect(() => replayEpisode(inventory, task, 0, actions)).toThrow(expect.objectContaining({ code: 'EPISODE_FINISHED' }));
    expect(replayEpisode(inventory, task, 0, actions, { ignoreAfterEnd: true })).toHaveLength(1);
  });

  it('reproduces a wall-time truncation when given the same clock', () => {
    const task = makeInventoryTask({ budget: { steps: 10, timeMs: 100 } });
    const times = [0, 50, 150, 150, 150];
    const clock = () => {
      let i = 0;
      return () => times[Math.min(i++, times.length - 1)]!;
    };
    const recorder = createMemoryRecorder();
    const episode = createEpisode(inventory, task, { recorder, clock: clock() });
    episode.reset({ seed: 1 });
    episode.step({ type: 'message', text: 'a' });
    expect(episode.status).toBe('truncated');
    expect(verifyReplay(inventory, task, 1, recorder.transitions(episode.id!), { clock: clock() })).toEqual([]);
  });
});
