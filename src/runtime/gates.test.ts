import { describe, expect, it } from 'vitest';
import type { Task } from '../core/index.js';
import { createNonTrivialGate, createOracleGate } from './index.js';
import { clearanceTemplate, createInventoryDomain, instantiate, makeInventoryTask, restockTemplate } from './testing/index.js';

const inventory = createInventoryDomain();
const oracle = createOracleGate(inventory);
const nonTrivial = createNonTrivialGate(inventory);

describe('oracle gate', () => {
  it('passes generated tasks at every level, faults included', () => {
    for (const template of [restockTemplate, clearanceTemplate] as const) {
      for (let level = 1; level <= template.levels.length; level++) {
        for (let seed = 0; seed < 10; seed++) expect(oracle(instantiate(template as typeof restockTemplate, level, seed))).toEqual({ ok: true });
      }
    }
  });

  it('rejects a reference solution that does not reach the goal', () => {
    const task = makeInventoryTask({ acceptance: { finalState: true, outputs: ['a fact never said'] } });
    expect(oracle(task)).toMatchObject({ ok: false, reason: 'the reference solution does not reach outcome 1' });
  });

  it('rejects a reference solution that breaks a rule on the way', () => {
    const unordered = makeInventoryTask({
      solution: [
        { type: 'tool', tool: 'add_stock', args: { item: 'widget-1', quantity: 2 } },
        { type: 'tool', tool: 'get_stock', args: { item: 'widget-1' } },
        { type: 'message', text: 'now 7' },
        { type: 'finish' },
      ],
    });
    expect(oracle(unordered)).toMatchObject({ ok: false, reason: expect.stringContaining('ORDER_VIOLATION') });
    const unconfirmed = makeInventoryTask({ constraints: { confirmTools: ['add_stock'] } });
    expect(oracle(unconfirmed)).toMatchObject({ ok: false, reason: expect.stringContaining('POLICY_VIOLATION') });
  });

  it('rejects a reference solution that never ends the episode or overruns the budget', () => {
    const base = makeInventoryTask();
    expect(oracle(makeInventoryTask({ solution: base.spec.solution.slice(0, 3) }))).toMatchObject({ ok: false, reason: expect.stringContaining('does not end the episode') });
    expect(oracle(makeInventoryTask({ budget: { steps: 2 } }))).toMatchObject({ ok: false, reason: expect.stringContaining('ended at step 2') });
  });

  it('rejects a task whose solution cannot run, instead of throwing', () => {
    const task: Task = makeInventoryTask({ solution: [{ type: 'tool', tool: 'remove_stock', args: { item: 'gadget-2', quantity: 50 } }, { type: 'finish' }] });
    expect(oracle(task)).toMatchObject({ ok: false, reason: expect.stringContaining('cannot be played') });
  });
});

describe('non-triviality gate', () => {
  it('passes generated tasks', () => {
    for (const template of [restockTemplate, clearanceTemplate] as const) {
      for (let level = 1; level <= template.levels.length; level++) {
        for (let seed = 0; seed < 10; seed++) expect(nonTrivial(instantiate(template as typeof restockTemplate, level, seed))).toEqual({ ok: true });
      }
    }
  });

  it('rejects a task that finishing right away already solves', () => {
    const trivial = makeInventoryTask({ acceptance: { finalState: true }, solution: [{ type: 'finish' }] });
    expect(nonTrivial(trivial)).toMatchObject({ ok: false, reason: expect.stringContaining('empty trajectory') });
  });

  it('rejects a task that a random trajectory solves', () => {
    // Saying "widget-1" is all it takes, and the user's opening mentions it: random chatter finds it.
    const answer = makeInventoryTask({ acceptance: { finalState: false, outputs: ['widget-1'] }, solution: [{ type: 'message', text: 'widget-1' }, { type: 'finish' }] });
    expect(nonTrivial(answer)).toMatchObject({ ok: false, reason: 'a seeded random trajectory succeeds' });
    expect(createNonTrivialGate(inventory, { random: false })(answer)).toEqual({ ok: true });
  });

  it('is deterministic', () => {
    const task = instantiate(restockTemplate, 2, 3);
    expect(nonTrivial(task)).toEqual(nonTrivial(task));
  });
});
