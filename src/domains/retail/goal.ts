/** The simulated user's hidden goal (`task.spec.user`): who the customer is, what they want, how they talk. */
import { z } from 'zod';
import type { JsonValue } from '../../core/index.js';

/** How much the user volunteers: everything at once, what is asked for, or one fact per reply. */
export type Disclosure = 'all_at_once' | 'on_request' | 'one_fact';
export const DISCLOSURES: readonly Disclosure[] = ['all_at_once', 'on_request', 'one_fact'];

/** Which phrase bank the user speaks from: training templates use `train`, held-out ones `heldout`. */
export type PhraseBankName = 'train' | 'heldout';

const address = z.strictObject({
  address1: z.string(),
  address2: z.string(),
  city: z.string(),
  state: z.string(),
  country: z.string(),
  zip: z.string(),
});
export type GoalAddress = z.infer<typeof address>;

/** How the user refers to an order: by id, by the products in it, or as their most recent order. */
const orderRef = z.strictObject({
  order_id: z.string(),
  refer: z.enum(['id', 'items', 'latest']),
  /** Product names the user describes the order by (unique to this order among the user's orders). */
  names: z.array(z.string()),
});
export type OrderRef = z.infer<typeof orderRef>;

/** A payment method as the user names it. */
const methodRef = z.strictObject({
  id: z.string(),
  /** What the user says: "my gift card", "my PayPal account", "my visa card ending in 1234", ... */
  text: z.string(),
  /** Words that name it in an agent message, any one suffices (the last four digits, "gift card", "paypal", "original payment method"). */
  cues: z.array(z.string()),
});
export type MethodRef = z.infer<typeof methodRef>;

const itemRef = z.strictObject({
  item_id: z.string(),
  product_id: z.string(),
  name: z.string(),
  /** Option values the user mentions to tell the item apart (empty when its name is enough). */
  options: z.array(z.string()),
  /** Exchanges: the wanted variant and the option values that differ from the current one. */
  new_item_id: z.string().optional(),
  new_options: z.array(z.tuple([z.string(), z.string()])).optional(),
});
export type ItemRef = z.infer<typeof itemRef>;

const intent = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('status'), order: orderRef, status: z.string(), tracking: z.string().optional() }),
  z.strictObject({
    kind: z.literal('cancel'),
    order: orderRef,
    reason: z.enum(['no longer needed', 'ordered by mistake']),
    /** Policy trap: the order is not pending; the agent must refuse and say its status. */
    status: z.string(),
    trap: z.boolean(),
  }),
  z.strictObject({
    kind: z.literal('return'),
    order: orderRef,
    items: z.array(itemRef).min(1),
    method: methodRef,
    /** Policy trap: the user first wants the refund on this (forbidden) method; `method` is the fallback. */
    insist: methodRef.optional(),
  }),
  z.strictObject({ kind: z.literal('exchange'), order: orderRef, items: z.array(itemRef).min(1), method: methodRef }),
  z.strictObject({ kind: z.literal('order_address'), order: orderRef, address }),
  z.strictObject({ kind: z.literal('user_address'), address }),
  z.strictObject({ kind: z.literal('payment'), order: orderRef, method: methodRef, current: z.string() }),
  z.strictObject({ kind: z.literal('out_of_scope'), topic: z.string() }),
  /** Policy trap: the user asks about an order of another customer (named as someone else's). */
  z.strictObject({ kind: z.literal('other_customer'), order_id: z.string(), relation: z.string() }),
]);
export type Intent = z.infer<typeof intent>;
export type IntentKind = Intent['kind'];

/** "Before changing my address, check whether my last order shipped; if it has not, change its address too." */
const conditional = z.strictObject({
  order_id: z.string(),
  status: z.string(),
  /** Whether the order is still pending (then its address changes too). */
  pending: z.boolean(),
});

/**
 * Version of the simulated customer's behaviour (phrase banks, recognisers, replies). It is part of every
 * goal, so changing how the customer talks changes task ids, and with them the regression digest.
 */
export const RETAIL_USER_VERSION = 2;

export const retailGoalSchema = z.strictObject({
  /** `RETAIL_USER_VERSION` when the task was made. */
  user: z.number().int(),
  bank: z.enum(['train', 'heldout']),
  disclosure: z.enum(['all_at_once', 'on_request', 'one_fact']),
  noise: z.number().int().min(0).max(2),
  /**
   * Later intents are raised only once the earlier ones are done or the agent asks for more. In a
   * conditional task: the customer asks about the shipment first and states the address change after
   * hearing the status (no condition to understand).
   */
  staggered: z.boolean(),
  /**
   * Indices of intents the customer words in other, less common ways (`alt` lines of the phrase bank);
   * in a conditional task, index 0 means the condition itself. Absent: none.
   */
  paraphrased: z.array(z.number().int().min(0)).optional(),
  identity: z.enum(['email', 'name_zip']),
  profile: z.strictObject({
    user_id: z.string(),
    first_name: z.string(),
    last_name: z.string(),
    zip: z.string(),
    email: z.string(),
  }),
  intents: z.array(intent).min(1),
  conditional: conditional.optional(),
});
export type RetailGoal = z.infer<typeof retailGoalSchema>;

/** The goal of a task when it has a retail user goal (tasks from elsewhere, e.g. tau-bench, have none). */
export function goalOf(user: JsonValue | undefined): RetailGoal | undefined {
  if (user === null || typeof user !== 'object' || Array.isArray(user) || user['profile'] === undefined) return undefined;
  return user as unknown as RetailGoal;
}

/** Write intents: what each changes and with which tool. */
export const WRITE_TOOL: Partial<Record<IntentKind, string>> = {
  cancel: 'cancel_pending_order',
  return: 'return_delivered_order_items',
  exchange: 'exchange_delivered_order_items',
  order_address: 'modify_pending_order_address',
  user_address: 'modify_user_address',
  payment: 'modify_pending_order_payment',
};

/** Every write tool of the domain: each needs the user's explicit confirmation. */
export const WRITE_TOOLS: readonly string[] = [
  'cancel_pending_order',
  'exchange_delivered_order_items',
  'modify_pending_order_address',
  'modify_pending_order_items',
  'modify_pending_order_payment',
  'modify_user_address',
  'return_delivered_order_items',
];
