/** The web domain's tools (the action set as tool calls), the mapping to and from `WebAction`, and its process feedback. */
import { z } from 'zod';
import { defineTool, type Action, type Feedback, type Task, type Tool, type ToolOutcome, type TraceEntry } from '../../core/index.js';
import { observationJson, observe } from './observation.js';
import { KEYS, step, type WebAction, type WebErrorCode } from './page.js';
import type { WebState } from './state.js';

/** How a web rejection shows as a tool error (the web code leads the message). */
const TOOL_CODE: Record<WebErrorCode, 'INVALID_ACTION' | 'PRECONDITION_FAILED' | 'NOT_FOUND'> = {
  UNKNOWN_BID: 'NOT_FOUND',
  NO_SUCH_PAGE: 'NOT_FOUND',
  HIDDEN: 'PRECONDITION_FAILED',
  COVERED: 'PRECONDITION_FAILED',
  DISABLED: 'PRECONDITION_FAILED',
  NO_HISTORY: 'PRECONDITION_FAILED',
  FINISHED: 'PRECONDITION_FAILED',
  NOT_EDITABLE: 'INVALID_ACTION',
  NOT_CHECKABLE: 'INVALID_ACTION',
  NOT_SELECT: 'INVALID_ACTION',
  NO_SUCH_OPTION: 'INVALID_ACTION',
  BAD_KEY: 'INVALID_ACTION',
  BAD_DIRECTION: 'INVALID_ACTION',
  OFF_SITE: 'INVALID_ACTION',
};

/** Runs a web action on the episode's page: the new observation, or the rejection (and nothing changed). */
export function runWebAction(state: WebState, action: WebAction): ToolOutcome {
  const result = step(state.page, action);
  if (result.error !== undefined) return { ok: false, error: { code: TOOL_CODE[result.error.code], message: `${result.error.code}: ${result.error.message}` } };
  state.page = result.page;
  return { ok: true, output: observationJson(observe(result.page)) };
}

const bid = z.string().min(1).max(32).describe('the element id shown in brackets in the accessibility tree, e.g. "12"');

const web = <A extends Record<string, unknown>>(name: WebAction['type'], description: string, args: z.ZodType<A>): Tool<WebState, any> =>
  defineTool<WebState, any>({ name, description, effect: 'write', args, run: (state, a) => runWebAction(state, { type: name, ...(a as object) } as WebAction) });

/** The action set as tools (`send_msg_to_user` is the runtime's `message` action, `finish` its `finish`). */
export const WEB_TOOLS: Tool<WebState, any>[] = [
  web('click', 'Clicks an element (button, link, tab, checkbox, menu item, sortable column header).', z.object({ bid }).strict()),
  web('fill', 'Replaces the text of a text field with `text`.', z.object({ bid, text: z.string().max(2000) }).strict()),
  web('select_option', 'Chooses `value` in a select (one of its listed options).', z.object({ bid, value: z.string().max(200) }).strict()),
  web('check', 'Ticks a checkbox.', z.object({ bid }).strict()),
  web('uncheck', 'Clears a checkbox.', z.object({ bid }).strict()),
  web('press', `Presses a key on an element (${KEYS.join(', ')}); Enter in a text field submits its form.`, z.object({ bid, key: z.string().max(20) }).strict()),
  web('scroll', 'Scrolls the page one screen up or down (reveals content below the fold, loads more rows of an infinite list).', z.object({ direction: z.enum(['up', 'down']) }).strict()),
  web('goto', 'Opens a page of this site by path, e.g. "/orders".', z.object({ url: z.string().min(1).max(500) }).strict()),
  web('go_back', 'Goes back to the previous page.', z.object({}).strict()),
  web('noop', 'Does nothing for one step (waits for late content to load).', z.object({}).strict()),
];

/** A runtime action as a web action (tool calls of the web tools, `message`, `finish`); undefined for other tools. */
export function toWebAction(action: Action): WebAction | undefined {
  if (action.type === 'message') return { type: 'send_msg_to_user', text: action.text };
  if (action.type === 'finish') return { type: 'finish' };
  if (!WEB_TOOLS.some((t) => t.name === action.tool)) return undefined;
  return { type: action.tool, ...action.args } as WebAction;
}

/** A web action as the runtime action that plays it. */
export function fromWebAction(action: WebAction): Action {
  if (action.type === 'send_msg_to_user') return { type: 'message', text: action.text };
  if (action.type === 'finish') return { type: 'finish' };
  const { type, ...args } = action;
  return { type: 'tool', tool: type, args };
}

/** What a task tells the process feedback (in its params): pages on the way and distractor elements. */
export interface ProcessHints {
  /** Path prefixes of the pages the task needs (`/products`); a page elsewhere is a wrong page. */
  paths: string[];
  /** Element keys that are distractors (a trailing `*` matches a prefix). */
  distractors: string[];
}

/**
 * Process feedback after each valid action, from the page's notes and the task's hints: wrong page and
 * distractor clicks (OFF_PATH), a dismissed modal (SUBGOAL_REACHED), a validation error read and fixed or
 * a sign-in after a session timeout (RECOVERED), the timeout itself (FAULT_INJECTED).
 */
export function webFeedback(ctx: { action: Action; trace: readonly TraceEntry[]; state: WebState & { seen?: number }; task: Task }): Feedback[] {
  const page = ctx.state.page;
  const out: Feedback[] = [];
  const seen = ctx.state.seen ?? 0;
  const notes = page.notes;
  ctx.state.seen = notes.length;
  // Most steps add no note: nothing sliced nor walked then.
  if (seen < notes.length) noteFeedback(notes, seen, out);
  const hints = (ctx.task.params as { hints?: ProcessHints } | null)?.hints;
  if (hints === undefined || ctx.action.type !== 'tool') return out;
  const q = page.url.indexOf('?');
  const path = q < 0 ? page.url : page.url.slice(0, q);
  const tool = ctx.action.tool;
  const moved = tool === 'goto' || tool === 'click' || tool === 'go_back' || tool === 'press';
  if (moved && path !== '/login' && !onPaths(path, hints.paths)) out.push({ code: 'OFF_PATH', message: `${path} is not a page this task needs`, ref: 'wrong-page' });
  if (tool === 'click') {
    const key = page.bids.keyOf(String(ctx.action.args['bid']));
    if (key !== undefined && isDistractor(key, hints.distractors)) out.push({ code: 'OFF_PATH', message: `clicked a distractor (${key})`, ref: 'distractor' });
  }
  return out;
}

/** Feedback on the notes from `seen` on (those of this step), read against the notes before them. */
function noteFeedback(notes: readonly string[], seen: number, out: Feedback[]): void {
  const fresh = notes.slice(seen);
  const earlier = notes.slice(0, seen);
  for (const note of fresh) {
    if (note.startsWith('dismissed:')) out.push({ code: 'SUBGOAL_REACHED', message: `closed the ${note.slice(10)} dialog`, ref: `dismissed-modal:${note.slice(10)}` });
    else if (note === 'session-expired') out.push({ code: 'FAULT_INJECTED', message: 'the session timed out: sign in again to continue', ref: 'session-timeout' });
    else if (note === 'signed-in' && earlier.includes('session-expired')) out.push({ code: 'RECOVERED', message: 'signed in again after the session timed out', ref: 'session-timeout' });
    else if (note.startsWith('submitted:')) {
      const form = note.slice(10);
      if (earlier.includes(`validation-error:${form}`) || fresh.slice(0, fresh.indexOf(note)).includes(`validation-error:${form}`)) {
        out.push({ code: 'RECOVERED', message: `fixed the validation errors of the ${form} form`, ref: `validation:${form}` });
      }
    }
  }
}

/** Whether `key` is one of `distractors` (a trailing `*` matches a prefix): a loop, no closure made per click. */
function isDistractor(key: string, distractors: readonly string[]): boolean {
  for (let i = 0; i < distractors.length; i++) {
    const d = distractors[i]!;
    if (d.endsWith('*') ? key.startsWith(d.slice(0, -1)) : key === d) return true;
  }
  return false;
}

/** Whether `path` is one of `paths` or below one (`/orders/O-1` below `/orders`), without a string made per hint. */
function onPaths(path: string, paths: readonly string[]): boolean {
  for (let i = 0; i < paths.length; i++) {
    const p = paths[i]!;
    if (path === p || (path.length > p.length && path.charCodeAt(p.length) === 0x2f && path.startsWith(p))) return true;
  }
  return false;
}
