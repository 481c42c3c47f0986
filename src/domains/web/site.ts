/**
 * What a site is: routes rendered from (store, view state) into node specs, and events that read the
 * page's form values and write the store. Also the spec builders sites use (forms, inputs, selects,
 * checkboxes, tables with sorting and pagination, search, tabs, menus, modals, toasts, links).
 */
import { configMemo, ICONS, type PageConfig } from './perturbation.js';
import type { Row, WebStore } from './store.js';
import type { NodeInit } from './tree.js';

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
  /** An event waiting for the confirmation dialog. */
  readonly confirm?: string;
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
type SpecDraft = { -readonly [K in keyof Spec]: Spec[K] };

type Extra = Partial<Omit<Spec, 'key' | 'component' | 'role' | 'name'>>;

export const heading = (key: string, text: string): Spec => ({ key, component: 'heading', role: 'heading', name: text });
// Without extras the builders write one plain literal (spreading an empty `{}` in cost more than the rest);
// with extras they assign them onto the literal (a spread after other fields left V8's fast clone path).
export const text = (key: string, body: string, extra?: Extra): Spec => (extra === undefined ? { key, component: 'text', role: 'text', name: body } : Object.assign({ key, component: 'text', role: 'text', name: body } as Spec, extra));
export const section = (key: string, name: string, children: Spec[], extra?: Extra): Spec =>
  extra === undefined ? { key, component: 'section', role: 'region', name, children } : Object.assign({ key, component: 'section', role: 'region', name, children } as Spec, extra);
export const link = (key: string, name: string, href: string, extra?: Extra): Spec =>
  extra === undefined ? { key, component: 'link', role: 'link', name, href } : Object.assign({ key, component: 'link', role: 'link', name, href } as Spec, extra);
export const button = (key: string, name: string, on: string, extra?: Extra): Spec =>
  extra === undefined ? { key, component: 'button', role: 'button', name, on } : Object.assign({ key, component: 'button', role: 'button', name, on } as Spec, extra);
export const form = (key: string, name: string, on: string, children: Spec[]): Spec => ({ key, component: 'form', role: 'form', name, on, children });
export const list = (key: string, name: string, children: Spec[]): Spec => ({ key, component: 'list', role: 'list', name, children });
export const item = (key: string, children: Spec[], name = ''): Spec => ({ key, component: 'item', role: 'listitem', name, children });

/** A text input with its current value and validation message from the view. */
export function input(view: View, key: string, label: string, extra?: Extra): Spec {
  const invalid = view.errors[key];
  if (extra === undefined) {
    const spec: Spec = { key, component: 'input', role: 'textbox', name: label, inputType: 'text', value: view.values[key] ?? '' };
    if (invalid !== undefined) (spec as { invalid?: string }).invalid = invalid;
    return spec;
  }
  const value = view.values[key] ?? extra.value ?? '';
  const spec = Object.assign({ key, component: 'input', role: 'textbox', name: label, inputType: 'text' } as SpecDraft, extra);
  spec.value = value;
  if (invalid !== undefined) spec.invalid = invalid;
  return spec;
}

/** A select with its current value from the view. */
export function select(view: View, key: string, label: string, options: readonly string[], extra?: Extra): Spec {
  const invalid = view.errors[key];
  if (extra === undefined) {
    const spec: Spec = { key, component: 'select', role: 'combobox', name: label, options, value: view.values[key] ?? options[0] ?? '' };
    if (invalid !== undefined) (spec as { invalid?: string }).invalid = invalid;
    return spec;
  }
  const spec = Object.assign({ key, component: 'select', role: 'combobox', name: label, options } as SpecDraft, extra);
  spec.value = view.values[key] ?? extra.value ?? options[0] ?? '';
  if (invalid !== undefined) spec.invalid = invalid;
  return spec;
}

/** A checkbox with its current state from the view. */
export function checkbox(view: View, key: string, label: string, extra?: Extra): Spec {
  if (extra === undefined) return { key, component: 'checkbox', role: 'checkbox', name: label, checked: view.checks[key] ?? false };
  const spec = Object.assign({ key, component: 'checkbox', role: 'checkbox', name: label } as SpecDraft, extra);
  spec.checked = view.checks[key] ?? extra.checked ?? false;
  return spec;
}

/** A search box whose Enter (or its button) applies the query. */
export function search(view: View, key: string, label: string, buttonLabel: string): Spec[] {
  return [
    { key, component: 'search', role: 'searchbox', name: label, value: view.values[key] ?? view.query, on: `search:${key}` },
    button(`${key}.go`, buttonLabel, `search:${key}`),
  ];
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
  let sorted = rows.slice();
  if (sort !== undefined) {
    const column = columns.find((c) => c.key === sort.key);
    if (column !== undefined) {
      // Each row's cell text and number once, not once per comparison (the comparator sees the same values).
      const keyed = sorted.map((r) => {
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
  const header: Spec = {
    key: `${key}.head`,
    component: 'row',
    role: 'row',
    name: '',
    children: [
      ...columns.map((c): Spec => {
        const head: SpecDraft = { key: `${key}.col.${c.key}`, component: 'header', role: 'columnheader', name: c.label };
        if (c.sortable === true) head.on = `sort:${c.key}`;
        if (sort?.key === c.key) head.sort = sort.dir;
        return head;
      }),
      { key: `${key}.col.actions`, component: 'header', role: 'columnheader', name: 'Actions' },
    ],
  };
  // A row's spec is a function of the config (labels, perturbations), the table and its columns, the
  // record (records are never mutated: a write makes a new one) and the row's view state: kept per
  // config, table and record id (the last record and state only), so a re-render hands the very same spec and
  // the page keeps the row's node as it is. Not a WeakMap on records: ephemerons make every GC slower.
  // Kept per table, then per record id: the ids are the store's own strings, whose hashes V8 keeps, where
  // a row key built per row would be hashed anew on every render.
  const memos = rowMemo(ctx.config);
  let memo = memos.get(key);
  if (memo === undefined) memos.set(key, (memo = new Map()));
  const shape = columns.length === 0 ? '' : columns.map((c) => c.key).join('\u0000');
  const body = sorted.map(({ id, row }): Spec => {
    const state = rowState === undefined ? '' : rowState(id, row);
    const held = memo.get(id);
    if (held !== undefined && held.row === row && held.state === state && held.shape === shape) return held.spec;
    const rowKey = `${key}.row.${id}`;
    const children: Spec[] = columns.map((c): Spec => ({ key: `${rowKey}.${c.key}`, component: 'cell', role: 'cell', name: c.cell(row, id) }));
    children.push({ key: `${rowKey}.actions`, component: 'cell', role: 'cell', name: '', children: actions(id, row) });
    const spec = keep({ key: rowKey, component: 'row', role: 'row', name: '', children });
    memo.set(id, { row, state, shape, spec });
    return spec;
  });
  const out: Spec[] = [{ key, component: 'table', role: 'table', name, children: [header, ...body] }];
  if (paged && !infinite && pages > 1) {
    out.push({
      key: `${key}.pager`,
      component: 'section',
      role: 'navigation',
      name: 'Pagination',
      children: [
        text(`${key}.pager.at`, `Page ${pageNo} of ${pages}`),
        button(`${key}.pager.prev`, 'Previous page', `page:${pageNo - 1}`, { disabled: pageNo <= 1 }),
        button(`${key}.pager.next`, 'Next page', `page:${pageNo + 1}`, { disabled: pageNo >= pages }),
      ],
    });
  }
  if (infinite && ctx.scroll + 1 < pages) out.push(text(`${key}.more`, 'Scroll down to load more rows'));
  return out;
}

/** A cell's text as a number for sorting (`$12.50` → 12.5), or undefined when it is not one. */
function cellNumber(s: string): number | undefined {
  return /^-?[\d.]+$/.test(s.replace(/[$,]/g, '')) ? Number(s.replace(/[$,]/g, '')) : undefined;
}

/** Tabs: a tab list and one panel per tab; panels of inactive tabs are hidden. */
export function tabs(ctx: RenderContext, key: string, panels: ReadonlyArray<{ key: string; label: string; children: Spec[] }>): Spec {
  const active = ctx.view.tab ?? panels[0]?.key;
  return {
    key,
    component: 'tabs',
    role: 'region',
    name: '',
    children: [
      {
        key: `${key}.list`,
        component: 'section',
        role: 'tablist',
        name: '',
        children: panels.map((p): Spec => ({ key: `${key}.tab.${p.key}`, component: 'tab', role: 'tab', name: p.label, on: `tab:${p.key}`, selected: p.key === active })),
      },
      ...panels.map((p): Spec => ({ key: `${key}.panel.${p.key}`, component: 'panel', role: 'tabpanel', name: p.label, hidden: p.key !== active, children: p.children })),
    ],
  };
}

/** A menu button whose items are hidden until it is opened. */
export function menu(ctx: RenderContext, key: string, label: string, items: Spec[]): Spec {
  const open = ctx.view.menu === key;
  return {
    key,
    component: 'menu',
    role: 'region',
    name: '',
    children: [
      { key: `${key}.toggle`, component: 'button', role: 'button', name: label, on: `menu:${key}`, expanded: open },
      { key: `${key}.items`, component: 'section', role: 'menu', name: label, hidden: !open, children: items.map((i) => ({ ...i, component: 'menuitem', role: 'menuitem' })) },
    ],
  };
}

/** A modal dialog (it covers everything else on the page while it is open). */
export const modal = (key: string, title: string, children: Spec[]): Spec => ({ key, component: 'modal', role: 'dialog', name: title, children });

/** A toast: a status message that does not block. */
export const toast = (key: string, message: string): Spec => ({ key, component: 'toast', role: 'status', name: message });

/**
 * Specs kept and handed to renders again as the very same objects (never changed after they are kept):
 * a render returns the node it built from such a spec last time without comparing anything. Marked by a
 * symbol property (a WeakSet cost more than the rest of keeping a row); a copy of a kept spec, or a node
 * built from one, carries the mark along, which costs nothing but a lookup that never matches.
 */
const KEPT = Symbol('kept spec');

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
  readonly shape: string;
  readonly spec: Spec;
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

