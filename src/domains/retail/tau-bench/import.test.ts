import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalize, computeTaskId, type Agent } from '../../../core/index.js';
import { retailTools, toolsByName } from '../index.js';
import { checkTaskSchema } from '../../../generation/index.js';
import { fixtureDevTasks, fixtureTrainTasks, writeTauBenchFixture } from './fixtures.js';
import { defaultSplitFor, importTauBench, tauBenchSetName } from './import.js';
import { type TauBenchTask } from './actions.js';
import { createTauBenchRunner } from './episode.js';
import { inferTauBenchLabels } from './labels.js';

const tools = toolsByName(retailTools);
/** A privileged agent that plays the task's reference solution, then finishes. */
const gold: Agent = {
  name: 'gold',
  version: '1',
  privileged: true,
  config: () => ({}),
  begin(ctx) {
    const actions = ctx.task!.spec.solution;
    let i = 0;
    return { act: () => actions[i++] ?? { type: 'finish' } };
  },
};
const cancel = (order: string) => ({ name: 'cancel_pending_order', kwargs: { order_id: order, reason: 'no longer needed' } });

describe('inferTauBenchLabels', () => {
  it('types a task by its write tools and levels it by max(writes, orders)', () => {
    expect(inferTauBenchLabels([cancel('#W1')], tools)).toEqual({ taskType: 'cancel', level: 1, writes: 1, orders: 1, tools: ['cancel_pending_order'], messages: 0 });
    expect(inferTauBenchLabels([cancel('#W1'), cancel('#W2')], tools)).toMatchObject({ taskType: 'cancel', level: 2, writes: 2, orders: 2 });
    const compound = [cancel('#W1'), { name: 'modify_pending_order_address', kwargs: { order_id: '#W1' } }, { name: 'get_order_details', kwargs: { order_id: '#W3' } }];
    expect(inferTauBenchLabels(compound, tools)).toMatchObject({ taskType: 'compound', level: 2, writes: 2, orders: 2 });
    expect(inferTauBenchLabels([], tools)).toMatchObject({ taskType: 'information', level: 1, writes: 0, orders: 0 });
    expect(inferTauBenchLabels([{ name: 'transfer_to_human_agents', kwargs: { summary: 's' } }], tools)).toMatchObject({ taskType: 'out_of_scope', level: 1 });
    expect(inferTauBenchLabels([{ name: 'respond', kwargs: { content: 'hi' } }], tools)).toMatchObject({ taskType: 'information', messages: 1, tools: [] });
    const many = ['#W1', '#W2', '#W3', '#W4', '#W5', '#W6', '#W7'].map(cancel);
    expect(inferTauBenchLabels(many, tools).level).toBe(5);
    expect(inferTauBenchLabels([{ name: 'modify_user_address', kwargs: { user_id: 'u' } }], tools)).toMatchObject({ taskType: 'address_change', orders: 0, level: 1 });
  });
});

describe('importTauBench on a fixture data folder', () => {
  let dir: string;
  beforeAll(() => {
    dir = writeTauBenchFixture(mkdtempSync(path.join(tmpdir(), 'envharness-tb-import-')));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('maps each tau-bench task to a content-addressed task with the gold actions as its solution', () => {
    const { sets, world } = importTauBench({ dir });
    expect(sets.map((s) => [s.set, s.split, s.template])).toEqual([
      ['train', 'dynamic', 'retail/tau-bench-train@1'],
      ['dev', 'regression', 'retail/tau-bench-dev@1'],
    ]);
    const [first, info, , refused] = sets[0]!.batch.tasks;
    expect(first!.spec.solution).toEqual([
      { type: 'tool', tool: 'cancel_pending_order', args: { order_id: '#W1', reason: 'no longer needed' } },
      { type: 'message', text: 'Your order #W1 is cancelled.' },
      { type: 'finish' },
    ]);
    expect(first!.spec.user).toEqual({ source: 'tau-bench', user_id: 'ann_lee', instruction: fixtureTrainTasks()[0]!.instruction });
    expect(first!.spec.initialState).toEqual({ world: 'tau-bench', digest: world.digest });
    expect(first!.spec.acceptance).toEqual({ finalState: true, outputs: [] });
    expect(first!.params).toEqual({ source: 'tau-bench', set: 'train', index: 0, task: fixtureTrainTasks()[0] });
    expect(first!.id).toBe(computeTaskId(first!));
    expect(checkTaskSchema(first)).toEqual({ ok: true });
    expect(info!.spec.acceptance.outputs).toEqual(['30.1']);
    expect([info!.taskType, info!.level]).toEqual(['information', 1]);
    // The refused gold call (returning a pending order) is not part of the reference solution.
    expect(refused!.spec.solution.map((a) => (a.type === 'tool' ? a.tool : a.type))).toEqual(['cancel_pending_order', 'finish']);
    expect(refused!.spec.tags).toContain('gold-refused:1');
    expect(sets[0]!.batch.log[3]!.details).toEqual({ trivial: false, refusedGoldCalls: [0] });
  });

  it('writes a manifest with source digests, gate results and counts, and records what it did not enforce', () => {
    const { sets, worldFiles } = importTauBench({ dir });
    const m = sets[1]!.batch.manifest;
    expect(m).toMatchObject({ generatorVersion: 'envharness-import-tau-bench/2', split: 'regression', requested: 1, accepted: 1, rejected: 0, seed: 0 });
    expect(m.templates).toEqual([{ id: 'retail/tau-bench-dev@1', version: 1, sourceDigest: sets[1]!.sourceDigest, weight: 1, taskType: 'tau-bench' }]);
    expect(m.labels['sha256:orders.json']).toBe(worldFiles['orders.json']);
    expect(m.labels.non_trivial).toContain('1 of 1 tasks already score 1');
    expect(m.counts).toEqual({ byType: { out_of_scope: 1 }, byLevel: { '1': 1 } });
    expect(m.parameterRanges).toEqual({ 'retail/tau-bench-dev@1': { '1': { 'max(writes, orders)': 1 } } });
    expect(sets[0]!.batch.manifest.counts.byType).toEqual({ cancel: 1, compound: 2, information: 1 });
  });

  it('rejects malformed tasks, tasks already stored, and a task repeated in another file, with the gate and reason in the log', () => {
    const bad = mkdtempSync(path.join(tmpdir(), 'envharness-tb-bad-'));
    try {
      const train = fixtureTrainTasks();
      writeTauBenchFixture(bad, { train: [train[0]!, { ...train[1]!, actions: 'none' } as never, train[2]!], dev: [train[0]!] });
      const first = importTauBench({ dir: bad });
      const log = first.sets[0]!.batch.log;
      expect(log.map((l) => [l.accepted, l.gate ?? null])).toEqual([[true, null], [false, 'schema'], [true, null]]);
      expect(log[1]!.reason).toContain('actions');
      expect(first.sets[0]!.batch.manifest).toMatchObject({ requested: 3, accepted: 2, rejected: 1 });
      // The same task in the dev file would sit in two splits: a duplicate of the train file's task.
      expect(first.sets[1]!.batch.log.map((l) => [l.accepted, l.gate ?? null, l.details ?? null])).toEqual([[false, 'exact_duplicate', { duplicateOf: 'tasks_train.json[0]' }]]);
      // Tasks already stored are duplicates too.
      const again = importTauBench({ dir: bad, tasks: [{ file: 'tasks_train.json', split: 'dynamic' }], existingIds: new Set([log[0]!.taskId, log[2]!.taskId]) });
      expect(again.sets[0]!.batch.manifest.accepted).toBe(0);
      expect(again.sets[0]!.batch.log.filter((l) => l.gate === 'exact_duplicate').map((l) => l.reason)).toEqual([
        'this task is already in the store: it was imported before, nothing to do',
        'this task is already in the store: it was imported before, nothing to do',
      ]);
      // Each rejection is a typed Problem like a generated batch's: its code, where in the file, and the reason (with its fix) as the message.
      const problems = [log[1]!, first.sets[1]!.batch.log[0]!, ...again.sets[0]!.batch.log.filter((l) => l.gate === 'exact_duplicate')].map((l) => {
        expect(l.problem?.message).toBe(l.reason);
        return [l.problem?.code, l.problem?.pointer];
      });
      expect(problems).toEqual([['TASK_SCHEMA', '/1/actions'], ['ALREADY_IN_POOL', '/0'], ['ALREADY_STORED', '/0'], ['ALREADY_STORED', '/2']]);
      expect(log[1]!.reason).toMatch(/^tau-bench task 1: actions: .*; fix tasks_train\.json at \/1\/actions/);
      expect(first.sets[1]!.batch.log[0]!.reason).toMatch(/remove it from one of the files$/);
    } finally {
      rmSync(bad, { recursive: true, force: true });
    }
  });

  it('rejects a task whose own gold actions do not score 1, as ORACLE_FAILED pointing at its actions', () => {
    const bad = mkdtempSync(path.join(tmpdir(), 'envharness-tb-oracle-'));
    try {
      // More gold actions than tau-bench's 30 steps: the episode is truncated before the cancellation.
      const cancelled = fixtureTrainTasks()[0]!;
      const looks = Array.from({ length: 30 }, () => ({ name: 'get_order_details', kwargs: { order_id: '#W1' } }));
      const broken = { ...cancelled, actions: [...looks, ...cancelled.actions] };
      writeTauBenchFixture(bad, { train: [broken], dev: fixtureDevTasks() });
      const [line] = importTauBench({ dir: bad }).sets[0]!.batch.log;
      expect([line!.accepted, line!.gate, line!.problem?.code, line!.problem?.pointer]).toEqual([false, 'oracle', 'ORACLE_FAILED', '/0/actions']);
      expect(line!.problem!.message).toMatch(/^the gold actions do not score 1 in an episode; check the task's actions, and that users\.json, orders\.json and products\.json/);
    } finally {
      rmSync(bad, { recursive: true, force: true });
    }
  });

  it('keeps every occurrence of a task repeated within one file (tau-bench scores each), with distinct ids', async () => {
    const rep = mkdtempSync(path.join(tmpdir(), 'envharness-tb-repeat-'));
    try {
      const train = fixtureTrainTasks();
      writeTauBenchFixture(rep, { train: [train[0]!, train[2]!, train[0]!, train[0]!], dev: fixtureDevTasks() });
      const { sets } = importTauBench({ dir: rep });
      const batch = sets[0]!.batch;
      expect(batch.manifest).toMatchObject({ requested: 4, accepted: 4, rejected: 0 });
      expect(batch.manifest.gates.find((g) => g.gate === 'exact_duplicate')).toMatchObject({ checked: 4, passed: 4, rejected: 0 });
      const ids = batch.tasks.map((t) => t.id);
      expect(new Set(ids).size).toBe(4);
      expect(batch.tasks.map((t) => (t.params as { index: number }).index)).toEqual([0, 1, 2, 3]);
      expect(batch.tasks[2]!.params).toEqual({ source: 'tau-bench', set: 'train', index: 2, task: train[0] });
      expect(batch.log.map((l) => (l.details as { repeatOf?: string } | undefined)?.repeatOf ?? null)).toEqual([null, null, 'tasks_train.json[0]', 'tasks_train.json[0]']);
      // The first occurrence's id is the id the task has in a file without repeats.
      const plain = importTauBench({ dir });
      expect(ids[0]).toBe(plain.sets[0]!.batch.tasks[0]!.id);
      // Every occurrence is its own task in an episode: the oracle scores 1 on each.
      const runner = createTauBenchRunner(importTauBench({ dir: rep }).domain);
      for (const task of batch.tasks) expect((await runner.runEpisode(task, gold, { seed: 0 })).tauBench.reward).toBe(1);
    } finally {
      rmSync(rep, { recursive: true, force: true });
    }
  });

  it('states required outputs the gold actions do not say, so the oracle gate accepts the task and the oracle scores 1', async () => {
    const out = mkdtempSync(path.join(tmpdir(), 'envharness-tb-outputs-'));
    try {
      // Shaped like tau-bench's test tasks with outputs: the gold actions only look things up, the
      // outputs are what the agent must tell the user, and no gold `respond` says them.
      const tasks: TauBenchTask[] = [
        {
          user_id: 'ann_lee',
          instruction: 'You are Ann Lee. You want to know the price of the desk lamp and how many items order #W2 has.',
          actions: [
            { name: 'get_product_details', kwargs: { product_id: '1000000001' } },
            { name: 'get_order_details', kwargs: { order_id: '#W2' } },
          ],
          outputs: ['30.1', '1'],
          annotator: '0',
        },
        // An output the gold messages already say: the solution is the gold as it is (and so is its id:
        // index 1 of a train file, as in the plain fixture).
        fixtureTrainTasks()[1]!,
        {
          user_id: 'ann_lee',
          instruction: 'You are Ann Lee. Ask the lamp price, then ask for a human.',
          actions: [
            { name: 'get_product_details', kwargs: { product_id: '1000000001' } },
            { name: 'transfer_to_human_agents', kwargs: { summary: 'The customer asks for a human.' } },
          ],
          outputs: ['30.1'],
          annotator: '0',
        },
      ];
      writeTauBenchFixture(out, { train: tasks, dev: fixtureDevTasks() });
      const imported = importTauBench({ dir: out });
      const batch = imported.sets[0]!.batch;
      expect(batch.log.map((l) => [l.accepted, l.gate ?? null])).toEqual([[true, null], [true, null], [true, null]]);
      const [lookup, said, transfer] = batch.tasks;
      expect(lookup!.spec.acceptance.outputs).toEqual(['30.1', '1']);
      expect(lookup!.spec.solution.slice(-2)).toEqual([{ type: 'message', text: 'Here is what you asked for: 30.1; 1.' }, { type: 'finish' }]);
      expect(batch.log[0]!.details).toMatchObject({ statedOutputs: ['30.1', '1'] });
      // Before the transfer, which ends the episode.
      expect(transfer!.spec.solution.map((a) => (a.type === 'tool' ? a.tool : a.type))).toEqual(['get_product_details', 'message', 'transfer_to_human_agents', 'finish']);
      expect(said!.spec.solution).toEqual([
        { type: 'tool', tool: 'get_product_details', args: { product_id: '1000000001' } },
        { type: 'message', text: 'It costs 30.1 dollars.' },
        { type: 'finish' },
      ]);
      expect(batch.log[1]!.details).toBeUndefined();
      expect(said!.id).toBe(importTauBench({ dir }).sets[0]!.batch.tasks[1]!.id);
      const runner = createTauBenchRunner(imported.domain);
      for (const task of batch.tasks) {
        const result = await runner.runEpisode(task, gold, { seed: 0 });
        expect([result.outcome, result.tauBench.reward, result.tauBench.finalState]).toEqual([1, 1, true]);
      }
      // Without the stated outputs the same trajectory scores 0: the outputs are what is graded.
      const silent = { ...lookup!, spec: { ...lookup!.spec, solution: lookup!.spec.solution.filter((a) => a.type !== 'message') } };
      expect((await runner.runEpisode(silent, gold, { seed: 0 })).tauBench).toMatchObject({ reward: 0, finalState: true, outputs: { '30.1': false, '1': false } });
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it('is deterministic: the same files give the same ids and manifests, in any folder', () => {
    const copy = mkdtempSync(path.join(tmpdir(), 'envharness-tb-copy-'));
    try {
      cpSync(dir, copy, { recursive: true });
      const a = importTauBench({ dir });
      const b = importTauBench({ dir: copy });
      expect(canonicalize(b.sets.map((s) => s.batch))).toBe(canonicalize(a.sets.map((s) => s.batch)));
      // A changed file is a new source digest, new task ids and a new batch.
      const tasks = fixtureTrainTasks();
      tasks[0]!.instruction += ' Be brief.';
      writeFileSync(path.join(copy, 'tasks_train.json'), JSON.stringify(tasks));
      const c = importTauBench({ dir: copy });
      expect(c.sets[0]!.batch.manifest.id).not.toBe(a.sets[0]!.batch.manifest.id);
      expect(c.sets[0]!.batch.tasks[0]!.id).not.toBe(a.sets[0]!.batch.tasks[0]!.id);
      expect(c.sets[0]!.batch.tasks[1]!.id).toBe(a.sets[0]!.batch.tasks[1]!.id);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  it('names sets after their files and fails clearly on a missing folder', () => {
    expect(tauBenchSetName('/x/tasks_train.json')).toBe('train');
    expect(tauBenchSetName('My Set.json')).toBe('my-set');
    expect([defaultSplitFor('tasks_train.json'), defaultSplitFor('tasks_dev.json'), defaultSplitFor('tasks_test.json')]).toEqual(['dynamic', 'regression', 'heldout']);
    expect(() => importTauBench({ dir: path.join(dir, 'absent') })).toThrow(/does not exist/);
  });
});
