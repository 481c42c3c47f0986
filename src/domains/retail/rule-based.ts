/**
 * Retail's `rule-based` baseline (declared as `retail.baselines['rule-based']`): keyword/regex understanding of the customer plus a scripted flow per
 * request, one request at a time in the order heard: authenticate → look up → (refuse what the policy
 * forbids) → ask for what is missing → propose and confirm → act → tell → next request → "anything else?"
 * → close. A realistic baseline bot with honest weak spots: its keywords miss paraphrases and typos, it
 * understands a condition only in its common wording ("before you change…, check whether…"), and its slots
 * (method, reason, address) and ask counts are shared by all the requests of a conversation.
 */
import type { Action, Agent, AgentContext, AgentEpisode, Observation, StepResult } from '../../core/index.js';
import { RetailDialogue } from './dialogue.js';

export interface RetailRuleBasedOptions {
  /** Retries of a call that hit an injected fault (default 2). */
  faultRetries?: number;
  /** How often it asks for the same fact before handing over to a human (default 2). */
  maxAsks?: number;
}

/**
 * Creates the rule-based retail agent. On other domains it finishes at once.
 * @example
 * const outcome = await runEpisode(retail, task, createRetailRuleBasedAgent(), { seed: 0 });
 */
export function createRetailRuleBasedAgent(options: RetailRuleBasedOptions = {}): Agent {
  const faultRetries = options.faultRetries ?? 2;
  const maxAsks = options.maxAsks ?? 2;
  return {
    name: 'rule-based',
    version: '2',
    config: () => ({ faultRetries, maxAsks }),
    begin(ctx: AgentContext): AgentEpisode {
      const retail = ctx.domain === 'retail';
      let dialogue: RetailDialogue | undefined;
      let pending: Action | undefined;
      let retries = 0;
      let helpAsked = false;
      let handedOver = false;
      const decide = (d: RetailDialogue): Action => {
        if (d.steps >= d.budgetSteps - 1) return { type: 'finish' };
        if (d.last === 'fault' && retries < faultRetries) {
          retries++;
          return d.retry()!;
        }
        retries = 0;
        if (handedOver) return { type: 'finish' };
        // A condition in its common wording ("before you change my address, check whether…"): the shipment first.
        if (d.conditional) {
          const focus = d.focus();
          if (focus?.kind === 'user_address' && d.requests.some((r) => r.kind === 'status' && !r.done)) d.defer();
        }
        const first = d.focus();
        if (first === undefined) {
          if (d.requests.length === 0) {
            if (helpAsked) return { type: 'finish' };
            helpAsked = true;
            return { type: 'message', text: 'How can I help you today?' };
          }
          // Every request heard is handled: ask for more, and close when nothing new comes.
          return d.last === 'said' && asksClosing(pending) ? { type: 'finish' } : d.anythingElse();
        }
        if (first.kind === 'other_customer') return d.refuse()!;
        const ask = (fact: string, action: () => Action): Action => ((d.asked.get(fact) ?? 0) < maxAsks ? action() : handOver());
        const handOver = (): Action => {
          handedOver = true;
          return d.transfer() ?? { type: 'finish' };
        };
        const need = d.need();
        if (need === 'auth') {
          const find = d.findByEmail() ?? d.findByNameZip();
          if (find !== undefined) return find;
          if (d.emailFailed || (d.asked.get('email') ?? 0) > 0) return (d.asked.get('name') ?? 0) + (d.asked.get('zip') ?? 0) < 2 * maxAsks ? d.askNameZip() : handOver();
          return d.askEmail();
        }
        const getUser = d.getUser();
        if (getUser !== undefined) return getUser;
        if (first.kind === 'out_of_scope') return d.transfer() ?? handOver();
        switch (need) {
          case 'order':
            if (d.describedByItems()) return d.scanOrder() ?? ask('order', () => d.askOrder());
            return ask('order', () => d.askOrder());
          case 'fetch':
            return d.getOrder() ?? handOver();
          default:
            break;
        }
        if (d.forbidden()) return d.refuse()!;
        if (first.kind === 'status') return d.tellStatus()!;
        switch (need) {
          case 'items':
            return ask('items', () => d.askItems());
          case 'product':
            return d.getProduct() ?? handOver();
          case 'options':
            return ask('options', () => d.askOptions());
          case 'method':
            return ask('method', () => d.askMethod());
          case 'reason':
            return ask('reason', () => d.askReason());
          case 'address':
            return ask('address', () => d.askAddress());
          case 'user':
            return handOver();
          default:
            break;
        }
        if (d.confirmed) return d.write()!;
        if (d.declined >= 2) return handOver();
        return d.propose() ?? handOver();
      };
      return {
        act(observation: Observation): Action {
          if (!retail) return { type: 'finish' };
          dialogue ??= new RetailDialogue(observation);
          pending = decide(dialogue);
          return pending;
        },
        observe(result: StepResult): void {
          if (dialogue !== undefined && pending !== undefined) dialogue.afterStep(pending, result.observation);
        },
      };
    },
  };
}

function asksClosing(action: Action | undefined): boolean {
  return action?.type === 'message' && action.text.startsWith('Is there anything else');
}
