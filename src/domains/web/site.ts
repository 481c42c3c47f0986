/**
 * What a site is: routes rendered from (store, view state) into node specs, and events that read the
 * page's form values and write the store. Also the spec builders sites use (forms, inputs, selects,
 * checkboxes, tables with sorting and pagination, search, tabs, menus, modals, toasts, links).
 */
import { configMemo, ICONS, type PageConfig } from './perturbation.js';
import type { Row, WebStore } from './store.js';
import { NODE_FROM, NODE_MAIN, NODE_PATCHES, NODE_PIECE, NODE_TEXT, SPEC_BUILT, SPEC_KEPT as KEPT, type NodeInit } from './tree.js';

export { SPEC_BUILT };

/** A node before it has a bid: the site's description of it. */
export interface Spec extends Partial<Omit<NodeInit, 'key' | 'component' | 'role' | 'name'>> {
  key: string;
  component: NodeInit['component'];
  role: NodeInit['role'];
  name: string;
  children?: Spec[];
}

/** The per-route UI state: what the agent typed, ticked, sorted, opened. Reset on navigation. */
export interface View {
  readonly values: Readonly<Record<string, string>>;
  readonly checks: Readonly<Record<string, boolean>>;
  /** Validation messages by input key. */
  readonly errors: Readonly<Record<string, string>>;
  readonly sort?: { readonly key: string; readonly dir: 'ascending' | 'descending' };
  /** Table page (1-based) or loaded batches (infinite list). */
  readonly pageNo: number;
  /** The applied search query. */
  readonly query: string;
  readonly tab?: string;
  /** The open menu's key. */
  readonly menu?: string;
  /** An event waiting for the confirmation dialog (the page's layer: a site's render must not read it). */
  readonly confirm?: string;
  /** The page's status message (a layer: a site's render must not read it). */
  readonly toast?: string;
  /** Wizard step of a multi-step form (A/B variant). */
  readonly stepNo: number;
}

export const EMPTY_VIEW: View = Object.freeze({ values: {}, checks: {}, errors: {}, pageNo: 1, query: '', stepNo: 1 });

/** What a route's renderer sees. */
export interface RenderContext {
  readonly path: string;
  /** Route parameters after the site's prefix (`/orders/O-1001` → `['orders', 'O-1001']`). */
  readonly parts: readonly string[];
  /** The URL's query parameters (`/results?from=Oslo` → `{ from: 'Oslo' }`). */
  readonly params: Readonly<Record<string, string>>;
  readonly store: WebStore;
  readonly view: View;
  readonly config: PageConfig;
  readonly tick: number;
  readonly scroll: number;
  /** A label as this page shows it (synonyms). */
  label(plain: string): string;
  /** Items in this page's order (reorder). */
  arrange<T>(label: string, items: readonly T[]): T[];
  has(p: PageConfig['perturbations'][number]): boolean;
}

/** What an event does: a store write, a navigation, view changes, a toast; never an exception. */
export interface Effect {
  store?: WebStore;
  go?: string;
  view?: Partial<View>;
  toast?: string;
  /** Process notes for grading feedback (`validation-error`, `distractor`). */
  notes?: string[];
}

/** What an event handler sees. */
export interface HandleContext extends RenderContext {
  /** Value of an input by key (what is in the field now). */
  value(key: string): string;
  checked(key: string): boolean;
}

/** A site: a small web application over a backing store. */
export interface Site {
  readonly name: string;
  readonly title: string;
  /** Where a session starts and where the logo link goes. */
  readonly home: string;
  /** Top navigation: label (plain, before synonyms) → path. */
  readonly nav: ReadonlyArray<{ label: string; href: string }>;
  /** Whether `path` is one of the site's pages. */
  hasRoute(path: string): boolean;
  /** The page title and main content of a route. */
  render(ctx: RenderContext): { title: string; main: Spec[] };
  /** Events whose button asks for confirmation under the `confirm-dialog` perturbation. */
  readonly confirmEvents: ReadonlySet<string>;
  /** Runs a site event (`submit:customer`, `ship:O-1001`). Unknown events change nothing. */
  handle(event: string, ctx: HandleContext): Effect;
}

// ---- spec builders ----

/** A spec being put together (fields set one by one before it is handed out). */
export type SpecDraft = { -readonly [K in keyof Spec]: Spec[K] };

type Extra = Partial<Omit<Spec, 'key' | 'component' | 'role' | 'name'>>;

/**
 * A spec with every field of `Spec` (unset ones `undefined`) and its two marks (`KEPT`, `SPEC_BUILT`), in
 * one order: every spec has one shape, so the page reads a spec's fields with monomorphic loads when it
 * builds or compares its node. An `undefined` field is what a missing one was to every reader.
 */
export function makeSpec(key: string, component: Spec['component'], role: Spec['role'], name: string, children?: Spec[]): SpecDraft {
  // The node's shape (`makeNode`): `bid` empty until the page builds the spec's node in place.
  const spec = {
    bid: '',
    key,
    component,
    role,
    name,
    value: undefined,
    checked: undefined,
    options: undefined,
    disabled: undefined,
    required: undefined,
    invalid: undefined,
    expanded: undefined,
    selected: undefined,
    icon: undefined,
    inputType: undefined,
    placeholder: undefined,
    href: undefined,
    on: undefined,
    showAt: undefined,
    fold: undefined,
    hidden: undefined,
    sort: undefined,
    children,
    [NODE_PIECE]: undefined,
    [NODE_TEXT]: undefined,
    [NODE_MAIN]: undefined,
    [NODE_FROM]: undefined,
    [NODE_PATCHES]: undefined,
    [KEPT]: undefined,
    [SPEC_BUILT]: undefined,
  };
  return spec;
}

/** `spec` with `extra`'s fields set (onto fields it already has: the shape stays). */
const withExtra = (spec: SpecDraft, extra: Extra | undefined): Spec => (extra === undefined ? spec : Object.assign(spec, extra));

export const heading = (key: string, text: string): Spec => makeSpec(key, 'heading', 'heading', text);
export const text = (key: string, body: string, extra?: Extra): Spec => withExtra(makeSpec(key, 'text', 'text', body), extra);
export const section = (key: string, name: string, children: Spec[], extra?: Extra): Spec => withExtra(makeSpec(key, 'section', 'region', name, children), extra);
export function link(key: string, name: string, href: string, extra?: Extra): Spec {
  const spec = makeSpec(key, 'link', 'link', name);
  spec.href = href;
  return withExtra(spec, extra);
}
export function button(key: string, name: string, on: string, extra?: Extra): Spec {
  const spec = makeSpec(key, 'button', 'button', name);
  spec.on = on;
  return withExtra(spec, extra);
}
export function form(key: string, name: string, on: string, children: Spec[]): Spec {
  const spec = makeSpec(key, 'form', 'form', name, children);
  spec.on = on;
  return spec;
}
export const list = (key: string, name: string, children: Spec[]): Spec => makeSpec(key, 'list', 'list', name, children);
export const item = (key: string, children: Spec[], name = ''): Spec => makeSpec(key, 'item', 'listitem', name, children);

/** A text input with its current value and validation message from the view. */
export function input(view: View, key: string, label: string, extra?: Extra): Spec {
  const invalid = view.errors[key];
  const spec = makeSpec(key, 'input', 'textbox', label);
  spec.inputType = 'text';
  if (extra === undefined) spec.value = view.values[key] ?? '';
  else {
    const value = view.values[key] ?? extra.value ?? '';
    Object.assign(spec, extra);
    spec.value = value;
  }
  if (invalid !== undefined) spec.invalid = invalid;
  return spec;
}

/** A select with its current value from the view. */
export function select(view: View, key: string, label: string, options: readonly string[], extra?: Extra): Spec {
  const invalid = view.errors[key];
  const spec = makeSpec(key, 'select', 'combobox', label);
  spec.options = options;
  if (extra === undefined) spec.value = view.values[key] ?? options[0] ?? '';
  else {
    Object.assign(spec, extra);
    spec.value = view.values[key] ?? extra.value ?? options[0] ?? '';
  }
  if (invalid !== undefined) spec.invalid = invalid;
  return spec;
}

/** A checkbox with its current state from the view. */
export function checkbox(view: View, key: string, label: string, extra?: Extra): Spec {
  const spec = makeSpec(key, 'checkbox', 'checkbox', label);
  if (extra === undefined) spec.checked = view.checks[key] ?? false;
  else {
    Object.assign(spec, extra);
    spec.checked = view.checks[key] ?? extra.checked ?? false;
  }
  return spec;
}

/**
 * `${key}.${part}`, made once per (key, part) and kept (module-wide: keys and parts are the sites' own
 * fixed names, never a task's data): a re-render then hands a child the very key string its old node
 * has, and telling them equal is one comparison instead of flattening a new string to compare its text.
 */
export function subKey(key: string, part: string): string {
  let parts = SUB_KEYS.get(key);
  if (parts === undefined) SUB_KEYS.set(key, (parts = new Map()));
  let out = parts.get(part);
  if (out === undefined) parts.set(part, (out = `${key}.${part}`));
  return out;
}
const SUB_KEYS = new Map<string, Map<string, string>>();

/** A checkbox whose state the caller knows (a row's ticked box, read once per render for every row). */
export function checkboxOf(key: string, label: string, checked: boolean): Spec {
  const spec = makeSpec(key, 'checkbox', 'checkbox', label);
  spec.checked = checked;
  return spec;
}

/** A search box whose Enter (or its button) applies the query. */
export function search(view: View, key: string, label: string, buttonLabel: string): Spec[] {
  const box = makeSpec(key, 'search', 'searchbox', label);
  box.value = view.values[key] ?? view.query;
  box.on = `search:${key}`;
  return [box, button(subKey(key, 'go'), buttonLabel, `search:${key}`)];
}

/** A column of a table: header label and the cell text of a record. */
export interface Column {
  key: string;
  label: string;
  cell(row: Row, id: string): string;
  sortable?: boolean;
}

/**
 * A table over records with sortable headers and pagination (or an infinite list that loads a batch
 * per scroll): rows are `rows` filtered by the caller, sorted by the view, and cut to the page.
 * A row is rendered once per record and row state and kept: `cell` must read only the record and its
 * id, and `actions` only the record, its id, the config (labels, perturbations) and what `rowState`
 * names of the view (a row's ticked box, its open menu).
 */
export function table(
  ctx: RenderContext,
  key: string,
  name: string,
  columns: readonly Column[],
  rows: ReadonlyArray<{ id: string; row: Row }>,
  actions: (id: string, row: Row) => Spec[],
  rowState?: (id: string, row: Row) => string,
): Spec[] {
  const sort = ctx.view.sort;
  // Never changed in place: a sort or a page cut makes a new array, else the caller's list serves.
  let sorted = rows;
  if (sort !== undefined) {
    const column = columns.find((c) => c.key === sort.key);
    if (column !== undefined) {
      // Each row's cell text and number once, not once per comparison (the comparator sees the same values).
      const keyed = rows.map((r) => {
        const text = column.cell(r.row, r.id);
        return { r, text, n: cellNumber(text) };
      });
      keyed.sort((a, b) => {
        const x = a.text;
        const y = b.text;
        const nx = a.n;
        const ny = b.n;
        const c = nx !== undefined && ny !== undefined ? nx - ny : x < y ? -1 : x > y ? 1 : 0;
        return (sort.dir === 'ascending' ? c : -c) || (a.r.id < b.r.id ? -1 : 1);
      });
      sorted = keyed.map((k) => k.r);
    }
  }
  const size = ctx.config.pageSize;
  const infinite = ctx.has('infinite-list');
  const paged = ctx.has('pagination') || infinite;
  const pages = Math.max(1, Math.ceil(sorted.length / size));
  const pageNo = Math.min(ctx.view.pageNo, pages);
  if (paged) sorted = infinite ? sorted.slice(0, size * Math.max(1, Math.min(ctx.scroll + 1, pages))) : sorted.slice((pageNo - 1) * size, pageNo * size);
  const header = headerRow(ctx.config, key, columns, sort);
  // A row's spec is a function of the config (labels, perturbations), the table and its columns, the
  // record (records are never mutated: a write makes a new one) and the row's view state: kept per
  // config, table and record id (the last record and state only), so a re-render hands the very same spec and
  // the page keeps the row's node as it is. Not a WeakMap on records: ephemerons make every GC slower.
  // Kept per table, then per record id: the ids are the store's own strings, whose hashes V8 keeps, where
  // a row key built per row would be hashed anew on every render.
  const memos = rowMemo(ctx.config);
  let memo = memos.get(key);
  if (memo === undefined) memos.set(key, (memo = new Map()));
  // The header first, then a row per record (pushed in order: no array made and shifted).
  const body: Spec[] = [header];
  for (let r = 0; r < sorted.length; r++) {
    const { id, row } = sorted[r]!;
    const state = rowState === undefined ? '' : rowState(id, row);
    const held = memo.get(id);
    if (held !== undefined && held.row === row && held.state === state && sameColumns(held.columns, columns)) {
      body.push(held.spec);
      continue;
    }
    const rowKey = `${key}.row.${id}`;
    const children: Spec[] = [];
    for (const c of columns) children.push(makeSpec(`${rowKey}.${c.key}`, 'cell', 'cell', c.cell(row, id)));
    children.push(makeSpec(`${rowKey}.actions`, 'cell', 'cell', '', actions(id, row)));
    const spec = keep(makeSpec(rowKey, 'row', 'row', '', children));
    memo.set(id, { row, state, columns, spec });
    body.push(spec);
  }
  const out: Spec[] = [makeSpec(key, 'table', 'table', name, body)];
  if (paged && !infinite && pages > 1) out.push(pager(ctx.config, key, pageNo, pages));
  if (infinite && ctx.scroll + 1 < pages) out.push(text(subKey(key, 'more'), 'Scroll down to load more rows'));
  return out;
}

/**
 * A table's header row: a function of the config, the table's key, its columns (keys, labels, whether
 * sortable) and the sort, kept per config and table key (the last one only) like the rows, so that a
 * re-render hands the very same spec and the page keeps the header's node without comparing its cells.
 */
function headerRow(config: PageConfig, key: string, columns: readonly Column[], sort: View['sort']): Spec {
  const memo = configMemo(config);
  const held = (memo.heads ??= new Map()).get(key) as HeldHeader | undefined;
  if (held !== undefined && held.sortKey === sort?.key && held.sortDir === sort?.dir && sameHeads(held.columns, columns)) return held.spec;
  const heads: Spec[] = [];
  for (const c of columns) {
    const head = makeSpec(subKey(subKey(key, 'col'), c.key), 'header', 'columnheader', c.label);
    if (c.sortable === true) head.on = `sort:${c.key}`;
    if (sort?.key === c.key) head.sort = sort.dir;
    heads.push(head);
  }
  heads.push(makeSpec(subKey(subKey(key, 'col'), 'actions'), 'header', 'columnheader', 'Actions'));
  const spec = keep(makeSpec(subKey(key, 'head'), 'row', 'row', '', heads));
  memo.heads.set(key, { columns, sortKey: sort?.key, sortDir: sort?.dir, spec } satisfies HeldHeader);
  return spec;
}

interface HeldHeader {
  /** The columns the header was made for (what counts is their keys, labels and sortable flags, in order). */
  readonly columns: readonly Column[];
  readonly sortKey: string | undefined;
  readonly sortDir: 'ascending' | 'descending' | undefined;
  readonly spec: Spec;
}

/** Whether two column lists give the same header: the same keys, labels and sortable flags, in order. */
function sameHeads(a: readonly Column[], b: readonly Column[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x.key !== y.key || x.label !== y.label || (x.sortable === true) !== (y.sortable === true)) return false;
  }
  return true;
}

/** A paged table's pager, kept per config and table key (the last page and page count only), as the header. */
function pager(config: PageConfig, key: string, pageNo: number, pages: number): Spec {
  const memo = configMemo(config);
  const held = (memo.pagers ??= new Map()).get(key) as HeldPager | undefined;
  if (held !== undefined && held.pageNo === pageNo && held.pages === pages) return held.spec;
  const at = subKey(key, 'pager');
  const spec = keep(
    makeSpec(at, 'section', 'navigation', 'Pagination', [
      text(subKey(at, 'at'), `Page ${pageNo} of ${pages}`),
      button(subKey(at, 'prev'), 'Previous page', `page:${pageNo - 1}`, { disabled: pageNo <= 1 }),
      button(subKey(at, 'next'), 'Next page', `page:${pageNo + 1}`, { disabled: pageNo >= pages }),
    ]),
  );
  memo.pagers.set(key, { pageNo, pages, spec } satisfies HeldPager);
  return spec;
}

interface HeldPager {
  readonly pageNo: number;
  readonly pages: number;
  readonly spec: Spec;
}

/** A cell's text as a number for sorting (`$12.50` → 12.5), or undefined when it is not one. */
function cellNumber(s: string): number | undefined {
  return /^-?[\d.]+$/.test(s.replace(/[$,]/g, '')) ? Number(s.replace(/[$,]/g, '')) : undefined;
}

/** Tabs: a tab list and one panel per tab; panels of inactive tabs are hidden. */
export function tabs(ctx: RenderContext, key: string, panels: ReadonlyArray<{ key: string; label: string; children: Spec[] }>): Spec {
  const active = ctx.view.tab ?? panels[0]?.key;
  const list = makeSpec(
    `${key}.list`,
    'section',
    'tablist',
    '',
    panels.map((p): Spec => {
      const tab = makeSpec(`${key}.tab.${p.key}`, 'tab', 'tab', p.label);
      tab.on = `tab:${p.key}`;
      tab.selected = p.key === active;
      return tab;
    }),
  );
  const children: Spec[] = [list];
  for (const p of panels) {
    const panel = makeSpec(`${key}.panel.${p.key}`, 'panel', 'tabpanel', p.label, p.children);
    panel.hidden = p.key !== active;
    children.push(panel);
  }
  return makeSpec(key, 'tabs', 'region', '', children);
}

/** A menu button whose items are hidden until it is opened. */
export function menu(ctx: RenderContext, key: string, label: string, items: Spec[]): Spec {
  const open = ctx.view.menu === key;
  const toggle = makeSpec(`${key}.toggle`, 'button', 'button', label);
  toggle.on = `menu:${key}`;
  toggle.expanded = open;
  const list = makeSpec(
    `${key}.items`,
    'section',
    'menu',
    label,
    items.map((i) => {
      // A fresh spec (the caller's, made for this menu: no bid, not kept) becomes its menu item in place;
      // any other is copied first (Object.assign copies every field, all of them set on every spec).
      const entry: SpecDraft = (i as { bid?: string }).bid === '' && !isKept(i) ? i : Object.assign(makeSpec(i.key, 'menuitem', 'menuitem', i.name), i);
      entry.component = 'menuitem';
      entry.role = 'menuitem';
      return entry;
    }),
  );
  list.hidden = !open;
  return makeSpec(key, 'menu', 'region', '', [toggle, list]);
}

/** A modal dialog (it covers everything else on the page while it is open). */
export const modal = (key: string, title: string, children: Spec[]): SpecDraft => makeSpec(key, 'modal', 'dialog', title, children);

/** A toast: a status message that does not block. */
export const toast = (key: string, message: string): Spec => makeSpec(key, 'toast', 'status', message);

/**
 * Specs kept and handed to renders again as the very same objects (never changed after they are kept):
 * a render returns the node it built from such a spec last time without comparing anything. Marked by a
 * symbol property (a WeakSet cost more than the rest of keeping a row); a copy of a kept spec, or a node
 * built from one, carries the mark along, which costs nothing but a lookup that never matches.
 */

/** Marks a spec as kept (see `isKept`) and returns it. */
export function keep(spec: Spec): Spec {
  (spec as { [KEPT]?: true })[KEPT] = true;
  return spec;
}

/** Whether a spec is kept: the same object always describes the same subtree. */
export const isKept = (spec: Spec): boolean => (spec as { [KEPT]?: true })[KEPT] === true;

// Table rows kept per config, table key and record id (see `table`).
interface HeldRow {
  readonly row: Row;
  readonly state: string;
  /** The columns the row was rendered with (what counts is their keys, in order). */
  readonly columns: readonly Column[];
  readonly spec: Spec;
}

/** Whether two column lists have the same keys in the same order (a row's shape). */
function sameColumns(a: readonly Column[], b: readonly Column[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i]!.key !== b[i]!.key) return false;
  return true;
}
function rowMemo(config: PageConfig): Map<string, Map<string, HeldRow>> {
  const memo = configMemo(config);
  return (memo.rows ??= new Map()) as Map<string, Map<string, HeldRow>>;
}

// ---- perturbation-aware parts ----

/** A button that may be icon-only (aria-label only), late-loading or below the fold, as the page's perturbations say. */
export function actionButton(ctx: RenderContext, key: string, plain: string, on: string, extra?: Partial<Spec>): Spec {
  const label = ctx.label(plain);
  const icon = ctx.has('icon-only') ? ICONS[plain] : undefined;
  if (extra === undefined || isEmpty(extra)) return icon === undefined ? button(key, label, on) : button(key, label, on, { icon });
  if (icon === undefined) return button(key, label, on, extra);
  return button(key, label, on, { icon, ...extra });
}

function isEmpty(o: object): boolean {
  for (const _ in o) return false;
  return true;
}

/** Where late and below-the-fold parts go: `showAt` under late-load, `fold` under scroll-reveal. */
export function delayed(ctx: RenderContext): Partial<Spec> {
  const late = ctx.has('late-load');
  const folded = ctx.has('scroll-reveal');
  // One literal per case (spreading conditional `{}`s cost more than the rest of the call).
  if (late) return folded ? { showAt: ctx.config.lateTicks, fold: 1 } : { showAt: ctx.config.lateTicks };
  return folded ? { fold: 1 } : {};
}

/** Row actions inline, or inside a "More actions" menu under the `menu` perturbation. */
export function actions(ctx: RenderContext, key: string, buttons: Spec[]): Spec[] {
  if (!ctx.has('menu') || buttons.length === 0) return buttons;
  return [menu(ctx, key, 'More actions', buttons)];
}

