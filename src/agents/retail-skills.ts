/**
 * The learner's retail skill set: the abstract dialogue state and slot-filled macros over
 * `RetailDialogue`. Macros fill their arguments from what the customer said and what the tools
 * returned; which macro to use when is what the learner learns.
 */
import type { Action, Observation, StepResult } from '../core/index.js';
import { RetailDialogue, type RetailIntentKind, type RetailNeed } from '../domains/retail/dialogue.js';
import type { SkillSet, SkillTracker } from './skill-set.js';

/** The macros, in a fixed order (their names are the learner's table columns). */
export const RETAIL_MACROS = [
  'ask_email',
  'ask_name_zip',
  'find_by_email',
  'find_by_name_zip',
  'get_user',
  'ask_order',
  'get_order',
  'scan_order',
  'ask_items',
  'get_product',
  'ask_options',
  'ask_method',
  'ask_reason',
  'ask_address',
  'propose',
  'act',
  'tell_status',
  'refuse',
  'transfer',
  'defer',
  'anything_else',
  'retry',
  'finish',
] as const;
export type RetailMacro = (typeof RETAIL_MACROS)[number];

const KIND: Record<RetailIntentKind, string> = {
  status: 'st',
  cancel: 'ca',
  return: 're',
  exchange: 'ex',
  order_address: 'oa',
  user_address: 'ua',
  payment: 'pa',
  out_of_scope: 'os',
  other_customer: 'oc',
};
const NEED: Record<RetailNeed, string> = {
  auth: 'A',
  user: 'u',
  order: 'o',
  fetch: 'f',
  items: 'i',
  options: 'p',
  product: 'v',
  method: 'm',
  reason: 'r',
  address: 'a',
  none: '-',
};

/**
 * State key: focus request kind (plus the conditional marker on an address change while other requests
 * are open); identity progress; the focus order's status class; the first missing slot; forbidden;
 * confirmation; last result. E.g. `ca|U|P|r||y|` = cancel; profile loaded; order pending; reason
 * missing; confirmed.
 */
function stateOf(d: RetailDialogue): string {
  const focus = d.focus();
  // No count of other open requests: a request is handled the same way alone or in a compound, so what is
  // learnt on single requests carries over. The conditional marker only matters for the address change.
  const head = focus === undefined ? (d.requests.length === 0 ? 'none' : 'done') : `${KIND[focus.kind]}${d.conditional && focus.kind === 'user_address' && d.othersOpen() > 0 ? 'c' : ''}`;
  let auth: string;
  if (d.user !== undefined) auth = 'U';
  else if (d.userId !== undefined) auth = 'u';
  else if (d.firstName !== undefined && d.zip !== undefined) auth = 'n';
  else if (d.email !== undefined && !d.emailFailed) auth = 'e';
  else if (d.firstName !== undefined || d.zip !== undefined) auth = 'h';
  else auth = d.emailFailed ? 'x' : '0';
  const order = d.focusOrder();
  const status = order === undefined ? '-' : order.status === 'pending' ? 'P' : order.status === 'delivered' ? 'D' : order.status === 'processed' ? 'S' : 'X';
  const conf = d.confirmed ? 'y' : d.declined > 0 ? 'n' : '';
  const last = d.last === 'fault' ? 'f' : d.last === 'error' ? 'e' : '';
  return `${head}|${auth}|${status}|${NEED[d.need()]}|${d.forbidden() ? '!' : ''}|${conf}|${last}`;
}

class RetailTracker implements SkillTracker {
  private readonly d: RetailDialogue;

  constructor(reset: Observation) {
    this.d = new RetailDialogue(reset);
  }

  state(): string {
    return stateOf(this.d);
  }

  options(): readonly string[] {
    const d = this.d;
    const focus = d.focus();
    const out: RetailMacro[] = [];
    const need = d.need();
    if (d.userId === undefined) {
      out.push('ask_email', 'ask_name_zip');
      if (d.findByEmail() !== undefined) out.push('find_by_email');
      if (d.findByNameZip() !== undefined) out.push('find_by_name_zip');
    } else if (d.user === undefined) out.push('get_user');
    if (focus !== undefined) {
      if (need === 'order') out.push('ask_order');
      if (d.getOrder() !== undefined) out.push('get_order');
      if (d.scanOrder() !== undefined && need === 'order') out.push('scan_order');
      if (need === 'items') out.push('ask_items');
      if (d.getProduct() !== undefined) out.push('get_product');
      if (need === 'options') out.push('ask_options');
      if (need === 'method') out.push('ask_method');
      if (need === 'reason') out.push('ask_reason');
      if (need === 'address') out.push('ask_address');
      if (need === 'none' && d.write() !== undefined) out.push('propose', 'act');
      if (d.focusOrder() !== undefined) out.push('tell_status');
      out.push('refuse');
      if (d.userId !== undefined) out.push('transfer');
      if (d.othersOpen() > 0) out.push('defer');
    }
    out.push('anything_else');
    if (d.retry() !== undefined) out.push('retry');
    out.push('finish');
    return out;
  }

  expand(macro: string): Action {
    const d = this.d;
    const action = ((): Action | undefined => {
      switch (macro as RetailMacro) {
        case 'ask_email':
          return d.askEmail();
        case 'ask_name_zip':
          return d.askNameZip();
        case 'find_by_email':
          return d.findByEmail();
        case 'find_by_name_zip':
          return d.findByNameZip();
        case 'get_user':
          return d.getUser();
        case 'ask_order':
          return d.askOrder();
        case 'get_order':
          return d.getOrder();
        case 'scan_order':
          return d.scanOrder();
        case 'ask_items':
          return d.askItems();
        case 'get_product':
          return d.getProduct();
        case 'ask_options':
          return d.askOptions();
        case 'ask_method':
          return d.askMethod();
        case 'ask_reason':
          return d.askReason();
        case 'ask_address':
          return d.askAddress();
        case 'propose':
          return d.propose();
        case 'act':
          return d.write();
        case 'tell_status':
          return d.tellStatus();
        case 'refuse':
          return d.refuse();
        case 'transfer':
          return d.transfer();
        case 'defer':
          d.defer();
          return { type: 'tool', tool: 'think', args: { thought: 'Handle the other request first.' } };
        case 'anything_else':
          return d.anythingElse();
        case 'retry':
          return d.retry();
        default:
          return undefined;
      }
    })();
    return action ?? { type: 'finish' };
  }

  observe(_macro: string, action: Action, result: StepResult): void {
    this.d.afterStep(action, result.observation);
  }
}

/** The retail skill set (`retail@1`). */
export const retailSkills: SkillSet = {
  id: 'retail@1',
  handles: (domain) => domain === 'retail',
  start: (reset) => new RetailTracker(reset),
};
