/**
 * Understanding a retail conversation, used by the rule-based agent (the generic learner has no retail code): keyword/regex
 * intents and facts from the customer's words, records from the tools' outputs, and the slot-filled
 * actions (ask, look up, propose, act, tell, refuse) the bot chooses from. It reads observations only.
 */
import type { Action, JsonObject, JsonValue, Observation } from '../../core/index.js';
import { isFaultError } from '../../agents/faults.js';

/** What a customer can want, as the keyword detector names it. */
export type RetailIntentKind = 'status' | 'cancel' | 'return' | 'exchange' | 'order_address' | 'user_address' | 'payment' | 'out_of_scope' | 'other_customer';

/** One request the detector heard, with the order it names in the same sentence (if any). */
export interface RetailRequest {
  kind: RetailIntentKind;
  sentence: string;
  orderId?: string;
  /** "my last order", "my most recent order" in the same sentence. */
  latest: boolean;
  /** The sentence, when it describes the order by its items ("the order with the Air Fryer"). */
  described?: string;
  /** Index of the user message it was heard in. */
  heardAt: number;
  done: boolean;
}

export interface RetailAddress {
  address1: string;
  address2: string;
  city: string;
  state: string;
  country: string;
  zip: string;
}

type MethodMention = { kind: 'gift_card' | 'paypal' | 'original' } | { kind: 'card'; lastFour: string } | { kind: 'id'; id: string };

interface PaymentMethodRecord {
  source?: string;
  id?: string;
  last_four?: string;
  brand?: string;
  balance?: number;
}
interface UserRecord {
  address?: RetailAddress;
  payment_methods?: Record<string, PaymentMethodRecord>;
  orders?: string[];
}
interface OrderItemRecord {
  name: string;
  product_id: string;
  item_id: string;
  options: Record<string, string>;
}
interface OrderRecord {
  order_id: string;
  user_id?: string;
  status: string;
  items: OrderItemRecord[];
  fulfillments?: Array<{ tracking_id?: string[] }>;
  payment_history?: Array<{ payment_method_id: string; transaction_type?: string }>;
}
interface ProductRecord {
  product_id: string;
  variants: Record<string, { item_id: string; options: Record<string, string>; available: boolean }>;
}

/** Slots a request still needs, in the order a careful agent fills them. */
export type RetailNeed = 'auth' | 'user' | 'order' | 'fetch' | 'items' | 'options' | 'product' | 'method' | 'reason' | 'address' | 'none';

// ---- keyword understanding: the honest weak spot of a rule-based bot ----

const INTENT_PATTERNS: ReadonlyArray<readonly [RetailIntentKind, RegExp]> = [
  ['other_customer', /\bmy (?:wife|husband|partner|friend|mother|mom|mum|father|dad|son|daughter|brother|sister|roommate|neighbou?r|colleague|boss|cousin|aunt|uncle|grandma|grandpa)['’]s\b/],
  ['cancel', /\bcancel/],
  ['exchange', /\bexchange|\bswap\b/],
  ['return', /\breturn\b|\bsend (?:it |them |something )?back\b|\brefund\b(?! (?:it |the money )?(?:to|on)\b| should)/],
  ['order_address', /(?:shipping|delivery) address|address (?:of|on|for) (?:my |the |that |this )?order|order['’]s (?:shipping )?address|where (?:an|the|my) order is shipped|\bship it to\b/],
  ['user_address', /\baddress\b|\bmoved\b|\bmoving\b/],
  ['payment', /payment method|\bpay (?:for .{1,40} )?with\b|different (?:card|payment)|another (?:card|payment)|change how i pay/],
  ['status', /\bstatus\b|\bwhere is\b|\bwhere['’]s\b|\btrack|\bshipped\b|\barriv|check on/],
  ['out_of_scope', /coupon|discount|promo code|price ?match|cheaper|complain|rude|speak to|talk to|real person|human|manager|email (?:address )?on (?:my|the) account|change (?:the|my) email|update the email/],
];

const ORDER_ID = /#w\d{7}\b/gi;
const EMAIL = /[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}/i;
const NAME_LEAD = /(?:[Mm]y name is|[Ii]['’]m|[Ii] am|[Tt]his is|[Ii]t['’]s|[Nn]ame['’]s)\s+([A-Z][A-Za-z'’-]+)\s+([A-Z][A-Za-z'’-]+)/;
const NAME_BEFORE_ZIP = /([A-Z][A-Za-z'’-]+)\s+([A-Z][A-Za-z'’-]+),?\s+(?:and )?(?:my )?(?:zip|postcode|postal)/;
const ZIP_LEAD = /(?:zip(?: code)?|postcode|postal code)(?: is)?:?\s*(\d{5})\b/i;
const ADDRESS = /(\d+[A-Za-z]? [^,]+?), (?:([^,]+?), )?([^,]+?), ([A-Z]{2}) (\d{5}), ([A-Za-z][A-Za-z .'-]*?)(?=[.!?]?(?:\s|$))/;
const REASON = /no longer needed|ordered by mistake/i;
const LATEST = /\b(?:last|latest|most recent|newest|recent)\b[^.?!]{0,12}\b(?:order|purchase|one)\b/;
const ORDER_BY_ITEMS = /\border with\b|\bone with\b|\bpurchase (?:that|with)\b/;
const YES = /\b(?:yes|yep|yeah|correct|go ahead|confirm(?:ed)?|do it|sure|exactly)\b/;
const NO = /\bno\b|\bnot\b|\bdon['’]t\b|\bnever\b|\bwait\b|\bhold on\b|\bbefore that\b|\boff\b/;

/** Request kinds the keyword detector hears in one sentence, in the order their keywords occur. */
export function detectIntents(sentence: string): RetailIntentKind[] {
  const text = sentence.toLowerCase();
  const found: Array<[number, RetailIntentKind]> = [];
  for (const [kind, re] of INTENT_PATTERNS) {
    const m = re.exec(text);
    if (m === null) continue;
    if (kind === 'user_address' && found.some(([, k]) => k === 'order_address')) continue;
    // "The refund should go to the original payment method" names where money goes, not a payment change.
    if (kind === 'payment' && /\brefund|difference/.test(text)) continue;
    found.push([m.index, kind]);
  }
  return found.sort((a, b) => a[0] - b[0]).map(([, k]) => k);
}

/** Sentences of a message (noise may drop the final punctuation; inner punctuation stays). */
export function sentences(text: string): string[] {
  // "St. Louis" is a city, not the end of a sentence.
  return text.split(/(?<=[.?!])(?<!\bSt\.)\s+|;\s+/).map((s) => s.trim()).filter((s) => s.length > 0);
}

function parseAddress(text: string): RetailAddress | undefined {
  const m = ADDRESS.exec(text);
  if (m === null) return undefined;
  return { address1: m[1]!, address2: m[2] ?? '', city: m[3]!, state: m[4]!, zip: m[5]!, country: m[6]!.trim() };
}

function parseMethod(sentence: string): MethodMention | undefined {
  const t = sentence.toLowerCase();
  const id = /\b(?:credit_card|gift_card|paypal)_\d+\b/.exec(t);
  if (id !== null) return { kind: 'id', id: id[0] };
  const card = /ending (?:in|with) (\d{4})\b/.exec(t);
  if (card !== null) return { kind: 'card', lastFour: card[1]! };
  if (/original (?:payment )?method|original card|same (?:card|method)/.test(t)) return { kind: 'original' };
  if (/gift ?card/.test(t)) return { kind: 'gift_card' };
  if (/paypal/.test(t)) return { kind: 'paypal' };
  return undefined;
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function addressLine(a: RetailAddress): string {
  return [a.address1, a.address2, a.city, `${a.state} ${a.zip}`, a.country].filter((p) => p !== '').join(', ');
}

function listText(parts: readonly string[]): string {
  return parts.length <= 1 ? (parts[0] ?? '') : `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`;
}

const NEEDS_ORDER: ReadonlySet<RetailIntentKind> = new Set(['status', 'cancel', 'return', 'exchange', 'order_address', 'payment']);
const WRITE_OF: Partial<Record<RetailIntentKind, string>> = {
  cancel: 'cancel_pending_order',
  return: 'return_delivered_order_items',
  exchange: 'exchange_delivered_order_items',
  order_address: 'modify_pending_order_address',
  user_address: 'modify_user_address',
  payment: 'modify_pending_order_payment',
};
const VERB: Partial<Record<RetailIntentKind, string>> = { return: 'return', exchange: 'exchange' };

/** What the agent last did and how it went, as the agents' state sees it. */
export type LastResult = 'start' | 'ok' | 'error' | 'fault' | 'said';

/**
 * One conversation's understanding. Feed it every observation (`hear`, `afterStep`); ask it for the
 * focus request, what it still needs, and the concrete actions that fill those needs.
 */
export class RetailDialogue {
  readonly userTexts: string[] = [];
  readonly requests: RetailRequest[] = [];
  /** Request indices in the order they will be handled (`defer` moves the focus to the back). */
  private readonly queue: number[] = [];
  conditional = false;
  email: string | undefined;
  emailFailed = false;
  firstName: string | undefined;
  lastName: string | undefined;
  zip: string | undefined;
  reason: string | undefined;
  address: RetailAddress | undefined;
  method: MethodMention | undefined;
  userId: string | undefined;
  user: UserRecord | undefined;
  readonly orders = new Map<string, OrderRecord>();
  readonly products = new Map<string, ProductRecord>();
  /** Order references in the user's words, latest last: an id, "my last order", or a description by items. */
  private readonly orderRefs: Array<{ at: number; id?: string; latest?: boolean; byItems?: string }> = [];
  /** Order references already used up by a handled request. */
  private readonly consumed = new Set<number>();
  /** Canonical keys of tool calls that failed (not by an injected fault): never sent again. */
  private readonly failed = new Set<string>();
  /** Sentences that may name items (not order descriptions). */
  private itemText = '';
  private optionText = '';
  /** The user said yes to the last proposal (and no write has happened since). */
  confirmed = false;
  declined = 0;
  asked = new Map<string, number>();
  last: LastResult = 'start';
  lastCall: Action | undefined;
  steps = 0;
  readonly budgetSteps: number;

  constructor(reset: Observation) {
    this.budgetSteps = reset.budget?.steps ?? 30;
    this.hear(reset.text ?? '');
  }

  /** Answers derived from the slots, valid until the next change (the agents ask for them several times a step). */
  private readonly memo = new Map<string, unknown>();

  private changed(): void {
    this.memo.clear();
  }

  private cached<T>(key: string, compute: () => T): T {
    if (this.memo.has(key)) return this.memo.get(key) as T;
    const value = compute();
    this.memo.set(key, value);
    return value;
  }

  // ---- listening ----

  /** Takes in a customer message: facts, order references and (new) requests. */
  hear(text: string): void {
    this.changed();
    const index = this.userTexts.length;
    this.userTexts.push(text);
    for (const sentence of sentences(text)) {
      const lower = sentence.toLowerCase();
      const email = EMAIL.exec(sentence);
      if (email !== null) {
        this.email = email[0];
        this.emailFailed = false;
      }
      if (/don['’]?t (?:remember|know) which (?:e-?mail|mailbox)|not sure which e-?mail|no idea which mailbox/.test(lower)) this.emailFailed = true;
      const name = NAME_LEAD.exec(sentence) ?? NAME_BEFORE_ZIP.exec(sentence);
      if (name !== null && !/^(?:Order|The|It)$/.test(name[1]!)) {
        this.firstName = name[1];
        this.lastName = name[2];
      }
      const address = parseAddress(sentence);
      if (address !== undefined) this.address = address;
      const zip = ZIP_LEAD.exec(sentence);
      if (zip !== null) this.zip = zip[1];
      else if (address === undefined && (this.asked.get('zip') ?? 0) > 0 && this.zip === undefined) {
        const bare = /\b(\d{5})\b/.exec(sentence);
        if (bare !== null) this.zip = bare[1];
      }
      if ((this.asked.get('name') ?? 0) > 0 && this.firstName === undefined) {
        const bare = /^(?:[a-z,]+\s)*?([A-Z][A-Za-z'’-]+)\s+([A-Z][A-Za-z'’-]+)\.?$/.exec(sentence);
        if (bare !== null && !/^(?:Order|The|It|My)$/.test(bare[1]!)) {
          this.firstName = bare[1];
          this.lastName = bare[2];
        }
      }
      const reason = REASON.exec(sentence);
      if (reason !== null) this.reason = reason[0].toLowerCase();
      const method = parseMethod(sentence);
      if (method !== undefined) this.method = method;
      const ids = [...sentence.matchAll(ORDER_ID)].map((m) => `#W${m[0].slice(2)}`);
      const latest = LATEST.test(lower);
      const byItems = ORDER_BY_ITEMS.test(lower);
      let kinds = address !== undefined || email !== null ? [] : detectIntents(sentence);
      // A sentence about someone else's order asks nothing else of this customer's account.
      if (kinds.includes('other_customer')) kinds = ['other_customer'];
      // Someone else's order is not a reference to one of this customer's orders.
      if (!kinds.includes('other_customer')) {
        if (ids.length > 0) this.orderRefs.push({ at: index, id: ids[ids.length - 1]! });
        else if (latest) this.orderRefs.push({ at: index, latest: true });
        else if (byItems) this.orderRefs.push({ at: index, byItems: lower });
      }
      if (!byItems) this.itemText += ` ${lower}`;
      this.optionText += ` ${lower}`;
      if (/\bbefore\b|\bif (?:it|not|it['’]s|it has)|\bif it hasn|\bfirst though\b/.test(lower) && index === 0) this.conditional = true;
      // Facts answered in a sentence are not new requests ("The new address is ..." is not an address change).
      for (const kind of kinds) {
        this.addRequest({ kind, sentence, ...(ids.length > 0 ? { orderId: ids[0]! } : {}), latest, ...(byItems && ids.length === 0 ? { described: lower } : {}), heardAt: index, done: false });
      }
    }
  }

  private addRequest(request: RetailRequest): void {
    const vague = (r: RetailRequest): boolean => r.orderId === undefined && !r.latest && r.described === undefined;
    const same = this.requests.find((r) => r.kind === request.kind && (r.orderId === request.orderId || vague(request) || vague(r)));
    if (same !== undefined) {
      if (same.orderId === undefined && request.orderId !== undefined && !same.done) same.orderId = request.orderId;
      return;
    }
    this.requests.push(request);
    this.queue.push(this.requests.length - 1);
  }

  /** Updates the records and flags from a step's result for the action the agent sent. */
  afterStep(action: Action, observation: Observation): void {
    try {
      this.take(action, observation);
    } finally {
      this.changed();
    }
  }

  private take(action: Action, observation: Observation): void {
    this.changed();
    this.steps++;
    if (action.type === 'tool') {
      this.lastCall = action;
      if (observation.error !== undefined) {
        this.last = isFaultError(observation) ? 'fault' : 'error';
        if (this.last === 'error') this.failed.add(callKey(action));
        if (action.tool === 'find_user_id_by_email' && observation.error.code === 'NOT_FOUND') this.emailFailed = true;
        return;
      }
      this.last = 'ok';
      this.readTool(action, observation.output);
      return;
    }
    if (action.type === 'message') {
      this.last = 'said';
      const reply = observation.text ?? '';
      const lower = reply.toLowerCase();
      if (this.isProposal(action.text)) {
        const yes = YES.test(lower) && !NO.test(lower);
        this.confirmed = yes;
        if (yes) this.declined = 0;
        else this.declined++;
      }
      this.hear(reply);
    }
  }

  private isProposal(text: string): boolean {
    return text.includes('Please confirm');
  }

  private readTool(action: Action & { type: 'tool' }, output: JsonValue | undefined): void {
    const args = action.args;
    switch (action.tool) {
      case 'find_user_id_by_email':
      case 'find_user_id_by_name_zip':
        if (typeof output === 'string') this.userId = output;
        return;
      case 'get_user_details':
        if (isObject(output)) this.user = output as unknown as UserRecord;
        return;
      case 'get_order_details':
        if (isObject(output) && typeof output['order_id'] === 'string') this.orders.set(output['order_id'], output as unknown as OrderRecord);
        return;
      case 'get_product_details':
        if (isObject(output) && typeof output['product_id'] === 'string') this.products.set(output['product_id'], output as unknown as ProductRecord);
        return;
      case 'transfer_to_human_agents': {
        const focus = this.focus();
        if (focus !== undefined && focus.kind === 'out_of_scope') this.markDone(focus);
        return;
      }
      default:
        break;
    }
    // A successful write: the order (or user) as it is now, and the confirmation is used up.
    this.confirmed = false;
    if (isObject(output) && typeof output['order_id'] === 'string') this.orders.set(output['order_id'], output as unknown as OrderRecord);
    const done = this.requests.find((r) => !r.done && WRITE_OF[r.kind] === action.tool && (r.kind === 'user_address' || this.orderIdOf(r) === args['order_id']));
    if (done !== undefined) this.markDone(done);
  }

  private markDone(request: RetailRequest): void {
    // Remember which order it was about; an answer to "which order?" serves one request only.
    if (request.orderId === undefined && NEEDS_ORDER.has(request.kind)) {
      const id = this.orderIdOf(request);
      if (id !== undefined) request.orderId = id;
      const ref = request.latest || request.described !== undefined ? undefined : this.answerRef(request);
      if (ref !== undefined) this.consumed.add(ref);
    }
    this.changed();
    request.done = true;
    this.declined = 0;
  }

  // ---- what is known ----

  /** The request being handled: the first open one in the queue. */
  focus(): RetailRequest | undefined {
    return this.cached('focus', () => this.computeFocus());
  }

  private computeFocus(): RetailRequest | undefined {
    for (const i of this.queue) if (!this.requests[i]!.done) return this.requests[i];
    return undefined;
  }

  /** Open requests other than the focus. */
  othersOpen(): number {
    return Math.max(0, this.requests.filter((r) => !r.done).length - 1);
  }

  /** Moves the focus request to the back of the queue. */
  defer(): void {
    this.changed();
    const focus = this.focus();
    if (focus === undefined) return;
    const i = this.requests.indexOf(focus);
    this.queue.splice(this.queue.indexOf(i), 1);
    this.queue.push(i);
  }

  lastOrderId(): string | undefined {
    const orders = this.user?.orders;
    return orders !== undefined && orders.length > 0 ? orders[orders.length - 1] : undefined;
  }

  /** The order a request is about, when it can be told from what was said and looked up. */
  orderIdOf(request: RetailRequest): string | undefined {
    if (request.orderId !== undefined) return request.orderId;
    if (request.latest) return this.lastOrderId();
    if (request.described !== undefined) return this.orderByItems(request.described);
    // Otherwise the latest order the customer named after raising the request (answering "which order?").
    const i = this.answerRef(request);
    if (i === undefined) return undefined;
    const ref = this.orderRefs[i]!;
    if (ref.id !== undefined) return ref.id;
    if (ref.latest === true) return this.lastOrderId();
    return ref.byItems === undefined ? undefined : this.orderByItems(ref.byItems);
  }

  /** Index of the order reference answering for `request`: the latest after it was raised, not used up by a handled request. */
  private answerRef(request: RetailRequest): number | undefined {
    for (let i = this.orderRefs.length - 1; i >= 0; i--) {
      const ref = this.orderRefs[i]!;
      if (ref.at <= request.heardAt && this.requests.length > 1) break;
      if (this.consumed.has(i)) continue;
      if (ref.id !== undefined || ref.latest === true || ref.byItems !== undefined) return i;
    }
    return undefined;
  }

  /** Whether the focus request's order was described by its items (so looking through the orders can find it). */
  describedByItems(): boolean {
    const focus = this.focus();
    if (focus === undefined) return false;
    if (focus.described !== undefined) return true;
    const ref = this.orderRefs.filter((r) => r.at > focus.heardAt || this.requests.length === 1).pop();
    return ref?.byItems !== undefined;
  }

  private orderByItems(text: string): string | undefined {
    for (const id of this.user?.orders ?? []) {
      const order = this.orders.get(id);
      if (order !== undefined && order.items.some((item) => text.includes(item.name.toLowerCase()))) return id;
    }
    return undefined;
  }

  /** The next of the user's orders not looked up yet. */
  unfetchedOrder(): string | undefined {
    return (this.user?.orders ?? []).find((id) => !this.orders.has(id));
  }

  /** The fetched order of the focus request. */
  focusOrder(): OrderRecord | undefined {
    const focus = this.focus();
    const id = focus === undefined ? undefined : this.orderIdOf(focus);
    return id === undefined ? undefined : this.orders.get(id);
  }

  /** Items of the order the user named (by name, narrowed by option values when names repeat). */
  items(order: OrderRecord): OrderItemRecord[] {
    const named = order.items.filter((item) => this.itemText.includes(item.name.toLowerCase()));
    const byName = new Map<string, OrderItemRecord[]>();
    for (const item of named) byName.set(item.name, [...(byName.get(item.name) ?? []), item]);
    const out: OrderItemRecord[] = [];
    for (const group of byName.values()) {
      if (group.length === 1) {
        out.push(group[0]!);
        continue;
      }
      // "the Desk Organizer (acrylic, 3)": the option values in brackets after the name tell repeated names apart.
      const name = group[0]!.name.toLowerCase();
      const said = new Set<string>();
      for (const m of this.itemText.matchAll(new RegExp(`${escapeRegExp(name)} \\(([^)]*)\\)`, 'g'))) for (const v of m[1]!.split(/,\s*/)) said.add(v.trim());
      const specific = group.filter((item) => said.size > 0 && Object.values(item.options).every((v) => said.has(v.toLowerCase())));
      out.push(...(specific.length > 0 ? specific : [group[0]!]));
    }
    return out;
  }

  /** The variant an exchange wants for an item: its options with the ones the user named changed. */
  newItem(item: OrderItemRecord): string | undefined {
    const product = this.products.get(item.product_id);
    if (product === undefined) return undefined;
    const wanted = { ...item.options };
    let changed = false;
    const variants = Object.values(product.variants);
    for (const key of Object.keys(item.options)) {
      const values = new Set(variants.map((v) => v.options[key]).filter((v): v is string => v !== undefined));
      for (const value of values) {
        const k = key.toLowerCase();
        const v = value.toLowerCase();
        if (value !== item.options[key] && (this.optionText.includes(`${k} ${v}`) || this.optionText.includes(`${k}: ${v}`))) {
          wanted[key] = value;
          changed = true;
        }
      }
    }
    if (!changed) return undefined;
    const match = variants.find((v) => v.available && Object.keys(wanted).every((k) => v.options[k] === wanted[k]));
    return match?.item_id;
  }

  /** The payment method id the user named, resolved against their profile and the order. */
  methodId(order: OrderRecord | undefined): string | undefined {
    const m = this.method;
    if (m === undefined) return undefined;
    if (m.kind === 'id') return m.id;
    if (m.kind === 'original') return order?.payment_history?.[0]?.payment_method_id;
    const methods = Object.entries(this.user?.payment_methods ?? {});
    const found = methods.find(([id, pm]) => {
      const source = pm.source ?? id.replace(/_\d+$/, '');
      if (m.kind === 'card') return source === 'credit_card' && pm.last_four === m.lastFour;
      return source === m.kind;
    });
    return found?.[0];
  }

  /** What the focus request still needs, first missing first. */
  need(): RetailNeed {
    return this.cached('need', () => this.computeNeed());
  }

  private computeNeed(): RetailNeed {
    const focus = this.focus();
    if (focus === undefined) return 'none';
    if (focus.kind === 'other_customer') return 'none';
    if (this.userId === undefined) return 'auth';
    if (NEEDS_ORDER.has(focus.kind)) {
      const id = this.orderIdOf(focus);
      if (id === undefined) return this.user === undefined && (focus.latest || this.describedByItems() || this.orderRefs.some((r) => r.latest)) ? 'user' : 'order';
      if (!this.orders.has(id)) return 'fetch';
    }
    const order = this.focusOrder();
    switch (focus.kind) {
      case 'cancel':
        return this.reason === undefined ? 'reason' : 'none';
      case 'return':
        if (order === undefined || this.items(order).length === 0) return 'items';
        if (this.method === undefined) return 'method';
        if (this.methodId(order) === undefined) return this.user === undefined ? 'user' : 'method';
        return 'none';
      case 'exchange': {
        if (order === undefined) return 'fetch';
        const items = this.items(order);
        if (items.length === 0) return 'items';
        if (items.some((i) => !this.products.has(i.product_id))) return 'product';
        if (items.some((i) => this.newItem(i) === undefined)) return 'options';
        if (this.method === undefined) return 'method';
        if (this.methodId(order) === undefined) return this.user === undefined ? 'user' : 'method';
        return 'none';
      }
      case 'order_address':
      case 'user_address':
        return this.address === undefined ? 'address' : 'none';
      case 'payment':
        if (this.method === undefined) return 'method';
        if (this.methodId(order) === undefined) return this.user === undefined ? 'user' : 'method';
        return 'none';
      default:
        return 'none';
    }
  }

  /** Whether the focus request is something the policy forbids (or no tool does), as far as is known. */
  forbidden(): boolean {
    return this.cached('forbidden', () => this.computeForbidden());
  }

  private computeForbidden(): boolean {
    const focus = this.focus();
    if (focus === undefined) return false;
    if (focus.kind === 'other_customer' || focus.kind === 'out_of_scope') return true;
    const order = this.focusOrder();
    if (order === undefined) return false;
    if (this.userId !== undefined && order.user_id !== undefined && order.user_id !== this.userId) return true;
    switch (focus.kind) {
      case 'cancel':
      case 'order_address':
      case 'payment':
        return order.status !== 'pending';
      case 'exchange':
        return order.status !== 'delivered';
      case 'return': {
        if (order.status !== 'delivered') return true;
        const id = this.methodId(order);
        return id !== undefined && !id.startsWith('gift_card') && id !== order.payment_history?.[0]?.payment_method_id;
      }
      default:
        return false;
    }
  }

  /** Status words of an order as the agent would tell them (status, then tracking ids). */
  statusText(order: OrderRecord): string {
    const tracking = (order.fulfillments ?? []).flatMap((f) => f.tracking_id ?? []);
    return `Order ${order.order_id} is ${order.status}.${tracking.length > 0 ? ` The tracking number is ${tracking.join(' and ')}.` : ''}`;
  }

  // ---- actions: each returns undefined when its slots cannot be filled now ----

  /** A read call, unless the same call already failed (it would fail again). */
  private fresh(action: Action & { type: 'tool' }): Action | undefined {
    return this.failed.has(callKey(action)) ? undefined : action;
  }

  askEmail(): Action {
    this.asked.set('email', (this.asked.get('email') ?? 0) + 1);
    return say('To verify your identity, could you tell me your email?');
  }

  askNameZip(): Action {
    if (this.firstName !== undefined && this.zip === undefined) {
      this.asked.set('zip', (this.asked.get('zip') ?? 0) + 1);
      return say('Thank you. And what is your zip code?');
    }
    if (this.zip !== undefined && this.firstName === undefined) {
      this.asked.set('name', (this.asked.get('name') ?? 0) + 1);
      return say('Thank you. And what is your first and last name?');
    }
    this.asked.set('name', (this.asked.get('name') ?? 0) + 1);
    this.asked.set('zip', (this.asked.get('zip') ?? 0) + 1);
    return say('Could you tell me your first and last name and your zip code, so I can find your account?');
  }

  findByEmail(): Action | undefined {
    if (this.email === undefined || this.emailFailed) return undefined;
    return this.fresh(tool('find_user_id_by_email', { email: this.email }));
  }

  findByNameZip(): Action | undefined {
    if (this.firstName === undefined || this.lastName === undefined || this.zip === undefined) return undefined;
    return this.fresh(tool('find_user_id_by_name_zip', { first_name: this.firstName, last_name: this.lastName, zip: this.zip }));
  }

  getUser(): Action | undefined {
    if (this.userId === undefined || this.user !== undefined) return undefined;
    return this.fresh(tool('get_user_details', { user_id: this.userId }));
  }

  askOrder(): Action {
    this.asked.set('order', (this.asked.get('order') ?? 0) + 1);
    return say('Which order is this about? Could you give me the order number?');
  }

  getOrder(): Action | undefined {
    const focus = this.focus();
    if (focus === undefined || this.userId === undefined || focus.kind === 'other_customer') return undefined;
    const id = this.orderIdOf(focus);
    if (id === undefined || this.orders.has(id)) return undefined;
    return this.fresh(tool('get_order_details', { order_id: id }));
  }

  scanOrder(): Action | undefined {
    if (this.userId === undefined) return undefined;
    const id = this.unfetchedOrder();
    return id === undefined ? undefined : this.fresh(tool('get_order_details', { order_id: id }));
  }

  getProduct(): Action | undefined {
    const order = this.focusOrder();
    if (order === undefined) return undefined;
    const item = this.items(order).find((i) => !this.products.has(i.product_id));
    return item === undefined ? undefined : this.fresh(tool('get_product_details', { product_id: item.product_id }));
  }

  askItems(): Action {
    const verb = VERB[this.focus()?.kind ?? 'return'] ?? 'return';
    this.asked.set('items', (this.asked.get('items') ?? 0) + 1);
    return say(`Which items would you like to ${verb}?`);
  }

  askOptions(): Action {
    this.asked.set('options', (this.asked.get('options') ?? 0) + 1);
    return say('Which options would you like instead?');
  }

  askMethod(): Action {
    this.asked.set('method', (this.asked.get('method') ?? 0) + 1);
    const kind = this.focus()?.kind;
    if (kind === 'return') return say('Which payment method should the refund go to?');
    if (kind === 'exchange') return say('Which payment method should I use for any price difference?');
    return say('Which payment method would you like to use for this order?');
  }

  askReason(): Action {
    this.asked.set('reason', (this.asked.get('reason') ?? 0) + 1);
    return say('What is the reason for the cancellation?');
  }

  askAddress(): Action {
    this.asked.set('address', (this.asked.get('address') ?? 0) + 1);
    return say('What is the new address?');
  }

  /** The write of the focus request with every slot, or undefined when one is missing. */
  write(): Action | undefined {
    const plan = this.plan();
    return plan === undefined ? undefined : tool(plan.tool, plan.args);
  }

  /** The proposal of the focus request's write, naming every detail, asking for confirmation. */
  propose(): Action | undefined {
    const plan = this.plan();
    if (plan === undefined) return undefined;
    return say(`${plan.describe} Shall I go ahead? Please confirm.`);
  }

  private plan(): { tool: string; args: JsonObject; describe: string } | undefined {
    const focus = this.focus();
    if (focus === undefined || this.userId === undefined || this.need() !== 'none') return undefined;
    const order = this.focusOrder();
    const orderId = focus.kind === 'user_address' ? undefined : this.orderIdOf(focus);
    switch (focus.kind) {
      case 'cancel':
        return { tool: 'cancel_pending_order', args: { order_id: orderId!, reason: this.reason! }, describe: `I can cancel order ${orderId} (reason: ${this.reason}).` };
      case 'return': {
        const items = this.items(order!);
        const method = this.methodId(order)!;
        return {
          tool: 'return_delivered_order_items',
          args: { order_id: orderId!, item_ids: items.map((i) => i.item_id), payment_method_id: method },
          describe: `I can return ${listText(items.map((i) => `the ${i.name} (item ${i.item_id})`))} from order ${orderId}, with the refund going to ${method}.`,
        };
      }
      case 'exchange': {
        const items = this.items(order!);
        const method = this.methodId(order)!;
        const news = items.map((i) => this.newItem(i)!);
        return {
          tool: 'exchange_delivered_order_items',
          args: { order_id: orderId!, item_ids: items.map((i) => i.item_id), new_item_ids: news, payment_method_id: method },
          describe: `I can exchange ${listText(items.map((i, k) => `the ${i.name} (item ${i.item_id}) for item ${news[k]} (${Object.values(this.products.get(i.product_id)!.variants[news[k]!]?.options ?? {}).join(', ')})`))} in order ${orderId}, with ${method} covering any price difference.`,
        };
      }
      case 'order_address':
        return {
          tool: 'modify_pending_order_address',
          args: { order_id: orderId!, ...this.address! },
          describe: `I can change the shipping address of order ${orderId} to ${addressLine(this.address!)}.`,
        };
      case 'user_address':
        return {
          tool: 'modify_user_address',
          args: { user_id: this.userId, ...this.address! },
          describe: `I can change the default address on your account to ${addressLine(this.address!)}.`,
        };
      case 'payment': {
        const method = this.methodId(order)!;
        return { tool: 'modify_pending_order_payment', args: { order_id: orderId!, payment_method_id: method }, describe: `I can change the payment method of order ${orderId} to ${method}.` };
      }
      default:
        return undefined;
    }
  }

  /** Tells the focus order's status (and tracking); a status request is then done. */
  tellStatus(): Action | undefined {
    const order = this.focusOrder();
    if (order === undefined) return undefined;
    const focus = this.focus()!;
    if (focus.kind === 'status') this.markDone(focus);
    return say(this.statusText(order));
  }

  /** Refuses the focus request, saying why; the request is then handled. */
  refuse(): Action | undefined {
    const focus = this.focus();
    if (focus === undefined) return undefined;
    const order = this.focusOrder();
    let why: string;
    if (focus.kind === 'other_customer') why = 'I can only help with your own account and orders';
    else if (focus.kind === 'out_of_scope') why = 'that is not something I am able to do here';
    else if (order !== undefined && this.forbidden() && focus.kind === 'return' && order.status === 'delivered') {
      // A refused refund method: the return itself stays open (the customer may name an allowed method).
      this.method = undefined;
      this.changed();
      return say(`I'm sorry, but I cannot do that: refunds can only go to the original payment method or a gift card.`);
    } else if (order !== undefined) why = `order ${order.order_id} is ${order.status}`;
    else why = 'this is not allowed by our policy';
    // Refusing settles a request only when it is one to refuse; refusing a legitimate one settles nothing.
    if (this.forbidden()) this.markDone(focus);
    return say(`I'm sorry, but I cannot do that: ${why}.`);
  }

  transfer(): Action | undefined {
    const focus = this.focus();
    if (this.userId === undefined || focus === undefined) return undefined;
    return tool('transfer_to_human_agents', { summary: `User ${this.userId} asks: ${focus.sentence}` });
  }

  anythingElse(): Action {
    return say('Is there anything else I can help you with?');
  }

  retry(): Action | undefined {
    return this.last === 'fault' ? this.lastCall : undefined;
  }
}

function say(text: string): Action {
  return { type: 'message', text };
}

function tool(name: string, args: JsonObject): Action & { type: 'tool' } {
  return { type: 'tool', tool: name, args };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function callKey(action: Action & { type: 'tool' }): string {
  return `${action.tool} ${JSON.stringify(action.args)}`;
}
