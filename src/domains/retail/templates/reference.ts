/** The reference solution and the task content (acceptance, constraints, budget) of a retail goal. */
import type { Action, ActionPattern, JsonObject, OrderingRule, Subgoal, TaskSpec } from '../../../core/index.js';
import { WRITE_TOOL, WRITE_TOOLS, type GoalAddress, type Intent, type RetailGoal } from '../goal.js';
import { addressText } from '../user.js';
import { REFUSE_TOPICS } from './intents.js';

/** What the agent is told; the request itself comes from the user's first message. */
export const RETAIL_INSTRUCTIONS =
  'You are a customer-service agent of an online store. Help the customer in the conversation with the tools you have, and follow the policy.';

const tool = (name: string, args: JsonObject): Action => ({ type: 'tool', tool: name, args });
const say = (text: string): Action => ({ type: 'message', text });
const ASK = 'Shall I go ahead? Please confirm.';

function addressArgs(a: GoalAddress): JsonObject {
  return { address1: a.address1, address2: a.address2, city: a.city, state: a.state, country: a.country, zip: a.zip };
}

function orderOf(intent: Intent): string | undefined {
  return 'order' in intent ? intent.order.order_id : undefined;
}

function needsProfile(goal: RetailGoal): boolean {
  if (goal.conditional !== undefined) return true;
  return goal.intents.some(
    (i) => ('order' in i && i.order.refer !== 'id') || i.kind === 'return' || i.kind === 'exchange' || i.kind === 'payment' || i.kind === 'other_customer',
  );
}

/** The actions that carry out one intent (after identification). */
function intentActions(goal: RetailGoal, intent: Intent, looked: Set<string>): Action[] {
  const out: Action[] = [];
  const order = orderOf(intent);
  if (order !== undefined && !looked.has(order)) {
    looked.add(order);
    out.push(tool('get_order_details', { order_id: order }));
  }
  switch (intent.kind) {
    case 'status': {
      const tracking = intent.tracking === undefined ? '' : ` Its tracking number is ${intent.tracking}.`;
      out.push(say(`Order ${order} is ${intent.status}.${tracking}`));
      break;
    }
    case 'cancel':
      if (intent.trap) {
        out.push(say(`I'm sorry, but order ${order} is ${intent.status}, so I cannot cancel it: only pending orders can be cancelled.`));
      } else {
        out.push(say(`I can cancel order ${order} (reason: ${intent.reason}). ${ASK}`));
        out.push(tool('cancel_pending_order', { order_id: order!, reason: intent.reason }));
        out.push(say(`Order ${order} is now cancelled.`));
      }
      break;
    case 'return': {
      if (intent.insist !== undefined) {
        out.push(say(`I'm sorry, but I cannot send the refund to ${intent.insist.id}: refunds go to the original payment method or a gift card.`));
      }
      const items = intent.items.map((i) => `the ${i.name} (item ${i.item_id})`).join(', ');
      out.push(say(`I can return ${items} from order ${order}, with the refund to ${intent.method.id}. ${ASK}`));
      out.push(tool('return_delivered_order_items', { order_id: order!, item_ids: intent.items.map((i) => i.item_id), payment_method_id: intent.method.id }));
      out.push(say(`The return for order ${order} is requested; you will get an email with instructions.`));
      break;
    }
    case 'exchange': {
      const products = [...new Set(intent.items.map((i) => i.product_id))];
      for (const product of products) out.push(tool('get_product_details', { product_id: product }));
      const swaps = intent.items.map((i) => `the ${i.name} (item ${i.item_id}) for item ${i.new_item_id}`).join(', ');
      out.push(say(`I can exchange ${swaps} in order ${order}, with any price difference settled on ${intent.method.id}. ${ASK}`));
      out.push(
        tool('exchange_delivered_order_items', {
          order_id: order!,
          item_ids: intent.items.map((i) => i.item_id),
          new_item_ids: intent.items.map((i) => i.new_item_id!),
          payment_method_id: intent.method.id,
        }),
      );
      out.push(say(`The exchange for order ${order} is requested.`));
      break;
    }
    case 'order_address':
      out.push(say(`I can change the shipping address of order ${order} to ${addressText(intent.address)}. ${ASK}`));
      out.push(tool('modify_pending_order_address', { order_id: order!, ...addressArgs(intent.address) }));
      out.push(say(`The shipping address of order ${order} is updated.`));
      break;
    case 'user_address':
      out.push(say(`I can change your default address to ${addressText(intent.address)}. ${ASK}`));
      out.push(tool('modify_user_address', { user_id: goal.profile.user_id, ...addressArgs(intent.address) }));
      out.push(say('Your default address is updated.'));
      break;
    case 'payment':
      out.push(say(`I can change the payment method of order ${order} to ${intent.method.id}. ${ASK}`));
      out.push(tool('modify_pending_order_payment', { order_id: order!, payment_method_id: intent.method.id }));
      out.push(say(`Order ${order} is now paid with ${intent.method.id}.`));
      break;
    case 'out_of_scope':
      if (REFUSE_TOPICS.has(intent.topic)) {
        out.push(say("I'm sorry, but I cannot help with that request: it is outside what I can do here."));
      } else {
        out.push(tool('transfer_to_human_agents', { summary: `Customer ${goal.profile.user_id}: ${intent.topic.replace('_', ' ')} request, which the tools cannot handle.` }));
        out.push(say('I have passed your request to a human agent, who will contact you.'));
      }
      break;
    case 'other_customer':
      out.push(say(`I'm sorry, but I cannot look at order ${intent.order_id}: it is not on your account, and I can only help with your own orders.`));
      break;
  }
  return out;
}

/**
 * The reference solution of a goal: identify the customer, look at each order before changing it,
 * propose each change and let the user confirm it, make it, tell the required facts, refuse what the
 * policy forbids, and finish.
 */
export function referenceSolution(goal: RetailGoal): Action[] {
  const p = goal.profile;
  const out: Action[] = [
    goal.identity === 'email'
      ? tool('find_user_id_by_email', { email: p.email })
      : tool('find_user_id_by_name_zip', { first_name: p.first_name, last_name: p.last_name, zip: p.zip }),
  ];
  if (needsProfile(goal)) out.push(tool('get_user_details', { user_id: p.user_id }));
  const looked = new Set<string>();
  for (const intent of goal.intents) out.push(...intentActions(goal, intent, looked));
  out.push({ type: 'finish' });
  return out;
}

/** Facts the agent must say: statuses (and tracking numbers) asked for, and the status of a shipped order it refuses to cancel. */
function requiredOutputs(goal: RetailGoal): string[] {
  const outputs: string[] = [];
  for (const intent of goal.intents) {
    if (intent.kind === 'status') {
      outputs.push(intent.status);
      if (intent.tracking !== undefined) outputs.push(intent.tracking);
    } else if (intent.kind === 'cancel' && intent.trap) {
      outputs.push(intent.status);
    }
  }
  return [...new Set(outputs)];
}

/** Ordering: look at an order before changing it; in conditional tasks, at the last order before the default address. */
function orderingRules(goal: RetailGoal): OrderingRule[] {
  const rules: OrderingRule[] = [];
  for (const intent of goal.intents) {
    const write = WRITE_TOOL[intent.kind];
    const order = orderOf(intent);
    if (write === undefined || order === undefined || (intent.kind === 'cancel' && intent.trap)) continue;
    rules.push({
      id: `check-${intent.kind}-${order}`,
      before: { tool: 'get_order_details', args: { order_id: order } },
      after: { tool: write, args: { order_id: order } },
      message: `look at order ${order} (get_order_details) before changing it`,
    });
  }
  if (goal.conditional !== undefined) {
    rules.push({
      id: 'check-shipment-before-address',
      before: { tool: 'get_order_details', args: { order_id: goal.conditional.order_id } },
      after: { tool: 'modify_user_address' },
      message: 'check whether the last order shipped before changing the address',
    });
  }
  return rules;
}

function subgoals(goal: RetailGoal): Subgoal[] {
  const p = goal.profile;
  const identify: ActionPattern =
    goal.identity === 'email' ? { tool: 'find_user_id_by_email' } : { tool: 'find_user_id_by_name_zip', args: { zip: p.zip } };
  const out: Subgoal[] = [{ id: 'authenticated', pattern: identify }];
  const seen = new Set<string>(['authenticated']);
  for (const intent of goal.intents) {
    const order = orderOf(intent);
    if (order !== undefined) addSubgoal(out, seen, `looked-up-${order}`, { tool: 'get_order_details', args: { order_id: order } });
    const write = WRITE_TOOL[intent.kind];
    if (write !== undefined && !(intent.kind === 'cancel' && intent.trap)) {
      addSubgoal(out, seen, `${intent.kind}-${order ?? 'account'}`, order === undefined ? { tool: write } : { tool: write, args: { order_id: order } });
    }
    if (intent.kind === 'out_of_scope' && !REFUSE_TOPICS.has(intent.topic)) addSubgoal(out, seen, 'transferred', { tool: 'transfer_to_human_agents' });
  }
  return out;
}

function addSubgoal(out: Subgoal[], seen: Set<string>, id: string, pattern: ActionPattern): void {
  if (seen.has(id)) return;
  seen.add(id);
  out.push({ id, pattern });
}

/** The task content of a goal in a world (everything but the solution). */
export function retailSpec(goal: RetailGoal, initialState: JsonObject, level: number, tags: string[], steps = referenceSolution(goal).length): Omit<TaskSpec, 'solution'> {
  const spec: Omit<TaskSpec, 'solution'> = {
    instructions: RETAIL_INSTRUCTIONS,
    initialState,
    // Room to ask for each fact the user keeps back, more at higher levels (one fact per reply).
    budget: { steps: 2 * steps + 6 + 2 * level },
    constraints: { confirmTools: [...WRITE_TOOLS] },
    acceptance: { finalState: true },
    user: goal as never,
    tags,
  };
  const outputs = requiredOutputs(goal);
  if (outputs.length > 0) spec.acceptance.outputs = outputs;
  const ordering = orderingRules(goal);
  if (ordering.length > 0) spec.acceptance.ordering = ordering;
  spec.acceptance.subgoals = subgoals(goal);
  return spec;
}
