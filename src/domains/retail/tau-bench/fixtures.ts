/** A tiny tau-bench data folder for tests: a fixture world and a few tasks in tau-bench's file format. */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { itemOf, makeCatalogue, makeOrder, makeRetailWorld } from '../fixtures.js';
import { type TauBenchTask } from './actions.js';

/** The fixture's train tasks: cancel + respond, an information request with an output, a compound, a refused gold call. */
export function fixtureTrainTasks(): TauBenchTask[] {
  return [
    {
      user_id: 'ann_lee',
      instruction: 'You are Ann Lee. Cancel order #W1 because you no longer need it.',
      actions: [
        { name: 'cancel_pending_order', kwargs: { order_id: '#W1', reason: 'no longer needed' } },
        { name: 'respond', kwargs: { content: 'Your order #W1 is cancelled.' } },
      ],
      outputs: [],
      annotator: 'fixture',
    },
    {
      user_id: 'ann_lee',
      instruction: 'You are Ann Lee. Ask how much the desk lamp 2000000001 costs.',
      actions: [
        { name: 'get_product_details', kwargs: { product_id: '1000000001' } },
        { name: 'respond', kwargs: { content: 'It costs 30.1 dollars.' } },
      ],
      outputs: ['30.1'],
      annotator: 'fixture',
    },
    {
      user_id: 'ann_lee',
      instruction: 'You are Ann Lee. Return the mug of #W2 to your gift card and cancel #W1.',
      actions: [
        { name: 'return_delivered_order_items', kwargs: { order_id: '#W2', item_ids: ['3000000001'], payment_method_id: 'gift_card_1' } },
        { name: 'cancel_pending_order', kwargs: { order_id: '#W1', reason: 'ordered by mistake' } },
      ],
      outputs: [],
      annotator: 'fixture',
    },
    {
      user_id: 'ann_lee',
      instruction: 'You are Ann Lee. Try to return #W1 (it has not arrived), then cancel it.',
      actions: [
        { name: 'return_delivered_order_items', kwargs: { order_id: '#W1', item_ids: ['2000000001'], payment_method_id: 'gift_card_1' } },
        { name: 'cancel_pending_order', kwargs: { order_id: '#W1', reason: 'no longer needed' } },
      ],
      outputs: [],
      annotator: 'fixture',
    },
  ];
}

/** The fixture's dev task: out of scope, transferred to a human (changes nothing). */
export function fixtureDevTasks(): TauBenchTask[] {
  return [
    {
      user_id: 'ann_lee',
      instruction: 'You are Ann Lee. Ask for a human.',
      actions: [{ name: 'transfer_to_human_agents', kwargs: { summary: 'The customer asks for a human.' } }],
      outputs: [],
      annotator: 'fixture',
    },
  ];
}

/**
 * Writes users.json, orders.json, products.json, tasks_train.json and tasks_dev.json to `dir`:
 * user `ann_lee` with a pending order #W1 (a lamp) and a delivered order #W2 (a mug).
 */
export function writeTauBenchFixture(dir: string, tasks: { train?: TauBenchTask[]; dev?: TauBenchTask[] } = {}): string {
  mkdirSync(dir, { recursive: true });
  const { lamp, mug } = makeCatalogue();
  const world = makeRetailWorld({
    orders: [makeOrder('#W1', 'ann_lee', [itemOf(lamp, '2000000001')]), makeOrder('#W2', 'ann_lee', [itemOf(mug, '3000000001')], { status: 'delivered' })],
  });
  for (const table of ['users', 'orders', 'products'] as const) writeFileSync(path.join(dir, `${table}.json`), JSON.stringify(world.data[table], null, 2));
  writeFileSync(path.join(dir, 'tasks_train.json'), JSON.stringify(tasks.train ?? fixtureTrainTasks(), null, 2));
  writeFileSync(path.join(dir, 'tasks_dev.json'), JSON.stringify(tasks.dev ?? fixtureDevTasks(), null, 2));
  return dir;
}
