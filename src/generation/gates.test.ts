import { describe, expect, it } from 'vitest';
import type { GateVerdict, Task } from '../core/index.js';
import { checkTaskSchema, createGateRunner, GATE_ORDER } from './gates.js';
import type { GateOutcome } from './gates.js';
import { instantiateTask } from './instantiate.js';
import { MinHashIndex } from './minhash.js';
import { createQaGateHooks } from './testing/qa-checker.js';
import { addTemplate, storyTemplate, trivialTemplate, unsolvableTemplate } from './testing/templates.js';

const add = (index: number, seed = 1): Task => instantiateTask(addTemplate, { level: 3, seed, index });

function storyPair(): [Task, Task] {
  const first = instantiateTask(storyTemplate, { level: 1, seed: 1, index: 0 });
  for (let index = 1; ; index++) {
    const other = instantiateTask(storyTemplate, { level: 1, seed: 1, index });
    if (other.id !== first.id) return [first, other];
  }
}

function rejected(outcome: GateOutcome): { gate: string; reason: string } {
  if (outcome.accepted) throw new Error('expected a rejection');
  return { gate: outcome.gate, reason: outcome.reason };
}

describe('checkTaskSchema (the schema gate)', () => {
  it('accepts a well-formed task', () => {
    expect(checkTaskSchema(add(0))).toEqual({ ok: true });
  });

  it('rejects missing, mistyped and empty fields with their pointer', () => {
    const cases: Array<[(task: Task) => void, string, string]> = [
      [(t) => delete (t.spec as Partial<Task['spec']>).acceptance, '/spec/acceptance', 'spec.acceptance: missing required field'],
      [(t) => (t.spec.instructions = '  '), '/spec/instructions', 'spec.instructions: must not be empty'],
      [(t) => (t.spec.solution = []), '/spec/solution', 'the reference solution is empty'],
      [(t) => ((t as { level: unknown }).level = '2'), '/level', 'level: expected number'],
      [(t) => (t.params = { a: Number.NaN }), '/params', 'must be a JSON value'],
      [(t) => ((t.spec as unknown as Record<string, unknown>).instruction = 'typo'), '/spec/instruction', 'Unrecognized key: "instruction"'],
      [(t) => (t.spec.solution = [{ type: 'tool', tool: '', args: {} }]), '/spec/solution/0/tool', 'must not be empty'],
    ];
    for (const [mutate, pointer, reason] of cases) {
      const task = structuredClone(add(0));
      mutate(task);
      const verdict = checkTaskSchema(task);
      expect(verdict.ok).toBe(false);
      expect(verdict).toMatchObject({ reason: expect.stringContaining(reason), details: { pointer } });
    }
  });

  it("runs the template's own validate hook", () => {
    const strict = { ...addTemplate, validate: (t: Task) => ((t.params as { a: number }).a > 10 ? ['a is too large'] : []) };
    const task = add(0);
    expect(checkTaskSchema(task, strict)).toEqual(
      (task.params as { a: number }).a > 10
        ? {
            ok: false,
            reason: 'template testing/add@1 check: a is too large',
            details: { problems: ['a is too large'] },
            problem: { code: 'TEMPLATE_CHECK', message: 'template testing/add@1 check: a is too large' },
          }
        : { ok: true },
    );
    // A Problem's pointer becomes the rejection's pointer.
    const pointed = { ...addTemplate, validate: () => [{ code: 'too_large', message: 'a is too large', pointer: '/params/a' }] };
    expect(checkTaskSchema(task, pointed)).toMatchObject({ ok: false, problem: { code: 'TEMPLATE_CHECK', pointer: '/params/a' } });
  });
});

describe('createGateRunner', () => {
  it('rejects each planted bad task at the right gate with a readable reason, and accepts good tasks', () => {
    const [story, paraphrase] = storyPair();
    const regressionTask = add(100, 99);
    const regressionIndex = new MinHashIndex();
    regressionIndex.add(regressionTask);
    const runner = createGateRunner({
      split: 'dynamic',
      nearDuplicateThreshold: 0.9,
      hooks: createQaGateHooks(),
      regressionIndex,
    });
    const good = add(1);
    const outcomes = [
      runner.check({ index: 0, task: good }),
      runner.check({ index: 1, task: story }),
      runner.check({ index: 2, task: structuredClone(good) }),
      runner.check({ index: 3, task: add(2), stored: true }),
      runner.check({ index: 4, task: paraphrase }),
      runner.check({ index: 5, task: regressionTask }),
      runner.check({ index: 6, task: instantiateTask(unsolvableTemplate, { level: 1, seed: 1, index: 0 }) }),
      runner.check({ index: 7, task: instantiateTask(trivialTemplate, { level: 1, seed: 1, index: 0 }) }),
      runner.check({ index: 8, error: { message: 'bad params', pointer: '/params/b' } }),
      runner.check({ index: 9, task: add(3) }),
    ];
    expect(outcomes[0]).toEqual({ accepted: true });
    expect(outcomes[1]).toEqual({ accepted: true });
    expect(rejected(outcomes[2]!)).toEqual({ gate: 'exact_duplicate', reason: 'same task id as candidate 0 of this batch' });
    expect(rejected(outcomes[3]!)).toEqual({ gate: 'exact_duplicate', reason: 'this task is already in the store' });
    expect(rejected(outcomes[4]!)).toMatchObject({ gate: 'near_duplicate', reason: expect.stringMatching(/^near duplicate of candidate 1 \(task [0-9a-f]{64}\): estimated Jaccard 0\.9\d+ >= 0\.9$/) });
    expect(rejected(outcomes[5]!)).toEqual({ gate: 'leakage', reason: `leaks regression task ${regressionTask.id}: identical content` });
    expect(rejected(outcomes[6]!)).toMatchObject({ gate: 'oracle', reason: expect.stringContaining('reference solution answers') });
    expect(rejected(outcomes[7]!)).toEqual({ gate: 'non_trivial', reason: 'the empty trajectory passes' });
    expect(outcomes[8]).toMatchObject({ accepted: false, gate: 'schema', reason: 'could not instantiate: bad params', details: { pointer: '/params/b' } });
    expect(outcomes[9]).toEqual({ accepted: true });
    // Every rejection is also a Problem: its code names the kind, its message is the reason.
    const problems = outcomes.slice(0, 9).map((o) => (o.accepted ? undefined : o.problem));
    expect(problems.slice(2).map((p) => p?.code)).toEqual(['DUPLICATE_IN_BATCH', 'ALREADY_STORED', 'NEAR_DUPLICATE', 'LEAKS_REGRESSION', 'ORACLE_FAILED', 'TRIVIAL', 'INSTANTIATE_FAILED']);
    expect(problems[8]).toEqual({ code: 'INSTANTIATE_FAILED', message: 'could not instantiate: bad params', pointer: '/params/b' });
    for (const [i, o] of outcomes.slice(0, 9).entries()) if (!o.accepted) expect(o.problem.message, String(i)).toBe(o.reason);

    const results = runner.results();
    expect(results.map((r) => r.gate)).toEqual(GATE_ORDER);
    expect(results.map((r) => [r.gate, r.checked, r.passed, r.rejected])).toEqual([
      ['schema', 10, 9, 1],
      ['exact_duplicate', 9, 7, 2],
      ['near_duplicate', 7, 6, 1],
      ['leakage', 6, 5, 1],
      ['oracle', 5, 4, 1],
      ['non_trivial', 4, 3, 1],
    ]);
  });

  it('catches a near-duplicate of a regression task as leakage', () => {
    const [story, paraphrase] = storyPair();
    const regressionIndex = new MinHashIndex();
    regressionIndex.add(story);
    const runner = createGateRunner({ split: 'heldout', nearDuplicateThreshold: 0.9, regressionIndex });
    expect(rejected(runner.check({ index: 0, task: paraphrase }))).toMatchObject({
      gate: 'leakage',
      reason: expect.stringContaining(`leaks regression task ${story.id}: estimated Jaccard`),
    });
  });

  it('checks near duplicates and exact ids against the existing pool', () => {
    const [story, paraphrase] = storyPair();
    const poolIndex = new MinHashIndex();
    poolIndex.add(story);
    const runner = createGateRunner({ split: 'dynamic', nearDuplicateThreshold: 0.9, poolIndex });
    expect(rejected(runner.check({ index: 0, task: story }))).toEqual({ gate: 'exact_duplicate', reason: 'this task is already in the pool' });
    expect(rejected(runner.check({ index: 1, task: paraphrase }))).toMatchObject({ gate: 'near_duplicate', reason: expect.stringContaining(`pool task ${story.id}`) });
  });

  it('records gates without their input, or turned off, as off', () => {
    const runner = createGateRunner({ split: 'regression', nearDuplicateThreshold: 0.9, regressionIndex: new MinHashIndex(), gates: { near_duplicate: false } });
    expect(runner.enabled).toEqual({ schema: true, exact_duplicate: true, near_duplicate: false, leakage: false, oracle: false, non_trivial: false });
    expect(runner.check({ index: 0, task: add(0) })).toEqual({ accepted: true });
  });

  it('turns a throwing hook into a rejection with the error message', () => {
    const oracle = (): GateVerdict => {
      throw new Error('simulator crashed');
    };
    const runner = createGateRunner({ split: 'dynamic', nearDuplicateThreshold: 0.9, hooks: { oracle } });
    const crashed = runner.check({ index: 0, task: add(0) });
    expect(rejected(crashed)).toEqual({ gate: 'oracle', reason: 'oracle check failed to run: simulator crashed' });
    expect(crashed).toMatchObject({ problem: { code: 'GATE_ERROR', message: 'oracle check failed to run: simulator crashed' } });
  });
});
