/**
 * The rule-based simulated retail customer: deterministic given its rng, it holds the task's hidden goal,
 * reveals facts only when asked (in the task's disclosure style), confirms only proposals that match its
 * goal, and says it is done when every part of its goal is met. Everything it states comes from the goal,
 * which the templates take from the world, so it never contradicts the database.
 */
import { Rng } from '../../core/index.js';
import type { Action, JsonValue, RngState, SimulatedUser, Task, TraceEntry, UserTurn } from '../../core/index.js';
import { goalOf, WRITE_TOOL, type GoalAddress, type Intent, type ItemRef, type MethodRef, type OrderRef, type RetailGoal } from './goal.js';
import { addNoise, bankOf, fill, isClosing, isRefusal, refusesOtherCustomer, type PhraseBank, type Segment } from './phrases.js';

type Mode = 'full' | 'brief' | 'vague';
type Fact = 'identity' | 'email' | 'name' | 'zip' | 'order' | 'items' | 'options' | 'method' | 'reason' | 'address';
const DETAIL_FACTS = ['order', 'items', 'options', 'method', 'reason', 'address'] as const;

/** What the user recognises as a question for each fact, in the order it answers them. */
const ASKS: ReadonlyArray<readonly [Fact, RegExp]> = [
  ['identity', /identif|verify|authenticat|who am i|(?:look up|locate|find|access) your account/],
  ['email', /e-?mail/],
  ['name', /\b(?:your|full|first|last) name|\bname\b(?! of the product)/],
  ['zip', /\bzip\b|zip ?code|postal|postcode/],
  ['order', /order (?:id|number)|which order|what order/],
  ['items', /which items?\b|what items?\b|which products?\b|what products?\b|items? (?:would|do) you/],
  ['options', /which option|what option|instead|exchange (?:it |them )?for|new (?:item|variant|version)|which (?:color|size|variant|version|one)|what (?:color|size|variant|version)|prefer/],
  ['method', /payment|\bcard\b|refund (?:it |the money )?to|pay with|which method|paypal|gift/],
  ['reason', /reason|\bwhy\b/],
  // "your email address" asks for the email, not a street address.
  ['address', /(?<!e-?mail )address/],
];

/** An open offer of help ("How can I help you today?"): the user says (again) what it wants. */
const HOW_HELP = /how (?:can|may) i (?:help|assist)|what can i do for you|what do you need help with/;

/** A message asks for something when it has a question mark or a request to tell or provide. */
const QUESTION = /\?|please (?:provide|give|tell|share|send|let)|tell me|let me know|provide|\bshare\b|i need (?:your|the)|may i have|could i have/;

const ORDER_ID = /#w\d{7}\b/gi;
const ITEM_ID = /\b\d{10}\b/g;
const METHOD_ID = /\b(?:credit_card|gift_card|paypal)_\d+\b/g;

interface Proposal {
  kind: 'cancel' | 'return' | 'exchange' | 'order_address' | 'user_address' | 'payment';
  text: string;
  orders: string[];
  items: string[];
  methods: string[];
}

/** Lower case, commas removed: the runtime's default output normalisation, so "told" means the same here. */
const norm = (text: string): string => text.toLowerCase().replace(/,/g, '');

function uniq(values: string[]): string[] {
  return values.length < 2 ? values : [...new Set(values)];
}

/** Every `#W1234567` order id in `text`, as `#W…`, without repeats (an exec loop: `matchAll` copies the regex). */
function orderIds(text: string): string[] {
  const out: string[] = [];
  ORDER_ID.lastIndex = 0;
  for (let m = ORDER_ID.exec(text); m !== null; m = ORDER_ID.exec(text)) out.push('#W' + m[0].slice(2));
  return uniq(out);
}

function sameMultiset(a: unknown, b: readonly string[]): boolean {
  if (!Array.isArray(a) || a.length !== b.length) return false;
  const x = [...(a as string[])].sort();
  const y = [...b].sort();
  return x.every((v, i) => v === y[i]);
}

function sameAddress(args: Record<string, unknown>, address: GoalAddress): boolean {
  return (['address1', 'address2', 'city', 'state', 'country', 'zip'] as const).every((k) => args[k] === address[k]);
}

/** The one-line address the user dictates. */
export function addressText(a: GoalAddress): string {
  return [a.address1, a.address2, a.city, `${a.state} ${a.zip}`, a.country].filter((p) => p !== '').join(', ');
}

/** "the Air Fryer (8 qt, black) and the Toaster" */
export function itemsText(items: readonly ItemRef[]): string {
  const parts = items.map((i) => `the ${i.name}${i.options.length > 0 ? ` (${i.options.join(', ')})` : ''}`);
  return parts.length <= 1 ? (parts[0] ?? '') : `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`;
}

/** "capacity 8 qt and color black for the Air Fryer" */
export function optionsText(items: readonly ItemRef[]): string {
  return items
    .map((i) => `${(i.new_options ?? []).map(([k, v]) => `${k} ${v}`).join(' and ')} for the ${i.name}`)
    .join('; ');
}

function orderPhrase(order: OrderRef, vague = false): string {
  if (vague) return 'an order of mine';
  if (order.refer === 'id') return `order ${order.order_id}`;
  if (order.refer === 'latest') return 'my most recent order';
  return `the order with the ${order.names.join(' and the ')}`;
}

/** Whether a write in the trace carries out a write intent exactly. */
export function fulfils(intent: Intent, action: Action, userId: string): boolean {
  if (action.type !== 'tool' || action.tool !== WRITE_TOOL[intent.kind]) return false;
  const args = action.args as Record<string, unknown>;
  switch (intent.kind) {
    case 'cancel':
      return args['order_id'] === intent.order.order_id && args['reason'] === intent.reason;
    case 'return':
      return (
        args['order_id'] === intent.order.order_id &&
        args['payment_method_id'] === intent.method.id &&
        sameMultiset(args['item_ids'], intent.items.map((i) => i.item_id))
      );
    case 'exchange':
      return (
        args['order_id'] === intent.order.order_id &&
        args['payment_method_id'] === intent.method.id &&
        sameMultiset(args['item_ids'], intent.items.map((i) => i.item_id)) &&
        sameMultiset(args['new_item_ids'], intent.items.map((i) => i.new_item_id ?? ''))
      );
    case 'order_address':
      return args['order_id'] === intent.order.order_id && sameAddress(args, intent.address);
    case 'user_address':
      return args['user_id'] === userId && sameAddress(args, intent.address);
    case 'payment':
      return args['order_id'] === intent.order.order_id && args['payment_method_id'] === intent.method.id;
    default:
      return false;
  }
}

/** Reads a proposal ("I will cancel order #W1234567 ... Shall I proceed?") out of an agent message (`lower`: the message lower-cased, when the caller has it). */
export function parseProposal(text: string, lower?: string): Proposal | undefined {
  const t = lower ?? text.toLowerCase();
  if (!t.includes('?') && !/(?:please|can you|could you|do you|to) confirm/.test(t)) return undefined;
  const orders = orderIds(text);
  let kind: Proposal['kind'] | undefined;
  if (/\bcancel/.test(t)) kind = 'cancel';
  else if (/\bexchange|\bswap/.test(t)) kind = 'exchange';
  else if (/\breturn/.test(t)) kind = 'return';
  else if (/(?<!e-?mail )address/.test(t)) kind = orders.length > 0 ? 'order_address' : 'user_address';
  else if (/payment|\bpay\b|\bcharge/.test(t)) kind = 'payment';
  if (kind === undefined) return undefined;
  if (kind === 'user_address' ? !/\b\d{5}\b/.test(t) : orders.length === 0) return undefined;
  return { kind, text: t, orders, items: uniq(text.match(ITEM_ID) ?? []), methods: uniq(text.match(METHOD_ID) ?? []) };
}

function cued(text: string, method: MethodRef): boolean {
  for (const cue of method.cues) if (text.includes(cue.toLowerCase())) return true;
  return false;
}

function mentionsMethod(p: Proposal, method: MethodRef): boolean {
  if (p.methods.includes(method.id)) return true;
  return p.methods.length === 0 && cued(p.text, method);
}

/** Every item named by item id or product name. */
function itemsNamed(p: Proposal, items: readonly ItemRef[]): boolean {
  for (const i of items) if (!p.items.includes(i.item_id) && !p.text.includes(i.name.toLowerCase())) return false;
  return true;
}

/** Every new item named by item id or by all its wanted option values. */
function newItemsNamed(p: Proposal, items: readonly ItemRef[]): boolean {
  for (const i of items) {
    if (p.items.includes(i.new_item_id ?? '')) continue;
    for (const [, value] of i.new_options ?? []) if (!p.text.includes(value.toLowerCase())) return false;
  }
  return true;
}

/** No 10-digit id in the proposal besides the items' (and their products' and, for exchanges, the new items'). */
function onlyKnownIds(p: Proposal, items: readonly ItemRef[], withNew: boolean): boolean {
  for (const id of p.items) {
    let known = false;
    for (const i of items) if (id === i.item_id || id === i.product_id || (withNew && id === i.new_item_id)) known = true;
    if (!known) return false;
  }
  return true;
}

type Verdict =
  | { kind: 'yes'; index: number }
  | { kind: 'no'; index: number }
  | { kind: 'insist'; index: number }
  | { kind: 'already' }
  | { kind: 'not_asked' }
  | { kind: 'status_first' }
  | { kind: 'leave' };

class RetailCustomer implements SimulatedUser {
  private readonly bank: PhraseBank;
  private readonly said: string[] = [];
  private readonly heard: string[] = [];
  /** Intents the user has raised so far (staggered requests raise them one by one). */
  private revealed: number;
  private readonly refused: boolean[];
  /** Per intent: its status (and tracking number) was said; its write happened. Updated incrementally. */
  private readonly told: boolean[];
  private readonly written: boolean[];
  /** Per intent: the normalised status word the agent must say (status questions, shipped-order cancels). */
  private readonly needles: Array<string | undefined>;
  private transferred = false;
  private scanned = 0;
  private reacted = false;
  /** Intents worded with the bank's `alt` lines. */
  private readonly paraphrased: ReadonlySet<number>;

  constructor(
    private readonly goal: RetailGoal,
    private rng: Rng,
  ) {
    this.bank = bankOf(goal.bank);
    this.revealed = goal.staggered ? 1 : goal.intents.length;
    this.refused = goal.intents.map(() => false);
    this.told = goal.intents.map(() => false);
    this.written = goal.intents.map(() => false);
    this.needles = goal.intents.map((i) => (i.kind === 'status' || (i.kind === 'cancel' && i.trap) ? norm(i.status) : undefined));
    this.paraphrased = new Set(goal.paraphrased ?? []);
  }

  opening(): string {
    // The gates reset several episodes of a task with one seed: the same goal and generator state open the
    // same way, so the last opening's text and the customer's state after it are reused.
    const before = this.rng.getState();
    const known = lastOpening;
    if (known !== undefined && known.goal === this.goal && sameState(known.before, before)) {
      this.restore(known.after);
      return known.text;
    }
    const text = this.open();
    lastOpening = { goal: this.goal, before, text, after: this.snapshot() };
    return text;
  }

  /** Everything a conversation changes (the generator included), copied. */
  private snapshot(): CustomerState {
    return {
      said: [...this.said],
      heard: [...this.heard],
      revealed: this.revealed,
      refused: [...this.refused],
      told: [...this.told],
      written: [...this.written],
      transferred: this.transferred,
      scanned: this.scanned,
      reacted: this.reacted,
      rng: this.rng.getState(),
    };
  }

  /** Puts a fresh customer of the same goal into a snapshot's state (copying it: the snapshot is shared). */
  private restore(s: CustomerState): void {
    this.said.push(...s.said);
    this.heard.push(...s.heard);
    this.revealed = s.revealed;
    for (let i = 0; i < s.refused.length; i++) this.refused[i] = s.refused[i]!;
    for (let i = 0; i < s.told.length; i++) this.told[i] = s.told[i]!;
    for (let i = 0; i < s.written.length; i++) this.written[i] = s.written[i]!;
    this.transferred = s.transferred;
    this.scanned = s.scanned;
    this.reacted = s.reacted;
    this.rng = new Rng(s.rng);
  }

  private open(): string {
    const g = this.goal;
    const segs: Segment[] = fill(this.rng.pick(this.bank.greet) + ' ', {});
    if (g.disclosure === 'all_at_once') segs.push(...this.identityIntro(), { text: ' ', fact: false });
    const mode = this.mode();
    if (g.conditional !== undefined && g.staggered) {
      // Only the shipment question: the address change comes once the status is known.
      segs.push(...fill(this.rng.pick(this.bank.conditional.staggered), {}));
    } else if (g.conditional !== undefined) {
      segs.push(...fill(this.rng.pick(this.paraphrased.has(0) ? this.bank.conditional.alt : this.bank.conditional.brief), {}));
      if (mode === 'full') segs.push({ text: ' ', fact: false }, ...this.addressLine(this.bank.conditional.address, this.conditionalAddress()!));
    } else if (this.revealed > 1) {
      segs.push(...fill(this.rng.pick(this.bank.several), {}));
      for (let i = 0; i < this.revealed; i++) segs.push({ text: ' ', fact: false }, ...this.request(g.intents[i]!, mode));
    } else {
      segs.push(...this.request(g.intents[0]!, mode));
    }
    return this.say(segs).text;
  }

  respond(agentText: string, ctx: { trace: readonly TraceEntry[] }): UserTurn {
    const g = this.goal;
    const text = agentText.toLowerCase();
    this.sync(ctx.trace);
    // norm() of the message, from its lower-cased text.
    this.hear(text.includes(',') ? text.replace(/,/g, '') : text);
    const refusal = isRefusal(agentText);
    let refusedSomething = false;
    if (refusal) {
      for (let i = 0; i < this.revealed; i++) {
        const intent = g.intents[i]!;
        // Someone else's order is refused only by a refusal about that order, not by any "cannot".
        if (intent.kind === 'other_customer' && !refusesOtherCustomer(agentText, intent.order_id, intent.relation)) continue;
        if (this.canBeRefused(intent) && !this.isDone(i)) {
          this.refused[i] = true;
          refusedSomething = true;
        }
      }
    }
    const open = this.openIntents();

    if (isClosing(agentText)) {
      if (open.length === 0) return this.say(fill(this.rng.pick(this.bank.done), {}), { done: true });
      return this.say(this.nextOrRestate(open));
    }

    const proposal = parseProposal(agentText, text);
    if (proposal !== undefined) return this.answerProposal(proposal);
    if (!refusal && open.length > 0 && HOW_HELP.test(text)) return this.say(this.nextOrRestate(open));

    const segs: Segment[] = [];
    if (refusal) {
      if (refusedSomething) {
        segs.push(...fill(this.rng.pick(this.bank.acceptRefusal), {}));
        for (let k = 0; k < this.revealed; k++) {
          const intent = g.intents[k]!;
          if (intent.kind !== 'return' || intent.insist === undefined || !this.refused[k] || this.isDone(k)) continue;
          segs.push({ text: ' ', fact: false }, ...fill(this.rng.pick(this.bank.fallback), { method: intent.method.text }));
          break;
        }
      } else if (open.length > 0) {
        return this.say(fill(this.rng.pick(this.bank.pushBack), {}).concat(this.request(g.intents[open[0]!]!, 'brief')));
      }
    }

    const answers = this.answers(text, open);
    if (answers !== undefined) {
      if (segs.length > 0) segs.push({ text: ' ', fact: false });
      segs.push(...(answers.length > 0 ? answers : fill(this.rng.pick(this.bank.confused), {})));
    }

    const reaction = this.reaction();
    if (reaction !== undefined) {
      if (segs.length > 0) segs.push({ text: ' ', fact: false });
      segs.push(...reaction);
    }

    // Nothing more to say: acknowledge, or raise the next request once everything raised is done.
    const raisedOpen = this.revealedOpen(open).length;
    if (segs.length === 0) {
      if (open.length === 0) segs.push(...fill(this.rng.pick(this.bank.allSet), {}));
      else if (raisedOpen === 0) segs.push(...this.nextOrRestate(open));
      else segs.push(...fill(this.rng.pick(this.bank.ack), {}));
    } else if (open.length > 0 && raisedOpen === 0) {
      segs.push({ text: ' ', fact: false }, ...this.nextOrRestate(open));
    }
    return this.say(segs);
  }

  record(): JsonValue {
    return this.said.slice();
  }

  // ---- goal state ----

  private mode(): Mode {
    return this.goal.disclosure === 'all_at_once' ? 'full' : this.goal.disclosure === 'on_request' ? 'brief' : 'vague';
  }

  private canBeRefused(intent: Intent): boolean {
    return intent.kind === 'out_of_scope' || intent.kind === 'other_customer' || (intent.kind === 'cancel' && intent.trap) || (intent.kind === 'return' && intent.insist !== undefined);
  }

  /** Takes in the trace entries added since the last reply: writes that carry out an intent, transfers. */
  private sync(trace: readonly TraceEntry[]): void {
    const intents = this.goal.intents;
    const userId = this.goal.profile.user_id;
    for (; this.scanned < trace.length; this.scanned++) {
      const entry = trace[this.scanned]!;
      if (entry.ok !== true || entry.action.type !== 'tool') continue;
      if (entry.action.tool === 'transfer_to_human_agents') this.transferred = true;
      for (let i = 0; i < intents.length; i++) if (!this.written[i] && fulfils(intents[i]!, entry.action, userId)) this.written[i] = true;
    }
  }

  /** Takes in an agent message: which asked-for facts it tells. */
  private hear(said: string): void {
    this.heard.push(said);
    const intents = this.goal.intents;
    for (let i = 0; i < intents.length; i++) {
      const needle = this.needles[i];
      if (needle === undefined || this.told[i] || !said.includes(needle)) continue;
      const intent = intents[i]!;
      if (intent.kind === 'status' && intent.tracking !== undefined && !said.includes(intent.tracking)) continue;
      this.told[i] = true;
    }
  }

  private isDone(index: number): boolean {
    const intent = this.goal.intents[index]!;
    switch (intent.kind) {
      case 'status':
        return this.told[index]!;
      case 'out_of_scope':
        return this.refused[index]! || this.transferred;
      case 'other_customer':
        return this.refused[index]!;
      case 'cancel':
        return intent.trap ? this.refused[index]! && this.told[index]! : this.written[index]!;
      default:
        return this.written[index]!;
    }
  }

  private openIntents(): number[] {
    const open: number[] = [];
    for (let i = 0; i < this.goal.intents.length; i++) if (!this.isDone(i)) open.push(i);
    return open;
  }

  private revealedOpen(open: readonly number[]): number[] {
    const out: number[] = [];
    for (const i of open) if (i < this.revealed) out.push(i);
    return out;
  }

  /** Raises the next unrevealed intent, or restates the first open one. */
  private nextOrRestate(open: readonly number[]): Segment[] {
    if (this.revealed < this.goal.intents.length && this.revealedOpen(open).length === 0) {
      const next = this.goal.intents[this.revealed++]!;
      const request = this.request(next, this.mode());
      return fill(this.rng.pick(this.bank.also).replace('{request}', '\u0000'), {}).flatMap((s) => split(s, request));
    }
    const first = open.find((i) => i < this.revealed) ?? open[0]!;
    const c = this.goal.conditional;
    let request: Segment[];
    if (c !== undefined && !this.goal.staggered) request = fill(this.rng.pick(this.paraphrased.has(0) ? this.bank.conditional.alt : this.bank.conditional.brief), {});
    else if (c !== undefined && first === 0) request = fill(this.rng.pick(this.bank.conditional.staggered), {});
    else request = this.request(this.goal.intents[first]!, 'brief');
    return fill(this.rng.pick(this.bank.stillNeed).replace('{request}', '\u0000'), {}).flatMap((s) => split(s, request));
  }

  // ---- proposals ----

  private answerProposal(p: Proposal): UserTurn {
    const verdict = this.judge(p);
    const bank = this.bank;
    switch (verdict.kind) {
      case 'yes':
        return this.say(fill(this.rng.pick(bank.yes), {}), { confirms: true });
      case 'no':
        return this.say([...fill(this.rng.pick(bank.no) + ' ', {}), ...this.request(this.goal.intents[verdict.index]!, 'full')], { confirms: false });
      case 'insist': {
        const intent = this.goal.intents[verdict.index]!;
        const method = intent.kind === 'return' && intent.insist !== undefined ? intent.insist.text : '';
        return this.say(fill(this.rng.pick(bank.insist), { method }), { confirms: false });
      }
      case 'already':
        return this.say(fill(this.rng.pick(bank.alreadyDone), {}), { confirms: false });
      case 'status_first':
        return this.say(fill(this.rng.pick(bank.statusFirst), {}), { confirms: false });
      case 'leave':
        return this.say(fill(this.rng.pick(bank.shippedLeave), {}), { confirms: false });
      case 'not_asked':
        return this.say(fill(this.rng.pick(bank.notAsked), {}), { confirms: false });
    }
  }

  private judge(p: Proposal): Verdict {
    const g = this.goal;
    const matching: number[] = [];
    for (let i = 0; i < g.intents.length; i++) {
      const intent = g.intents[i]!;
      if (intent.kind !== p.kind) continue;
      if (intent.kind === 'user_address') matching.push(i);
      else if ('order' in intent && p.orders.length === 1 && p.orders[0] === intent.order.order_id) matching.push(i);
    }
    if (matching.length === 0) {
      if (g.conditional !== undefined && !g.conditional.pending && p.kind === 'order_address' && p.orders.includes(g.conditional.order_id)) return { kind: 'leave' };
      return { kind: 'not_asked' };
    }
    let index: number | undefined;
    for (const i of matching) {
      if (this.isDone(i)) continue;
      index = i;
      break;
    }
    if (index === undefined) return { kind: 'already' };
    const intent = g.intents[index]!;
    if (g.conditional !== undefined && intent.kind === 'user_address') {
      for (let i = 0; i < g.intents.length; i++) if (g.intents[i]!.kind === 'status' && !this.told[i]) return { kind: 'status_first' };
    }
    if (intent.kind === 'return' && intent.insist !== undefined && !this.refused[index]) {
      return mentionsMethod(p, intent.insist) ? { kind: 'yes', index } : { kind: 'insist', index };
    }
    return this.detailsMatch(intent, p) ? { kind: 'yes', index } : { kind: 'no', index };
  }

  private detailsMatch(intent: Intent, p: Proposal): boolean {
    const t = p.text;
    switch (intent.kind) {
      case 'cancel': {
        const other = intent.reason === 'no longer needed' ? 'ordered by mistake' : 'no longer needed';
        return !t.includes(other);
      }
      case 'return':
        return itemsNamed(p, intent.items) && onlyKnownIds(p, intent.items, false) && mentionsMethod(p, intent.method);
      case 'exchange':
        return itemsNamed(p, intent.items) && newItemsNamed(p, intent.items) && onlyKnownIds(p, intent.items, true) && mentionsMethod(p, intent.method);
      case 'order_address':
      case 'user_address':
        return t.includes(intent.address.address1.toLowerCase()) && t.includes(intent.address.zip);
      case 'payment': {
        for (const m of p.methods) if (m !== intent.method.id && m !== intent.current) return false;
        return p.methods.includes(intent.method.id) || cued(t, intent.method);
      }
      default:
        return false;
    }
  }

  // ---- answering questions ----

  /** Answers to the facts a message asks for: undefined when it asks for none, empty when the user has none of them. */
  private answers(text: string, open: readonly number[]): Segment[] | undefined {
    if (!QUESTION.test(text)) return undefined;
    const asked = new Set<Fact>();
    for (const [fact, re] of ASKS) if (re.test(text)) asked.add(fact);
    if (asked.size === 0) return undefined;
    const oneFact = this.goal.disclosure === 'one_fact';
    const out: Segment[] = [];
    if (asked.has('identity') || asked.has('email') || asked.has('name') || asked.has('zip')) {
      out.push(...this.identityAnswer(asked, oneFact));
      if (oneFact && out.length > 0) return out;
    }
    // Facts of the intents raised so far: open ones first, then done ones (answering again is harmless).
    const candidates = this.revealedOpen(open);
    for (let k = 0; k < this.revealed; k++) if (!open.includes(k)) candidates.push(k);
    for (const fact of DETAIL_FACTS) {
      if (!asked.has(fact)) continue;
      for (const i of candidates) {
        const segs = this.factAnswer(fact, this.goal.intents[i]!);
        if (segs.length === 0) continue;
        if (out.length > 0) out.push({ text: ' ', fact: false });
        out.push(...segs);
        if (oneFact) return out;
        break;
      }
    }
    return out;
  }

  private identityAnswer(asked: ReadonlySet<Fact>, oneFact: boolean): Segment[] {
    const p = this.goal.profile;
    const who = { email: p.email, first: p.first_name, last: p.last_name, zip: p.zip };
    const bank = this.bank;
    let lines: readonly string[];
    if (this.goal.identity === 'email' && (asked.has('email') || asked.has('identity'))) lines = bank.email;
    else if (this.goal.identity === 'name_zip' && asked.has('email')) {
      const segs = fill(this.rng.pick(bank.noEmail), {});
      if (oneFact) return segs;
      segs.push({ text: ' ', fact: false }, ...fill(this.rng.pick(bank.nameZip), who));
      return segs;
    } else {
      // Name and zip: what was asked for (both for a general "verify your identity"), one at a time at one_fact.
      const name = asked.has('name') || asked.has('identity');
      const zip = asked.has('zip') || (asked.has('identity') && !oneFact);
      lines = !oneFact && name && zip ? bank.nameZip : name ? bank.name : bank.zip;
    }
    return fill(this.rng.pick(lines), who);
  }

  private factAnswer(fact: Exclude<Fact, 'identity' | 'email' | 'name' | 'zip'>, intent: Intent): Segment[] {
    const bank = this.bank;
    switch (fact) {
      case 'order': {
        if (!('order' in intent)) {
          if (intent.kind === 'other_customer') return fill(this.rng.pick(bank.orderId), { order: intent.order_id });
          return [];
        }
        const order = intent.order;
        if (order.refer === 'id') return fill(this.rng.pick(bank.orderId), { order: order.order_id });
        const lead = fill(this.rng.pick(bank.noOrderId) + ' ', {});
        if (order.refer === 'latest') return [...lead, ...fill(this.rng.pick(bank.orderLatest), {})];
        return [...lead, ...fill(this.rng.pick(bank.orderItems), { items: order.names.map((n) => `the ${n}`).join(' and ') })];
      }
      case 'items':
        return intent.kind === 'return' || intent.kind === 'exchange' ? fill(this.rng.pick(bank.items), { items: itemsText(intent.items) }) : [];
      case 'options':
        return intent.kind === 'exchange' ? fill(this.rng.pick(bank.options), { options: optionsText(intent.items) }) : [];
      case 'method':
        if (intent.kind === 'return') {
          const idx = this.goal.intents.indexOf(intent);
          const method = intent.insist !== undefined && !this.refused[idx] ? intent.insist : intent.method;
          return fill(this.rng.pick(bank.refundMethod), { method: method.text });
        }
        if (intent.kind === 'exchange' || intent.kind === 'payment') return fill(this.rng.pick(bank.method), { method: intent.method.text });
        return [];
      case 'reason':
        return intent.kind === 'cancel' ? fill(this.rng.pick(bank.reason), { reason: intent.reason }) : [];
      case 'address':
        return intent.kind === 'user_address' || intent.kind === 'order_address' ? this.addressLine(bank.address, intent.address) : [];
    }
  }

  /** Thanks for facts just told; in conditional tasks, what the shipment status means for the order. */
  private reaction(): Segment[] | undefined {
    const g = this.goal;
    const last = this.heard[this.heard.length - 1]!;
    let statusTold = false;
    for (const needle of this.needles) if (needle !== undefined && last.includes(needle)) statusTold = true;
    if (!statusTold) return undefined;
    if (g.conditional !== undefined && !this.reacted && last.includes(norm(g.conditional.status))) {
      this.reacted = true;
      if (g.staggered) {
        // The shipment question is answered: now the customer asks for the address change(s).
        this.revealed = g.intents.length;
        const segs = fill(this.rng.pick(g.conditional.pending ? this.bank.conditional.pendingThen : this.bank.conditional.shippedThen), {});
        if (this.mode() === 'full') segs.push({ text: ' ', fact: false }, ...this.addressLine(this.bank.conditional.address, this.conditionalAddress()!));
        return segs;
      }
      return fill(this.rng.pick(g.conditional.pending ? this.bank.pendingGoOn : this.bank.shippedGoOn), {});
    }
    return fill(this.rng.pick(this.bank.thanksFact), {});
  }

  // ---- phrasing ----

  private identityIntro(): Segment[] {
    const p = this.goal.profile;
    const who = { email: p.email, first: p.first_name, last: p.last_name, zip: p.zip };
    return fill(this.rng.pick(this.goal.identity === 'email' ? this.bank.introEmail : this.bank.introNameZip), who);
  }

  private conditionalAddress(): GoalAddress | undefined {
    const intent = this.goal.intents.find((i) => i.kind === 'user_address');
    return intent?.kind === 'user_address' ? intent.address : undefined;
  }

  private addressLine(lines: readonly string[], address: GoalAddress): Segment[] {
    return fill(this.rng.pick(lines), { address: addressText(address) });
  }

  /** How the user asks for one intent, with every detail (`full`), naming the order (`brief`) or vaguely. */
  request(intent: Intent, mode: Mode): Segment[] {
    const b = this.bank;
    const out: Segment[] = [];
    const vague = mode === 'vague';
    const full = mode === 'full';
    // A paraphrased intent is always worded from the `alt` lines (restatements too); vague names no order.
    const alt = this.paraphrased.has(this.goal.intents.indexOf(intent));
    const order: Record<string, string> = 'order' in intent ? { order: orderPhrase(intent.order, alt && vague) } : {};
    switch (intent.kind) {
      case 'status':
        this.line(out, requestLines(b.status, alt, vague), order);
        if (intent.tracking !== undefined) this.line(out, alt ? b.status.altTracking : b.status.tracking, order);
        break;
      case 'cancel':
        this.line(out, requestLines(b.cancel, alt, vague), order);
        if (full) this.line(out, b.cancel.reason, { reason: intent.reason });
        break;
      case 'return': {
        this.line(out, requestLines(b.return, alt, vague), order);
        if (full) this.line(out, b.return.items, { items: itemsText(intent.items) });
        // A refund trap names the forbidden method until the agent refuses it, then the allowed one.
        const insisting = intent.insist !== undefined && !this.refused[this.goal.intents.indexOf(intent)];
        if (insisting) this.line(out, b.return.method, { method: intent.insist!.text });
        else if (full || intent.insist !== undefined) this.line(out, b.return.method, { method: intent.method.text });
        break;
      }
      case 'exchange':
        this.line(out, requestLines(b.exchange, alt, vague), order);
        if (full) {
          this.line(out, b.exchange.items, { items: itemsText(intent.items) });
          this.line(out, b.exchange.options, { options: optionsText(intent.items) });
          this.line(out, b.exchange.method, { method: intent.method.text });
        }
        break;
      case 'order_address':
        this.line(out, requestLines(b.orderAddress, alt, vague), order);
        if (full) this.line(out, b.orderAddress.address, { address: addressText(intent.address) });
        break;
      case 'user_address':
        this.line(out, requestLines(b.userAddress, alt, vague), order);
        if (full) this.line(out, b.userAddress.address, { address: addressText(intent.address) });
        break;
      case 'payment':
        this.line(out, requestLines(b.payment, alt, vague), order);
        if (full) this.line(out, b.payment.method, { method: intent.method.text });
        break;
      case 'out_of_scope':
        this.line(out, (alt ? b.outOfScopeAlt : b.outOfScope)[intent.topic] ?? b.outOfScope['human']!, order);
        break;
      case 'other_customer':
        this.line(out, alt ? b.otherCustomerAlt : b.otherCustomer, { relation: intent.relation, order: intent.order_id });
        break;
    }
    return out;
  }

  /** Appends one line picked from `lines` (space-separated from what is there). */
  private line(out: Segment[], lines: readonly string[], slots: Readonly<Record<string, string>>): void {
    if (out.length > 0) out.push({ text: ' ', fact: false });
    out.push(...fill(this.rng.pick(lines), slots));
  }

  private say(segments: readonly Segment[], flags: { confirms?: boolean; done?: boolean } = {}): UserTurn {
    const text = addNoise(segments, this.goal.noise, this.bank, this.rng);
    this.said.push(text);
    const turn: UserTurn = { text };
    if (flags.confirms !== undefined) turn.confirms = flags.confirms;
    if (flags.done === true) turn.done = true;
    return turn;
  }
}

/** The request lines of a situation: `alt` when paraphrased, `vague` (where there is one) when vague, else `brief`. */
function requestLines(lines: { brief: readonly string[]; vague?: readonly string[]; alt: readonly string[] }, alt: boolean, vague: boolean): readonly string[] {
  return alt ? lines.alt : vague && lines.vague !== undefined ? lines.vague : lines.brief;
}

/** Replaces the NUL placeholder a line left for `{request}` with the request's segments. */
function split(segment: Segment, request: readonly Segment[]): Segment[] {
  if (segment.fact || !segment.text.includes('\u0000')) return [segment];
  const [before, after] = segment.text.split('\u0000') as [string, string];
  const out: Segment[] = [];
  if (before !== '') out.push({ text: before, fact: false });
  out.push(...request);
  if (after !== '') out.push({ text: after, fact: false });
  return out;
}

/** A user for tasks without a retail goal (e.g. tau-bench's): opens with the instructions, acknowledges. */
class PlainCustomer implements SimulatedUser {
  constructor(private readonly task: Task) {}
  opening(): string {
    return this.task.spec.instructions;
  }
  respond(): UserTurn {
    return { text: 'Okay.' };
  }
}

/**
 * The simulated customer of a retail task: deterministic given `rng` (the runtime passes
 * `createRng([task.id, seed, 'user'])`).
 * @example
 * const user = createRetailUser(task, createRng([task.id, 0, 'user']));
 * user.opening(); // "Hi! I'd like to cancel order #W8821605."
 */
/** A customer's state after its opening, for the next customer of the same goal and generator state. */
interface CustomerState {
  readonly said: readonly string[];
  readonly heard: readonly string[];
  readonly revealed: number;
  readonly refused: readonly boolean[];
  readonly told: readonly boolean[];
  readonly written: readonly boolean[];
  readonly transferred: boolean;
  readonly scanned: number;
  readonly reacted: boolean;
  readonly rng: RngState;
}

/** The last opening: a pure function's memo (goal and generator state in, text and state out). */
let lastOpening: { goal: RetailGoal; before: RngState; text: string; after: CustomerState } | undefined;

function sameState(a: RngState, b: RngState): boolean {
  return a[0] === b[0] && a[1] === b[1] && a[2] === b[2] && a[3] === b[3];
}

export function createRetailUser(task: Task, rng: Rng): SimulatedUser {
  const goal = goalOf(task.spec.user);
  return goal === undefined ? new PlainCustomer(task) : new RetailCustomer(goal, rng);
}
