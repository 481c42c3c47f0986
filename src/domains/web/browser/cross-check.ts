/**
 * The sim-vs-Chromium cross-check: one episode's actions played in the simulation and in the browser,
 * step by step, comparing rejections, the state hash and the two accessibility views of every element.
 */
import { createRng, digest } from '../../../core/index.js';
import { KEYS, isShown, step, type PageState, type WebAction } from '../page.js';
import { hashStore } from '../store.js';
import type { WebNode } from '../tree.js';
import type { AxElement, BrowserPage } from './browser-page.js';

/** Where the simulation and the browser disagreed, one line per difference. */
export interface StepComparison {
  step: number;
  action: WebAction;
  /** The simulation's rejection code ('' when it accepted). */
  sim: string;
  /** The browser's ('' when it accepted). */
  browser: string;
  /** Differences in what is shown and how (role, name, states), `[bid] what: sim vs browser`. */
  observation: string[];
  simHash: string;
  browserHash: string;
}

/** A digest of everything an action can change: store, place, typed values, layers, clock, messages. */
export function sessionHash(page: PageState): string {
  return digest({
    store: hashStore(page.store),
    url: page.url,
    view: page.view,
    history: page.history,
    tick: page.tick,
    scroll: page.scroll,
    focused: page.focused ?? null,
    dismissed: page.dismissed,
    messages: page.messages,
    finished: page.finished,
    notes: page.notes,
  });
}

/**
 * Plays `actions` in both, from the same start; returns one comparison per step. The simulation side is
 * the pure `step`; the browser side is `live`, opened on the same start page.
 */
export async function crossCheck(start: PageState, live: BrowserPage, actions: readonly WebAction[]): Promise<StepComparison[]> {
  let sim = start;
  const out: StepComparison[] = [];
  for (const [i, action] of actions.entries()) {
    const s = step(sim, action);
    sim = s.page;
    const b = await live.act(action);
    const ax = await live.accessibility();
    out.push({
      step: i,
      action,
      sim: s.error?.code ?? '',
      browser: b.verdict ?? '',
      observation: compareObservation(sim, ax),
      simHash: sessionHash(sim),
      browserHash: sessionHash(b.page),
    });
    if (sim.finished) break;
  }
  return out;
}

/** Roles whose accessible name the browser computes from the node's own label (not from its content). */
const NAMED_ROLES = new Set(['link', 'button', 'textbox', 'searchbox', 'combobox', 'checkbox', 'tab', 'menuitem', 'columnheader', 'dialog', 'heading', 'table', 'navigation', 'form', 'tabpanel', 'menu']);

/** The simulation's role as Chromium names it: ARIA roles are the same, text is a paragraph. */
function chromiumRole(node: WebNode): string | undefined {
  if (node.role === 'text') return node.component === 'text' ? 'paragraph' : undefined;
  if (node.role === 'region') return node.name === '' ? undefined : 'region';
  if (node.role === 'RootWebArea') return undefined;
  return node.role;
}

/**
 * Compares the simulated tree with Chromium's accessibility tree, element by element: shown in one iff
 * shown in the other, and for shown elements the same role, name and states (checked, disabled,
 * expanded, selected, value).
 */
export function compareObservation(page: PageState, ax: ReadonlyMap<string, AxElement>): string[] {
  const diffs: string[] = [];
  const walk = (node: WebNode, parentShown: boolean): void => {
    const shown = parentShown && isShown(page, node);
    const el = ax.get(node.bid);
    const inBrowser = el !== undefined && !el.ignored;
    if (node.role !== 'RootWebArea' && shown !== inBrowser) diffs.push(`[${node.bid}] shown: ${shown} vs ${inBrowser}`);
    if (shown && el !== undefined && !el.ignored) {
      const role = chromiumRole(node);
      if (role !== undefined && role !== el.role) diffs.push(`[${node.bid}] role: ${role} vs ${el.role}`);
      if (NAMED_ROLES.has(node.role) && node.name !== el.name) diffs.push(`[${node.bid}] name: '${node.name}' vs '${el.name}'`);
      const want: Record<string, string | boolean | undefined> = {
        checked: node.role === 'checkbox' ? String(node.checked === true) : undefined,
        disabled: node.disabled === true ? true : undefined,
        expanded: node.expanded,
        selected: node.role === 'tab' ? node.selected === true : undefined,
        value: node.role === 'textbox' || node.role === 'searchbox' || node.role === 'combobox' ? (node.value ?? '') : undefined,
      };
      for (const [key, value] of Object.entries(want)) {
        if (value === undefined) continue;
        const got = el.states[key] ?? (key === 'value' ? '' : key === 'selected' ? false : undefined);
        if (String(got) !== String(value)) diffs.push(`[${node.bid}] ${key}: ${String(value)} vs ${String(got)}`);
      }
    }
    for (const child of node.children) walk(child, shown);
  };
  walk(page.tree, true);
  return diffs;
}

/**
 * Seeded random actions over a page as an explorer would try them: mostly element actions on any bid
 * of the tree (shown or not, so rejections come up), with plausible and implausible values.
 */
export function randomActions(start: PageState, seed: number, count: number): WebAction[] {
  const rng = createRng(['web-cross-check', seed]);
  const actions: WebAction[] = [];
  let page = start;
  const texts = ['', 'alan', 'Ada Byron', 'ada@example.com', '9.50', '12', 'x'];
  for (let i = 0; i < count; i++) {
    const nodes: WebNode[] = [];
    const walk = (n: WebNode): void => {
      nodes.push(n);
      n.children.forEach(walk);
    };
    walk(page.tree);
    const node = rng.pick(nodes);
    const roll = rng.int(0, 99);
    let action: WebAction;
    if (roll < 40) action = { type: 'click', bid: node.bid };
    else if (roll < 55) action = { type: 'fill', bid: node.bid, text: rng.pick(texts) };
    else if (roll < 62) action = { type: 'select_option', bid: node.bid, value: rng.chance(0.8) && node.options?.length ? rng.pick(node.options) : 'nope' };
    else if (roll < 70) action = { type: rng.chance(0.5) ? 'check' : 'uncheck', bid: node.bid };
    else if (roll < 78) action = { type: 'press', bid: node.bid, key: rng.chance(0.85) ? rng.pick(KEYS) : 'F13' };
    else if (roll < 84) action = { type: 'scroll', direction: rng.chance(0.7) ? 'down' : 'up' };
    else if (roll < 89) action = { type: 'go_back' };
    else if (roll < 93) action = { type: 'click', bid: String(1000 + rng.int(0, 99)) };
    else if (roll < 97) action = { type: 'goto', url: rng.pick(['/orders', '/products', '/customers', '/nowhere', 'https://example.com/']) };
    else action = { type: 'noop' };
    actions.push(action);
    page = step(page, action).page;
  }
  return actions;
}
