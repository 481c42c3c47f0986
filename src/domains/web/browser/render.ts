/** Renders a simulated page (its component tree) to real HTML: the same bids as `data-bid`, real CSS layout. */
import { isShown, type PageState } from '../page.js';
import type { WebNode } from '../tree.js';
import { PAGE_SCRIPT } from './page-script.js';

/** What the browser swaps in after every action: the page's title, URL, body and focus. */
export interface PageView {
  title: string;
  url: string;
  /** The HTML inside `#eh-root` (the children of the root node). */
  body: string;
  /** The focused bid, if any. */
  focus?: string;
  /** Screens scrolled (the simulation's scroll position). */
  scroll: number;
}

/** The view of a page state (what `renderDocument` wraps, and what event replies carry). */
export function renderView(page: PageState): PageView {
  const out: string[] = [];
  for (const child of page.tree.children) renderNode(page, child, out, 0);
  return { title: page.title, url: page.url, body: out.join(''), ...(page.focused === undefined ? {} : { focus: page.focused }), scroll: page.scroll };
}

/**
 * The whole HTML document of a page: styles, the rendered tree and the event script. Opened as a file
 * it is a faithful static picture; served to Playwright with the `__envharnessAct` binding it is live.
 */
export function renderDocument(page: PageState): string {
  const view = renderView(page);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(view.title)}</title>
<style>${PAGE_CSS}</style>
</head>
<body>
<div id="eh-root" data-bid="${esc(page.tree.bid)}" data-scroll="${view.scroll}">${view.body}</div>
<script>${PAGE_SCRIPT.replace(/<\/script/gi, '<\\/script')}</script>
</body>
</html>
`;
}

/**
 * One node and its subtree. Visibility follows the simulation exactly: a node the simulation does not
 * show (hidden, not loaded yet, below the fold) carries the `hidden` attribute, so CSS takes it out of
 * layout and the accessibility tree, and its subtree goes with it.
 */
function renderNode(page: PageState, node: WebNode, out: string[], depth: number): void {
  const a: string[] = [`data-bid="${esc(node.bid)}"`];
  if (!isShown(page, node)) a.push('hidden');
  // Any element can take focus, as in the simulation (a key press goes to the element it names).
  if (!NATIVELY_FOCUSABLE.has(node.role)) a.push('tabindex="-1"');
  const kids = (): void => {
    for (const child of node.children) renderNode(page, child, out, depth + 1);
  };
  const open = (tag: string, extra: string[] = []): void => {
    out.push(`<${tag} ${[...a, ...extra].join(' ')}>`);
  };
  const name = esc(node.name);
  const disabled = node.disabled === true ? ['disabled'] : [];
  switch (node.role) {
    case 'banner':
      open('header', ['class="eh-banner"']);
      kids();
      out.push('</header>');
      return;
    case 'navigation':
      open('nav', [`aria-label="${name}"`]);
      kids();
      out.push('</nav>');
      return;
    case 'main':
      open('main', ['class="eh-main"']);
      kids();
      out.push('</main>');
      return;
    case 'region':
    case 'tablist':
    case 'tabpanel':
    case 'menu':
    case 'list':
    case 'listitem':
    case 'form':
      renderContainer(node, a, out, kids);
      return;
    case 'dialog':
      // The backdrop covers the whole viewport, so the page under it really cannot be clicked.
      out.push(`<div class="eh-backdrop"${isShown(page, node) ? '' : ' hidden'}>`);
      open('div', ['role="dialog"', 'aria-modal="true"', `aria-label="${name}"`, 'class="eh-dialog"']);
      out.push(`<h2 class="eh-dialog-title" aria-hidden="true">${name}</h2>`);
      kids();
      out.push('</div></div>');
      return;
    case 'status':
    case 'alert':
      open('div', [`role="${node.role}"`, 'class="eh-toast"']);
      out.push(name);
      kids();
      out.push('</div>');
      return;
    case 'heading':
      open('h2');
      out.push(name);
      out.push('</h2>');
      return;
    case 'text':
      open('p', ['class="eh-text"']);
      out.push(name);
      kids();
      out.push('</p>');
      return;
    case 'link':
      open('a', [`href="${esc(node.href ?? '#')}"`]);
      out.push(name);
      out.push('</a>');
      return;
    case 'button':
    case 'tab':
    case 'menuitem':
      renderButton(node, a, disabled, out);
      return;
    case 'textbox':
    case 'searchbox':
      renderInput(node, a, disabled, out);
      return;
    case 'combobox':
      renderSelect(node, a, disabled, out);
      return;
    case 'checkbox': {
      const id = `eh-${esc(node.bid)}`;
      out.push(`<div class="eh-check">`);
      // Named by aria-labelledby, not <label for>: a click on the text must not toggle the box behind the simulation's back.
      open('input', ['type="checkbox"', `aria-labelledby="${id}-label"`, ...(node.checked === true ? ['checked'] : []), ...disabled, ...(node.required === true ? ['required'] : [])]);
      out.push(`<span id="${id}-label">${name}</span></div>`);
      return;
    }
    case 'table':
      open('table', [`aria-label="${name}"`, 'class="eh-table"']);
      out.push('<tbody>');
      kids();
      out.push('</tbody></table>');
      return;
    case 'row':
      open('tr');
      kids();
      out.push('</tr>');
      return;
    case 'columnheader':
      open('th', ['scope="col"', ...(node.sort === undefined ? [] : [`aria-sort="${node.sort}"`]), ...(node.on === undefined ? [] : ['class="eh-sortable"'])]);
      if (node.sort !== undefined) out.push(`<span aria-hidden="true">${node.sort === 'ascending' ? '▲' : '▼'} </span>`);
      out.push(name);
      out.push('</th>');
      return;
    case 'cell':
      open('td');
      out.push(name);
      kids();
      out.push('</td>');
      return;
    case 'RootWebArea':
      open('div');
      kids();
      out.push('</div>');
      return;
  }
}

function renderContainer(node: WebNode, a: string[], out: string[], kids: () => void): void {
  const name = esc(node.name);
  const label = node.name === '' ? [] : [`aria-label="${name}"`];
  switch (node.role) {
    case 'form':
      out.push(`<form ${[...a, ...label, 'class="eh-form"', 'novalidate'].join(' ')}>`);
      if (node.name !== '') out.push(`<h3 class="eh-form-title" aria-hidden="true">${name}</h3>`);
      kids();
      out.push('</form>');
      return;
    case 'list':
      out.push(`<ul ${[...a, ...label].join(' ')}>`);
      kids();
      out.push('</ul>');
      return;
    case 'listitem':
      out.push(`<li ${a.join(' ')}>`);
      kids();
      out.push('</li>');
      return;
    case 'region':
      // An unnamed region is a plain grouping (the browser calls it generic, as ARIA says).
      out.push(`<section ${[...a, ...label, `class="eh-${node.component}"`].join(' ')}>`);
      if (node.name !== '' && node.component === 'section') out.push(`<h3 class="eh-section-title" aria-hidden="true">${name}</h3>`);
      kids();
      out.push('</section>');
      return;
    default:
      out.push(`<div ${[...a, `role="${node.role}"`, ...label, `class="eh-${node.role}"`].join(' ')}>`);
      kids();
      out.push('</div>');
  }
}

function renderButton(node: WebNode, a: string[], disabled: string[], out: string[]): void {
  const attrs = [...a, 'type="button"', ...disabled];
  if (node.role === 'tab') attrs.push('role="tab"', `aria-selected="${node.selected === true}"`);
  if (node.role === 'menuitem') attrs.push('role="menuitem"');
  if (node.expanded !== undefined) attrs.push(`aria-expanded="${node.expanded}"`);
  // Icon-only: the glyph is drawn, the name exists only as aria-label.
  if (node.icon !== undefined) attrs.push(`aria-label="${esc(node.name)}"`, 'class="eh-icon"');
  out.push(`<button ${attrs.join(' ')}>${node.icon !== undefined ? `<span aria-hidden="true">${esc(node.icon)}</span>` : esc(node.name)}</button>`);
}

function renderInput(node: WebNode, a: string[], disabled: string[], out: string[]): void {
  const id = `eh-${esc(node.bid)}`;
  const type = node.role === 'searchbox' ? 'search' : node.inputType === 'password' ? 'password' : node.inputType === 'email' ? 'email' : node.inputType === 'tel' ? 'tel' : 'text';
  const attrs = [...a, `id="${id}"`, `type="${type}"`, `value="${esc(node.value ?? '')}"`, ...disabled];
  if (node.placeholder !== undefined) attrs.push(`placeholder="${esc(node.placeholder)}"`);
  if (node.required === true) attrs.push('required');
  if (node.invalid !== undefined) attrs.push('aria-invalid="true"', `aria-describedby="${id}-error"`);
  out.push(`<div class="eh-field"><label for="${id}">${esc(node.name)}</label><input ${attrs.join(' ')}>`);
  if (node.invalid !== undefined) out.push(`<div class="eh-error" id="${id}-error">${esc(node.invalid)}</div>`);
  out.push('</div>');
}

function renderSelect(node: WebNode, a: string[], disabled: string[], out: string[]): void {
  const id = `eh-${esc(node.bid)}`;
  const attrs = [...a, `id="${id}"`, ...disabled];
  if (node.required === true) attrs.push('required');
  if (node.invalid !== undefined) attrs.push('aria-invalid="true"', `aria-describedby="${id}-error"`);
  const options = (node.options ?? []).map((o) => `<option value="${esc(o)}"${o === node.value ? ' selected' : ''}>${esc(o)}</option>`).join('');
  out.push(`<div class="eh-field"><label for="${id}">${esc(node.name)}</label><select ${attrs.join(' ')}>${options}</select>`);
  if (node.invalid !== undefined) out.push(`<div class="eh-error" id="${id}-error">${esc(node.invalid)}</div>`);
  out.push('</div>');
}

const NATIVELY_FOCUSABLE = new Set(['link', 'button', 'tab', 'menuitem', 'textbox', 'searchbox', 'combobox', 'checkbox']);

/** Escapes text for HTML content and attribute values. */
export function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** The pages' stylesheet: plain back-office looks; layers are fixed and cover the viewport. */
export const PAGE_CSS = `
* { box-sizing: border-box; }
[hidden] { display: none !important; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #0f172a; background: #f1f5f9; }
#eh-root { min-height: 100vh; }
.eh-banner { display: flex; align-items: center; gap: 24px; padding: 12px 24px; background: #1e293b; color: #fff; }
.eh-banner a { color: #e2e8f0; text-decoration: none; margin-right: 14px; }
.eh-banner > a:first-child { font-weight: 700; font-size: 17px; color: #fff; }
.eh-main { max-width: 1040px; margin: 20px auto; padding: 20px 24px; background: #fff; border: 1px solid #e2e8f0; border-radius: 10px; }
h2 { margin: 0 0 12px; font-size: 20px; }
h3 { margin: 8px 0; font-size: 15px; color: #334155; }
.eh-text { margin: 6px 0; min-height: 1.2em; }
section, .eh-form { margin: 10px 0; }
.eh-form { display: flex; flex-direction: column; gap: 8px; padding: 12px 0; max-width: 520px; }
.eh-form > button { align-self: flex-start; }
.eh-field { display: flex; flex-direction: column; gap: 3px; }
.eh-field label { font-size: 13px; color: #334155; }
input[type=text], input[type=search], input[type=password], input[type=email], input[type=tel], select { font: inherit; padding: 6px 8px; border: 1px solid #cbd5e1; border-radius: 6px; background: #fff; }
input[aria-invalid=true], select[aria-invalid=true] { border-color: #dc2626; }
.eh-error { color: #b91c1c; font-size: 13px; }
.eh-check { display: flex; align-items: center; gap: 8px; }
button { font: inherit; padding: 6px 14px; margin: 2px 6px 2px 0; border: 1px solid #2563eb; border-radius: 6px; background: #2563eb; color: #fff; cursor: pointer; }
button:disabled { background: #cbd5e1; border-color: #cbd5e1; color: #64748b; cursor: not-allowed; }
button.eh-icon { padding: 4px 9px; background: #fff; color: #1e293b; border-color: #94a3b8; }
[role=tab] { background: #fff; color: #1e293b; border-color: #cbd5e1; border-radius: 6px 6px 0 0; }
[role=tab][aria-selected=true] { background: #e0e7ff; border-color: #6366f1; font-weight: 600; }
[role=menu] { display: flex; flex-direction: column; align-items: flex-start; padding: 6px; border: 1px solid #cbd5e1; border-radius: 6px; box-shadow: 0 4px 12px rgba(15,23,42,.15); background: #fff; width: max-content; }
[role=menuitem] { background: #fff; color: #1e293b; border-color: transparent; }
.eh-table { border-collapse: collapse; width: 100%; margin: 8px 0; }
.eh-table th, .eh-table td { border-bottom: 1px solid #e2e8f0; padding: 6px 8px; text-align: left; min-width: 2em; height: 2.2em; }
.eh-table th { background: #f8fafc; font-weight: 600; }
.eh-table th.eh-sortable { cursor: pointer; color: #1d4ed8; }
ul { padding-left: 20px; }
li { min-height: 1.2em; }
.eh-toast { margin: 12px auto; max-width: 1040px; padding: 10px 16px; border-radius: 8px; background: #ecfdf5; border: 1px solid #16a34a; }
.eh-backdrop { position: fixed; inset: 0; z-index: 100; display: flex; align-items: center; justify-content: center; background: rgba(15,23,42,.55); }
.eh-dialog { min-width: 340px; max-width: 520px; padding: 18px 22px; border-radius: 12px; background: #fff; box-shadow: 0 20px 50px rgba(0,0,0,.35); }
.eh-dialog-title { margin: 0 0 10px; font-size: 18px; }
`;
