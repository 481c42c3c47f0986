/**
 * The library's scripted baseline (`library-desk`): a desk clerk that knows the domain but sees only
 * observations (never the task or its reference solution). Its weak spot: it gives up on a tool error,
 * so injected faults (levels 4 of borrow, 3 of return) cost it the task.
 */
import type { Action, Agent, AgentEpisode, JsonObject, JsonValue, Observation } from '../../core/index.js';

interface Found {
  member_id: string;
  fines_cents: number;
  loans: Array<{ loan_id: string; title: string }>;
}

/**
 * Creates the desk-clerk baseline.
 * @example
 * const outcome = (await runEpisode(library, task, createLibraryDeskAgent(), { seed: 0 })).outcome;
 */
export function createLibraryDeskAgent(): Agent {
  return {
    name: 'library-desk',
    version: '1',
    config: () => ({}),
    begin(): AgentEpisode {
      let heard = '';
      let member: Found | undefined;
      let book: string | undefined;
      let askedCard = false;
      let askedConfirm = false;
      let paid = false;
      let done = false;
      let pending: string | undefined;
      const say = (text: string): Action => ({ type: 'message', text });
      return {
        act(observation: Observation): Action {
          if (observation.kind === 'reset' || observation.kind === 'message') heard += ` ${observation.text ?? ''}`;
          if (observation.error !== undefined || done) return { type: 'finish' };
          const title = /"([^"]+)"/.exec(heard)?.[1] ?? '';
          const output = observation.output as JsonValue | undefined;
          if (pending === 'find_member') member = output as unknown as Found;
          if (pending === 'search_books' && Array.isArray(output)) book = pickTitle(output as JsonObject[], title)?.['book_id'] as string | undefined;
          if (pending === 'pay_fines') paid = true;
          if (pending === 'checkout_book' || pending === 'return_book') {
            done = true;
            const due = (output as JsonObject)['due'];
            return say(typeof due === 'string' ? `"${title}" is yours until ${due}. Anything else?` : `"${title}" is returned. Anything else?`);
          }
          const call = (tool: string, args: JsonObject): Action => ((pending = tool), { type: 'tool', tool, args });
          pending = undefined;
          const card = /\bC-\d{4}\b/.exec(heard)?.[0];
          if (card === undefined) {
            if (askedCard) return { type: 'finish' };
            askedCard = true;
            return say('Could you tell me your library card number?');
          }
          if (member === undefined) return call('find_member', { card });
          if (!/borrow|take out/i.test(heard)) {
            const loan = member.loans.find((l) => l.title.toLowerCase() === title.toLowerCase());
            return loan === undefined ? { type: 'finish' } : call('return_book', { loan_id: loan.loan_id });
          }
          if (book === undefined) return call('search_books', { title });
          if (member.fines_cents > 0 && !paid) {
            if (askedConfirm) return call('pay_fines', { member_id: member.member_id });
            askedConfirm = true;
            return say(`You have ${member.fines_cents} cents of unpaid fines. Shall I charge them so you can borrow? Please confirm.`);
          }
          return call('checkout_book', { member_id: member.member_id, book_id: book });
        },
      };
    },
  };
}

function pickTitle(hits: readonly JsonObject[], title: string): JsonObject | undefined {
  return hits.find((h) => String(h['title']).toLowerCase() === title.toLowerCase() && Number(h['available']) > 0);
}
