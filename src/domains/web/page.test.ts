// The simulated page end to end on the shop back office: observation, actions, site events, and rejected actions that change nothing.
import { describe, expect, it, vi } from 'vitest';
import { openPage, step, type PageState, type WebAction } from './page.js';
import { observe } from './observation.js';
import { plainConfig, type PageConfig } from './perturbation.js';
import { bookingSite } from './sites/booking.js';
import { shopSite } from './sites/shop.js';
import { createStore, getRow, hashStore } from './store.js';
import { findNode, makeNode, TreeIndex, type WebNode } from './tree.js';

const tables = {
  orders: {
    'O-1001': { customer: 'Ada Byron', total: 1250, status: 'pending', note: '' },
    'O-1002': { customer: 'Alan Turing', total: 990, status: 'shipped', note: '' },
  },
  products: {
    'P-1001': { name: 'Blue Mug', sku: 'MUG-1', price: 1250, stock: 3, active: true },
  },
  customers: {},
};

const open = (config: PageConfig = plainConfig(), url = '/orders'): PageState => openPage(shopSite, config, createStore(tables), url);
const bidOf = (page: PageState, test: (n: WebNode) => boolean): string => findNode(page.tree, test)!.bid;
const play = (page: PageState, ...actions: WebAction[]): PageState => actions.reduce((p, a) => {
  const r = step(p, a);
  expect(r.error).toBeUndefined();
  return r.page;
}, page);

describe('the simulated page (shop back office)', () => {
  it('observes an accessibility tree with [bid] ids, url, title and no error', () => {
    const obs = observe(open());
    expect(obs.url).toBe('/orders');
    expect(obs.title).toBe('Orders · Shop admin');
    expect(obs.axtree).toMatch(/^\[1\] RootWebArea 'Orders · Shop admin'/);
    expect(obs.axtree).toMatch(/\[\d+\] link 'View O-1001', url='\/orders\/O-1001'/);
    expect(obs.axtree).toMatch(/\[\d+\] cell 'Ada Byron'/);
    expect(obs.last_action_error).toBe('');
  });

  it('searches, opens an order, ships it: the store changes and bids stay stable across renders', () => {
    let page = open();
    const box = bidOf(page, (n) => n.role === 'searchbox');
    page = play(page, { type: 'fill', bid: box, text: 'alan' }, { type: 'press', bid: box, key: 'Enter' });
    expect(observe(page).axtree).not.toContain('Ada Byron');
    expect(bidOf(page, (n) => n.role === 'searchbox')).toBe(box);
    page = play(page, { type: 'goto', url: '/orders/O-1001' });
    const before = hashStore(page.store);
    page = play(page, { type: 'click', bid: bidOf(page, (n) => n.key === 'order.ship') });
    expect(getRow(page.store, 'orders', 'O-1001')!['status']).toBe('shipped');
    expect(hashStore(page.store)).not.toBe(before);
    expect(observe(page).axtree).toContain("status 'Order O-1001 shipped'");
    // Going back then forward to the same page gives the same bids.
    const again = play(page, { type: 'go_back' }, { type: 'goto', url: '/orders/O-1001' });
    expect(bidOf(again, (n) => n.key === 'order.ship')).toBe(bidOf(page, (n) => n.key === 'order.ship'));
  });

  it("keeps a table row's rendering only while its record and its row state hold: ticks, writes and open menus show after re-renders", () => {
    const many = { ...tables, products: { 'P-1001': tables.products['P-1001'], 'P-1002': { name: 'Red Lamp', sku: 'LAM-2', price: 990, stock: 0, active: true } } };
    let page = openPage(shopSite, plainConfig(), createStore(many), '/products');
    const box = (p: PageState, id: string): WebNode => findNode(p.tree, (n) => n.key === `products.sel.${id}`)!;
    const sortBy = (p: PageState, column: string): PageState => play(p, { type: 'click', bid: bidOf(p, (n) => n.key === `products.t.col.${column}`) });
    // A tick, then a re-render (sort): the ticked row shows ticked, the other one not; unticked again after a second re-render.
    page = play(page, { type: 'check', bid: box(page, 'P-1002').bid });
    page = sortBy(page, 'price');
    expect([box(page, 'P-1001').checked, box(page, 'P-1002').checked]).toEqual([false, true]);
    page = play(page, { type: 'uncheck', bid: box(page, 'P-1002').bid });
    page = sortBy(page, 'stock');
    expect([box(page, 'P-1001').checked, box(page, 'P-1002').checked]).toEqual([false, false]);
    // A write (restock) gives the record a new value: the re-rendered row shows it.
    page = play(page, { type: 'check', bid: box(page, 'P-1002').bid }, { type: 'click', bid: bidOf(page, (n) => n.key === 'products.restock') });
    expect(findNode(page.tree, (n) => n.key === 'products.t.row.P-1002.stock')!.name).toBe('50');
    expect(box(page, 'P-1002').checked).toBe(false);
    // Under the menu perturbation a booking row's actions are in a menu: it opens, stays open through a
    // re-render (sort), and closes.
    const trips = { 'T-1': { from: 'Oslo', to: 'Rome', date: '2026-12-24', depart: '09:05', price: 5000, seats: 4 } };
    const bookings = {
      'B-1001': { trip: 'T-1', passenger: 'Ada Byron', email: 'ada@example.com', seats: 1, status: 'confirmed' },
      'B-1002': { trip: 'T-1', passenger: 'Alan Turing', email: 'alan@example.com', seats: 2, status: 'confirmed' },
    };
    let trip = openPage(bookingSite, { ...plainConfig(), perturbations: ['menu'] }, createStore({ trips, bookings }), '/bookings');
    const items = (p: PageState, id: string): boolean | undefined => findNode(p.tree, (n) => n.key === `bookings.more.${id}.items`)!.hidden;
    const toggle = (p: PageState, id: string): PageState => play(p, { type: 'click', bid: bidOf(p, (n) => n.key === `bookings.more.${id}.toggle`) });
    trip = toggle(trip, 'B-1002');
    expect([items(trip, 'B-1001'), items(trip, 'B-1002')]).toEqual([true, false]);
    trip = play(trip, { type: 'click', bid: bidOf(trip, (n) => n.key === 'bookings.t.col.passenger') });
    expect([items(trip, 'B-1001'), items(trip, 'B-1002')]).toEqual([true, false]);
    trip = toggle(trip, 'B-1002');
    expect([items(trip, 'B-1001'), items(trip, 'B-1002')]).toEqual([true, true]);
  });

  it("keeps a table's header and pager only while the sort, the columns and the page hold", () => {
    const many: Record<string, { name: string; sku: string; price: number; stock: number; active: boolean }> = {};
    for (let i = 1; i <= 7; i++) many[`P-10${i}`] = { name: `Item ${i}`, sku: `SKU-${i}`, price: 100 * i, stock: 10 - i, active: true };
    let page = openPage(shopSite, { ...plainConfig(), perturbations: ['pagination'], pageSize: 3 }, createStore({ ...tables, products: many }), '/products');
    const head = (p: PageState, column: string): WebNode => findNode(p.tree, (n) => n.key === `products.t.col.${column}`)!;
    const sortBy = (p: PageState, column: string): PageState => play(p, { type: 'click', bid: head(p, column).bid });
    const at = (p: PageState): string => findNode(p.tree, (n) => n.key === 'products.t.pager.at')!.name;
    expect([head(page, 'price').sort, head(page, 'stock').sort]).toEqual([undefined, undefined]);
    page = sortBy(page, 'price');
    expect([head(page, 'price').sort, head(page, 'stock').sort]).toEqual(['ascending', undefined]);
    page = sortBy(page, 'price');
    expect([head(page, 'price').sort, head(page, 'stock').sort]).toEqual(['descending', undefined]);
    page = sortBy(page, 'stock');
    expect([head(page, 'price').sort, head(page, 'stock').sort]).toEqual([undefined, 'ascending']);
    expect(observe(page).axtree).toMatch(/columnheader 'Stock', sort=ascending/);
    // The pager follows the page: the next page, then the last (its next button disabled), then back.
    const next = (p: PageState): PageState => play(p, { type: 'click', bid: findNode(p.tree, (n) => n.key === 'products.t.pager.next')!.bid });
    expect(at(page)).toBe('Page 1 of 3');
    page = next(page);
    expect(at(page)).toBe('Page 2 of 3');
    page = next(page);
    expect([at(page), findNode(page.tree, (n) => n.key === 'products.t.pager.next')!.disabled]).toEqual(['Page 3 of 3', true]);
    page = play(page, { type: 'click', bid: findNode(page.tree, (n) => n.key === 'products.t.pager.prev')!.bid });
    expect([at(page), findNode(page.tree, (n) => n.key === 'products.t.pager.next')!.disabled]).toEqual(['Page 2 of 3', false]);
  });

  it('finds a bid by the hint it was given only when the hint still holds, else by a search', () => {
    const u = undefined;
    const leaf = (bid: string): WebNode => makeNode(bid, `k${bid}`, 'button', 'button', bid, u, u, u, u, u, u, u, u, u, u, u, u, u, u, u, u, u, []);
    const tree = makeNode('1', 'root', 'page', 'RootWebArea', '', u, u, u, u, u, u, u, u, u, u, u, u, u, u, u, u, u, [leaf('2'), makeNode('3', 'sec', 'section', 'region', '', u, u, u, u, u, u, u, u, u, u, u, u, u, u, u, u, u, [leaf('4'), leaf('5')])]);
    expect(new TreeIndex(tree, '5', [1, 1]).get('5')).toEqual([1, 1]);
    // Where the bid was in an older tree: another node there, or no node at all.
    expect(new TreeIndex(tree, '5', [1, 0]).get('5')).toEqual([1, 1]);
    expect(new TreeIndex(tree, '5', [0, 3]).get('5')).toEqual([1, 1]);
    expect(new TreeIndex(tree, '6', [1, 1]).get('6')).toBeUndefined();
    // A hint for one bid answers nothing about another.
    expect(new TreeIndex(tree, '5', [1, 1]).get('4')).toEqual([1, 0]);
  });

  it('rejects invalid actions with a code and returns the very same page', () => {
    const cookie = open({ ...plainConfig(), perturbations: ['cookie-banner'] }, '/orders/O-1002');
    const ship = bidOf(cookie, (n) => n.key === 'order.ship');
    const cases: Array<[PageState, WebAction, string]> = [
      [cookie, { type: 'click', bid: '9999' }, 'UNKNOWN_BID'],
      [cookie, { type: 'click', bid: ship }, 'COVERED'],
      [cookie, { type: 'goto', url: 'https://example.com/' }, 'OFF_SITE'],
      [cookie, { type: 'goto', url: '/nowhere' }, 'NO_SUCH_PAGE'],
      [cookie, { type: 'go_back' }, 'NO_HISTORY'],
    ];
    const clear = play(cookie, { type: 'click', bid: bidOf(cookie, (n) => n.key === 'layer.cookie.accept') });
    expect(clear.notes).toContain('dismissed:cookie');
    cases.push([clear, { type: 'click', bid: ship }, 'DISABLED']);
    cases.push([clear, { type: 'fill', bid: ship, text: 'x' }, 'DISABLED']);
    cases.push([clear, { type: 'fill', bid: bidOf(clear, (n) => n.key === 'order.save'), text: 'x' }, 'NOT_EDITABLE']);
    cases.push([clear, { type: 'check', bid: bidOf(clear, (n) => n.key === 'order.save') }, 'NOT_CHECKABLE']);
    cases.push([clear, { type: 'press', bid: bidOf(clear, (n) => n.key === 'order.save'), key: 'F13' }, 'BAD_KEY']);
    const late = open({ ...plainConfig(), perturbations: ['late-load'], lateTicks: 2 }, '/orders/O-1001');
    cases.push([late, { type: 'click', bid: bidOf(late, (n) => n.key === 'order.ship') }, 'HIDDEN']);
    for (const [page, action, code] of cases) {
      const result = step(page, action);
      expect(result.error?.code, JSON.stringify(action)).toBe(code);
      expect(result.page).toBe(page);
      expect(observe(page, result.error).last_action_error).toBe(result.error!.message);
    }
    // Late elements show after enough valid actions.
    const waited = play(late, { type: 'noop' }, { type: 'noop' });
    expect(step(waited, { type: 'click', bid: bidOf(late, (n) => n.key === 'order.ship') }).error).toBeUndefined();
  });

  it('reads validation errors and accepts the fixed value', () => {
    let page = open(plainConfig(), '/products/P-1001');
    const price = bidOf(page, (n) => n.key === 'product.price');
    const save = bidOf(page, (n) => n.key === 'product.save');
    page = play(page, { type: 'fill', bid: price, text: '9.5' }, { type: 'click', bid: save });
    expect(observe(page).axtree).toContain("invalid='Enter the price with two decimals, e.g. 12.50'");
    expect(getRow(page.store, 'products', 'P-1001')!['price']).toBe(1250);
    page = play(page, { type: 'fill', bid: price, text: '9.50' }, { type: 'click', bid: save });
    expect(getRow(page.store, 'products', 'P-1001')!['price']).toBe(950);
    expect(page.url).toBe('/products');
  });

  it('builds the pruned observation from cached subtree pieces that agree with a line-by-line walk, budget cuts included', () => {
    // The unpruned walk marks every node that pruning leaves out `, hidden`: dropping those lines and
    // cutting greedily by the budget is the pruned observation, whatever pieces the nodes carry from before.
    const expected = (page: PageState, tokens: number): string => {
      const lines = observe(page, undefined, { prune: false, tokenBudget: 1e9 }).axtree.split('\n').filter((l) => !l.endsWith(', hidden'));
      const kept: string[] = [];
      let used = 0;
      for (const line of lines) if (used + line.length + 1 <= tokens * 4) (kept.push(line), (used += line.length + 1));
      if (kept.length < lines.length) kept.push(`… ${lines.length - kept.length} more elements not shown (observation budget of ${tokens} tokens)`);
      return kept.join('\n');
    };
    let page = open({ ...plainConfig(), perturbations: ['late-load', 'scroll-reveal'], lateTicks: 2 }, '/products/P-1001');
    const price = bidOf(page, (n) => n.key === 'product.price');
    const check = (): void => {
      for (const tokens of [2_000, 60, 25]) expect(observe(page, undefined, { tokenBudget: tokens }).axtree).toBe(expected(page, tokens));
    };
    check();
    for (const action of [{ type: 'fill', bid: price, text: 'one' }, { type: 'fill', bid: price, text: "it's two" }, { type: 'noop' }, { type: 'scroll', direction: 'down' }] as WebAction[]) {
      page = play(page, action);
      check();
    }
    expect(observe(page).axtree).toContain("value='it\\'s two'");
    page = play(page, { type: 'goto', url: '/orders' });
    check();
  });

  it('gives sessions branching from one page the same bids and observations as sessions of their own, sharing renders', () => {
    const config: PageConfig = { ...plainConfig(), perturbations: ['cookie-banner', 'late-load'], lateTicks: 1 };
    const fresh = (): PageState => open(config, '/orders');
    const start = fresh();
    const cookie = bidOf(start, (n) => n.key === 'layer.cookie.accept');
    // The same actions, and a session that leaves the path after two steps (its first new key differs).
    const path: WebAction[] = [{ type: 'click', bid: cookie }, { type: 'goto', url: '/orders/O-1001' }, { type: 'noop' }, { type: 'goto', url: '/products' }, { type: 'goto', url: '/orders/O-1002' }];
    const astray: WebAction[] = [...path.slice(0, 2), { type: 'goto', url: '/customers' }, ...path.slice(2)];
    const run = (page: PageState, actions: WebAction[]): PageState[] => actions.map((a) => (page = play(page, a)));
    const seen = (pages: PageState[]): string[] => pages.map((p) => JSON.stringify(observe(p)) + p.nextBid);
    const first = run(start, path);
    const again = run(start, path);
    const other = run(start, astray);
    expect(seen(again)).toEqual(seen(first));
    expect(seen(run(fresh(), path))).toEqual(seen(first));
    expect(seen(other)).toEqual(seen(run(fresh(), astray)));
    // Renders are kept once sessions branch (from the second on): a third meets the second's very trees.
    const third = run(start, path);
    expect(third.at(-1)!.tree).toBe(again.at(-1)!.tree);
    expect(again.at(-1)!.tree).not.toBe(first.at(-1)!.tree);
    expect(seen(third)).toEqual(seen(first));
    // The same url, view and store with the banner still up and dismissed are two renders, on a shared log too.
    const order: WebAction = { type: 'goto', url: '/orders/O-1001' };
    run(start, [order]);
    expect(seen(run(start, [{ type: 'click', bid: cookie }, order]))).toEqual(seen(run(fresh(), [{ type: 'click', bid: cookie }, order])));
    expect(seen(run(start, [order]))).toEqual(seen(run(fresh(), [order])));
    // The session that left the path gave /customers' keys bids of its own, then /products' differ from the first session's.
    const bidIn = (page: PageState, key: string): string | undefined => findNode(page.tree, (n) => n.key === key)?.bid;
    expect(bidIn(other.at(-2)!, 'products.h')).not.toBe(bidIn(first.at(-2)!, 'products.h'));
  });

  it('re-renders the main content on a scroll only when the render read the scroll (an infinite list), and loads its rows then', () => {
    const rows = Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`O-${2001 + i}`, { customer: `Customer ${i}`, total: 100 * (i + 1), status: 'pending', note: '' }]));
    const config: PageConfig = { ...plainConfig(), perturbations: ['infinite-list'], pageSize: 3 };
    const cells = (page: PageState): number => observe(page).axtree.split('\n').filter((l) => l.includes("link 'View O-")).length;
    const renders = vi.spyOn(shopSite, 'render');
    // A page with no table on it: the scroll changes nothing it shows, and the site does not render it again.
    const form = openPage(shopSite, config, createStore({ ...tables, orders: rows }), '/customers/new');
    expect(renders).toHaveBeenCalledTimes(1);
    const scrolled = play(form, { type: 'scroll', direction: 'down' });
    expect(scrolled.scroll).toBe(1);
    expect(renders).toHaveBeenCalledTimes(1);
    expect(scrolled.tree.children[1]).toBe(form.tree.children[1]);
    // The orders table under an infinite list: each scroll loads a batch of rows, until all are shown.
    let list = openPage(shopSite, config, createStore({ ...tables, orders: rows }), '/orders');
    expect(cells(list)).toBe(3);
    list = play(list, { type: 'scroll', direction: 'down' });
    expect(cells(list)).toBe(6);
    list = play(list, { type: 'scroll', direction: 'down' }, { type: 'scroll', direction: 'down' });
    expect(cells(list)).toBe(7);
    expect(observe(list).axtree).not.toContain('Scroll down to load more rows');
    renders.mockRestore();
  });

  it('keeps the main content as it was while the confirmation dialog opens, and runs the event once it is confirmed', () => {
    const config: PageConfig = { ...plainConfig(), perturbations: ['confirm-dialog'] };
    const renders = vi.spyOn(shopSite, 'render');
    const order = openPage(shopSite, config, createStore(tables), '/orders/O-1001');
    expect(renders).toHaveBeenCalledTimes(1);
    const asked = play(order, { type: 'click', bid: bidOf(order, (n) => n.key === 'order.ship') });
    expect(asked.view.confirm).toBe('ship:O-1001');
    // The site's render reads no dialog: the page does not run it again, and the main node is the very same.
    expect(renders).toHaveBeenCalledTimes(1);
    expect(asked.tree.children[1]).toBe(order.tree.children[1]);
    expect(observe(asked).axtree).toContain("dialog 'Please confirm', modal");
    const shipped = play(asked, { type: 'click', bid: bidOf(asked, (n) => n.key === 'layer.confirm.yes') });
    expect(getRow(shipped.store, 'orders', 'O-1001')!['status']).toBe('shipped');
    expect(observe(shipped).axtree).not.toContain('Please confirm');
    renders.mockRestore();
  });
});
