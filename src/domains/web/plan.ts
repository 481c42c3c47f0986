/**
 * Reference solutions: a key-level plan (click this node, fill that one) played on the simulated page,
 * with the moves every perturbation needs (close a banner, open a menu or tab, wait for a late element,
 * scroll, page through a table, confirm, sign in again after a timeout), recorded as bid actions.
 */
import { nodeAt } from './tree.js';
import { isShown, locate, step, topModal, type PageState, type WebAction } from './page.js';

/** One step of a plan, by node key. */
export type PlanStep =
  | { do: 'click'; key: string }
  | { do: 'fill'; key: string; text: string }
  | { do: 'select'; key: string; value: string }
  | { do: 'check'; key: string; on: boolean }
  | { do: 'goto'; url: string }
  | { do: 'say'; text: string };

/** A plan: segments that each start on one page; a segment is redone after signing in again. */
export type Plan = ReadonlyArray<ReadonlyArray<PlanStep>>;

/** The actions that carry a plan out and the page they end on. */
export interface Played {
  actions: WebAction[];
  page: PageState;
}

const LIMIT = 400;

/**
 * Plays a plan on a page. Throws when a step cannot be reached (the plan or the site is wrong: a
 * generator bug, never an agent's problem).
 */
export function playPlan(start: PageState, plan: Plan): Played {
  let page = start;
  const actions: WebAction[] = [];
  const act = (action: WebAction): void => {
    if (actions.length > LIMIT) throw new Error('plan too long');
    const r = step(page, action);
    if (r.error !== undefined) throw new Error(`plan step ${JSON.stringify(action)} rejected: ${r.error.code} ${r.error.message}`);
    actions.push(action);
    page = r.page;
  };
  const relogin = (): void => {
    act({ type: 'fill', bid: reach(() => page, 'login.user', act)!, text: page.config.credentials.user });
    act({ type: 'fill', bid: reach(() => page, 'login.password', act)!, text: page.config.credentials.password });
    act({ type: 'click', bid: reach(() => page, 'login.go', act)! });
  };
  for (const segment of plan) {
    let tries = 0;
    segments: for (;;) {
      if (++tries > 4) throw new Error('plan segment keeps timing out');
      const startUrl = page.url;
      for (const s of segment) {
        if (s.do === 'say') {
          act({ type: 'send_msg_to_user', text: s.text });
          continue;
        }
        if (s.do === 'goto') {
          act({ type: 'goto', url: s.url });
          if (page.url.startsWith('/login')) {
            relogin();
            continue segments;
          }
          continue;
        }
        const bid = reach(() => page, s.key, act);
        if (page.url.startsWith('/login') && !s.key.startsWith('login.')) {
          relogin();
          if (page.url !== startUrl) act({ type: 'goto', url: startUrl });
          continue segments;
        }
        if (s.do === 'click') act({ type: 'click', bid: bid! });
        else if (s.do === 'fill') act({ type: 'fill', bid: bid!, text: s.text });
        else if (s.do === 'select') act({ type: 'select_option', bid: bid!, value: s.value });
        else {
          const node = nodeAt(page.tree, page.index.get(bid!)!).node;
          if (node.checked !== s.on) act({ type: s.on ? 'check' : 'uncheck', bid: bid! });
        }
        if (page.url.startsWith('/login')) {
          relogin();
          if (page.url !== startUrl) act({ type: 'goto', url: startUrl });
          continue segments;
        }
        const cover = topModal(page);
        if (cover?.node.key === 'layer.confirm') {
          act({ type: 'click', bid: bidOf(page, 'layer.confirm.yes') });
          if (page.url.startsWith('/login')) {
            relogin();
            if (page.url !== startUrl) act({ type: 'goto', url: startUrl });
            continue segments;
          }
        }
      }
      break;
    }
  }
  return { actions, page };
}

function bidOf(page: PageState, key: string): string {
  const bid = page.bids.get(key);
  if (bid === undefined || !page.index.has(bid)) throw new Error(`no ${key} on ${page.url}`);
  return bid;
}

/** Makes `key` actionable (closing, opening, waiting, scrolling, paging as needed) and returns its bid. */
function reach(now: () => PageState, key: string, refresh: (a: WebAction) => void): string | undefined {
  let guard = 0;
  for (;;) {
    // `refresh` advances the caller's page: read it afresh every round.
    const page = now();
    if (++guard > 60) throw new Error(`cannot reach ${key} on ${page.url}`);
    if (page.url.startsWith('/login') && !key.startsWith('login.')) return undefined;
    const bid = page.bids.get(key);
    const cover = topModal(page);
    if (cover !== undefined && !key.startsWith(cover.node.key)) {
      const close = cover.node.key === 'layer.cookie' ? 'layer.cookie.accept' : cover.node.key === 'layer.newsletter' ? 'layer.newsletter.close' : 'layer.confirm.no';
      refresh({ type: 'click', bid: bidOf(page, close) });
      continue;
    }
    if (bid === undefined || !page.index.has(bid)) {
      const next = page.bids.get(pagerOf(page) ?? '');
      if (next !== undefined && page.index.has(next) && !('code' in locate(page, next)) && nodeAt(page.tree, page.index.get(next)!).node.disabled !== true) {
        refresh({ type: 'click', bid: next });
        continue;
      }
      if (page.scroll < 8 && [...page.bids.keys()].some((k) => k.endsWith('.more') && page.index.has(page.bids.get(k)!))) {
        refresh({ type: 'scroll', direction: 'down' });
        continue;
      }
      throw new Error(`no ${key} on ${page.url}`);
    }
    const where = locate(page, bid);
    if (!('code' in where)) return bid;
    if (where.code === 'COVERED') {
      const cover = topModal(page)!.node.key;
      const close = cover === 'layer.cookie' ? 'layer.cookie.accept' : cover === 'layer.newsletter' ? 'layer.newsletter.close' : 'layer.confirm.no';
      refresh({ type: 'click', bid: bidOf(page, close) });
      continue;
    }
    if (where.code !== 'HIDDEN') throw new Error(`cannot reach ${key}: ${where.code}`);
    const { ancestors, node } = nodeAt(page.tree, page.index.get(bid)!);
    const chain = [...ancestors, node];
    // The outermost node that is not shown decides what to do first.
    const first = chain.find((n) => !isShown(page, n))!;
    if (first.hidden === true) {
      if (first.role === 'menu') refresh({ type: 'click', bid: bidOf(page, first.key.replace(/\.items$/, '.toggle')) });
      else if (first.role === 'tabpanel') refresh({ type: 'click', bid: bidOf(page, first.key.replace('.panel.', '.tab.')) });
      else throw new Error(`cannot show ${key}`);
      continue;
    }
    if (first.showAt !== undefined && first.showAt > page.tick) {
      refresh({ type: 'noop' });
      continue;
    }
    refresh({ type: 'scroll', direction: 'down' });
  }
}

/** The key of the enabled "next page" button of a paged table on the page, if any. */
function pagerOf(page: PageState): string | undefined {
  for (const k of page.bids.keys()) if (k.endsWith('.pager.next') && page.index.has(page.bids.get(k)!)) return k;
  return undefined;
}

