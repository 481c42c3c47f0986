/**
 * The simulated page against the same page in real Chromium: seeded episodes played in both must give
 * the same rejections step by step, the same state hashes and agreeing accessibility trees. Skips with
 * a message without Chromium (.ci/run installs Debian's chromium, so CI runs it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPage, step, type PageState, type WebAction } from '../page.js';
import { shopSite } from '../sites/shop.js';
import { bookingSite } from '../sites/booking.js';
import { hashPage, hashWebState } from '../state.js';
import { createStore } from '../store.js';
import { findNode, type WebNode } from '../tree.js';
import { BrowserPage } from './browser-page.js';
import { findChromium, launchChromium, type Browser } from './chromium.js';
import { BOOKING_TABLES, fixtureConfig, SHOP_TABLES } from './fixtures.js';
import { taskEpisode } from './episodes.js';
import { instantiateTask } from '../../../generation/index.js';
import { WEB_TEMPLATES } from '../templates.js';
import { crossCheck, randomActions, type StepComparison } from './cross-check.js';

const executablePath = findChromium(process.env);
if (executablePath === undefined) console.warn('SKIPPED: the web sim-vs-Chromium cross-check needs Chromium (apt-get install -y chromium, or set CHROMIUM_PATH); .ci/run installs it.');

const SHOP = SHOP_TABLES;
const BOOKING = BOOKING_TABLES;
const config = fixtureConfig;

/** Seeded random episodes over both sites; their perturbations together cover every layer and visibility rule. */
const RANDOM: Array<{ name: string; start: () => PageState; seed: number; steps: number }> = [
  { name: 'shop orders, plain', seed: 1, steps: 12, start: () => openPage(shopSite, config(1, []), createStore(SHOP), '/orders') },
  { name: 'shop order, cookie banner + late load', seed: 2, steps: 12, start: () => openPage(shopSite, config(2, ['cookie-banner', 'late-load']), createStore(SHOP), '/orders/O-1001') },
  { name: 'shop products, menus + icons + confirm + pagination', seed: 3, steps: 12, start: () => openPage(shopSite, config(3, ['menu', 'icon-only', 'confirm-dialog', 'pagination']), createStore(SHOP), '/products') },
  { name: 'shop customers, reorder + synonyms + newsletter + scroll', seed: 4, steps: 12, start: () => openPage(shopSite, config(4, ['reorder', 'synonyms', 'newsletter', 'scroll-reveal', 'validation']), createStore(SHOP), '/customers/new') },
  { name: 'booking search, tabs + session timeout', seed: 5, steps: 12, start: () => openPage(bookingSite, config(5, ['tabs', 'session-timeout', 'ab-variant']), createStore(BOOKING), '/search') },
  { name: 'booking bookings, infinite list + menus', seed: 6, steps: 14, start: () => openPage(bookingSite, config(6, ['infinite-list', 'menu', 'confirm-dialog']), createStore(BOOKING), '/bookings') },
];

const bidOf = (page: PageState, key: string): string => {
  const node = findNode(page.tree, (n: WebNode) => n.key === key);
  if (node === undefined) throw new Error(`no node ${key} on ${page.url}`);
  return node.bid;
};

/** Scripted episodes that must meet each obstacle (covered, hidden until late, disabled) and then succeed. */
function scripted(): Array<{ name: string; start: PageState; actions: WebAction[] }> {
  const cookie = openPage(shopSite, config(7, ['cookie-banner', 'late-load']), createStore(SHOP), '/orders/O-1001');
  const ship = bidOf(cookie, 'order.ship');
  const accept = bidOf(cookie, 'layer.cookie.accept');
  const covered = bidOf(cookie, 'order.save');
  const edit = openPage(shopSite, config(8, ['validation']), createStore(SHOP), '/products/P-1001');
  const price = bidOf(edit, 'product.price');
  const save = bidOf(edit, 'product.save');
  const shipped = openPage(shopSite, config(9, []), createStore(SHOP), '/orders/O-1002');
  return [
    {
      name: 'ship an order behind a cookie banner, before and after it loads',
      start: cookie,
      actions: [{ type: 'click', bid: covered }, { type: 'click', bid: ship }, { type: 'click', bid: accept }, { type: 'click', bid: ship }, { type: 'noop' }, { type: 'click', bid: ship }, { type: 'click', bid: '9999' }],
    },
    {
      name: 'fix a validation error and save',
      start: edit,
      actions: [{ type: 'fill', bid: price, text: '9.5' }, { type: 'click', bid: save }, { type: 'fill', bid: price, text: '9.50' }, { type: 'press', bid: price, key: 'Enter' }, { type: 'go_back' }],
    },
    { name: 'a disabled button on a shipped order', start: shipped, actions: [{ type: 'click', bid: bidOf(shipped, 'order.ship') }, { type: 'fill', bid: bidOf(shipped, 'order.ship'), text: 'x' }] },
  ];
}

describe.skipIf(executablePath === undefined)('the simulated page in real Chromium', () => {
  let browser: Browser;
  const seen = new Set<string>();
  let storeChanges = 0;

  beforeAll(async () => {
    browser = await launchChromium({ executablePath: executablePath! });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  /** Plays an episode in both and asserts they agree at every step; returns the rows. */
  async function agree(start: PageState, actions: readonly WebAction[]): Promise<StepComparison[]> {
    const live = await BrowserPage.open(browser.context, start);
    try {
      const rows = await crossCheck(start, live, actions);
      for (const row of rows) {
        const where = `step ${row.step} ${JSON.stringify(row.action)}`;
        expect(row.browser, where).toBe(row.sim);
        expect(row.browserHash, where).toBe(row.simHash);
        expect(row.observation, where).toEqual([]);
        seen.add(row.sim || 'accepted');
      }
      let sim = start;
      for (const action of actions.slice(0, rows.length)) sim = step(sim, action).page;
      expect(hashWebState({ page: live.current })).toBe(hashWebState({ page: sim }));
      expect(hashPage(live.current)).toBe(hashPage(sim));
      if (hashWebState({ page: sim }) !== hashWebState({ page: start })) storeChanges++;
      return rows;
    } finally {
      await live.close();
    }
  }

  it('agrees on scripted episodes that meet a cookie banner, late elements, a validation error and a disabled button', async () => {
    const expected: Record<string, string[]> = {
      'ship an order behind a cookie banner, before and after it loads': ['COVERED', 'HIDDEN', '', 'HIDDEN', '', '', 'UNKNOWN_BID'],
      'fix a validation error and save': ['', '', '', '', ''],
      'a disabled button on a shipped order': ['DISABLED', 'DISABLED'],
    };
    for (const episode of scripted()) {
      const rows = await agree(episode.start, episode.actions);
      expect(rows.map((r) => r.browser), episode.name).toEqual(expected[episode.name]);
    }
  }, 60_000);

  it('agrees on the oracle episodes of every template (one level each, all levels covered), and they succeed in the browser too', async () => {
    for (const [i, template] of WEB_TEMPLATES.entries()) {
      // One level per template, spread over 1..5 (the harder levels carry the perturbations).
      for (const level of [1 + ((i * 2 + 3) % 5)]) {
        const task = instantiateTask(template, { level, seed: 20_261_202, index: 0 });
        const episode = taskEpisode(task);
        const rows = await agree(episode.start, episode.actions);
        // The reference solution is never rejected, in either.
        expect(rows.filter((r) => r.browser !== ''), episode.name).toEqual([]);
      }
    }
  }, 120_000);

  it('agrees on seeded random episodes over both sites and every perturbation family', async () => {
    for (const episode of RANDOM) {
      const start = episode.start();
      await agree(start, randomActions(start, episode.seed, episode.steps));
    }
    // The episodes really exercised what the browser has to judge, and changed the store.
    for (const code of ['accepted', 'UNKNOWN_BID', 'HIDDEN', 'COVERED', 'DISABLED', 'NOT_EDITABLE']) expect([...seen], code).toContain(code);
    expect(storeChanges).toBeGreaterThan(0);
  }, 120_000);

  it('notices a renderer that lets clicks through a modal (the check can fail)', async () => {
    const start = openPage(shopSite, config(10, ['cookie-banner']), createStore(SHOP), '/orders/O-1001');
    const live = await BrowserPage.open(browser.context, start);
    try {
      // A broken stylesheet: the backdrop no longer covers the page.
      await live.page.addStyleTag({ content: '.eh-backdrop { position: static !important; }' });
      const action: WebAction = { type: 'click', bid: bidOf(start, 'order.save') };
      expect(step(start, action).error?.code).toBe('COVERED');
      const result = await live.act(action);
      // The browser let the click through; the site logic behind it still refused, and the cross-check sees the difference.
      expect(result.verdict).toBeUndefined();
      expect(result.error?.code).toBe('COVERED');
      const rows = await crossCheck(start, await BrowserPage.open(browser.context, start).then(async (again) => {
        await again.page.addStyleTag({ content: '.eh-backdrop { position: static !important; }' });
        return again;
      }), [action]);
      expect(rows[0]!.sim).toBe('COVERED');
      expect(rows[0]!.browser).toBe('');
    } finally {
      await live.close();
    }
  }, 30_000);
});
