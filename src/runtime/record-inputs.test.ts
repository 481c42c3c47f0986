import { describe, expect, it } from 'vitest';
import { builtinDomains } from '../builtins.js';
import { canonicalize, createRng, isEnvHarnessError } from '../core/index.js';
import type { Action, Domain, EpisodeRecord, Rng, Task, Transition } from '../core/index.js';
import { instantiateTask } from '../generation/index.js';
import { createEpisode, createMemoryRecorder, rebuildTransitions, type EpisodeOptions } from './index.js';
import { createInventoryDomain, makeInventoryTask } from './testing/index.js';

/**
 * Plays `actions` (stopping at the episode's end) in one episode recorded both ways: as transitions and as inputs.
 * `closeAfter` resets mid-way, so that the first attempt ends `closed`.
 */
function recordBothWays(domain: Domain<any>, task: Task, seed: number, actions: readonly unknown[], options: EpisodeOptions = {}, closeAfter?: number) {
  const play = (recordAs: 'transitions' | 'inputs') => {
    const recorder = createMemoryRecorder();
    const episode = createEpisode(domain, task, { ...options, recorder, recordAs });
    episode.reset({ seed });
    actions.forEach((action, i) => {
      if (i === closeAfter) episode.reset({ seed: seed + 1 });
      if (episode.status === 'running') episode.step(action);
    });
    if (episode.status === 'running') episode.step({ type: 'finish' });
    return recorder;
  };
  const full = play('transitions');
  const logged = play('inputs');
  return { full, logged };
}

/** Every episode of a memory recorder rebuilt from its inputs equals the one recorded as transitions, and its record matches. */
function expectSameEpisodes(domain: Domain<any>, task: Task, full: ReturnType<typeof createMemoryRecorder>, logged: ReturnType<typeof createMemoryRecorder>): void {
  const records = logged.episodes();
  expect(records.map((r) => r.id)).toEqual(full.episodes().map((r) => r.id));
  for (const record of records) {
    expect(record.inputs, `episode ${record.id} is recorded as its inputs`).toBeDefined();
    expect(logged.transitions(record.id)).toEqual([]);
    const { inputs, ...rest } = record;
    expect(canonicalize(rest)).toBe(canonicalize(full.episode(record.id)));
    expect(canonicalize(rebuildTransitions(domain, task, record))).toBe(canonicalize(full.transitions(record.id)));
  }
}

/** The reference solution with noise: random invalid inputs, repeated calls and messages spliced in. */
function noisy(task: Task, rng: Rng): unknown[] {
  const actions: unknown[] = [];
  for (const action of task.spec.solution) {
    if (rng.chance(0.2)) actions.push(rng.pick<unknown>([{ type: 'dance' }, 'free text', { type: 'tool', tool: 'no_such_tool', args: {} }, { type: 'tool', args: 3 }]));
    if (rng.chance(0.2)) actions.push({ type: 'message', text: rng.pick(['hello', 'can you confirm?', 'yes', 'what is the order id?']) });
    actions.push(action);
    if (rng.chance(0.15)) actions.push(action);
  }
  return actions;
}

describe('recording an episode as its inputs', () => {
  const domains = builtinDomains();

  it.each(domains.map((d) => [d.name, d] as const))('rebuilds the transitions of %s episodes byte for byte (every template and level, noisy solutions, faults, closed attempts)', (_name, domain) => {
    const rng = createRng(['record-inputs', domain.name]);
    let episodes = 0;
    for (const template of domain.templates) {
      for (let level = 1; level <= template.levels.length; level++) {
        let task: Task;
        try {
          task = instantiateTask(template as never, { level, seed: 7, index: level });
        } catch (error) {
          if (isEnvHarnessError(error, 'PARAMS_INVALID')) continue;
          throw error;
        }
        const actions = noisy(task, rng);
        const closeAfter = rng.chance(0.25) ? rng.int(0, actions.length) : undefined;
        const { full, logged } = recordBothWays(domain, task, rng.int(0, 1000), actions, {}, closeAfter);
        expectSameEpisodes(domain, task, full, logged);
        episodes += logged.episodes().length;
      }
    }
    expect(episodes).toBeGreaterThan(0);
  });

  const inventory = createInventoryDomain();
  const task = makeInventoryTask();
  const solution: Action[] = task.spec.solution;

  it('keeps the dynamics options, and replays with them', () => {
    const options: EpisodeOptions = { shaping: { REDUNDANT_CALL: -0.25, INVALID_ACTION: -0.5 }, budget: { steps: 3 }, noProgressSteps: 1, faults: false };
    const { full, logged } = recordBothWays(inventory, task, 3, [solution[0], solution[0], 'x', ...solution], options);
    const [record] = logged.episodes();
    expect(record!.inputs!.dynamics).toEqual({ shaping: { REDUNDANT_CALL: -0.25, INVALID_ACTION: -0.5 }, budget: { steps: 3 }, noProgressSteps: 1, faults: false });
    expect(record!.status).toBe('truncated');
    expectSameEpisodes(inventory, task, full, logged);
    // Without them the replay takes another path, and is refused.
    const bare = { ...record!, inputs: { ...record!.inputs!, dynamics: undefined } } as EpisodeRecord;
    expect(() => rebuildTransitions(inventory, task, bare)).toThrow(expect.objectContaining({ code: 'REPLAY_DIVERGED' }));
  });

  it('keeps the transition of an input that is not JSON, which a replay cannot send again', () => {
    const { full, logged } = recordBothWays(inventory, task, 2, [{ type: 'tool', tool: 'get_stock', args: { item: () => 1 } }, ...solution]);
    const [record] = logged.episodes();
    expect(record!.inputs!.kept?.map((t) => t.step)).toEqual([1]);
    expectSameEpisodes(inventory, task, full, logged);
  });

  it('records as transitions an episode steered by something else: feedback producers, or a clock with a time budget', () => {
    const producer = () => [{ code: 'SUBGOAL_REACHED' as const, message: 'custom' }];
    const timed = makeInventoryTask({ budget: { steps: 10, timeMs: 1000 } });
    for (const [t, options] of [
      [task, { feedback: [producer] }],
      [timed, { clock: () => 0 }],
    ] as const) {
      const recorder = createMemoryRecorder();
      const episode = createEpisode(inventory, t, { ...options, recorder, recordAs: 'inputs' });
      episode.reset({ seed: 1 });
      episode.step(solution[0]);
      episode.step({ type: 'finish' });
      expect(recorder.episodes()[0]!.inputs).toBeUndefined();
      expect(recorder.transitions(episode.id!)).toHaveLength(2);
    }
    // A clock without a time budget steers nothing: recorded as inputs.
    const recorder = createMemoryRecorder();
    const episode = createEpisode(inventory, task, { clock: () => 5, recorder, recordAs: 'inputs' });
    episode.reset({ seed: 1 });
    episode.step({ type: 'finish' });
    expect(recorder.episodes()[0]!.inputs).toBeDefined();
  });

  it('hands the recorder no transitions and one record with the inputs when the episode ends', () => {
    const seen: string[] = [];
    const episode = createEpisode(inventory, task, {
      recordAs: 'inputs',
      recorder: {
        begin: (r) => void seen.push(`begin ${r.status} ${r.inputs === undefined ? 'no inputs' : 'inputs'}`),
        record: (t: Transition) => void seen.push(`record ${t.step}`),
        end: (r) => void seen.push(`end ${r.status} ${r.inputs?.actions.length} actions`),
        flush: () => Promise.resolve(),
      },
    });
    episode.reset({ seed: 4 });
    for (const action of [...solution, { type: 'finish' } as const]) if (episode.status === 'running') episode.step(action);
    expect(episode.status).toBe('terminated');
    expect(seen).toEqual(['begin running no inputs', `end terminated ${episode.steps} actions`]);
  });

  it('refuses a replay that does not end as recorded, naming the difference', () => {
    const { logged } = recordBothWays(inventory, task, 9, solution);
    const record = logged.episodes()[0]!;
    const cases: Array<[EpisodeRecord, RegExp]> = [
      [{ ...record, inputs: { ...record.inputs!, stateHash: 'f'.repeat(64) } }, /final state hash/],
      [{ ...record, inputs: { ...record.inputs!, actions: record.inputs!.actions.slice(1) } }, /recorded steps replayed/],
      [{ ...record, reward: record.reward + 1 }, /reward/],
      [{ ...record, status: 'truncated' }, /ended terminated, the recording truncated/],
    ];
    for (const [tampered, message] of cases) {
      expect(() => rebuildTransitions(inventory, task, tampered)).toThrow(expect.objectContaining({ code: 'REPLAY_DIVERGED', message: expect.stringMatching(message) }));
    }
    // A domain whose tool now answers differently: same steps, another final state.
    const changed: Domain<any> = { ...inventory, hashState: (s) => `changed:${inventory.hashState(s)}` };
    expect(() => rebuildTransitions(changed, task, record)).toThrow(expect.objectContaining({ code: 'REPLAY_DIVERGED' }));
    expect(() => rebuildTransitions(inventory, makeInventoryTask({ budget: { steps: 9 } }), record)).toThrow(expect.objectContaining({ code: 'TASK_INVALID' }));
  });
});
