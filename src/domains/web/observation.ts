/**
 * The observation of a simulated page: an accessibility-tree text with `[bid]` ids (BrowserGym's AXTree
 * format) plus the URL, title, focused element and the last action's error; optional pruning of invisible
 * nodes and a token budget.
 */
import type { JsonObject } from '../../core/index.js';
import { isShown, type PageState, type WebError } from './page.js';
import type { WebNode } from './tree.js';

/** How an observation is cut. */
export interface ObserveOptions {
  /** Leave out nodes that are not shown (hidden, not loaded yet, below the fold). Default true. */
  prune?: boolean;
  /** At most about this many tokens of tree text (4 characters a token); the rest is cut with a note. Default 2,000. */
  tokenBudget?: number;
}

/** Default observation token budget. */
export const OBSERVATION_TOKENS = 2_000;

/** The observation agents see, as the tool output of every web action. */
export interface WebObservation {
  url: string;
  title: string;
  /** The focused element as `[bid] role 'name'`, or empty. */
  focused: string;
  /** The last action's error message, or empty. */
  last_action_error: string;
  /** The accessibility tree, one node a line, indented by depth. */
  axtree: string;
}

/** The observation of a page after an action (pass the action's error, if any). */
export function observe(page: PageState, error?: WebError, options: ObserveOptions = {}): WebObservation {
  const prune = options.prune ?? true;
  const budget = (options.tokenBudget ?? OBSERVATION_TOKENS) * 4;
  const lines: string[] = [];
  let used = 0;
  let cut = 0;
  const walk = (node: WebNode, depth: number, shown: boolean): void => {
    const visible = shown && isShown(page, node);
    if (prune && !visible) return;
    const line = `${'\t'.repeat(depth)}${nodeLine(node)}${visible ? '' : ', hidden'}`;
    if (used + line.length + 1 > budget) cut++;
    else {
      lines.push(line);
      used += line.length + 1;
    }
    for (const child of node.children) walk(child, depth + 1, visible);
  };
  walk(page.tree, 0, true);
  if (cut > 0) lines.push(`… ${cut} more elements not shown (observation budget of ${options.tokenBudget ?? OBSERVATION_TOKENS} tokens)`);
  const focusedPath = page.focused === undefined ? undefined : page.index.get(page.focused);
  let focused = '';
  if (focusedPath !== undefined) {
    let n = page.tree;
    for (const i of focusedPath) n = n.children[i]!;
    focused = `[${n.bid}] ${n.role} '${n.name}'`;
  }
  return { url: page.url, title: page.title, focused, last_action_error: error?.message ?? '', axtree: lines.join('\n') };
}

/** One node as a line: `[bid] role 'name', property=value, ...`. */
export function nodeLine(node: WebNode): string {
  let out = `[${node.bid}] ${node.role} ${quote(node.name)}`;
  if (node.icon !== undefined) out += `, icon=${quote(node.icon)}`;
  if (node.value !== undefined) out += `, value=${quote(node.value)}`;
  if (node.inputType !== undefined && node.inputType !== 'text') out += `, type=${node.inputType}`;
  if (node.options !== undefined) out += `, options=[${node.options.map(quote).join(', ')}]`;
  if (node.checked !== undefined) out += `, checked=${node.checked}`;
  if (node.required === true) out += ', required';
  if (node.disabled === true) out += ', disabled';
  if (node.invalid !== undefined) out += `, invalid=${quote(node.invalid)}`;
  if (node.expanded !== undefined) out += `, expanded=${node.expanded}`;
  if (node.selected === true) out += ', selected';
  if (node.sort !== undefined) out += `, sort=${node.sort}`;
  if (node.href !== undefined) out += `, url=${quote(node.href)}`;
  if (node.role === 'dialog') out += ', modal';
  return out;
}

function quote(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, ' ')}'`;
}

/** The observation as the JSON tool output the runtime records. */
export function observationJson(obs: WebObservation): JsonObject {
  return { url: obs.url, title: obs.title, focused: obs.focused, last_action_error: obs.last_action_error, axtree: obs.axtree };
}
