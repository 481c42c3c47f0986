/**
 * The typed component tree of a simulated page: plain, frozen nodes with stable `[bid]` ids, an index from
 * bid to path, and persistent (path-copying) updates that cost O(depth).
 */

/** The accessibility roles a page is built from (ARIA names, as a browser's accessibility tree shows them). */
export type Role =
  | 'RootWebArea'
  | 'banner'
  | 'navigation'
  | 'main'
  | 'region'
  | 'form'
  | 'heading'
  | 'text'
  | 'link'
  | 'button'
  | 'textbox'
  | 'searchbox'
  | 'combobox'
  | 'checkbox'
  | 'table'
  | 'row'
  | 'columnheader'
  | 'cell'
  | 'tablist'
  | 'tab'
  | 'tabpanel'
  | 'menu'
  | 'menuitem'
  | 'dialog'
  | 'alert'
  | 'status'
  | 'list'
  | 'listitem';

/** What a component is, beyond its role: the browser half renders each kind to its HTML element. */
export type Component =
  | 'page'
  | 'section'
  | 'form'
  | 'input'
  | 'select'
  | 'checkbox'
  | 'button'
  | 'link'
  | 'table'
  | 'row'
  | 'cell'
  | 'header'
  | 'search'
  | 'tabs'
  | 'tab'
  | 'panel'
  | 'menu'
  | 'menuitem'
  | 'modal'
  | 'toast'
  | 'banner'
  | 'heading'
  | 'text'
  | 'list'
  | 'item';

/**
 * One node of the page. Nodes are immutable: an update copies the path from the root (O(depth)).
 * `key` is the site's own stable name for the node (what the site logic reads); `bid` is the id agents see.
 */
export interface WebNode {
  readonly bid: string;
  readonly key: string;
  readonly component: Component;
  readonly role: Role;
  /** The accessible name (label, text, or `aria-label` for icon-only buttons). */
  readonly name: string;
  readonly value?: string;
  readonly checked?: boolean;
  /** Select options (values; the shown text equals the value). */
  readonly options?: readonly string[];
  readonly disabled?: boolean;
  readonly required?: boolean;
  /** A validation message shown under an input. */
  readonly invalid?: string;
  /** Menus: open or closed. Tabs: the selected one. */
  readonly expanded?: boolean;
  readonly selected?: boolean;
  /** Icon-only buttons: the glyph drawn; `name` then comes from `aria-label` only. */
  readonly icon?: string;
  /** Input type (`text`, `email`, `password`, `number`, `date`, `tel`). */
  readonly inputType?: string;
  readonly placeholder?: string;
  /** Links: the target URL inside the site. */
  readonly href?: string;
  /** The site event a click (or Enter in a form) fires, e.g. `submit:customer` or `sort:price`. */
  readonly on?: string;
  /** Late load: the node exists but is not shown before this tick (valid actions so far). */
  readonly showAt?: number;
  /** Below the fold: shown once the page is scrolled down at least this many screens. */
  readonly fold?: number;
  /** Not rendered at all (`display: none`): a closed menu's items, an inactive tab's panel. */
  readonly hidden?: boolean;
  /** Column headers: the current sort direction. */
  readonly sort?: 'ascending' | 'descending';
  readonly children: readonly WebNode[];
}

/**
 * What the page and the observation keep on a node (never serialised: symbol keys, which JSON, digests
 * and `for...in` skip). Every node is made with all of them, unset (see `makeNode`).
 */
export const NODE_PIECE = Symbol('observation piece');
export const NODE_TEXT = Symbol('tree text');
export const NODE_MAIN = Symbol('main memo');
export const NODE_FROM = Symbol('built from');
export const NODE_PATCHES = Symbol('patched trees');
/** On a spec (site.ts): kept (handed to renders again as the same object), and the node last built from it. */
export const SPEC_KEPT = Symbol('kept spec');
export const SPEC_BUILT = Symbol('built node');

/** A node under construction (every field writable). */
export type NodeDraft = { -readonly [K in keyof WebNode]: WebNode[K] };

/**
 * A node with every field of `WebNode` (unset ones `undefined`) and every memo slot, in one order: all
 * nodes share one shape, so reading a field is a monomorphic load wherever nodes are read (the page, the
 * observation, the bid search). Nodes built by copying their spec (`Object.assign`) came in as many
 * shapes as the sites have specs, and a memo added later gave each of those another. An `undefined`
 * field is what a missing one was to every reader: JSON and the canonical digest drop it.
 */
export function makeNode(
  bid: string,
  key: string,
  component: Component,
  role: Role,
  name: string,
  value: string | undefined,
  checked: boolean | undefined,
  options: readonly string[] | undefined,
  disabled: boolean | undefined,
  required: boolean | undefined,
  invalid: string | undefined,
  expanded: boolean | undefined,
  selected: boolean | undefined,
  icon: string | undefined,
  inputType: string | undefined,
  placeholder: string | undefined,
  href: string | undefined,
  on: string | undefined,
  showAt: number | undefined,
  fold: number | undefined,
  hidden: boolean | undefined,
  sort: 'ascending' | 'descending' | undefined,
  children: readonly WebNode[],
): WebNode {
  const node = {
    bid,
    key,
    component,
    role,
    name,
    value,
    checked,
    options,
    disabled,
    required,
    invalid,
    expanded,
    selected,
    icon,
    inputType,
    placeholder,
    href,
    on,
    showAt,
    fold,
    hidden,
    sort,
    children,
    [NODE_PIECE]: undefined,
    [NODE_TEXT]: undefined,
    [NODE_MAIN]: undefined,
    [NODE_FROM]: undefined,
    [NODE_PATCHES]: undefined,
    // A spec's marks: nodes and specs share one shape (a fresh spec becomes its node in place, page.ts).
    [SPEC_KEPT]: undefined,
    [SPEC_BUILT]: undefined,
  };
  return node;
}

/** A node from a spec-like object's fields (its own bid and children). */
export function nodeOfFields(f: Omit<WebNode, 'bid' | 'children'>, bid: string, children: readonly WebNode[]): WebNode {
  return makeNode(bid, f.key, f.component, f.role, f.name, f.value, f.checked, f.options, f.disabled, f.required, f.invalid, f.expanded, f.selected, f.icon, f.inputType, f.placeholder, f.href, f.on, f.showAt, f.fold, f.hidden, f.sort, children);
}

/** A copy of a node (fields and children, no memos) to set a field on. */
export function copyNode(n: WebNode): NodeDraft {
  return nodeOfFields(n, n.bid, n.children) as NodeDraft;
}

/** Node fields a site sets when it builds a node; `bid` is assigned by the page from `key`. */
export type NodeInit = Omit<WebNode, 'bid' | 'children'>;

/** Bid of the root node of every page. */
export const ROOT_BID = '1';

/** Bid → child-index path from the root. */
export interface BidIndex {
  get(bid: string): readonly number[] | undefined;
  has(bid: string): boolean;
}

/**
 * The bid index of one rendered tree, built on demand: most renders are looked up once or twice (the
 * next action's target, the focused element) before the next render replaces them, and a search that
 * stops at the bid costs far less than indexing every node. Past a few look-ups it indexes the tree.
 */
export class TreeIndex implements BidIndex {
  private map: Map<string, readonly number[]> | undefined;
  private searches = 0;

  /**
   * `hint`: where `hintBid` may be in this tree (where it was in the tree this one was rendered from: the
   * element a click focused is then looked up by the observation in O(depth), not by a search). Checked
   * before it is used.
   */
  constructor(
    private readonly root: WebNode,
    private hintBid?: string,
    private readonly hint?: readonly number[],
  ) {}

  get(bid: string): readonly number[] | undefined {
    // The last bid searched: a step looks up its target, then the observation the same bid (focused).
    if (bid === this.lastBid) return this.lastPath;
    if (bid === this.hintBid) {
      this.hintBid = undefined;
      if (holdsAt(this.root, this.hint!, bid)) {
        this.lastBid = bid;
        this.lastPath = this.hint;
        return this.hint;
      }
    }
    if (this.map === undefined && ++this.searches <= TreeIndex.SEARCHES) {
      const path = pathOf(this.root, bid);
      this.lastBid = bid;
      this.lastPath = path;
      return path;
    }
    return (this.map ??= indexTree(this.root)).get(bid);
  }

  private lastBid: string | undefined = undefined;
  private lastPath: readonly number[] | undefined = undefined;

  /** The path of `bid` if it is the bid this index last answered (no search). */
  lastPathOf(bid: string): readonly number[] | undefined {
    return bid === this.lastBid ? this.lastPath : undefined;
  }

  has(bid: string): boolean {
    return this.get(bid) !== undefined;
  }

  /**
   * Look-ups answered by searching before the whole tree is indexed. A search allocates one path; the
   * index a path per node and a map entry (a twentieth of what a first-visit episode allocated when a tree
   * was indexed after 4 look-ups: a form filled in over a few steps keeps its tree's index).
   */
  static readonly SEARCHES = 16;
}

/** Whether the node at `path` (if there is one) has `bid`. */
function holdsAt(root: WebNode, path: readonly number[], bid: string): boolean {
  let node = root;
  for (let i = 0; i < path.length; i++) {
    const next = node.children[path[i]!];
    if (next === undefined) return false;
    node = next;
  }
  return node.bid === bid;
}

/** The path to the first node (depth first) with `bid`, or undefined. */
function pathOf(root: WebNode, bid: string): number[] | undefined {
  if (root.bid === bid) return [];
  // Iterative, in document order: `nodes[d]` is the node at depth d on the way, `path[d]` the index of
  // the child of `nodes[d]` being visited.
  const nodes: WebNode[] = [root];
  const path: number[] = [0];
  let depth = 0;
  for (;;) {
    const children = nodes[depth]!.children;
    const i = path[depth]!;
    if (i >= children.length) {
      if (depth === 0) return undefined;
      depth--;
      path[depth]!++;
      continue;
    }
    const child = children[i]!;
    if (child.bid === bid) {
      path.length = depth + 1;
      return path;
    }
    if (child.children.length > 0) {
      depth++;
      nodes[depth] = child;
      path[depth] = 0;
    } else path[depth] = i + 1;
  }
}

/** Indexes a tree by bid (duplicate bids are a site bug and throw). */
export function indexTree(root: WebNode): Map<string, readonly number[]> {
  const index = new Map<string, readonly number[]>();
  const walk = (node: WebNode, path: readonly number[]): void => {
    const size = index.size;
    index.set(node.bid, path);
    if (index.size === size) throw new Error(`duplicate bid ${node.bid} (key ${node.key})`);
    const children = node.children;
    for (let i = 0; i < children.length; i++) {
      const sub = path.slice();
      sub.push(i);
      walk(children[i]!, sub);
    }
  };
  walk(root, []);
  return index;
}

/** The node at a path, with its ancestors (root first). */
export function nodeAt(root: WebNode, path: readonly number[]): { node: WebNode; ancestors: WebNode[] } {
  const ancestors: WebNode[] = [];
  let node = root;
  for (const i of path) {
    ancestors.push(node);
    node = node.children[i]!;
  }
  return { node, ancestors };
}

/**
 * A new tree with the node at `path` replaced by `patch(node, arg)`: copies only the path (O(depth)).
 * `arg` is handed to `patch`, so a module function can serve where a closure would be made per call.
 */
export function updateAt<A = undefined>(root: WebNode, path: readonly number[], patch: (node: WebNode, arg: A) => WebNode, arg?: A, depth = 0): WebNode {
  if (depth === path.length) return patch(root, arg as A);
  const i = path[depth]!;
  const children = root.children.slice();
  children[i] = updateAt(root.children[i]!, path, patch, arg, depth + 1);
  const copy = copyNode(root);
  copy.children = children;
  return copy;
}

/** Depth-first search for the first node matching `test`. */
export function findNode(root: WebNode, test: (node: WebNode) => boolean): WebNode | undefined {
  if (test(root)) return root;
  for (const child of root.children) {
    const hit = findNode(child, test);
    if (hit !== undefined) return hit;
  }
  return undefined;
}

/** Every node matching `test`, in document order. */
export function findAll(root: WebNode, test: (node: WebNode) => boolean, out: WebNode[] = []): WebNode[] {
  if (test(root)) out.push(root);
  for (const child of root.children) findAll(child, test, out);
  return out;
}

/** Whether a node can be edited or activated: roles an agent interacts with. */
export function isInteractive(node: WebNode): boolean {
  switch (node.role) {
    case 'link':
    case 'button':
    case 'textbox':
    case 'searchbox':
    case 'combobox':
    case 'checkbox':
    case 'tab':
    case 'menuitem':
    case 'columnheader':
      return node.on !== undefined || node.role !== 'columnheader';
    default:
      return false;
  }
}
