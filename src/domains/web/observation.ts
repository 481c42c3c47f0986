/**
 * The observation of a simulated page: an accessibility-tree text with `[bid]` ids (BrowserGym's AXTree
 * format) plus the URL, title, focused element and the last action's error; optional pruning of invisible
 * nodes and a token budget.
 */
import type { JsonObject } from '../../core/index.js';
import { isShown, type PageState, type WebError } from './page.js';
import { NODE_PIECE as PIECE, NODE_TEXT as TEXT, type WebNode } from './tree.js';

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
  // The tree text depends on the tree, the cut, and the clock and scroll only up to the latest `showAt`
  // and the deepest `fold` in it: kept on the root for the last such state (tree shared by episodes).
  const root = page.tree;
  const bounds = pieceOf(root, 0);
  const tick = page.tick < bounds.late ? page.tick : bounds.late;
  const scroll = page.scroll < bounds.fold ? page.scroll : bounds.fold;
  const held = (root as unknown as { [TEXT]?: TreeText })[TEXT];
  let axtree: string;
  if (held !== undefined && held.root === root && held.tick === tick && held.scroll === scroll && held.prune === prune && held.budget === budget) axtree = held.axtree;
  else {
    const cut: TextCut = { page, budget, parts: [], used: 0, cut: 0 };
    if (prune) walkPruned(cut, root, 0);
    else walkAll(cut, root, 0, true);
    const parts = cut.parts;
    if (cut.cut > 0) parts.push(`… ${cut.cut} more elements not shown (observation budget of ${options.tokenBudget ?? OBSERVATION_TOKENS} tokens)`);
    axtree = parts.join('\n');
    (root as unknown as { [TEXT]?: TreeText })[TEXT] = { root, tick, scroll, prune, budget, axtree };
  }
  const focusedPath = page.focused === undefined ? undefined : page.index.get(page.focused);
  let focused = '';
  if (focusedPath !== undefined) {
    let n = page.tree;
    for (const i of focusedPath) n = n.children[i]!;
    focused = `[${n.bid}] ${n.role} '${n.name}'`;
  }
  return { url: page.url, title: page.title, focused, last_action_error: error?.message ?? '', axtree };
}

/**
 * One observation's text being cut to its budget: the lines taken so far and their size, and how many were
 * left out. Walked by module functions, not closures made per observation (tsx, which runs the bench,
 * names every closure it makes with a `defineProperty`).
 */
interface TextCut {
  readonly page: PageState;
  readonly budget: number;
  readonly parts: string[];
  used: number;
  cut: number;
}

/** A pruned walk: whole subtrees from their pieces (a subtree that fits the budget is one string). */
function walkPruned(out: TextCut, node: WebNode, depth: number): void {
  const piece = pieceOf(node, depth);
  if (piece.whole) {
    if (piece.count === 0) return;
    if (out.used + piece.size <= out.budget) {
      if (piece.text !== undefined) out.parts.push(piece.text);
      else wholeLines(piece, out.parts);
      out.used += piece.size;
      return;
    }
    // Not even its shortest line fits: every line of it is cut.
    if (out.used + piece.shortest > out.budget) {
      out.cut += piece.count;
      return;
    }
  } else if (!isShown(out.page, node)) return;
  if (out.used + piece.line.length + 1 > out.budget) out.cut++;
  else {
    out.parts.push(piece.line);
    out.used += piece.line.length + 1;
  }
  const children = node.children;
  for (let i = 0; i < children.length; i++) walkPruned(out, children[i]!, depth + 1);
}

/** An unpruned walk: every node, those not shown marked `hidden`. */
function walkAll(out: TextCut, node: WebNode, depth: number, shown: boolean): void {
  const visible = shown && isShown(out.page, node);
  const line = visible ? lineAt(node, depth) : lineAt(node, depth) + ', hidden';
  if (out.used + line.length + 1 > out.budget) out.cut++;
  else {
    out.parts.push(line);
    out.used += line.length + 1;
  }
  for (const child of node.children) walkAll(out, child, depth + 1, visible);
}

/**
 * A node's observation text at a depth: its line, and, when nothing in the subtree depends on the clock
 * or the scroll (no `showAt`, no `fold`), the pruned text of the whole subtree with its size (characters
 * plus one newline a line), line count and shortest line. Nodes are immutable and shared between renders, so a piece
 * stays right for as long as its node lives; it is kept on the node under a symbol (never serialised,
 * never compared) and names its node, since spreading a node into a new one copies the symbol too.
 */
interface Piece {
  readonly node: WebNode;
  readonly depth: number;
  readonly line: string;
  /** Nothing in the subtree depends on the clock or the scroll: its pruned text is fixed. */
  readonly whole: boolean;
  /** That text as one string, for a fixed subtree of at most `JOINED_LINES` lines (see `wholeLines`). */
  readonly text?: string;
  readonly size: number;
  readonly count: number;
  /** The shortest line's size (with its newline). */
  readonly shortest: number;
  /** The latest `showAt` and the deepest `fold` in the subtree (-1: none). */
  readonly late: number;
  readonly fold: number;
}


/** A root's last tree text and the (clock, scroll, cut) it was made for. */
interface TreeText {
  readonly root: WebNode;
  readonly tick: number;
  readonly scroll: number;
  readonly prune: boolean;
  readonly budget: number;
  readonly axtree: string;
}

function pieceOf(node: WebNode, depth: number): Piece {
  const held = (node as unknown as { [PIECE]?: Piece })[PIECE];
  if (held !== undefined && held.node === node && held.depth === depth) return held;
  const line = lineAt(node, depth);
  // A hidden node prunes its whole subtree, and nothing late or folded below it shows before it does (it
  // is then a new node): its children's pieces are not needed.
  if (node.hidden === true) {
    const hidden: Piece = { node, depth, line, whole: true, text: '', size: 0, count: 0, shortest: 0, late: -1, fold: -1 };
    (node as unknown as { [PIECE]?: Piece })[PIECE] = hidden;
    return hidden;
  }
  let whole = node.showAt === undefined && node.fold === undefined;
  let size = line.length + 1;
  let count = 1;
  let shortest = size;
  let late = node.showAt ?? -1;
  let fold = node.fold ?? -1;
  // Indexed, not `for...of`: V8 did not drop the iterator's result objects in this recursion (about 3% of
  // what a first-visit episode allocated). A child's held piece is read here, not through a call: most
  // children of a new node are old ones.
  const children = node.children;
  for (let i = 0; i < children.length; i++) {
    const child = children[i]!;
    let sub = (child as unknown as { [PIECE]?: Piece })[PIECE];
    if (sub === undefined || sub.node !== child || sub.depth !== depth + 1) sub = pieceOf(child, depth + 1);
    if (sub.late > late) late = sub.late;
    if (sub.fold > fold) fold = sub.fold;
    if (!sub.whole) whole = false;
    else if (whole && sub.count > 0) {
      size += sub.size;
      count += sub.count;
      if (sub.shortest < shortest) shortest = sub.shortest;
    }
  }
  let piece: Piece;
  if (!whole) piece = { node, depth, line, whole: false, text: undefined, size: 0, count: 0, shortest: 0, late, fold };
  else if (count > JOINED_LINES) piece = { node, depth, line, whole: true, text: undefined, size, count, shortest, late, fold };
  else {
    // Joined once into one flat string (concatenation would leave a deep rope that every join walks
    // again); every child holds its own text, since none has more lines than this subtree, and its piece
    // (made or found by the loop above).
    let text = line;
    if (count > 1) {
      const texts = [line];
      for (let i = 0; i < children.length; i++) {
        const sub = (children[i] as unknown as { [PIECE]: Piece })[PIECE];
        if (sub.count > 0) texts.push(sub.text!);
      }
      text = texts.join('\n');
    }
    piece = { node, depth, line, whole: true, text, size, count, shortest, late, fold };
  }
  (node as unknown as { [PIECE]?: Piece })[PIECE] = piece;
  return piece;
}

/**
 * Fixed subtrees of up to this many lines keep their text as one string; larger ones (a page's main
 * content, a long table) hand out their line and their children's texts (`wholeLines`). Joining at every
 * size made each new node copy its whole subtree's text again: a step's new path from the root copied
 * the page's text once per level.
 */
const JOINED_LINES = 24;

/** The pruned text of a fixed subtree without a joined text, into `out`: its line, then its children's texts. */
function wholeLines(piece: Piece, out: string[]): void {
  out.push(piece.line);
  const children = piece.node.children;
  for (let i = 0; i < children.length; i++) {
    const sub = pieceOf(children[i]!, piece.depth + 1);
    if (sub.count === 0) continue;
    if (sub.text !== undefined) out.push(sub.text);
    else wholeLines(sub, out);
  }
}

/** One node as a line: `[bid] role 'name', property=value, ...`. */
export function nodeLine(node: WebNode): string {
  return lineAt(node, 0);
}

/**
 * A node's line indented by `depth`, as `'\t'.repeat(depth) + nodeLine(node)`: built from a kept opening
 * per depth (the tabs and `[`), a kept middle per role (`] role '`) and kept texts for flags, in four
 * concatenations for most nodes where a template per part made about ten strings.
 */
function lineAt(node: WebNode, depth: number): string {
  const name = node.name;
  let out = isPlain(name) ? openingAt(depth) + node.bid + roleOpening(node.role) + name + "'" : openingAt(depth) + node.bid + roleSpace(node.role) + quote(name);
  if (node.icon !== undefined) out += ', icon=' + quote(node.icon);
  if (node.value !== undefined) out += ', value=' + quote(node.value);
  if (node.inputType !== undefined && node.inputType !== 'text') out += `, type=${node.inputType}`;
  if (node.options !== undefined) out += `, options=[${node.options.map(quote).join(', ')}]`;
  if (node.checked !== undefined) out += node.checked ? ', checked=true' : ', checked=false';
  if (node.required === true) out += ', required';
  if (node.disabled === true) out += ', disabled';
  if (node.invalid !== undefined) out += ', invalid=' + quote(node.invalid);
  if (node.expanded !== undefined) out += node.expanded ? ', expanded=true' : ', expanded=false';
  if (node.selected === true) out += ', selected';
  if (node.sort !== undefined) out += node.sort === 'ascending' ? ', sort=ascending' : `, sort=${node.sort}`;
  if (node.href !== undefined) out += ', url=' + quote(node.href);
  if (node.role === 'dialog') out += ', modal';
  return out;
}

const OPENINGS: string[] = [];
/** `depth` tabs and the `[` a line opens with. */
function openingAt(depth: number): string {
  return (OPENINGS[depth] ??= '\t'.repeat(depth) + '[');
}

// By role, in objects without a prototype (a role read as a property name is one look-up of a kept hash).
const ROLE_OPENINGS: Record<string, string | undefined> = Object.create(null);
const ROLE_SPACES: Record<string, string | undefined> = Object.create(null);
/** `] role '`: what comes between a line's bid and its plain name. */
function roleOpening(role: string): string {
  return (ROLE_OPENINGS[role] ??= `] ${role} '`);
}
/** `] role `: the same before a name that is quoted with escapes. */
function roleSpace(role: string): string {
  return (ROLE_SPACES[role] ??= `] ${role} `);
}

/** Whether `quote` leaves `s` as it is between its quotes. */
function isPlain(s: string): boolean {
  // Three native searches, not a RegExp test nor a loop over the characters (`charCodeAt` on a rope, as
  // many names are, is the slow path): most names need nothing.
  return s.indexOf("'") < 0 && s.indexOf('\\') < 0 && s.indexOf('\n') < 0;
}

function quote(s: string): string {
  if (isPlain(s)) return `'${s}'`;
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, ' ')}'`;
}

/** The observation as the JSON tool output the runtime records. */
export function observationJson(obs: WebObservation): JsonObject {
  return { url: obs.url, title: obs.title, focused: obs.focused, last_action_error: obs.last_action_error, axtree: obs.axtree };
}
