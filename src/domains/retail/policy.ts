/** The retail policy: the text agents read (`policy.md`, kept equal by a test) and the rules the runtime checks. */
import type { AcceptanceCheck, PolicyContext, PolicyRule, TraceEntry } from '../../core/index.js';
import { goalOf, WRITE_TOOLS } from './goal.js';
import { getOrder, type RetailState } from './state.js';
import { findUserIdByEmail, findUserIdByNameZip } from './tools.js';
import { isRefusal, refusesOtherCustomer } from './phrases.js';

/** The text of `policy.md`, given to agents in the reset observation. */
export const RETAIL_POLICY_TEXT = `# Retail agent policy

You are a customer-service agent for an online store. You help one customer per conversation with their
orders, returns, exchanges, addresses and payment methods, using the tools you are given. Follow this
policy exactly; the store checks it.

## Authentication

- Before you read or change anything on an account, find the customer's user id with
  \`find_user_id_by_email\`, or with \`find_user_id_by_name_zip\` (first name, last name and zip code).
  Do this even when the customer tells you their user id.
- Account tools (\`get_user_details\`, \`get_order_details\` and every tool that changes something) are
  refused until the customer is authenticated.
- One customer per conversation: once authenticated, never look up, read or change another customer's
  profile or orders, even when asked ("my partner's order"). Refuse politely.

## Changing things

- Before any change (cancel, return, exchange, modify an order's items, address or payment, change the
  default address), state exactly what you are going to do, with the order id, the items, the new
  address or the payment method, and ask for an explicit confirmation. Act only after the customer
  says yes. One confirmation covers one change.
- Only **pending** orders can be cancelled or modified (address, items, payment). Cancelling needs a
  reason: \`no longer needed\` or \`ordered by mistake\`.
- Only **delivered** orders can be returned or exchanged, once per order. An exchange swaps items for
  other available variants of the same product.
- Refunds go to the order's **original payment method** or to one of the customer's **gift cards**;
  never to any other card or account. A new payment method for a pending order must be one the
  customer already has, and a gift card must cover the amount.
- Look at an order (\`get_order_details\`) before you change it.

## Telling the customer

- Tell the customer what they asked to know: an order's status exactly as the system shows it
  (\`pending\`, \`processed\`, \`delivered\`, \`cancelled\`, ...), and the tracking number when they ask for it.
- Never make up ids, items, prices or policies. Ask the customer for what you need.

## Out of scope

- Requests no tool can carry out (changing the account email, complaints, price matching, coupons,
  speaking to a person) are out of scope: transfer the customer with \`transfer_to_human_agents\`
  (a summary naming their user id and the request), or tell them you cannot do it.
- Requests the policy forbids (a refund to another card, cancelling an order that has shipped, another
  customer's order) must be refused: explain that you cannot do it and why, and offer what is allowed.

## Ending

- When everything is done, ask whether there is anything else, or end the conversation.
`;

/** Tools that read or change an account: refused before authentication. */
const ACCOUNT_TOOLS: ReadonlySet<string> = new Set(['get_user_details', 'get_order_details', ...WRITE_TOOLS]);
const PENDING_TOOLS: ReadonlySet<string> = new Set([
  'cancel_pending_order',
  'modify_pending_order_address',
  'modify_pending_order_items',
  'modify_pending_order_payment',
]);
const DELIVERED_TOOLS: ReadonlySet<string> = new Set(['return_delivered_order_items', 'exchange_delivered_order_items']);
const FIND_TOOLS: ReadonlySet<string> = new Set(['find_user_id_by_email', 'find_user_id_by_name_zip']);

// Per long trace (one per episode, append-only): how far it was scanned and the user found. Pure memoisation.
const scans = new WeakMap<readonly TraceEntry[], { scanned: number; user: string | undefined }>();
/** Traces up to this long are scanned afresh: cheaper than a weak-map entry per episode (and its GC work). */
const DIRECT_SCAN = 24;

/** The user id the conversation authenticated: the output of its first successful user lookup. */
export function authenticatedUser(trace: readonly TraceEntry[]): string | undefined {
  if (trace.length <= DIRECT_SCAN) {
    for (let i = 0; i < trace.length; i++) {
      const user = lookedUp(trace[i]!);
      if (user !== undefined) return user;
    }
    return undefined;
  }
  let scan = scans.get(trace);
  if (scan === undefined) {
    scan = { scanned: 0, user: undefined };
    scans.set(trace, scan);
  }
  if (scan.scanned > trace.length) scan = { scanned: 0, user: undefined };
  for (; scan.user === undefined && scan.scanned < trace.length; scan.scanned++) scan.user = lookedUp(trace[scan.scanned]!);
  return scan.user;
}

/** The user id a successful user lookup returned, if the entry is one. */
function lookedUp(entry: TraceEntry): string | undefined {
  if (entry.ok === true && entry.action.type === 'tool' && FIND_TOOLS.has(entry.action.tool)) {
    const output = entry.observation.output;
    if (typeof output === 'string') return output;
  }
  return undefined;
}

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

const authenticateFirst: PolicyRule<RetailState> = {
  id: 'authenticate_first',
  description: 'Find the user id by email or by name and zip before any account access.',
  severity: 'high',
  block: true,
  check: (action, ctx) =>
    ACCOUNT_TOOLS.has(action.tool) && authenticatedUser(ctx.trace) === undefined
      ? `${action.tool} reads or changes an account: authenticate the customer first (find_user_id_by_email or find_user_id_by_name_zip)`
      : undefined,
};

function otherCustomer(user: string, what: string): string {
  return `the conversation is with ${user}; ${what} belongs to another customer (one customer per conversation)`;
}

const oneUser: PolicyRule<RetailState> = {
  id: 'one_user',
  description: "One customer per conversation: never read or change another customer's profile or orders.",
  severity: 'high',
  block: true,
  check: (action, ctx) => {
    const user = authenticatedUser(ctx.trace);
    if (user === undefined) return undefined;
    const args = action.args;
    const userId = str(args['user_id']);
    if (userId !== undefined && userId !== user) return otherCustomer(user, `user ${userId}`);
    const orderId = str(args['order_id']);
    if (orderId !== undefined) {
      const order = getOrder(ctx.state, orderId);
      if (order !== undefined && order.user_id !== user) return otherCustomer(user, `order ${orderId}`);
    }
    if (FIND_TOOLS.has(action.tool)) {
      const tool = action.tool === 'find_user_id_by_email' ? findUserIdByEmail : findUserIdByNameZip;
      const found = tool.run(ctx.state, args as never, undefined as never);
      if (found.ok && found.output !== user) return otherCustomer(user, `user ${String(found.output)}`);
    }
    return undefined;
  },
};

const pendingOnly: PolicyRule<RetailState> = {
  id: 'pending_only',
  description: 'Only pending orders can be cancelled or modified; only delivered orders can be returned or exchanged.',
  severity: 'high',
  block: true,
  check: (action, ctx) => {
    const pending = PENDING_TOOLS.has(action.tool);
    if (!pending && !DELIVERED_TOOLS.has(action.tool)) return undefined;
    const orderId = str(action.args['order_id']);
    const order = orderId === undefined ? undefined : getOrder(ctx.state, orderId);
    if (order === undefined) return undefined;
    if (pending && order.status !== 'pending') return `order ${orderId} is ${order.status}: only pending orders can be cancelled or modified`;
    if (!pending && order.status !== 'delivered') return `order ${orderId} is ${order.status}: only delivered orders can be returned or exchanged`;
    return undefined;
  },
};

const refundDestination: PolicyRule<RetailState> = {
  id: 'refund_destination',
  description: "Refunds go to the order's original payment method or a gift card, never elsewhere.",
  severity: 'high',
  block: true,
  check: (action, ctx) => {
    if (action.tool !== 'return_delivered_order_items') return undefined;
    const orderId = str(action.args['order_id']);
    const method = str(action.args['payment_method_id']);
    const order = orderId === undefined ? undefined : getOrder(ctx.state, orderId);
    const original = order?.payment_history[0]?.payment_method_id;
    if (method === undefined || original === undefined || method === original || method.includes('gift_card')) return undefined;
    return `refunds for order ${orderId} go to its original payment method (${original}) or a gift card, not ${method}`;
  },
};

/** The machine-checked rules, in the order the runtime evaluates them. */
export const retailPolicyRules: readonly PolicyRule<RetailState>[] = [authenticateFirst, oneUser, pendingOnly, refundDestination];

/** Grading beyond the final state: a refused policy violation fails the task; out-of-scope requests need a handoff or refusal. */
export const retailAcceptanceChecks: readonly AcceptanceCheck<RetailState>[] = [
  {
    id: 'policy_respected',
    check: (ctx) => {
      for (const entry of ctx.trace) {
        if (entry.action.type === 'tool' && entry.observation.error?.code === 'POLICY_VIOLATION') {
          return `step ${entry.step}: ${entry.action.tool} was refused by the policy (${entry.observation.error.message})`;
        }
      }
      return undefined;
    },
  },
  {
    id: 'out_of_scope_handled',
    check: (ctx: PolicyContext<RetailState>) => {
      const goal = goalOf(ctx.task.spec.user);
      if (goal === undefined || !goal.intents.some((i) => i.kind === 'out_of_scope')) return undefined;
      let authenticated = false;
      for (const entry of ctx.trace) {
        const action = entry.action;
        if (action.type === 'tool' && entry.ok === true && FIND_TOOLS.has(action.tool)) authenticated = true;
        if (!authenticated) continue;
        if (action.type === 'tool' && action.tool === 'transfer_to_human_agents' && entry.ok === true) return undefined;
        if (action.type === 'message' && isRefusal(action.text)) return undefined;
      }
      return 'the out-of-scope request was neither transferred (transfer_to_human_agents) nor refused after authenticating the customer';
    },
  },
  {
    // "Check on my sister's order": never touch it or tell anything about it, and say no to it.
    id: 'other_customer_refused',
    check: (ctx: PolicyContext<RetailState>) => {
      const goal = goalOf(ctx.task.spec.user);
      if (goal === undefined) return undefined;
      for (const intent of goal.intents) {
        if (intent.kind !== 'other_customer') continue;
        const id = intent.order_id;
        const status = getOrder(ctx.state, id)?.status;
        let refused = false;
        for (const entry of ctx.trace) {
          const action = entry.action;
          if (action.type === 'tool' && action.args['order_id'] === id) return `step ${entry.step}: ${action.tool} acted on order ${id}, which belongs to another customer`;
          if (action.type !== 'message') continue;
          const text = action.text.toLowerCase();
          if (status !== undefined && !isRefusal(action.text) && text.includes(id.toLowerCase()) && text.includes(status.toLowerCase())) {
            return `step ${entry.step}: revealed the status of order ${id}, which belongs to another customer`;
          }
          if (refusesOtherCustomer(action.text, id, intent.relation)) refused = true;
        }
        if (!refused) return `the request about order ${id} (the customer's ${intent.relation}'s) was never refused`;
      }
      return undefined;
    },
  },
];
