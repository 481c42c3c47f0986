/**
 * The simulated page: a persistent page state (store, route, view, rendered tree, history, clock) and the
 * pure `step(page, action) -> { page, error? }` that runs the action set on it. Invalid actions (unknown
 * bid, hidden, covered by a modal, disabled, wrong kind of element) return the same page and an error.
 */
import { arrange, configMemo, has, labelFor, type PageConfig } from './perturbation.js';
import { button, EMPTY_VIEW, form, input, isKept, keep, link, makeSpec, menu, modal, SPEC_BUILT as BUILT, text, toast, type Effect, type HandleContext, type Site, type Spec, type View } from './site.js';
import { BidMap, type BidAssigner, type BidMark } from './bid-registry.js';
import { hashStore, type WebStore } from './store.js';
import { copyNode, makeNode, type NodeDraft, NODE_FROM as FROM, NODE_MAIN as MAIN, NODE_PATCHES as PATCHES, nodeAt, nodeOfFields, ROOT_BID, TreeIndex, updateAt, type BidIndex, type WebNode } from './tree.js';

/** The action set (BrowserGym's high-level actions). */
export type WebAction =
  | { type: 'click'; bid: string }
  | { type: 'fill'; bid: string; text: string }
  | { type: 'select_option'; bid: string; value: string }
  | { type: 'check'; bid: string }
  | { type: 'uncheck'; bid: string }
  | { type: 'press'; bid: string; key: string }
  | { type: 'scroll'; direction: 'up' | 'down' }
  | { type: 'goto'; url: string }
  | { type: 'go_back' }
  | { type: 'noop' }
  | { type: 'send_msg_to_user'; text: string }
  | { type: 'finish' };

export type WebActionType = WebAction['type'];

/** Why an action was rejected (public: codes are never renamed, only added to). */
export const WEB_ERROR_CODES = [
  'UNKNOWN_BID',
  'HIDDEN',
  'COVERED',
  'DISABLED',
  'NOT_EDITABLE',
  'NOT_CHECKABLE',
  'NOT_SELECT',
  'NO_SUCH_OPTION',
  'BAD_KEY',
  'BAD_DIRECTION',
  'OFF_SITE',
  'NO_SUCH_PAGE',
  'NO_HISTORY',
  'FINISHED',
] as const;
export type WebErrorCode = (typeof WEB_ERROR_CODES)[number];

/** A rejected action: nothing changed. */
export interface WebError {
  code: WebErrorCode;
  message: string;
  bid?: string;
}

/** Keys `press` accepts. */
export const KEYS: readonly string[] = ['Enter', 'Escape', 'Tab', 'Space', 'ArrowDown', 'ArrowUp', 'Backspace'];

/** How far a page scrolls (screens). */
export const MAX_SCROLL = 8;

/** The persistent state of one browsing session. Never mutated: `step` returns a new one sharing what did not change. */
export interface PageState {
  readonly site: Site;
  readonly config: PageConfig;
  readonly store: WebStore;
  /** Path and query, e.g. `/orders?status=pending`. */
  readonly url: string;
  readonly title: string;
  readonly view: View;
  readonly tree: WebNode;
  readonly index: BidIndex;
  /** Node key → bid, for every node ever shown this session (bids are stable across renders and pages). */
  readonly bids: BidMap;
  readonly nextBid: number;
  /** URLs to go back to (most recent last). */
  readonly history: readonly string[];
  /** Valid actions so far (late load, newsletter pop-up and session timeout count these). */
  readonly tick: number;
  readonly scroll: number;
  readonly focused?: string;
  /** Layers dismissed this session (`cookie`, `newsletter`). */
  readonly dismissed: readonly string[];
  /** The tick the session was last signed in at (session-timeout). */
  readonly since: number;
  /** Messages sent to the user. */
  readonly messages: readonly string[];
  readonly finished: boolean;
  /** Process notes, in order (`dismissed:cookie`, `validation-error:customer`, `session-expired`, ...). */
  readonly notes: readonly string[];
}

type Draft = { -readonly [K in keyof PageState]: PageState[K] };

/**
 * The next page state: `page` with `patch` applied. Every state is one object literal with every field,
 * in one order: spreading states (`{ ...page, tick }`) fell off V8's fast clone path once states of a few
 * shapes met at a spread, and cost most of a replayed step.
 */
function edit(page: PageState, patch: Partial<PageState>): PageState {
  return Object.assign(draft(page), patch);
}

function draft(page: PageState): Draft {
  return {
    site: page.site,
    config: page.config,
    store: page.store,
    url: page.url,
    title: page.title,
    view: page.view,
    tree: page.tree,
    index: page.index,
    bids: page.bids,
    nextBid: page.nextBid,
    history: page.history,
    tick: page.tick,
    scroll: page.scroll,
    focused: page.focused,
    dismissed: page.dismissed,
    since: page.since,
    messages: page.messages,
    finished: page.finished,
    notes: page.notes,
    // Every field, optional ones included: a field added to PageState and left out here does not compile.
  } satisfies Record<keyof PageState, unknown>;
}

/** What `step` returns. */
export interface PageStep {
  page: PageState;
  error?: WebError;
}

/**
 * Opens a site at `url` on a store: the initial page of a task.
 * @example
 * const page = openPage(shopSite, plainConfig(), store, '/orders');
 */
export function openPage(site: Site, config: PageConfig, store: WebStore, url: string = site.home): PageState {
  const u = undefined;
  const tree = makeNode(ROOT_BID, 'root', 'page', 'RootWebArea', '', u, u, u, u, u, u, u, u, u, u, u, u, u, u, u, u, u, []);
  const blank: PageState = {
    site,
    config,
    store,
    url,
    title: '',
    view: EMPTY_VIEW,
    tree,
    index: new TreeIndex(tree),
    bids: BidMap.root('root'),
    nextBid: 2,
    history: [],
    tick: 0,
    scroll: 0,
    focused: undefined,
    dismissed: [],
    since: 0,
    messages: [],
    finished: false,
    notes: [],
  };
  return rerender(blank);
}

/**
 * Runs one action. Pure: the same page and action always give the same result, and a rejected action
 * returns the very same page object with an error.
 */
export function step(page: PageState, action: WebAction): PageStep {
  if (page.finished) return reject(page, 'FINISHED', 'the session has finished; no more actions');
  switch (action.type) {
    case 'noop':
      return ok(tick(page));
    case 'send_msg_to_user':
      // Talking to the user is not a page action: the page's clock does not move (as in the runtime's `message`).
      return ok(edit(page, { messages: [...page.messages, String(action.text)] }));
    case 'finish':
      return ok(edit(page, { finished: true }));
    case 'scroll': {
      if (action.direction !== 'up' && action.direction !== 'down') return reject(page, 'BAD_DIRECTION', `scroll direction must be "up" or "down", got "${String(action.direction)}"`);
      const expired = expire(page);
      if (expired !== undefined) return ok(expired);
      const scroll = action.direction === 'down' ? Math.min(MAX_SCROLL, page.scroll + 1) : Math.max(0, page.scroll - 1);
      return ok(tick(scroll === page.scroll ? page : rerender(edit(page, { scroll }))));
    }
    case 'goto': {
      const url = String(action.url);
      if (!url.startsWith('/') || url.startsWith('//')) return reject(page, 'OFF_SITE', `goto only opens pages of this site: give a path such as "${page.site.home}", not "${url}"`);
      if (!knownRoute(page, url)) return reject(page, 'NO_SUCH_PAGE', `no page at ${url}`);
      const expired = expire(page);
      if (expired !== undefined) return ok(expired);
      return ok(tick(navigate(page, url)));
    }
    case 'go_back': {
      if (page.history.length === 0) return reject(page, 'NO_HISTORY', 'there is no previous page to go back to');
      const expired = expire(page);
      if (expired !== undefined) return ok(expired);
      const url = page.history[page.history.length - 1]!;
      return ok(tick(rerender(edit(page, { url, history: page.history.slice(0, -1), view: EMPTY_VIEW, scroll: 0, focused: undefined }))));
    }
    default:
      return elementAction(page, action);
  }
}

// ---- element actions ----

type ElementAction = Extract<WebAction, { bid: string }>;

function elementAction(page: PageState, action: ElementAction): PageStep {
  const target = locate(page, String(action.bid));
  if ('code' in target) return { page, error: target };
  const { node, path } = target;
  if (node.disabled === true) return reject(page, 'DISABLED', `element [${node.bid}] ${describe(node)} is disabled`, node.bid);
  switch (action.type) {
    case 'fill': {
      if (node.role !== 'textbox' && node.role !== 'searchbox') return reject(page, 'NOT_EDITABLE', `element [${node.bid}] ${describe(node)} is not a text field`, node.bid);
      const expired = expire(page);
      if (expired !== undefined) return ok(expired);
      const value = String(action.text);
      const view = withEntry(page.view, 'values', node.key, value);
      return ok(tick(typed(page, view, patchTree(page, path, 'value', value), node.bid)));
    }
    case 'select_option': {
      if (node.role !== 'combobox') return reject(page, 'NOT_SELECT', `element [${node.bid}] ${describe(node)} is not a select`, node.bid);
      const value = String(action.value);
      if (!(node.options ?? []).includes(value)) return reject(page, 'NO_SUCH_OPTION', `select [${node.bid}] has no option "${value}"; options: ${(node.options ?? []).join(', ')}`, node.bid);
      const expired = expire(page);
      if (expired !== undefined) return ok(expired);
      const view = withEntry(page.view, 'values', node.key, value);
      return ok(tick(typed(page, view, patchTree(page, path, 'value', value), node.bid)));
    }
    case 'check':
    case 'uncheck': {
      if (node.role !== 'checkbox') return reject(page, 'NOT_CHECKABLE', `element [${node.bid}] ${describe(node)} is not a checkbox`, node.bid);
      const expired = expire(page);
      if (expired !== undefined) return ok(expired);
      return ok(tick(setChecked(page, node, path, action.type === 'check')));
    }
    case 'press': {
      const key = String(action.key);
      if (!KEYS.includes(key)) return reject(page, 'BAD_KEY', `press accepts ${KEYS.join(', ')}; got "${key}"`, node.bid);
      const expired = expire(page);
      if (expired !== undefined) return ok(expired);
      const focused = focusOn(page, node.bid);
      if (key === 'Escape') return ok(tick(escape(focused)));
      if (key === 'Enter') {
        if (node.role === 'textbox' || node.role === 'searchbox') {
          const event = node.on ?? formOf(page, path)?.on;
          return ok(tick(event === undefined ? focused : fire(focused, event)));
        }
        return ok(tick(activate(focused, node, path)));
      }
      if (key === 'Space' && node.role === 'checkbox') return ok(tick(setChecked(focused, node, path, node.checked !== true)));
      return ok(tick(focused));
    }
    case 'click': {
      const expired = expire(page);
      if (expired !== undefined) return ok(expired);
      return ok(tick(activate(focusOn(page, node.bid), node, path)));
    }
  }
}

/** Finds a bid the agent may act on now, or says why not. */
export function locate(page: PageState, bid: string): { node: WebNode; path: readonly number[] } | WebError {
  const path = page.index.get(bid);
  if (path === undefined) return { code: 'UNKNOWN_BID', message: `no element [${bid}] on this page (${page.url})`, bid };
  // The root, then each node down the path to the target: the first one not shown hides it.
  let hiding: WebNode | undefined = isShown(page, page.tree) ? undefined : page.tree;
  let node = page.tree;
  for (let i = 0; i < path.length; i++) {
    node = node.children[path[i]!]!;
    if (hiding === undefined && !isShown(page, node)) hiding = node;
  }
  if (hiding !== undefined) {
    const n = hiding;
    const why = n.hidden === true ? 'hidden' : n.showAt !== undefined && n.showAt > page.tick ? 'not loaded yet' : 'below the fold (scroll down)';
    return { code: 'HIDDEN', message: `element [${bid}] ${describe(node)} is not visible: ${why}`, bid };
  }
  const cover = topModal(page);
  if (cover !== undefined && !startsWith(path, cover.path)) {
    return { code: 'COVERED', message: `element [${bid}] ${describe(node)} is covered by the dialog [${cover.node.bid}] '${cover.node.name}'; close it first`, bid };
  }
  return { node, path };
}

/** Whether a node is shown now (its own flags only; ancestors are checked by callers that walk). */
export function isShown(page: Pick<PageState, 'tick' | 'scroll'>, node: WebNode): boolean {
  if (node.hidden === true) return false;
  if (node.showAt !== undefined && node.showAt > page.tick) return false;
  if (node.fold !== undefined && node.fold > page.scroll) return false;
  return true;
}

/** The open dialog on top, if any (it covers the rest of the page). */
export function topModal(page: PageState): { node: WebNode; path: readonly number[] } | undefined {
  const layers = page.tree.children;
  for (let i = layers.length - 1; i >= 0; i--) {
    const n = layers[i]!;
    if (n.role === 'dialog' && isShown(page, n)) return { node: n, path: [i] };
  }
  return undefined;
}

function startsWith(path: readonly number[], prefix: readonly number[]): boolean {
  if (path.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (path[i] !== prefix[i]) return false;
  return true;
}

/** A short description of a node for messages: `button 'Save'`. */
export function describe(node: WebNode): string {
  return `${node.role} '${node.name}'`;
}

function activate(page: PageState, node: WebNode, path: readonly number[]): PageState {
  if (node.role === 'checkbox') return setChecked(page, node, path, node.checked !== true);
  if (node.href !== undefined) return navigate(page, node.href);
  if (node.on !== undefined) return fire(page, node.on);
  return page;
}

function setChecked(page: PageState, node: WebNode, path: readonly number[], checked: boolean): PageState {
  const view = withEntry(page.view, 'checks', node.key, checked);
  return typed(page, view, patchTree(page, path, 'checked', checked), node.bid);
}

/**
 * The tree with one field of the node at `path` set (O(depth) path copy). The same old tree and change
 * give the very same new tree, so episodes of one task typing the same value share it and its
 * observation text: the last few changes are kept on the old root (under a symbol that counts only on
 * the root it names, since a spread copy carries it).
 */
function patchTree(page: PageState, path: readonly number[], field: 'value' | 'checked', to: string | boolean): WebNode {
  const root = page.tree;
  // A module function and its argument, not a closure made per change (tsx, which runs the bench, names
  // every closure it makes with a `defineProperty`: about 1% of a level-5 first-visit episode).
  const patch = field === 'value' ? withValue : withChecked;
  // As with renders: kept only where sessions have branched.
  if (!page.bids.isShared) return updateAt(root, path, patch, to);
  let memo = (root as unknown as Patched)[PATCHES];
  if (memo === undefined || memo.root !== root) (root as unknown as Patched)[PATCHES] = memo = { root, trees: new Map() };
  const key = `${field}\u0000${String(to)}\u0000${path.join('.')}`;
  let tree = memo.trees.get(key);
  if (tree === undefined) {
    tree = updateAt(root, path, patch, to);
    if (memo.trees.size >= PATCHES_KEPT) memo.trees.delete(memo.trees.keys().next().value!);
    memo.trees.set(key, tree);
  }
  return tree;
}

/**
 * The view with one typed value or tick set: `{ ...view, [part]: { ...view[part], [key]: to } }`, by
 * Object.assign (the spreads, one with a computed key, took a slow path; the result is the same).
 */
function withEntry<P extends 'values' | 'checks'>(view: View, part: P, key: string, to: View[P][string]): View {
  const entries = Object.assign({}, view[part]) as Record<string, unknown>;
  entries[key] = to;
  const next = Object.assign({}, view) as unknown as Record<string, unknown>;
  next[part] = entries;
  return next as unknown as View;
}

/** A copy of `node` with its value (`withValue`) or its tick (`withChecked`) set. */
function withValue(node: WebNode, to: string | boolean): WebNode {
  const copy = copyNode(node);
  copy.value = to as string;
  return copy;
}

function withChecked(node: WebNode, to: string | boolean): WebNode {
  const copy = copyNode(node);
  copy.checked = to as boolean;
  return copy;
}

const PATCHES_KEPT = 4;
interface Patched {
  [PATCHES]?: { readonly root: WebNode; readonly trees: Map<string, WebNode> };
}

function escape(page: PageState): PageState {
  if (page.view.menu !== undefined) return rerender(edit(page, { view: { ...page.view, menu: undefined } }));
  const cover = topModal(page);
  if (cover !== undefined && cover.node.key === 'layer.newsletter') return dismiss(page, 'newsletter');
  return page;
}

function formOf(page: PageState, path: readonly number[]): WebNode | undefined {
  const { ancestors } = nodeAt(page.tree, path);
  for (let i = ancestors.length - 1; i >= 0; i--) if (ancestors[i]!.role === 'form') return ancestors[i];
  return undefined;
}

/**
 * `page` focused on `bid`; `typed`: with a field's new value or tick too. Fields set on a draft (the
 * steps every episode takes most), not `edit` with a patch object and `Object.assign`.
 */
function focusOn(page: PageState, bid: string): PageState {
  const next = draft(page);
  next.focused = bid;
  return next;
}

function typed(page: PageState, view: View, tree: WebNode, bid: string): PageState {
  const next = draft(page);
  next.view = view;
  next.tree = tree;
  next.focused = bid;
  return next;
}

function tick(page: PageState): PageState {
  const next = draft(page);
  next.tick = page.tick + 1;
  return next;
}

const ok = (page: PageState): PageStep => ({ page });
const reject = (page: PageState, code: WebErrorCode, message: string, bid?: string): PageStep => ({ page, error: bid === undefined ? { code, message } : { code, message, bid } });

// ---- navigation, session, events ----

function knownRoute(page: PageState, url: string): boolean {
  const path = url.split('?')[0]!;
  return path === '/login' || page.site.hasRoute(path);
}

function navigate(page: PageState, url: string, view: View = EMPTY_VIEW): PageState {
  const next = draft(page);
  next.url = url;
  next.history = [...page.history, page.url];
  next.view = view;
  next.scroll = 0;
  next.focused = undefined;
  return rerender(next);
}

/** Session timeout: the session ran out, so this action lands on the login page instead of running. */
function expire(page: PageState): PageState | undefined {
  const limit = page.config.timeoutTicks;
  // One timeout per session: after signing in again the session lasts (a site would renew it).
  if (!has(page.config, 'session-timeout') || limit <= 0 || page.url.startsWith('/login') || page.notes.includes('session-expired')) return undefined;
  if (page.tick - page.since < limit) return undefined;
  const next = encodeURIComponent(page.url);
  return tick(rerender(edit(page, { url: `/login?next=${next}`, history: [...page.history, page.url], view: EMPTY_VIEW, scroll: 0, focused: undefined, notes: [...page.notes, 'session-expired'] })));
}

function dismiss(page: PageState, layer: string): PageState {
  if (page.dismissed.includes(layer)) return page;
  return rerender(edit(page, { dismissed: [...page.dismissed, layer], notes: [...page.notes, `dismissed:${layer}`] }));
}

/** Runs an event: the page's own (menus, tabs, sorting, paging, search, dialogs, login) or the site's. */
export function fire(page: PageState, event: string): PageState {
  const colon = event.indexOf(':');
  const verb = colon < 0 ? event : event.slice(0, colon);
  const arg = colon < 0 ? '' : event.slice(colon + 1);
  const view = page.view;
  switch (verb) {
    case 'menu':
      return rerender(edit(page, { view: { ...view, menu: view.menu === arg ? undefined : arg } }));
    case 'tab':
      return rerender(edit(page, { view: { ...view, tab: arg } }));
    case 'sort': {
      const dir = view.sort?.key === arg && view.sort.dir === 'ascending' ? 'descending' : 'ascending';
      return rerender(edit(page, { view: { ...view, sort: { key: arg, dir }, pageNo: 1 } }));
    }
    case 'page':
      return rerender(edit(page, { view: { ...view, pageNo: Math.max(1, Number(arg) || 1) } }));
    case 'search':
      return rerender(edit(page, { view: { ...view, query: (view.values[arg] ?? '').trim(), pageNo: 1 } }));
    case 'dismiss':
      return dismiss(page, arg);
    case 'confirm': {
      const pending = view.confirm;
      const cleared = edit(page, { view: { ...view, confirm: undefined } });
      if (arg !== 'yes' || pending === undefined) return rerender(edit(cleared, { notes: [...page.notes, 'confirm-cancelled'] }));
      return run(cleared, pending);
    }
    case 'login':
      return login(page);
  }
  if (has(page.config, 'confirm-dialog') && page.site.confirmEvents.has(verb)) return rerender(edit(page, { view: { ...view, confirm: event, menu: undefined } }));
  return run(page, event);
}

function run(page: PageState, event: string): PageState {
  const effect: Effect = page.site.handle(event, new PageContext(page));
  let next: PageState = effect.store !== undefined ? edit(page, { store: effect.store }) : page;
  if (effect.notes !== undefined && effect.notes.length > 0) next = edit(next, { notes: [...next.notes, ...effect.notes] });
  const view: View = { ...(effect.go !== undefined ? EMPTY_VIEW : next.view), ...(effect.view ?? {}), menu: undefined, ...(effect.toast !== undefined ? { toast: effect.toast } : {}) };
  if (effect.go !== undefined) return navigate(next, effect.go, view);
  return rerender(edit(next, { view }));
}

function login(page: PageState): PageState {
  const { user, password } = page.config.credentials;
  const given = { user: page.view.values['login.user'] ?? '', password: page.view.values['login.password'] ?? '' };
  if (given.user !== user || given.password !== password) {
    return rerender(edit(page, { view: { ...page.view, errors: { 'login.password': 'Wrong user name or password' } }, notes: [...page.notes, 'validation-error:login'] }));
  }
  const next = safeDecode(/[?&]next=([^&]*)/.exec(page.url)?.[1] ?? '') || page.site.home;
  return edit(navigate(page, next), { since: page.tick + 1, notes: [...page.notes, 'signed-in'] });
}

// ---- rendering ----

/**
 * What a route's renderer and an event's handler see of a page: one object with its methods on the class
 * (a render or an event made a dozen closures and a spread copy), the url parsed when a site first asks.
 */
class PageContext implements HandleContext {
  readonly path: string;
  readonly store: WebStore;
  readonly view: View;
  readonly config: PageConfig;
  readonly tick: number;
  /** Whether the site read `scroll` (the render depends on it only then). */
  readScroll = false;
  private parsedParts: readonly string[] | undefined;
  private parsedParams: Readonly<Record<string, string>> | undefined;

  constructor(private readonly page: PageState) {
    const q = page.url.indexOf('?');
    this.path = q < 0 ? page.url : page.url.slice(0, q);
    this.store = page.store;
    this.view = page.view;
    this.config = page.config;
    this.tick = page.tick;
  }

  get scroll(): number {
    this.readScroll = true;
    return this.page.scroll;
  }

  get parts(): readonly string[] {
    if (this.parsedParts === undefined) {
      // The path's non-empty `/`-separated parts, cut with `indexOf` (no array of every part made first).
      const parts: string[] = [];
      const path = this.path;
      let from = 0;
      while (from <= path.length) {
        let to = path.indexOf('/', from);
        if (to < 0) to = path.length;
        if (to > from) parts.push(path.slice(from, to));
        from = to + 1;
      }
      this.parsedParts = parts;
    }
    return this.parsedParts;
  }

  get params(): Readonly<Record<string, string>> {
    return (this.parsedParams ??= queryParams(this.page.url));
  }

  label(plain: string): string {
    return labelFor(this.config, plain);
  }

  arrange<T>(label: string, items: readonly T[]): T[] {
    return arrange(this.config, label, items);
  }

  has(p: PageConfig['perturbations'][number]): boolean {
    return has(this.config, p);
  }

  value(key: string): string {
    return this.view.values[key] ?? nodeOf(this.page, key)?.value ?? '';
  }

  checked(key: string): boolean {
    return this.view.checks[key] ?? nodeOf(this.page, key)?.checked ?? false;
  }
}

/** The query parameters of a url (`+` as a space, malformed escapes kept as they are). */
function queryParams(url: string): Record<string, string> {
  const params: Record<string, string> = {};
  const q = url.indexOf('?');
  if (q < 0) return params;
  // As `url.split('?')[1]`: the query ends at a second `?`.
  const end = url.indexOf('?', q + 1);
  const query = end < 0 ? url.slice(q + 1) : url.slice(q + 1, end);
  for (const pair of query.split('&')) {
    const eq = pair.indexOf('=');
    if (eq > 0) params[safeDecode(pair.slice(0, eq))] = safeDecode(pair.slice(eq + 1).replace(/\+/g, ' '));
  }
  return params;
}

/** decodeURIComponent that keeps malformed escapes as they are (a typed URL must not throw). */
function safeDecode(s: string): string {
  // Nothing escaped: what decoding would give (and no try block entered).
  if (!s.includes('%')) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** A node of the page by key, through the bid registry and the tree's index. */
function nodeOf(page: PageState, key: string): WebNode | undefined {
  const bid = page.bids.get(key);
  const path = bid === undefined ? undefined : page.index.get(bid);
  return path === undefined ? undefined : nodeAt(page.tree, path).node;
}

/** The login page every site shares (session timeout). */
function loginMain(view: View): { title: string; main: Spec[] } {
  return {
    title: 'Sign in',
    main: [
      form('login', 'Sign in', 'login', [
        text('login.why', 'Your session has expired. Please sign in again.'),
        input(view, 'login.user', 'User name'),
        input(view, 'login.password', 'Password', { inputType: 'password' }),
        button('login.go', 'Sign in', 'login'),
      ]),
    ],
  };
}

/**
 * Renders the page for its url and view: site content plus navigation and layers, bids from the registry.
 * A render is a pure function of what `RenderCache` names, so sessions that share a bid log (episodes of one
 * task) reuse each other's renders of the same page state: the very tree, its index and its observation text.
 * Renders are kept only on logs that sessions have branched on.
 */
function rerender(page: PageState): PageState {
  // A session nobody branched from (an agent exploring on its own) never meets another's render: no keys, nothing kept.
  if (!page.bids.isShared) return render(page);
  const scope = page.bids.scope;
  let cache = renders.get(scope);
  if (cache === undefined) renders.set(scope, (cache = { size: 0, byUrl: new Map() }));
  // Everything a render reads (see `RenderCache`), one level a part: the url and the store's hash are the
  // very strings of the session, whose hashes V8 keeps, so only the view's text is hashed per look-up.
  let byStore = cache.byUrl.get(page.url);
  if (byStore === undefined) cache.byUrl.set(page.url, (byStore = new Map()));
  const storeHash = hashStore(page.store);
  let byView = byStore.get(storeHash);
  if (byView === undefined) byStore.set(storeHash, (byView = new Map()));
  const view = page.view === EMPTY_VIEW ? EMPTY_VIEW_TEXT : JSON.stringify(page.view);
  let byRest = byView.get(view);
  if (byRest === undefined) byView.set(view, (byRest = new Map()));
  const rest = `${page.scroll}\n${page.dismissed.join(',')}\n${page.bids.next}`;
  const hit = byRest.get(rest);
  // Site and config come with the log (a session keeps both); checked all the same, it costs nothing.
  if (hit !== undefined && hit.site === page.site && hit.config === page.config) {
    const next = draft(page);
    next.title = hit.title;
    next.tree = hit.tree;
    next.index = hit.index;
    next.bids = hit.bids;
    next.nextBid = hit.bids.next;
    return next;
  }
  const next = render(page);
  // Past its bound a log's renders are dropped all at once (what is kept changes no result, only speed).
  if (cache.size >= RENDERS_KEPT) {
    cache.byUrl = new Map([[page.url, (byStore = new Map([[storeHash, (byView = new Map([[view, (byRest = new Map())]]))]]))]]);
    cache.size = 0;
  }
  if (!byRest.has(rest)) cache.size++;
  byRest.set(rest, { site: page.site, config: page.config, title: next.title, tree: next.tree, index: next.index, bids: next.bids });
  return next;
}

/**
 * The renders of one bid log by what a render reads: the url, then the store's content (its hash), then
 * the view (as JSON), then the scroll, the dismissed layers and the registry's length (with the log, the
 * bids it gives). Site and config are fixed per bid log.
 */
interface RenderCache {
  size: number;
  byUrl: Map<string, Map<string, Map<string, Map<string, { site: Site; config: PageConfig; title: string; tree: WebNode; index: BidIndex; bids: BidMap }>>>>;
}

/** Renders kept per bid log. */
const RENDERS_KEPT = 256;
const renders = new WeakMap<object, RenderCache>();
const EMPTY_VIEW_TEXT = JSON.stringify(EMPTY_VIEW);

function render(page: PageState): PageState {
  const ctx = new PageContext(page);
  const isLogin = ctx.path === '/login';
  const cfg = page.config;
  // The main content is a function of the url, view, store and, when the site's render read it (an
  // infinite list's table), the scroll: a render that changes none of them (a dialog dismissed, a scroll
  // of a page without an infinite list on it, the navigation menu) hands the same spec again.
  const last = (page.tree as Memoised)[MAIN];
  let title: string;
  let mainSpec: Spec;
  let reusedMain: WebNode | undefined;
  let readScroll: boolean;
  if (last !== undefined && last.node === page.tree.children[1] && last.url === page.url && sameSiteView(last.view, page.view) && last.store === page.store && (last.scroll === page.scroll || !last.readScroll)) {
    title = last.title;
    mainSpec = last.spec;
    reusedMain = last.node;
    readScroll = last.readScroll;
  } else {
    const content = isLogin ? loginMain(page.view) : page.site.render(ctx);
    title = content.title;
    mainSpec = makeSpec('main', 'section', 'main', '', content.main);
    readScroll = ctx.readScroll;
  }
  const fullTitle = `${title} · ${page.site.title}`;
  // A/B variant B hides the top navigation behind a menu button.
  const menuOpen = has(cfg, 'ab-variant') && page.view.menu === 'nav.menu';
  const bannerKey = bannerKeyOf(page.site.name, isLogin, menuOpen);
  const banner = stableSpec(cfg, bannerKey) ?? keepStable(cfg, bannerKey, bannerSpec(page, ctx, isLogin));
  const layers: Spec[] = [banner, mainSpec];
  if (page.view.toast !== undefined) layers.push(toast('layer.toast', page.view.toast));
  if (has(cfg, 'cookie-banner') && !page.dismissed.includes('cookie')) layers.push(stableSpec(cfg, 'cookie') ?? keepStable(cfg, 'cookie', cookieDialog()));
  if (has(cfg, 'newsletter') && !page.dismissed.includes('newsletter')) layers.push(stableSpec(cfg, 'newsletter') ?? keepStable(cfg, 'newsletter', newsletterDialog(cfg)));
  if (page.view.confirm !== undefined) layers.push(stableSpec(cfg, 'confirm') ?? keepStable(cfg, 'confirm', confirmDialog()));
  const root = makeSpec('root', 'page', 'RootWebArea', fullTitle, layers);
  const assigner = page.bids.assigner();
  const tree = buildNode({ assigner, mainSpec, reusedMain }, root, page.tree.key === root.key ? page.tree : undefined);
  (tree as unknown as Memoised)[MAIN] = { url: page.url, view: page.view, store: page.store, scroll: page.scroll, readScroll, title, spec: mainSpec, node: tree.children[1]! };
  const bids = assigner.done();
  // Fields set on a draft, not `edit` with a patch (no patch object, no `Object.assign`): every render ends here.
  const next = draft(page);
  next.title = fullTitle;
  next.bids = bids;
  next.nextBid = bids.next;
  if (tree === page.tree) return next;
  next.tree = tree;
  // The focused element (the one a click just found) is most often where it was: the new tree's index
  // checks that place first when the observation asks for it.
  const focused = page.focused;
  const hint = focused !== undefined && page.index instanceof TreeIndex ? page.index.lastPathOf(focused) : undefined;
  next.index = hint === undefined ? new TreeIndex(tree) : new TreeIndex(tree, focused, hint);
  return next;
}

/**
 * Whether two views are the same to a site's render: the same parts, the page's own layers (`confirm`,
 * `toast`) aside. A confirmation dialog opened over a page then keeps its main content as it was.
 */
function sameSiteView(a: View, b: View): boolean {
  if (a === b) return true;
  for (const part of SITE_VIEW_PARTS) if (a[part] !== b[part]) return false;
  return true;
}

/** Whether a site's render reads each part of a view: a part added to `View` and left out here does not compile. */
const SITE_READS = {
  values: true,
  checks: true,
  errors: true,
  sort: true,
  pageNo: true,
  query: true,
  tab: true,
  menu: true,
  stepNo: true,
  confirm: false,
  toast: false,
} as const satisfies Record<keyof View, boolean>;
const SITE_VIEW_PARTS: ReadonlyArray<keyof View> = (Object.keys(SITE_READS) as Array<keyof View>).filter((part) => SITE_READS[part]);

/** The children of every leaf a render builds: one frozen array (nodes are never changed in place). */
const NO_CHILDREN: readonly WebNode[] = Object.freeze([]);

/** One render's bid assigner and the main content it may hand back as it was. */
interface RenderRun {
  readonly assigner: BidAssigner;
  readonly mainSpec: Spec;
  readonly reusedMain: WebNode | undefined;
}

/**
 * The node of `spec`, given the previous render's node of the same key. Structural sharing: a node whose
 * spec matches that node (fields and children) is that very node, so unchanged subtrees keep their
 * identity and memoised observation text. A module function, not a closure per render (tsx, which runs
 * the bench, names every closure it makes with a `defineProperty`).
 */
function buildNode(run: RenderRun, spec: Spec, old: WebNode | undefined): WebNode {
  // The very spec object the old node was built from: the same node, nothing to compare.
  if (old !== undefined) {
    const from = (old as unknown as Built)[FROM];
    if ((from !== undefined && from.spec === spec && from.node === old) || (spec === run.mainSpec && old === run.reusedMain)) return old;
  }
  // A kept spec built earlier on this bid log, at or before where this render stands: every key below it
  // has the bid it had then, so that node is this one (a page shown again, a table row scrolled back in).
  const kept = isKept(spec);
  if (kept) {
    const held = (spec as unknown as Built)[BUILT];
    if (held !== undefined && run.assigner.holds(held.mark)) return held.node;
  }
  // A node of the previous render with this key already holds the registry's bid for it.
  const bid = old !== undefined ? old.bid : run.assigner.bid(spec.key);
  const specs = spec.children;
  const n = specs === undefined ? 0 : specs.length;
  const before = old === undefined ? undefined : old.children;
  const sameCount = before !== undefined && before.length === n;
  let same = sameCount && sameFields(spec, old!);
  // The new children, made only once one differs from the old node's child at its place: while
  // every child is the old one, the old (immutable) array serves, and a re-render that changes
  // nothing below a node allocates no array for it.
  // Filled in order from index 0, so a plain `[]` stays a packed array (`new Array(n)` would be holey).
  let children: WebNode[] | undefined = sameCount ? undefined : n === 0 ? (NO_CHILDREN as WebNode[]) : [];
  let byKey: Map<string, WebNode> | undefined;
  for (let i = 0; i < n; i++) {
    const child = specs![i]!;
    let prior: WebNode | undefined;
    if (before !== undefined) {
      const at = before[i];
      if (at !== undefined && at.key === child.key) prior = at;
      // Every node of the previous tree has its key in this session's bid registry: a key it does not hold
      // (a new row of a table paged, sorted or searched) is no old child's, and is not compared with each of
      // them (keys built per render are ropes of equal length, compared character by character).
      else if (run.assigner.holdsKey(child.key)) {
        // Few children: a scan (no map made for a list whose keys all changed, as on navigation).
        if (before.length <= SCAN_CHILDREN) prior = childByKey(before, child.key);
        else {
          if (byKey === undefined) byKey = keyed(before);
          prior = byKey.get(child.key);
        }
      }
    }
    const built = buildNode(run, child, prior);
    if (children === undefined) {
      if (built === before![i]) continue;
      children = before!.slice(0, i);
      same = false;
    } else same = false;
    children[i] = built;
  }
  if (same) return old!;
  let node: WebNode;
  if ((spec as { bid?: string }).bid === '') {
    // A fresh spec becomes its node in place: specs have the node's shape (`makeSpec`, `makeNode`) and
    // already hold its fields; it gets its bid and its children's nodes, and is never changed again (a
    // later render handing it again meets a node: it is that node, or a copy of it on another bid log).
    const draft = spec as unknown as NodeDraft;
    draft.bid = bid;
    draft.children = children ?? before!;
    node = draft;
  } else {
    // Every node in one shape (`makeNode`): its fields read from the spec, its bid and children.
    node = nodeOfFields(spec as Omit<WebNode, 'bid' | 'children'>, bid, children ?? before!);
  }
  if (kept) {
    (node as unknown as Built)[FROM] = { spec, node };
    (spec as unknown as Built)[BUILT] = { mark: run.assigner.mark(), node };
  }
  return node;
}

/** Nodes by key (the last of a key wins, as `childByKey` finds it): a loop, no closure nor pairs made. */
function keyed(nodes: readonly WebNode[]): Map<string, WebNode> {
  const out = new Map<string, WebNode>();
  for (let i = 0; i < nodes.length; i++) out.set(nodes[i]!.key, nodes[i]!);
  return out;
}

/** Up to this many old children, the old node of a key is found by a scan (see `buildNode`). */
const SCAN_CHILDREN = 8;

/** The last of `nodes` with `key` (as the map of them by key gives it). */
function childByKey(nodes: readonly WebNode[], key: string): WebNode | undefined {
  for (let i = nodes.length - 1; i >= 0; i--) if (nodes[i]!.key === key) return nodes[i];
  return undefined;
}

/**
 * Whether `node` is what `Object.assign({}, spec)` plus its bid and children would give: the same own
 * fields (children aside) with equal values. Only `options` is an array; everything else is a primitive.
 */
function sameFields(s: Spec, o: WebNode): boolean {
  if (
    s.key !== o.key ||
    s.component !== o.component ||
    s.role !== o.role ||
    s.name !== o.name ||
    s.value !== o.value ||
    s.checked !== o.checked ||
    s.disabled !== o.disabled ||
    s.required !== o.required ||
    s.invalid !== o.invalid ||
    s.expanded !== o.expanded ||
    s.selected !== o.selected ||
    s.icon !== o.icon ||
    s.inputType !== o.inputType ||
    s.placeholder !== o.placeholder ||
    s.href !== o.href ||
    s.on !== o.on ||
    s.showAt !== o.showAt ||
    s.fold !== o.fold ||
    s.hidden !== o.hidden ||
    s.sort !== o.sort
  )
    return false;
  const a = s.options;
  const b = o.options;
  if (a === b) return true;
  if (a === undefined || b === undefined || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Parts of every page that depend only on the config, the site and the facts named in `key` (the banner
 * and navigation, the dialogs): built once per config and handed to every render as the very same
 * object, so the render returns the node it built from it last time. Such a node names its spec under
 * a symbol (see `FROM`; no digest sees symbols). `stableSpec` finds one, `keepStable` keeps a new one
 * (two calls, not one with a closure to make it: tsx, which runs the bench, names every closure it makes
 * with a `defineProperty`).
 */
function stableSpec(config: PageConfig, key: string): Spec | undefined {
  return (configMemo(config).stable as Map<string, Spec> | undefined)?.get(key);
}

function keepStable(config: PageConfig, key: string, spec: Spec): Spec {
  const memo = configMemo(config);
  const specs = (memo.stable ??= new Map()) as Map<string, Spec>;
  specs.set(key, keep(spec));
  return spec;
}

/**
 * `banner|${site}|${isLogin}|${menuOpen}`, made once per site and case and kept module-wide (site names are
 * the sites' own fixed names): the stable-spec look-up of every render then hashes no new string.
 */
function bannerKeyOf(site: string, isLogin: boolean, menuOpen: boolean): string {
  let keys = BANNER_KEYS.get(site);
  if (keys === undefined) BANNER_KEYS.set(site, (keys = [`banner|${site}|false|false`, `banner|${site}|false|true`, `banner|${site}|true|false`, `banner|${site}|true|true`]));
  return keys[(isLogin ? 2 : 0) + (menuOpen ? 1 : 0)]!;
}
const BANNER_KEYS = new Map<string, readonly string[]>();

/** The banner: the site's home link and, off the login page, its navigation (behind a menu under A/B variant B). */
function bannerSpec(page: PageState, ctx: PageContext, isLogin: boolean): Spec {
  const cfg = page.config;
  const links: Spec[] = [];
  for (const n of page.site.nav) links.push(link(`nav.${n.href}`, ctx.label(n.label), n.href));
  const nav = makeSpec('nav', 'section', 'navigation', 'Main menu', has(cfg, 'ab-variant') ? [menu(ctx, 'nav.menu', 'Menu', links)] : links);
  return makeSpec('banner', 'banner', 'banner', '', [link('banner.home', page.site.title, page.site.home), ...(isLogin ? [] : [nav])]);
}

function cookieDialog(): Spec {
  return modal('layer.cookie', 'We use cookies', [
    text('layer.cookie.text', 'This site uses cookies to remember your preferences.'),
    button('layer.cookie.accept', 'Accept all', 'dismiss:cookie'),
    button('layer.cookie.settings', 'Cookie settings', 'noop'),
  ]);
}

function newsletterDialog(cfg: PageConfig): Spec {
  const dialog = modal('layer.newsletter', 'Subscribe to our newsletter', [
    text('layer.newsletter.text', 'Get the latest offers in your inbox.'),
    button('layer.newsletter.subscribe', 'Subscribe', 'noop'),
    has(cfg, 'icon-only') ? button('layer.newsletter.close', 'Close dialog', 'dismiss:newsletter', { icon: '✕' }) : button('layer.newsletter.close', 'No thanks', 'dismiss:newsletter'),
  ]);
  dialog.showAt = cfg.newsletterAt;
  return dialog;
}

function confirmDialog(): Spec {
  return modal('layer.confirm', 'Please confirm', [
    text('layer.confirm.text', 'Are you sure you want to do this? It cannot be undone.'),
    button('layer.confirm.yes', 'Yes, continue', 'confirm:yes'),
    button('layer.confirm.no', 'Go back', 'confirm:no'),
  ]);
}

/**
 * What a rendered tree's main content was rendered from, kept on the tree's root under a symbol (no
 * digest sees it). A copy of the root (an input filled) carries it along, so it counts only while the
 * root's main child is still the node it names.
 */
interface MainMemo {
  readonly url: string;
  readonly view: View;
  readonly store: WebStore;
  readonly scroll: number;
  /** Whether the site's render read the scroll (else the content holds at any scroll). */
  readonly readScroll: boolean;
  readonly title: string;
  readonly spec: Spec;
  /** The main node built from `spec`: handed back as it is while the memo holds. */
  readonly node: WebNode;
}
interface Memoised {
  [MAIN]?: MainMemo;
}
/**
 * On a node built from a kept spec: that spec, and the node itself (a spread copy, as `fill` makes,
 * carries the symbol along but is not the node it names). A plain property, not `defineProperty`:
 * that is slower to add and to read past.
 */
/**
 * On a kept spec: the node last built from it and where the bid assigner stood right after (its subtree's
 * bids hold wherever the assigner still holds that mark).
 */
interface Built {
  [FROM]?: { readonly spec: Spec; readonly node: WebNode };
  [BUILT]?: { readonly mark: BidMark; readonly node: WebNode };
}
