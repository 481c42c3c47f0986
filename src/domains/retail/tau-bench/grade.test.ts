import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeTaskId, type Task } from '../../../core/index.js';
import { applyTauBenchActions, createRetailState, digestRetailExport, makeRetailWorld, retailTools, type RetailDomain } from '../index.js';
import { createEpisode } from '../../../runtime/index.js';
import { createTauBenchDomain, isTauBenchTask } from './domain.js';
import { writeTauBenchFixture } from './fixtures.js';
import { gradeTauBench, gradeTauBenchDetailed, tauBenchGoldState, tauBenchOutputSaid } from './grade.js';
import { importTauBench, type TauBenchImport } from './import.js';

describe("tau-bench's output rule", () => {
  it('lower-cases both and strips commas from the message only', () => {
    expect(tauBenchOutputSaid('1234.5', ['The total is $1,234.50.'])).toBe(true);
    expect(tauBenchOutputSaid('Delivered', ['your order was DELIVERED'])).toBe(true);
    expect(tauBenchOutputSaid('1,234.5', ['The total is $1,234.50.'])).toBe(false);
    expect(tauBenchOutputSaid('1,234.5', ['1,234.5'])).toBe(false);
    expect(tauBenchOutputSaid('tracking', [])).toBe(false);
    expect(tauBenchOutputSaid('b', ['a', 'xbx'])).toBe(true);
  });
});

describe('gradeTauBench', () => {
  let dir: string;
  let imported: TauBenchImport;
  let tasks: Task[];
  beforeAll(() => {
    dir = writeTauBenchFixture(mkdtempSync(path.join(tmpdir(), 'envharness-tb-grade-')));
    imported = importTauBench({ dir });
    tasks = imported.sets[0]!.batch.tasks;
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('gives 1 to the gold final world and 0 to any other world', () => {
    const [cancel] = tasks;
    const gold = tauBenchGoldState(cancel!, imported.world);
    expect(gradeTauBench(cancel!, gold, [])).toBe(1);
    expect(gradeTauBench(cancel!, createRetailState(imported.world), [])).toBe(0);
    const other = createRetailState(imported.world);
    applyTauBenchActions(other, [{ name: 'cancel_pending_order', kwargs: { order_id: '#W1', reason: 'ordered by mistake' } }], retailTools);
    const grade = gradeTauBenchDetailed(cancel!, other, []);
    expect(grade).toMatchObject({ reward: 0, finalState: false, outputs: {} });
    expect(grade.goldSha256).toBe(digestRetailExport(gold));
    expect(grade.sha256).toBe(digestRetailExport(other));
    expect(gradeTauBenchDetailed(cancel!, gold, [], { digests: false })).toEqual({ reward: 1, finalState: true, outputs: {} });
  });

  it('needs every output in a message, whatever the world', () => {
    const info = tasks[1]!;
    const state = createRetailState(imported.world);
    expect(gradeTauBench(info, state, [])).toBe(0);
    expect(gradeTauBench(info, state, ['It is 20 dollars.'])).toBe(0);
    expect(gradeTauBenchDetailed(info, state, ['Hello', 'It costs 30.1 dollars.'])).toMatchObject({ reward: 1, outputs: { '30.1': true } });
  });

  it('refuses a state of another world and a task that was not imported', () => {
    expect(() => gradeTauBench(tasks[0]!, createRetailState(makeRetailWorld()), [])).toThrow(/forked from the task's own world/);
    const foreign = { ...tasks[0]!, params: { any: 1 } } as Task;
    expect(() => gradeTauBench(foreign, createRetailState(imported.world), [])).toThrow(/not imported from tau-bench/);
  });
});

describe('createTauBenchDomain', () => {
  let dir: string;
  let imported: TauBenchImport;
  beforeAll(() => {
    dir = writeTauBenchFixture(mkdtempSync(path.join(tmpdir(), 'envharness-tb-view-')));
    imported = importTauBench({ dir });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function strictRetail(): RetailDomain {
    // A retail domain whose policy blocks every cancellation and whose extra check always fails.
    return {
      ...imported.domain,
      policy: {
        text: 'never cancel',
        rules: [{ id: 'no-cancel', description: 'never cancel', severity: 'high', block: true, check: (a) => (a.tool === 'cancel_pending_order' ? 'cancelling is not allowed' : undefined) }],
      },
      acceptance: [{ id: 'never', check: () => 'never accepted' }],
    };
  }

  it("reports policy violations on imported tasks without blocking, and skips the domain's extra checks", () => {
    const view = createTauBenchDomain(strictRetail());
    const task = imported.sets[0]!.batch.tasks[0]!;
    const episode = createEpisode(view, task, {});
    episode.reset({ seed: 0 });
    const results = task.spec.solution.map((a) => episode.step(a));
    expect(results[0]!.feedback.map((f) => [f.code, f.ref])).toEqual([['POLICY_VIOLATION', 'no-cancel']]);
    expect(results[0]!.observation.error).toBeUndefined();
    expect(results.at(-1)!.info.outcome).toBe(1);
  });

  it('leaves other tasks to the plain domain: the rule blocks and the check applies', () => {
    const view = createTauBenchDomain(strictRetail());
    const imported0 = imported.sets[0]!.batch.tasks[0]!;
    const { id: _id, ...rest } = { ...imported0, template: 'retail/cancel@1', spec: { ...imported0.spec, user: null } };
    const task = { ...rest, id: computeTaskId(rest) } as Task;
    expect(isTauBenchTask(task)).toBe(false);
    const episode = createEpisode(view, task, { faults: false });
    episode.reset({ seed: 0 });
    const blocked = episode.step(task.spec.solution[0]!);
    expect(blocked.observation.error?.code).toBe('POLICY_VIOLATION');
    expect(episode.step({ type: 'finish' }).info.outcome).toBe(0);
  });
});
