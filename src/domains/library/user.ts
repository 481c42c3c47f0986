/** The simulated library member: deterministic given its rng; gives the card when asked, confirms when asked, leaves when offered. */
import type { JsonValue, Rng, SimulatedUser, Task, UserTurn } from '../../core/index.js';
import type { LibraryGoal } from './templates.js';

const GREETINGS = ['Hi!', 'Hello,', 'Good morning.', 'Hey there.'];
const WANTS: Record<LibraryGoal['intent'], string[]> = {
  borrow: ['I would like to borrow "{title}".', 'Can I take out "{title}" today?', 'I am looking to borrow "{title}".'],
  return: ['I am bringing back "{title}".', 'I would like to return "{title}".', 'Here is "{title}", I am done with it.'],
};
const CARD = ['My library card is {card}.', 'My card number is {card}.', 'Card {card}.'];
const CONFIRMS = ['Yes, I confirm.', 'Yes, please go ahead.', 'Confirmed.'];
const ACKS = ['Okay.', 'Thanks.', 'Alright.'];

class LibraryMember implements SimulatedUser {
  private readonly said: string[] = [];

  constructor(
    private readonly goal: LibraryGoal,
    private readonly rng: Rng,
  ) {}

  opening(): string {
    const want = this.rng.pick(WANTS[this.goal.intent]).replace('{title}', this.goal.title);
    const card = this.goal.disclosure === 'full' ? ` ${this.card()}` : '';
    return this.say({ text: `${this.rng.pick(GREETINGS)}${card} ${want}` }).text;
  }

  respond(agentText: string): UserTurn {
    const text = agentText.toLowerCase();
    if (text.includes('card')) return this.say({ text: this.card() });
    if (text.includes('confirm')) return this.say({ text: this.rng.pick(CONFIRMS), confirms: true });
    if (text.includes('anything else')) return this.say({ text: 'No, that is all. Thank you, bye!', done: true });
    return this.say({ text: this.rng.pick(ACKS) });
  }

  record(): JsonValue {
    return this.said.slice();
  }

  private card(): string {
    return this.rng.pick(CARD).replace('{card}', this.goal.card);
  }

  private say(turn: UserTurn): UserTurn {
    this.said.push(turn.text);
    return turn;
  }
}

/** The simulated member of a library task. */
export function createLibraryMember(task: Task, rng: Rng): SimulatedUser {
  return new LibraryMember(task.spec.user as unknown as LibraryGoal, rng);
}
