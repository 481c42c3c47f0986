/** The library templates: borrow a book and return one, each with levels that add distractors, fines, disclosure and faults. */
import { z } from 'zod';
import { defineTemplate } from '../../core/index.js';
import type { Action, LevelSpec, Rng, TaskSpec } from '../../core/index.js';
import type { World } from './world.js';

const ADJECTIVES = ['Silent', 'Hidden', 'Last', 'Golden', 'Broken', 'Winter', 'Distant', 'Painted', 'Quiet', 'Burning', 'Northern', 'Glass'];
const NOUNS = ['River', 'Garden', 'Lantern', 'Harbour', 'Orchard', 'Mountain', 'Library', 'Compass', 'Island', 'Tower', 'Meadow', 'Bridge'];
const PEOPLE = ['Ada Byron', 'Alan Turing', 'Grace Hopper', 'Kurt Goedel', 'Emmy Noether', 'Rosalind Franklin', 'Niels Bohr', 'Hedy Lamarr'];
const TODAY = '2026-03-02';

/** What the simulated member knows: who they are, what they want, and whether they volunteer their card. */
export interface LibraryGoal {
  card: string;
  title: string;
  intent: 'borrow' | 'return';
  disclosure: 'full' | 'asked';
}

const num = (spec: LevelSpec, key: string): number => spec[key] as number;

/** A world with `books` titles (`sequels` of them continuations of the wanted one) and one member. */
function sampleWorld(rng: Rng, books: number, sequels: number): { world: World; member: string; target: string } {
  const titles = new Set<string>();
  while (titles.size < books - sequels) titles.add(`The ${rng.pick(ADJECTIVES)} ${rng.pick(NOUNS)}`);
  const base = [...titles];
  const wanted = rng.pick(base);
  const all = [...base, ...['Returns', 'Revisited', 'Again'].slice(0, sequels).map((s) => `${wanted} ${s}`)];
  const ids = rng.sample(Array.from({ length: 900 }, (_, i) => `B-${100 + i}`), all.length);
  const world: World = { today: TODAY, members: {}, books: {}, loans: {} };
  let target = '';
  all.forEach((title, i) => {
    world.books[ids[i]!] = { title, author: rng.pick(PEOPLE), copies: rng.int(1, 3) };
    if (title === wanted) target = ids[i]!;
  });
  const memberId = `M-${rng.int(100, 999)}`;
  world.members[memberId] = { name: rng.pick(PEOPLE), card: `C-${rng.int(1000, 9999)}`, fines: 0 };
  return { world, member: memberId, target };
}

const common = z.object({ world: z.any(), member: z.string(), book: z.string(), disclosure: z.enum(['full', 'asked']), faultRate: z.number() });

const borrowParams = common.extend({ fines: z.number().int().nonnegative() });
type BorrowParams = z.infer<typeof borrowParams>;

function addDays(day: string, days: number): string {
  const t = Date.UTC(Number(day.slice(0, 4)), Number(day.slice(5, 7)) - 1, Number(day.slice(8, 10))) + days * 86_400_000;
  return new Date(t).toISOString().slice(0, 10);
}

/** `library/borrow@1`: lend the book the member names and tell them the due date. */
export const borrowTemplate = defineTemplate<BorrowParams>({
  domain: 'library',
  name: 'borrow',
  version: 1,
  taskType: 'borrow',
  description: 'Identify the member by card, find the title, clear fines with confirmation if any, lend it and tell the due date.',
  levels: [
    { books: 4, sequels: 0, fines: 0, disclosure: 'full', faultRate: 0 },
    { books: 10, sequels: 1, fines: 0, disclosure: 'full', faultRate: 0 },
    { books: 10, sequels: 1, fines: 1, disclosure: 'full', faultRate: 0 },
    { books: 16, sequels: 2, fines: 1, disclosure: 'asked', faultRate: 0.3 },
  ],
  params: borrowParams,
  sample(rng, _level, spec) {
    const { world, member, target } = sampleWorld(rng, num(spec, 'books'), num(spec, 'sequels'));
    const fines = num(spec, 'fines') > 0 ? 50 * rng.int(1, 12) : 0;
    world.members[member]!.fines = fines;
    return { world, member, book: target, fines, disclosure: spec['disclosure'] as 'full' | 'asked', faultRate: num(spec, 'faultRate') };
  },
  build(p, ctx) {
    const w = p.world as World;
    const due = addDays(w.today, 21);
    const goal: LibraryGoal = { card: w.members[p.member]!.card, title: w.books[p.book]!.title, intent: 'borrow', disclosure: p.disclosure };
    const spec: Omit<TaskSpec, 'solution'> = {
      instructions: `Borrow "${goal.title}".`,
      initialState: w,
      budget: { steps: 10 + 2 * ctx.level, consecutiveErrors: 4 },
      constraints: { confirmTools: ['pay_fines'] },
      acceptance: {
        finalState: true,
        outputs: [due],
        subgoals: [
          { id: 'identified', pattern: { tool: 'find_member', args: { card: goal.card } } },
          { id: 'lent', pattern: { tool: 'checkout_book', args: { member_id: p.member, book_id: p.book } } },
        ],
      },
      user: goal as unknown as TaskSpec['user'],
      tags: ['borrow'],
    };
    if (p.faultRate > 0) spec.faults = { rules: [{ tool: 'search_books', kind: 'transient', rate: p.faultRate, maxPerEpisode: 1 }] };
    return spec;
  },
  solve(p): Action[] {
    const w = p.world as World;
    const card = w.members[p.member]!.card;
    const title = w.books[p.book]!.title;
    return [
      ...(p.disclosure === 'asked' ? [{ type: 'message' as const, text: 'Could you tell me your library card number?' }] : []),
      { type: 'tool', tool: 'find_member', args: { card } },
      { type: 'tool', tool: 'search_books', args: { title } },
      ...(p.fines > 0
        ? [
            { type: 'message' as const, text: `You have ${p.fines} cents of unpaid fines. Shall I charge them so you can borrow? Please confirm.` },
            { type: 'tool' as const, tool: 'pay_fines', args: { member_id: p.member } },
          ]
        : []),
      { type: 'tool', tool: 'checkout_book', args: { member_id: p.member, book_id: p.book } },
      { type: 'message', text: `"${title}" is yours until ${addDays(w.today, 21)}. Anything else?` },
    ];
  },
});

const returnParams = common.extend({ loan: z.string() });
type ReturnParams = z.infer<typeof returnParams>;

/** `library/return@1`: end the loan of the title the member brings back (they may hold several). */
export const returnTemplate = defineTemplate<ReturnParams>({
  domain: 'library',
  name: 'return',
  version: 1,
  taskType: 'return',
  description: 'Identify the member by card and end the loan of the title they bring back.',
  levels: [
    { books: 4, loans: 1, disclosure: 'full', faultRate: 0 },
    { books: 10, loans: 3, disclosure: 'full', faultRate: 0 },
    { books: 10, loans: 3, disclosure: 'asked', faultRate: 0.3 },
  ],
  params: returnParams,
  sample(rng, _level, spec) {
    const { world, member } = sampleWorld(rng, num(spec, 'books'), 0);
    const lent = rng.sample(Object.keys(world.books).sort(), num(spec, 'loans')).sort();
    for (const book of lent) world.loans[`L-${book.slice(2)}${member.slice(2)}`] = { member, book, due: addDays(TODAY, rng.int(-5, 20)) };
    const book = rng.pick(lent);
    return { world, member, book, loan: `L-${book.slice(2)}${member.slice(2)}`, disclosure: spec['disclosure'] as 'full' | 'asked', faultRate: num(spec, 'faultRate') };
  },
  build(p, ctx) {
    const w = p.world as World;
    const goal: LibraryGoal = { card: w.members[p.member]!.card, title: w.books[p.book]!.title, intent: 'return', disclosure: p.disclosure };
    const spec: Omit<TaskSpec, 'solution'> = {
      instructions: `Return "${goal.title}".`,
      initialState: w,
      budget: { steps: 8 + 2 * ctx.level, consecutiveErrors: 4 },
      acceptance: { finalState: true, subgoals: [{ id: 'returned', pattern: { tool: 'return_book', args: { loan_id: p.loan } } }] },
      user: goal as unknown as TaskSpec['user'],
      tags: ['return'],
    };
    if (p.faultRate > 0) spec.faults = { rules: [{ tool: 'find_member', kind: 'transient', rate: p.faultRate, maxPerEpisode: 1 }] };
    return spec;
  },
  solve(p): Action[] {
    const w = p.world as World;
    return [
      ...(p.disclosure === 'asked' ? [{ type: 'message' as const, text: 'Could you tell me your library card number?' }] : []),
      { type: 'tool', tool: 'find_member', args: { card: w.members[p.member]!.card } },
      { type: 'tool', tool: 'return_book', args: { loan_id: p.loan } },
      { type: 'message', text: `"${w.books[p.book]!.title}" is returned. Anything else?` },
    ];
  },
});
