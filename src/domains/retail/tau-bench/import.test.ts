import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalize, computeTaskId } from '../../../core/index.js';
import { retailTools, toolsByName } from '../index.js';
import { checkTaskSchema } from '../../../generation/index.js';
import { fixtureDevTasks, fixtureTrainTasks, writeTauBenchFixture } from './fixtures.js';
import { defaultSplitFor, importTauBench, tauBenchSetName } from './import.js';
import { inferTauBenchLabels } from './labels.js';

const tools = toolsByName(retailTools);
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
    expect(m).toMatchObject({ generatorVersion: 'envharness-import-tau-bench/1', split: 'regression', requested: 1, accepted: 1, rejected: 0, seed: 0 });
    expect(m.templates).toEqual([{ id: 'retail/tau-bench-dev@1', version: 1, sourceDigest: sets[1]!.sourceDigest, weight: 1, taskType: 'tau-bench' }]);
    expect(m.labels['sha256:orders.json']).toBe(worldFiles['orders.json']);
    expect(m.labels.non_trivial).toContain('1 of 1 tasks already score 1');
    expect(m.counts).toEqual({ byType: { out_of_scope: 1 }, byLevel: { '1': 1 } });
    expect(m.parameterRanges).toEqual({ 'retail/tau-bench-dev@1': { '1': { 'max(writes, orders)': 1 } } });
    expect(sets[0]!.batch.manifest.counts.byType).toEqual({ cancel: 1, compound: 2, information: 1 });
  });

  it('rejects malformed tasks and exact duplicates with the gate and reason in the log', () => {
    const bad = mkdtempSync(path.join(tmpdir(), 'envharness-tb-bad-'));
    try {
      const train = fixtureTrainTasks();
      writeTauBenchFixture(bad, { train: [train[0]!, { ...train[1]!, actions: 'none' } as never, train[0]!], dev: fixtureDevTasks() });
      const first = importTauBench({ dir: bad, tasks: [{ file: 'tasks_train.json', split: 'dynamic' }] });
      const log = first.sets[0]!.batch.log;
      expect(log.map((l) => [l.accepted, l.gate ?? null])).toEqual([[true, null], [false, 'schema'], [false, 'exact_duplicate']]);
      expect(log[1]!.reason).toContain('actions');
      expect(first.sets[0]!.batch.manifest).toMatchObject({ requested: 3, accepted: 1, rejected: 2 });
      // Tasks already stored are duplicates too.
      const again = importTauBench({ dir: bad, tasks: [{ file: 'tasks_train.json', split: 'dynamic' }], existingIds: new Set([log[0]!.taskId]) });
      expect(again.sets[0]!.batch.manifest.accepted).toBe(0);
    } finally {
      rmSync(bad, { recursive: true, force: true });
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
