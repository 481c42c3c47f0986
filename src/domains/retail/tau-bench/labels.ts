/** Type and level labels of an imported tau-bench task, inferred from its gold actions. */
import type { Tool } from '../../../core/index.js';
import { RESPOND_ACTION, type TauBenchAction } from './actions.js';

/** tau-bench's retail tools that end an episode (`Env.terminate_tools`); its gold replay skips them. */
export const TAU_BENCH_TERMINATE_TOOLS: ReadonlySet<string> = new Set(['transfer_to_human_agents']);

/** Which task type a write tool stands for; two or more different types make a `compound` task. */
export const TAU_BENCH_WRITE_TYPES: Readonly<Record<string, string>> = Object.freeze({
  cancel_pending_order: 'cancel',
  modify_pending_order_address: 'address_change',
  modify_user_address: 'address_change',
  modify_pending_order_payment: 'payment_change',
  modify_pending_order_items: 'modify_items',
  return_delivered_order_items: 'return_refund',
  exchange_delivered_order_items: 'exchange',
});

/** The highest level an imported task gets. */
export const TAU_BENCH_MAX_LEVEL = 5;

/** What the labels were inferred from. */
export interface TauBenchLabels {
  taskType: string;
  level: number;
  /** Gold actions that call a write tool (refused ones included: they are part of the user's goal). */
  writes: number;
  /** Distinct `order_id` arguments over the gold actions. */
  orders: number;
  /** Distinct tool names of the gold actions (`respond` excluded), sorted. */
  tools: string[];
  /** Gold `respond` actions (messages the agent must send). */
  messages: number;
}

/**
 * Labels from the gold actions. Type: the write tools' types (`cancel`, `address_change`,
 * `payment_change`, `modify_items`, `return_refund`, `exchange`); `compound` when two or more types
 * occur; without writes `out_of_scope` if the gold transfers to a human, else `information`. Level:
 * `max(writes, orders touched)`, clamped to 1..5.
 * @example
 * inferTauBenchLabels([{ name: 'cancel_pending_order', kwargs: { order_id: '#W1', reason: 'no longer needed' } }], tools);
 * // { taskType: 'cancel', level: 1, writes: 1, orders: 1, tools: ['cancel_pending_order'], messages: 0 }
 */
export function inferTauBenchLabels(actions: readonly TauBenchAction[], tools: ReadonlyMap<string, Pick<Tool<any, any>, 'effect'>>): TauBenchLabels {
  const types = new Set<string>();
  const orders = new Set<string>();
  const names = new Set<string>();
  let writes = 0;
  let messages = 0;
  let transfers = 0;
  for (const action of actions) {
    const orderId = action.kwargs?.['order_id'];
    if (typeof orderId === 'string') orders.add(orderId);
    if (action.name === RESPOND_ACTION) {
      messages++;
      continue;
    }
    names.add(action.name);
    if (TAU_BENCH_TERMINATE_TOOLS.has(action.name)) transfers++;
    const type = TAU_BENCH_WRITE_TYPES[action.name];
    if (tools.get(action.name)?.effect === 'write' || type !== undefined) {
      writes++;
      types.add(type ?? action.name);
    }
  }
  const taskType = types.size > 1 ? 'compound' : types.size === 1 ? [...types][0]! : transfers > 0 ? 'out_of_scope' : 'information';
  const level = Math.min(TAU_BENCH_MAX_LEVEL, Math.max(1, writes, orders.size));
  return { taskType, level, writes, orders: orders.size, tools: [...names].sort(), messages };
}
