/** Hand-built inventory tasks for runtime tests: every field explicit, nothing sampled. */
import { computeTaskId } from '../../core/index.js';
import type { Action, Task, TaskSpec } from '../../core/index.js';

/** A restock-like task on a 3-item world (widget-1: 5, gadget-2: 3, locked bolt-3: 9); override any spec field. */
export function makeInventoryTask(overrides: Partial<TaskSpec> = {}): Task {
  const solution: Action[] = [
    { type: 'tool', tool: 'get_stock', args: { item: 'widget-1' } },
    { type: 'tool', tool: 'add_stock', args: { item: 'widget-1', quantity: 2 } },
    { type: 'message', text: 'widget-1 now has 7 units.' },
    { type: 'finish' },
  ];
  const spec: TaskSpec = {
    instructions: 'Add 2 units of widget-1 and tell the user the new level.',
    initialState: { items: { 'widget-1': 5, 'gadget-2': 3, 'bolt-3': 9 }, locked: ['bolt-3'] },
    budget: { steps: 20 },
    acceptance: {
      finalState: true,
      outputs: ['7'],
      ordering: [{ id: 'check-first', before: { tool: 'get_stock' }, after: { tool: 'add_stock' } }],
      subgoals: [
        { id: 'checked', pattern: { tool: 'get_stock', args: { item: 'widget-1' } } },
        { id: 'added', pattern: { tool: 'add_stock', args: { item: 'widget-1' } } },
      ],
    },
    solution,
    user: { request: 'Please add 2 units of widget-1.' },
    ...overrides,
  };
  const body = { template: 'inventory/manual@1', domain: 'inventory', taskType: 'manual', level: 1, params: null, spec };
  return { id: computeTaskId(body), ...body, origin: { seed: 0, index: 0, templateDigest: '' } };
}
