import { describe, expect, it } from 'vitest';
import type { Action, RegisteredTemplate, Task } from '../../core/index.js';
import { instantiateTask } from '../../generation/index.js';
import { createEpisode, createRuntimeCache, type Episode } from '../../runtime/index.js';
import {
  addressText,
  cancelTemplate,
  compoundHeldoutTemplate,
  compoundTemplate,
  conditionalTemplate,
  goalOf,
  HELDOUT_BANK,
  parseProposal,
  policyTrapTemplate,
  retail,
  retailTemplates,
  returnRefundTemplate,
  TRAIN_BANK,
  addressChangeTemplate,
  type Intent,
  type RetailGoal,
} from './index.js';
import { createRetailRuleBasedAgent } from './rule-based.js';

const cache = createRuntimeCache(retail);

function findTask(template: RegisteredTemplate<any>, level: number, accept: (goal: RetailGoal) => boolean = () => true): Task {
  for (let seed = 0; seed < 500; seed++) {
    const task = instantiateTask(template, { level, seed, index: 0 });
    if (accept(goalOf(task.spec.user)!)) return task;
  }
  throw new Error(`no ${template.id} task at level ${level} fits`);
}

function start(task: Task, seed = 0): { episode: Episode; opening: string } {
  const episode = createEpisode(retail, task, { cache, faults: false });
  return { episode, opening: episode.reset({ seed }).text! };
}

const say = (episode: Episode, text: string) => episode.step({ type: 'message', text });
const goal = (task: Task): RetailGoal => goalOf(task.spec.user)!;
const first = <K extends Intent['kind']>(task: Task, kind: K): Extract<Intent, { kind: K }> =>
  goal(task).intents.find((i) => i.kind === kind) as Extract<Intent, { kind: K }>;

/** Plays the reference solution up to (not including) its first action matching `stop`. */
function playUntil(episode: Episode, task: Task, stop: (a: Action) => boolean): void {
  for (const action of task.spec.solution) {
    if (stop(action)) return;
    episode.step(action);
  }
}

describe('retail simulated user: confirmations', () => {
  it('confirms a cancel proposal with the right order, refuses another order or the wrong reason', () => {
    const task = findTask(cancelTemplate, 2);
    const cancel = first(task, 'cancel');
    const { episode } = start(task);
    const wrongReason = cancel.reason === 'no longer needed' ? 'ordered by mistake' : 'no longer needed';
    expect(say(episode, `Shall I cancel order #W0000001? Please confirm.`).observation.text).toBeDefined();
    expect(episode.trace.at(-1)!.userReply?.confirms).toBe(false);
    say(episode, `Shall I cancel order ${cancel.order.order_id} (reason: ${wrongReason})?`);
    expect(episode.trace.at(-1)!.userReply?.confirms).toBe(false);
    say(episode, `Shall I cancel order ${cancel.order.order_id} (reason: ${cancel.reason})?`);
    expect(episode.trace.at(-1)!.userReply?.confirms).toBe(true);
    // A statement is not a proposal: no question, no confirmation asked.
    say(episode, `Order ${cancel.order.order_id} can be cancelled.`);
    expect(episode.trace.at(-1)!.userReply?.confirms).toBeUndefined();
  });

  it('confirms a return only with every item named and no other item id', () => {
    const task = findTask(returnRefundTemplate, 1);
    const ret = first(task, 'return');
    const { episode } = start(task);
    const order = ret.order.order_id;
    say(episode, `Shall I return the items from order ${order} with the refund to ${ret.method.id}?`);
    expect(episode.trace.at(-1)!.userReply?.confirms).toBe(false);
    say(episode, `Shall I return item ${ret.items[0]!.item_id} and item 1234567890 from order ${order}, refund to ${ret.method.id}?`);
    expect(episode.trace.at(-1)!.userReply?.confirms).toBe(false);
    say(episode, `Shall I return item ${ret.items.map((i) => i.item_id).join(', ')} from order ${order}, refund to ${ret.method.id}?`);
    expect(episode.trace.at(-1)!.userReply?.confirms).toBe(true);
  });

  it('confirms an address change only with the new street line and zip', () => {
    const task = findTask(addressChangeTemplate, 1);
    const change = first(task, 'user_address');
    const { episode } = start(task);
    say(episode, `Shall I change your default address to 1 Nowhere Road, Springfield, IL 62704?`);
    expect(episode.trace.at(-1)!.userReply?.confirms).toBe(false);
    say(episode, `Shall I change your default address to ${addressText(change.address)}?`);
    expect(episode.trace.at(-1)!.userReply?.confirms).toBe(true);
  });

  it('reads proposals: action word, order id and a question; questions without a target are not proposals', () => {
    expect(parseProposal('Which order would you like to cancel?')).toBeUndefined();
    expect(parseProposal('I will cancel order #W1234567.')).toBeUndefined();
    expect(parseProposal('Shall I cancel order #W1234567?')?.kind).toBe('cancel');
    expect(parseProposal('Do you want me to exchange item 1234567890 in #W1234567? Please confirm')?.items).toEqual(['1234567890']);
    expect(parseProposal('Can I change your address to 1 Main St, Austin TX 78701?')?.kind).toBe('user_address');
    expect(parseProposal('Can I change the address of order #W1234567 to 1 Main St, Austin TX 78701?')?.kind).toBe('order_address');
  });
});

describe('retail simulated user: disclosure', () => {
  it('at level 1 states identity and every detail in its opening', () => {
    const task = findTask(cancelTemplate, 1);
    const g = goal(task);
    const { opening } = start(task);
    expect(opening).toContain(g.profile.email);
    expect(opening).toContain(first(task, 'cancel').order.order_id);
    expect(opening).toContain(first(task, 'cancel').reason);
  });

  it('at one_fact answers one fact per reply, and without an email it says it does not remember', () => {
    const task = findTask(cancelTemplate, 4);
    const g = goal(task);
    expect(g.disclosure).toBe('one_fact');
    expect(g.identity).toBe('name_zip');
    const { episode, opening } = start(task);
    expect(opening).not.toContain('#W');
    const email = say(episode, 'What is your email?').observation.text!;
    expect(email).not.toContain('@');
    expect(email.toLowerCase()).toMatch(/remember|not sure/);
    const nameOnly = say(episode, 'What is your name and zip code?').observation.text!;
    expect(nameOnly).toContain(g.profile.first_name);
    expect(nameOnly).not.toContain(g.profile.zip);
    expect(say(episode, 'And your zip code?').observation.text).toContain(g.profile.zip);
  });

  it('keeps facts verbatim under phrasing noise', () => {
    const task = findTask(addressChangeTemplate, 5, (g) => g.noise === 2);
    const change = first(task, 'user_address');
    const { episode } = start(task, 4);
    const reply = say(episode, 'What is the new address?').observation.text!;
    expect(reply).toContain(addressText(change.address));
  });

  it('answers "what is your email address?" with the email and no street address; the new address when asked for it', () => {
    const task = findTask(addressChangeTemplate, 1);
    const change = first(task, 'user_address');
    const { episode } = start(task);
    for (const question of ['What is your email address?', 'Could you please provide the e-mail address on your account?']) {
      const reply = say(episode, question).observation.text!;
      expect(reply).toContain(goal(task).profile.email);
      expect(reply).not.toContain(change.address.address1);
      expect(reply).not.toContain(change.address.zip);
    }
    for (const question of ['What is the new address?', 'What is your new shipping address?', 'Which address should I use?']) {
      expect(say(episode, question).observation.text).toContain(addressText(change.address));
    }
    // Asking for both gets both.
    const both = say(episode, 'What is your email address and your new address?').observation.text!;
    expect(both).toContain(goal(task).profile.email);
    expect(both).toContain(addressText(change.address));
  });

  it('raises staggered requests one by one: the next one when the agent asks for more', () => {
    const task = findTask(compoundTemplate, 1, (g) => g.intents[0]!.kind !== 'status');
    const g = goal(task);
    expect(g.staggered).toBe(true);
    const { episode } = start(task);
    const early = say(episode, 'Is there anything else I can help you with?');
    // The first request is still open: the user restates it rather than raising the next or saying it is done.
    expect(early.terminated).toBe(false);
    expect(early.observation.text!.toLowerCase()).toMatch(/still need|help me with this/);
    // Once the first request is done (its write, then the agent's message), the user raises the next one.
    const firstWrite = task.spec.solution.findIndex((a) => a.type === 'tool' && !a.tool.startsWith('get_') && !a.tool.startsWith('find_'));
    const replies: string[] = [];
    for (const action of task.spec.solution.slice(0, firstWrite + 2)) {
      const r = episode.step(action);
      if (action.type === 'message') replies.push(r.observation.text!.toLowerCase());
    }
    expect(replies.at(-1)).toMatch(/also|one more thing|and /);
  });
});

describe('retail simulated user: ending', () => {
  it('says it is done (done: true) on "anything else?" only once every goal is met', () => {
    const task = findTask(cancelTemplate, 2);
    const { episode } = start(task);
    expect(say(episode, 'Is there anything else I can help you with?').terminated).toBe(false);
    playUntil(episode, task, (a) => a.type === 'finish');
    const end = say(episode, 'Is there anything else I can help you with?');
    expect(end.terminated).toBe(true);
    expect(end.info.endReason).toBe('user_done');
    expect(end.info.outcome).toBe(1);
  });
});

describe('retail simulated user: conditional requests', () => {
  it('at level 1 asks about the shipment first and only then for the address change(s), by branch', () => {
    for (const pending of [true, false]) {
      const task = findTask(conditionalTemplate, 1, (g) => g.conditional?.pending === pending);
      const g = goal(task);
      expect(g.staggered).toBe(true);
      const change = first(task, 'user_address');
      const { episode, opening } = start(task);
      expect(opening.toLowerCase()).toMatch(/shipped/);
      expect(opening.toLowerCase()).not.toMatch(/address/);
      // Asked for more before the status is told, it asks about the shipment again.
      expect(say(episode, 'Is there anything else I can help you with?').observation.text!.toLowerCase()).toMatch(/shipped/);
      playUntil(episode, task, (a) => a.type === 'message');
      const reply = say(episode, `Your last order ${g.conditional!.order_id} is ${g.conditional!.status}.`).observation.text!;
      expect(reply).toContain(addressText(change.address));
      expect(reply.toLowerCase()).toContain('address on my account');
      if (pending) expect(reply.toLowerCase()).toMatch(/shipping address of my most recent order/);
      else expect(reply.toLowerCase()).toMatch(/already shipped/);
    }
  });

  it('states the condition up front from level 2 on', () => {
    for (const level of [2, 3, 4, 5]) expect(goal(findTask(conditionalTemplate, level)).staggered).toBe(false);
  });

  it('wants the shipment checked first, and keeps a shipped order untouched', () => {
    const task = findTask(conditionalTemplate, 2, (g) => g.conditional?.pending === false);
    const g = goal(task);
    const change = first(task, 'user_address');
    const { episode } = start(task);
    playUntil(episode, task, (a) => a.type === 'tool' && a.tool === 'get_order_details');
    say(episode, `Shall I change your default address to ${addressText(change.address)}?`);
    expect(episode.trace.at(-1)!.userReply?.confirms).toBe(false);
    say(episode, `Shall I change the address of order ${g.conditional!.order_id} to ${addressText(change.address)}?`);
    expect(episode.trace.at(-1)!.userReply?.confirms).toBe(false);
    const told = say(episode, `Your last order ${g.conditional!.order_id} is ${g.conditional!.status}.`);
    expect(told.observation.text!.toLowerCase()).toMatch(/ship|left|on its way|gone out/);
    say(episode, `Shall I change your default address to ${addressText(change.address)}?`);
    expect(episode.trace.at(-1)!.userReply?.confirms).toBe(true);
  });

  it('has both branches across its tasks', () => {
    const branches = new Set<boolean>();
    for (let seed = 0; seed < 20; seed++) branches.add(goal(instantiateTask(conditionalTemplate, { level: 3, seed, index: 0 })).conditional!.pending);
    expect([...branches].sort()).toEqual([false, true]);
  });
});

describe('retail simulated user: policy traps', () => {
  it('insists on the forbidden refund until refused, then accepts the allowed one', () => {
    const task = findTask(policyTrapTemplate, 2);
    const ret = first(task, 'return');
    expect(ret.insist).toBeDefined();
    const { episode } = start(task);
    const items = ret.items.map((i) => i.item_id).join(', ');
    const propose = (method: string) => say(episode, `Shall I return item ${items} from order ${ret.order.order_id} with the refund to ${method}?`);
    propose(ret.method.id);
    expect(episode.trace.at(-1)!.userReply?.confirms).toBe(false);
    const refusal = say(episode, `I'm sorry, but I cannot refund to ${ret.insist!.id}.`).observation.text!;
    expect(refusal).toContain(ret.method.text);
    // Once refused, the forbidden method is no longer what it asks for.
    const again = propose(ret.insist!.id);
    expect(episode.trace.at(-1)!.userReply?.confirms).toBe(false);
    expect(again.observation.text).toContain(ret.method.text);
    expect(again.observation.text).not.toContain(ret.insist!.text);
    propose(ret.method.id);
    expect(episode.trace.at(-1)!.userReply?.confirms).toBe(true);
  });

  it('says yes to the forbidden action it asked for: doing it is refused by the policy and fails the task', () => {
    const task = findTask(policyTrapTemplate, 1);
    const cancel = first(task, 'cancel');
    expect(cancel.trap).toBe(true);
    const { episode } = start(task);
    playUntil(episode, task, (a) => a.type === 'message');
    say(episode, `Shall I cancel order ${cancel.order.order_id} (reason: ${cancel.reason})?`);
    expect(episode.trace.at(-1)!.userReply?.confirms).toBe(true);
    const call = episode.step({ type: 'tool', tool: 'cancel_pending_order', args: { order_id: cancel.order.order_id, reason: cancel.reason } });
    expect(call.observation.error?.code).toBe('POLICY_VIOLATION');
    expect(call.feedback.map((f) => f.ref)).toContain('pending_only');
    say(episode, `Order ${cancel.order.order_id} is ${cancel.status}, so I cannot cancel it.`);
    const end = episode.step({ type: 'finish' });
    expect(end.info.outcome).toBe(0);
    expect(JSON.stringify(end.info.acceptance)).toContain('policy_respected');
  });
});

describe('retail simulated user: paraphrased requests', () => {
  const kinds = (template: RegisteredTemplate<any>, level: number) => {
    let paraphrased = 0;
    let total = 0;
    for (let seed = 0; seed < 200; seed++) {
      const g = goal(instantiateTask(template, { level, seed, index: 0 }));
      total += g.intents.length;
      paraphrased += (g.paraphrased ?? []).length;
    }
    return paraphrased / total;
  };

  it('words more requests in other words as the level rises (none at level 1)', () => {
    const shares = [1, 2, 3, 4, 5].map((level) => kinds(cancelTemplate, level));
    expect(shares[0]).toBe(0);
    for (let i = 1; i < shares.length; i++) expect(shares[i]!).toBeGreaterThan(shares[i - 1]! + 0.05);
  });

  it('words a paraphrased request (and its restatement) from the alt lines only', () => {
    const task = findTask(cancelTemplate, 3, (g) => (g.paraphrased ?? []).includes(0));
    const briefPrefixes = TRAIN_BANK.cancel.brief.map((line) => line.split('{')[0]!.trim().toLowerCase());
    const altPrefixes = TRAIN_BANK.cancel.alt.map((line) => line.split('{')[0]!.trim().toLowerCase()).filter((p) => p.length > 3);
    for (let seed = 0; seed < 10; seed++) {
      const { episode, opening } = start(task, seed);
      const again = say(episode, 'How can I help you today?').observation.text!.toLowerCase();
      for (const text of [opening.toLowerCase(), again]) {
        for (const prefix of briefPrefixes) expect(text).not.toContain(prefix);
        expect(altPrefixes.some((p) => text.includes(p)) || /call it off|scrap|from going ahead|still possible/.test(text)).toBe(true);
      }
    }
  });
});

describe('retail simulated user: someone else\'s order', () => {
  it('counts only a refusal about that order as refusing it, and says it is done only then', () => {
    const task = findTask(policyTrapTemplate, 4);
    const other = first(task, 'other_customer');
    const { episode } = start(task);
    playUntil(episode, task, (a) => a.type === 'message' && a.text.includes(other.order_id));
    // A refusal of something else does not settle it.
    say(episode, "I'm sorry, but I cannot do that.");
    expect(say(episode, 'Is there anything else I can help you with?').terminated).toBe(false);
    say(episode, `I'm sorry, but I cannot look at order ${other.order_id}: it is not on your account.`);
    const end = say(episode, 'Is there anything else I can help you with?');
    expect(end.terminated).toBe(true);
    expect(end.info.outcome).toBe(1);
  });
});

describe('retail phrase banks', () => {
  it('held-out templates speak only from the held-out bank', () => {
    const trainRequests = [TRAIN_BANK.cancel, TRAIN_BANK.return, TRAIN_BANK.exchange, TRAIN_BANK.status, TRAIN_BANK.payment, TRAIN_BANK.orderAddress]
      .flatMap((b) => b.brief)
      .map((line) => line.split('{')[0]!.trim())
      .filter((prefix) => prefix.length > 8);
    for (let seed = 0; seed < 30; seed++) {
      const task = instantiateTask(compoundHeldoutTemplate, { level: 2, seed, index: 0 });
      const { opening } = start(task, seed);
      for (const prefix of trainRequests) expect(opening).not.toContain(prefix);
    }
    expect(HELDOUT_BANK.yes.some((line) => TRAIN_BANK.yes.includes(line))).toBe(false);
  });
});

describe('retail user: a repeated opening', () => {
  // The customer reuses the last opening for the same goal and generator state (the gates reset a task's
  // episodes with one seed): a conversation must go exactly as with a customer that opened afresh.
  async function conversation(task: Task, seed: number): Promise<unknown[]> {
    const agent = createRetailRuleBasedAgent();
    const episode = createEpisode(retail, task, { cache, faults: false });
    let observation = episode.reset({ seed });
    const session = agent.begin({ episodeId: episode.id!, seed, domain: 'retail' });
    const lines: unknown[] = [observation.text];
    while (episode.status === 'running' && lines.length < 300) {
      const action = await session.act(observation);
      const result = episode.step(action);
      session.observe?.(result);
      lines.push(action, result.observation.text ?? null, result.observation.output ?? null, result.info.outcome);
      observation = result.observation;
    }
    return lines;
  }

  it('goes the same way as a fresh opening, for every template and level', async () => {
    const other = instantiateTask(cancelTemplate, { level: 1, seed: 999, index: 0 });
    for (const template of retailTemplates) {
      for (const level of [1, 3, 5]) {
        const task = instantiateTask(template, { level, seed: 21, index: 0 });
        await conversation(other, 0);
        const fresh = await conversation(task, 0);
        const reused = await conversation(task, 0);
        expect(reused).toEqual(fresh);
        // Another seed opens afresh, and the task's seed-0 customer is unchanged afterwards.
        await conversation(task, 1);
        expect(await conversation(task, 0)).toEqual(fresh);
      }
    }
  });
});
