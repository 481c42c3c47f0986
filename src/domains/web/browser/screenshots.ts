/** Screenshots of simulated pages in Chromium: a task's first and last page (report), one per perturbation (docs). */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { step, type PageState, type WebAction } from '../page.js';
import type { Perturbation } from '../perturbation.js';
import type { Action, Task } from '../../../core/index.js';
import { pageOfTask } from '../state.js';
import { toWebAction } from '../tools.js';
import { findNode } from '../tree.js';
import { BrowserPage } from './browser-page.js';
import { findChromium, launchChromium, noChromiumError } from './chromium.js';
import { fixtureConfig, shopPage } from './fixtures.js';

/** A page reached by playing actions from a start page (actions by node key, resolved to bids as it goes). */
export interface Scene {
  start: PageState;
  /** Node keys to click, or full actions. */
  actions: ReadonlyArray<string | WebAction>;
}

/** Plays a scene in the simulation: the actions with keys resolved to the bids of the page at that point. */
export function sceneActions(scene: Scene): WebAction[] {
  let page = scene.start;
  const out: WebAction[] = [];
  for (const a of scene.actions) {
    let action: WebAction;
    if (typeof a === 'string') {
      const node = findNode(page.tree, (n) => n.key === a);
      if (node === undefined) throw new Error(`scene: no node ${a} on ${page.url}`);
      action = { type: 'click', bid: node.bid };
    } else action = a;
    out.push(action);
    page = step(page, action).page;
  }
  return out;
}

/**
 * PNGs of the first page of an episode and of the page after its last action, as Chromium draws them.
 * @example
 * const { first, last } = await episodeScreenshots(browser.context, pageOfTask(task), actions);
 */
export async function episodeScreenshots(context: BrowserContext, start: PageState, actions: readonly WebAction[]): Promise<{ first: Buffer; last: Buffer; page: PageState }> {
  const live = await BrowserPage.open(context, start);
  try {
    const first = await live.screenshot();
    for (const action of actions) {
      if (action.type === 'finish' || action.type === 'send_msg_to_user') continue;
      await live.act(action);
    }
    const last = await live.screenshot();
    return { first, last, page: live.current };
  } finally {
    await live.close();
  }
}

/** One scene per perturbation, on the shop back office: what the docs show. */
export function perturbationScenes(): Record<Perturbation, Scene & { caption: string }> {
  const on = (p: Perturbation, url: string, extra = {}) => shopPage(fixtureConfig(7, [p], extra), url);
  return {
    reorder: { start: on('reorder', '/customers/new'), actions: [], caption: 'Sections and form fields in a seeded order.' },
    menu: { start: on('menu', '/orders/O-1001'), actions: ['order.more.toggle'], caption: 'Row and page actions moved into a "More actions" menu (opened here).' },
    tabs: { start: on('tabs', '/customers/new'), actions: [], caption: 'Form sections split over tabs; the inactive panel is hidden.' },
    synonyms: { start: on('synonyms', '/orders'), actions: [], caption: 'Labels renamed by seeded synonyms (navigation, headings, buttons, columns).' },
    'icon-only': { start: on('icon-only', '/orders/O-1001'), actions: [], caption: 'Icon-only buttons: the glyph is drawn, the name is only in aria-label.' },
    'cookie-banner': { start: on('cookie-banner', '/orders'), actions: [], caption: 'A cookie banner whose backdrop blocks every click until it is accepted.' },
    newsletter: { start: on('newsletter', '/orders', { newsletterAt: 0 }), actions: [], caption: 'A newsletter modal that pops up (at a seeded tick) and must be closed.' },
    'confirm-dialog': { start: on('confirm-dialog', '/orders/O-1001'), actions: ['order.ship'], caption: 'A confirmation dialog before a destructive or final action.' },
    'late-load': { start: on('late-load', '/orders/O-1001', { lateTicks: 3 }), actions: [], caption: 'Late load: the actions section is not there yet (it appears after a few actions).' },
    'scroll-reveal': { start: on('scroll-reveal', '/orders/O-1001'), actions: [], caption: 'Below the fold: the actions appear only after scrolling down.' },
    pagination: { start: on('pagination', '/products'), actions: [], caption: 'Pagination: two rows a page, with previous and next buttons.' },
    'infinite-list': { start: on('infinite-list', '/orders'), actions: [], caption: 'An infinite list: more rows load with each scroll.' },
    validation: {
      start: on('validation', '/products/P-1001'),
      actions: [],
      caption: 'A validation error that must be read and fixed.',
    },
    'ab-variant': { start: on('ab-variant', '/customers/new'), actions: [], caption: 'A/B variant: the create form as a two-step wizard.' },
    'session-timeout': { start: on('session-timeout', '/orders', { timeoutTicks: 1 }), actions: [{ type: 'noop' }, 'nav./products'], caption: 'Session timeout: the next action lands on the sign-in page.' },
  };
}

/** Writes `<perturbation>.png` for every perturbation into `dir`; returns the paths. */
export async function writePerturbationScreenshots(context: BrowserContext, dir: string): Promise<string[]> {
  mkdirSync(dir, { recursive: true });
  const paths: string[] = [];
  for (const [name, scene] of Object.entries(perturbationScenes())) {
    let actions = sceneActions(scene);
    if (name === 'validation') {
      const price = findNode(scene.start.tree, (n) => n.key === 'product.price')!.bid;
      const save = findNode(scene.start.tree, (n) => n.key === 'product.save')!.bid;
      actions = [{ type: 'fill', bid: price, text: '9.5' }, { type: 'click', bid: save }];
    }
    const { last } = await episodeScreenshots(context, scene.start, actions);
    const path = join(dir, `${name}.png`);
    writeFileSync(path, last);
    paths.push(path);
  }
  return paths;
}

/**
 * The web domain's `Domain.screenshots`: the task's first page and the page after the episode's last
 * action, drawn by Chromium. Throws `CONFIG_INVALID` when there is no Chromium.
 */
export async function webScreenshots(request: { task: Task; actions: readonly Action[]; env: Readonly<Record<string, string | undefined>> }): Promise<Array<{ label: string; png: Uint8Array }>> {
  const executablePath = findChromium(request.env);
  if (executablePath === undefined) throw noChromiumError();
  const start = pageOfTask(request.task);
  const actions = request.actions.map(toWebAction).filter((a): a is WebAction => a !== undefined);
  const browser = await launchChromium({ executablePath });
  try {
    const { first, last, page } = await episodeScreenshots(browser.context, start, actions);
    return [
      { label: `first page: ${start.title} (${start.url})`, png: first },
      { label: `after the last of ${actions.length} actions: ${page.title} (${page.url})`, png: last },
    ];
  } finally {
    await browser.close();
  }
}
