/** The simulated user of api-workflows: states the request, answers clarifying questions, confirms or refuses writes. */
import type { Rng, SimulatedUser, Task, UserTurn } from '../../core/index.js';
import { GREETINGS, HELDOUT_ASKS, slotWords, TRAIN_ASKS, VAGUE } from './phrases.js';
import type { UserFacts } from './templates/index.js';

/** Version of the user's behaviour (part of what a conversation digest names). */
export const API_USER_VERSION = 1;

/** The opening request: a wording of the task's ask from its bank, with withheld slots made vague. */
export function requestText(facts: UserFacts, rng: Rng): string {
  const bank = facts.bank === 'heldout' ? HELDOUT_ASKS : TRAIN_ASKS;
  const wordings = bank[facts.slots.ask ?? ''] ?? TRAIN_ASKS[facts.slots.ask ?? ''] ?? ['Please help me.'];
  const wording = rng.pick(wordings);
  const text = wording.replace(/\{([a-z_]+)\}/g, (_m, slot: string) => (facts.withheld.includes(slot) ? (VAGUE[slot] ?? 'something') : (facts.slots[slot] ?? '')));
  return `${rng.pick(GREETINGS[facts.bank])} ${text}`;
}

const CONFIRM_CUES = /\b(confirm|proceed|go ahead|shall i|ok to|okay to)\b/i;

/** The simulated user of one episode (a class: an episode makes one, and methods need no per-episode closures). */
class ApiUser implements SimulatedUser {
  private readonly told = new Set<string>();

  constructor(
    private readonly facts: UserFacts,
    private readonly rng: Rng,
  ) {}

  opening(): string {
    return requestText(this.facts, this.rng);
  }

  respond(agentText: string): UserTurn {
    const { facts, rng, told } = this;
    const text = agentText.toLowerCase();
    if (CONFIRM_CUES.test(agentText)) {
      if (facts.confirmToken === '' || text.includes(facts.confirmToken.toLowerCase())) return { text: rng.pick(['Yes, go ahead.', 'Confirmed, please proceed.', 'Yes.']), confirms: true };
      return { text: `No, that is not what I asked for. I asked about ${facts.confirmToken}.`, confirms: false };
    }
    const asked = facts.withheld.filter((slot) => !told.has(slot) && slotWords(slot).every((w) => text.includes(w)));
    if (asked.length > 0) {
      for (const slot of asked) told.add(slot);
      return { text: asked.map((slot) => `The ${slot.replace(/_/g, ' ')} is ${facts.slots[slot]}.`).join(' ') };
    }
    if (/\b(thanks|thank you|bye|that's all)\b/i.test(agentText) && !text.includes('?')) return { text: 'Thanks, bye.' };
    return { text: rng.pick(['Please just do what I asked.', 'I have told you what I need.', 'Go on with my request, please.']) };
  }
}

/**
 * A deterministic user for a task: `rng` (seeded by task and episode) picks the wordings; the facts are the task's.
 * A confirmation request is accepted only when it names the task's confirm token (e.g. the invoice number).
 */
export function createApiUser(task: Task, rng: Rng): SimulatedUser {
  return new ApiUser(task.spec.user as unknown as UserFacts, rng);
}
