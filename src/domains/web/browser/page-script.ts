/** The script every rendered page carries: it turns real DOM events into the domain's actions. */

/**
 * Browser-side glue, inlined into each rendered page. Each DOM event on an element with a `data-bid`
 * becomes one action of the simulation's action set (click, fill, select_option, check/uncheck, press)
 * and is sent to the Node side through the exposed binding `__envharnessAct`, which runs the site's
 * pure logic and answers with the next page view; the script swaps it in. Calls are chained so that
 * `__envharnessSettled()` resolves once every event sent so far has been applied. Without the binding
 * (the page opened as a plain file) the events do nothing, and the page is a static picture.
 */
export const PAGE_SCRIPT = String.raw`(() => {
  'use strict';
  let chain = Promise.resolve();
  const root = () => document.getElementById('eh-root');
  const bidOf = (node) => (node && node.closest ? node.closest('[data-bid]') : null);
  const isToggle = (el) => el.matches('input[type=checkbox], input[type=radio]');
  const isText = (el) => el.matches('input:not([type=checkbox]):not([type=radio]):not([type=submit]):not([type=button]), textarea');
  function apply(view) {
    if (!view) return;
    document.title = view.title;
    if (location.pathname + location.search !== view.url) history.replaceState(null, '', view.url);
    root().innerHTML = view.body;
    window.scrollTo(0, view.scrollY || 0);
    const focused = view.focus ? document.querySelector('[data-bid="' + CSS.escape(view.focus) + '"]') : null;
    if (focused) focused.focus({ preventScroll: true });
    else if (document.activeElement && document.activeElement !== document.body) document.activeElement.blur();
  }
  function send(action) {
    if (typeof window.__envharnessAct !== 'function') return chain;
    chain = chain.then(() => window.__envharnessAct(action)).then(apply);
    return chain;
  }
  window.__envharnessSend = send;
  // Whether an action's target can be acted on, from the browser's own layout, in the order a user
  // meets the obstacles: no such element, not rendered, under another element (a modal's backdrop),
  // disabled, wrong kind of element. Mirrors Playwright's actionability checks, answered at once.
  window.__envharnessJudge = (args) => {
    const el = document.querySelector('[data-bid="' + CSS.escape(args.bid) + '"]');
    if (el === null) return { code: 'UNKNOWN_BID' };
    const box = el.getBoundingClientRect();
    if (!el.checkVisibility({ visibilityProperty: true }) || box.width === 0 || box.height === 0) return { code: 'HIDDEN' };
    el.scrollIntoView({ block: 'center', inline: 'center' });
    const r = el.getBoundingClientRect();
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    if (hit === null || (hit !== el && !el.contains(hit))) return { code: 'COVERED' };
    // A modal's backdrop belongs to its dialog: landing on it is landing on the layer, not on the page
    // that contains it (the page root is an ancestor of every layer).
    const layer = hit.closest('.eh-backdrop');
    if (layer !== null && !layer.contains(el)) return { code: 'COVERED' };
    // A click at the centre of a container lands on the child there; the action names the container,
    // so look for a point of the container's own (padding, gaps) to click instead.
    let point;
    if (args.type === 'click' && bidOf(hit) !== el) {
      point = null;
      for (let i = 1; i < 8 && point === null; i++) {
        for (let j = 1; j < 8; j++) {
          const x = (r.width * j) / 8, y = (r.height * i) / 8;
          const at = document.elementFromPoint(r.left + x, r.top + y);
          if (at !== null && bidOf(at) === el) { point = { x, y }; break; }
        }
      }
    }
    if (el.matches(':disabled')) return { code: 'DISABLED' };
    const isCheckbox = el.matches('input[type=checkbox]');
    if (args.type === 'fill' && !isText(el)) return { code: 'NOT_EDITABLE' };
    if ((args.type === 'check' || args.type === 'uncheck') && !isCheckbox) return { code: 'NOT_CHECKABLE' };
    if (args.type === 'select_option') {
      if (!el.matches('select')) return { code: 'NOT_SELECT' };
      if (![...el.options].some((o) => o.value === args.value)) return { code: 'NO_SUCH_OPTION' };
    }
    return { ...(isCheckbox ? { checked: el.checked } : {}), ...(point === undefined ? {} : { point }) };
  };
  window.__envharnessSettled = () => chain;
  document.addEventListener('click', (event) => {
    const el = bidOf(event.target);
    if (!el) return;
    // Toggles report through 'change' (a click on one is how it is checked).
    if (isToggle(el)) return;
    event.preventDefault();
    send({ type: 'click', bid: el.dataset.bid });
  }, true);
  document.addEventListener('change', (event) => {
    const el = bidOf(event.target);
    if (!el) return;
    if (isToggle(el)) send({ type: el.checked ? 'check' : 'uncheck', bid: el.dataset.bid });
    else if (el.matches('select')) send({ type: 'select_option', bid: el.dataset.bid, value: el.value });
  }, true);
  document.addEventListener('input', (event) => {
    const el = bidOf(event.target);
    if (el && isText(el)) send({ type: 'fill', bid: el.dataset.bid, text: el.value });
  }, true);
  document.addEventListener('keydown', (event) => {
    const el = bidOf(event.target);
    if (!el) return;
    // The site's logic decides what a key does; the browser's default (typing, submitting, tabbing) would not be the simulation's.
    event.preventDefault();
    send({ type: 'press', bid: el.dataset.bid, key: event.key === ' ' ? 'Space' : event.key });
  }, true);
  document.addEventListener('submit', (event) => event.preventDefault(), true);
})();`;
