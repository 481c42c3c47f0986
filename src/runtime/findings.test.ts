/** Policy rules, acceptance checks and `template.validate` may return a `Problem` (issue 15 item 4); a bare message still records as before. */
import { describe, expect, it } from 'vitest';
import type { Action, Domain, PolicyRule } from '../core/index.js';
import { checkTaskSchema } from '../generation/index.js';
import { createEpisode } from './index.js';
import { createInventoryDomain, instantiate, makeInventoryTask, restockTemplate } from './testing/index.js';
import type { InventoryState } from './testing/index.js';

const inventory = createInventoryDomain();
const add = (item: string, quantity: number): Action => ({ type: 'tool', tool: 'add_stock', args: { item, quantity } });

function withRules(rules: PolicyRule<InventoryState>[], acceptance: Domain<InventoryState>['acceptance']): Domain<InventoryState> {
  return { ...inventory, policy: { ...inventory.policy!, rules }, acceptance };
}

describe('findings as Problems', () => {
  it('a policy rule returning a Problem gives POLICY_VIOLATION with its pointer and code; a message gives the old feedback', () => {
    const domain = withRules(
      [
        { id: 'as_problem', description: '', severity: 'high', block: true, check: (a) => (a.tool === 'add_stock' ? { code: 'TOO_MANY', message: 'at most 5 at once', pointer: '/args/quantity' } : undefined) },
        { id: 'as_message', description: '', severity: 'low', check: (a) => (a.tool === 'add_stock' ? 'adding is noted' : undefined) },
      ],
      [],
    );
    const episode = createEpisode(domain, makeInventoryTask());
    episode.reset({ seed: 1 });
    const before = episode.stateHash();
    const result = episode.step(add('widget-1', 9));
    expect(result.feedback.filter((f) => f.code === 'POLICY_VIOLATION')).toEqual([
      { code: 'POLICY_VIOLATION', message: 'at most 5 at once', severity: 'high', ref: 'as_problem', details: { code: 'TOO_MANY' }, pointer: '/args/quantity' },
      { code: 'POLICY_VIOLATION', message: 'adding is noted', severity: 'low', ref: 'as_message' },
    ]);
    expect(result.observation.error).toEqual({ code: 'POLICY_VIOLATION', message: 'refused: at most 5 at once' });
    expect(episode.stateHash()).toBe(before);
  });

  it('an acceptance check returning a Problem records its code and pointer among the failed checks', () => {
    const domain = withRules([], [
      { id: 'as_problem', check: () => ({ code: 'STOCK_LOW', message: 'widget-1 is below 10', pointer: '/items/widget-1' }) },
      { id: 'as_message', check: () => 'something else is off' },
      { id: 'holds', check: () => undefined },
    ]);
    const episode = createEpisode(domain, makeInventoryTask());
    episode.reset({ seed: 1 });
    const last = episode.step({ type: 'finish' });
    expect(last.info.outcome).toBe(0);
    expect((last.info.acceptance as { failedChecks: unknown }).failedChecks).toEqual([
      { id: 'as_problem', code: 'STOCK_LOW', message: 'widget-1 is below 10', pointer: '/items/widget-1' },
      { id: 'as_message', message: 'something else is off' },
    ]);
  });

  it('template.validate may return Problems: the schema gate rejects with their messages and keeps them in the details', () => {
    const task = instantiate(restockTemplate, 1, 3);
    const problem = { code: 'QUANTITY_ZERO', message: 'the quantity must be positive', pointer: '/params/quantity' };
    const verdict = checkTaskSchema(task, { ...restockTemplate, validate: () => [problem, 'and a message'] });
    const reason = `template ${restockTemplate.id} check: the quantity must be positive; and a message`;
    // The rejection itself is a Problem of the schema gate (TEMPLATE_CHECK), pointing where the first problem does.
    expect(verdict).toEqual({ ok: false, reason, problem: { code: 'TEMPLATE_CHECK', message: reason, pointer: '/params/quantity' }, details: { problems: [problem, 'and a message'] } });
    expect(checkTaskSchema(task, { ...restockTemplate, validate: () => ['only a message'] })).toEqual({
      ok: false,
      reason: `template ${restockTemplate.id} check: only a message`,
      problem: { code: 'TEMPLATE_CHECK', message: `template ${restockTemplate.id} check: only a message` },
      details: { problems: ['only a message'] },
    });
  });
});
