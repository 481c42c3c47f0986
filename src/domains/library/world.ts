/** The library world: members, books and loans as an immutable base plus a per-episode overlay, and its tools. */
import { z } from 'zod';
import { defineTool, digest } from '../../core/index.js';
import type { JsonObject, PolicyRule, Tool } from '../../core/index.js';

/** A member of the library. */
export interface Member {
  name: string;
  card: string;
  /** Unpaid fines in cents. */
  fines: number;
}
/** A title in the catalogue with the number of copies the library owns. */
export interface Book {
  title: string;
  author: string;
  copies: number;
}
/** An active loan. */
export interface Loan {
  member: string;
  book: string;
  due: string;
}

/** The JSON a task carries (`initialState`). */
export const worldSchema = z.object({
  today: z.string(),
  members: z.record(z.string(), z.object({ name: z.string(), card: z.string(), fines: z.number().int().nonnegative() })),
  books: z.record(z.string(), z.object({ title: z.string(), author: z.string(), copies: z.number().int().nonnegative() })),
  loans: z.record(z.string(), z.object({ member: z.string(), book: z.string(), due: z.string() })),
});
export type World = z.infer<typeof worldSchema>;

/** A world: the shared base plus the records one episode changed (`null` = removed). */
export interface LibraryState {
  base: World;
  baseHash: string;
  changes: Map<string, Member | Loan | null>;
}

/** Members may hold at most this many loans at once. */
export const LOAN_LIMIT = 3;
const LOAN_DAYS = 21;

export function createLibraryState(initialState: unknown): LibraryState {
  const base = worldSchema.parse(initialState);
  return { base, baseHash: digest(base), changes: new Map() };
}

export const forkLibrary = (state: LibraryState): LibraryState => ({ base: state.base, baseHash: state.baseHash, changes: new Map(state.changes) });

export function hashLibrary(state: LibraryState): string {
  if (state.changes.size === 0) return state.baseHash;
  return digest({ base: state.baseHash, changes: [...state.changes.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1)) });
}

export function member(state: LibraryState, id: string): Member | undefined {
  const changed = state.changes.get(`member/${id}`);
  return changed === undefined ? state.base.members[id] : (changed as Member | null) ?? undefined;
}

export function loans(state: LibraryState): Map<string, Loan> {
  const out = new Map(Object.entries(state.base.loans));
  for (const [key, value] of state.changes) {
    if (!key.startsWith('loan/')) continue;
    if (value === null) out.delete(key.slice(5));
    else out.set(key.slice(5), value as Loan);
  }
  return out;
}

/** The whole world as JSON (export and inspection). */
export function exportLibrary(state: LibraryState): World {
  const members: World['members'] = {};
  for (const id of Object.keys(state.base.members).sort()) members[id] = member(state, id)!;
  const active: World['loans'] = {};
  for (const [id, loan] of [...loans(state).entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1))) active[id] = loan;
  return { today: state.base.today, members, books: state.base.books, loans: active };
}

function put(state: LibraryState, key: string, value: Member | Loan | null): void {
  const [kind, id] = key.split('/') as ['member' | 'loan', string];
  const original = kind === 'member' ? state.base.members[id] : state.base.loans[id];
  // Keep the overlay minimal so that equal worlds hash equal.
  if ((value === null && original === undefined) || digest(value) === digest(original ?? null)) state.changes.delete(key);
  else state.changes.set(key, value);
}

function addDays(day: string, days: number): string {
  const t = Date.UTC(Number(day.slice(0, 4)), Number(day.slice(5, 7)) - 1, Number(day.slice(8, 10))) + days * 86_400_000;
  return new Date(t).toISOString().slice(0, 10);
}

const available = (state: LibraryState, book: string): number => {
  let out = state.base.books[book]?.copies ?? 0;
  for (const loan of loans(state).values()) if (loan.book === book) out--;
  return out;
};

const loansOf = (state: LibraryState, memberId: string): JsonObject[] =>
  [...loans(state).entries()]
    .filter(([, loan]) => loan.member === memberId)
    .sort((a, b) => (a[0] < b[0] ? -1 : 1))
    .map(([id, loan]) => ({ loan_id: id, book_id: loan.book, title: state.base.books[loan.book]?.title ?? '?', due: loan.due }));

const notFound = (what: string) => ({ ok: false as const, error: { code: 'NOT_FOUND' as const, message: `no ${what}` } });

const findMember = defineTool<LibraryState, { card: string }>({
  name: 'find_member',
  description: 'Looks a member up by library card number (e.g. "C-4821"): their member id, name, unpaid fines and active loans.',
  effect: 'read',
  args: z.object({ card: z.string().min(1) }).strict(),
  run(state, args) {
    const id = Object.keys(state.base.members).find((m) => state.base.members[m]!.card === args.card);
    if (id === undefined) return notFound(`member with card ${args.card}`);
    const m = member(state, id)!;
    return { ok: true, output: { member_id: id, name: m.name, fines_cents: m.fines, loans: loansOf(state, id) } };
  },
});

const searchBooks = defineTool<LibraryState, { title: string }>({
  name: 'search_books',
  description: 'Finds catalogue titles containing the given words (case-insensitive), with how many copies are available now.',
  effect: 'read',
  args: z.object({ title: z.string().min(1) }).strict(),
  run(state, args) {
    const want = args.title.toLowerCase();
    const hits = Object.keys(state.base.books)
      .sort()
      .filter((id) => state.base.books[id]!.title.toLowerCase().includes(want))
      .slice(0, 20)
      .map((id) => ({ book_id: id, title: state.base.books[id]!.title, author: state.base.books[id]!.author, available: available(state, id) }));
    return { ok: true, output: hits };
  },
});

const checkoutBook = defineTool<LibraryState, { member_id: string; book_id: string }>({
  name: 'checkout_book',
  description: `Lends a book to a member (at most ${LOAN_LIMIT} loans each). Returns the loan id and the due date.`,
  effect: 'write',
  args: z.object({ member_id: z.string().min(1), book_id: z.string().min(1) }).strict(),
  run(state, args) {
    if (member(state, args.member_id) === undefined) return notFound(`member ${args.member_id}`);
    const book = state.base.books[args.book_id];
    if (book === undefined) return notFound(`book ${args.book_id}`);
    if (available(state, args.book_id) <= 0) return { ok: false, error: { code: 'PRECONDITION_FAILED', message: `no copy of ${book.title} is available` } };
    if (loansOf(state, args.member_id).length >= LOAN_LIMIT) return { ok: false, error: { code: 'PRECONDITION_FAILED', message: `member already has ${LOAN_LIMIT} loans` } };
    const id = `L-${args.book_id.slice(2)}${args.member_id.slice(2)}`;
    if (loans(state).has(id)) return { ok: false, error: { code: 'PRECONDITION_FAILED', message: `member already has ${book.title} on loan` } };
    const due = addDays(state.base.today, LOAN_DAYS);
    put(state, `loan/${id}`, { member: args.member_id, book: args.book_id, due });
    return { ok: true, output: { loan_id: id, title: book.title, due } };
  },
});

const returnBook = defineTool<LibraryState, { loan_id: string }>({
  name: 'return_book',
  description: 'Ends a loan: the book is back on the shelf.',
  effect: 'write',
  args: z.object({ loan_id: z.string().min(1) }).strict(),
  run(state, args) {
    const loan = loans(state).get(args.loan_id);
    if (loan === undefined) return notFound(`active loan ${args.loan_id}`);
    put(state, `loan/${args.loan_id}`, null);
    return { ok: true, output: { loan_id: args.loan_id, returned: true, title: state.base.books[loan.book]?.title ?? '?' } };
  },
});

const payFines = defineTool<LibraryState, { member_id: string }>({
  name: 'pay_fines',
  description: "Charges a member's unpaid fines to their account (needs the member's explicit confirmation).",
  effect: 'write',
  args: z.object({ member_id: z.string().min(1) }).strict(),
  run(state, args) {
    const m = member(state, args.member_id);
    if (m === undefined) return notFound(`member ${args.member_id}`);
    if (m.fines === 0) return { ok: false, error: { code: 'PRECONDITION_FAILED', message: 'this member has no unpaid fines' } };
    put(state, `member/${args.member_id}`, { ...m, fines: 0 });
    return { ok: true, output: { member_id: args.member_id, paid_cents: m.fines } };
  },
});

/** Every tool of the library. */
export const LIBRARY_TOOLS: Tool<LibraryState, any>[] = [findMember, searchBooks, checkoutBook, returnBook, payFines];

export const LIBRARY_POLICY = `# Library desk policy
- Identify the member by their library card before doing anything on their account.
- Members with unpaid fines cannot borrow: the fines are paid first, with the member's explicit confirmation.
- Tell the member the due date of every new loan.`;

/** Blocks a loan to a member with unpaid fines (the call is refused and the world is unchanged). */
export const finesRule: PolicyRule<LibraryState> = {
  id: 'no_loans_with_fines',
  description: 'Members with unpaid fines cannot borrow.',
  severity: 'high',
  block: true,
  check(action, ctx) {
    if (action.tool !== 'checkout_book') return undefined;
    const id = (action.args as { member_id?: unknown }).member_id;
    const m = typeof id === 'string' ? member(ctx.state, id) : undefined;
    return m !== undefined && m.fines > 0 ? `member ${id} has ${m.fines} cents of unpaid fines; they must be paid before borrowing` : undefined;
  },
};
