/** Oracle episodes for the browser half's bench and checks: a start page and the actions that solve it. */
import type { Task } from '../../../core/index.js';
import { step, type PageState, type WebAction } from '../page.js';
import { pageOfTask } from '../state.js';
import { toWebAction } from '../tools.js';
import { findNode } from '../tree.js';
import { fixtureConfig, shopPage } from './fixtures.js';

/** One episode: where it starts and what it plays. */
export interface Episode {
  name: string;
  start: PageState;
  actions: WebAction[];
}

/** An action naming its target by node key (resolved to the bid on the page it is played on). */
type Keyed = { node: string } & ({ type: 'click' } | { type: 'fill'; text: string } | { type: 'select_option'; value: string } | { type: 'check' } | { type: 'press'; press: string });

/** Resolves keyed actions to bids by playing them in the simulation. */
export function resolveEpisode(name: string, start: PageState, script: ReadonlyArray<Keyed | WebAction>): Episode {
  let page = start;
  const actions: WebAction[] = [];
  for (const item of script) {
    let action: WebAction;
    if ('node' in item) {
      const node = findNode(page.tree, (n) => n.key === item.node);
      if (node === undefined) throw new Error(`episode ${name}: no node ${item.node} on ${page.url}`);
      const bid = node.bid;
      action = item.type === 'fill' ? { type: 'fill', bid, text: item.text } : item.type === 'select_option' ? { type: 'select_option', bid, value: item.value } : item.type === 'press' ? { type: 'press', bid, key: item.press } : { type: item.type, bid };
    } else action = item;
    const result = step(page, action);
    if (result.error !== undefined) throw new Error(`episode ${name}: ${JSON.stringify(action)} was rejected: ${result.error.message}`);
    actions.push(action);
    page = result.page;
  }
  return { name, start, actions };
}

/**
 * Oracle episodes on the shop back office: ship an order, fix a validation error, create a customer,
 * search-then-act, and one behind a cookie banner with a confirmation dialog.
 */
export function oracleEpisodes(): Episode[] {
  return [
    resolveEpisode('ship an order', shopPage(fixtureConfig(1, []), '/orders/O-1001'), [{ node: 'order.ship', type: 'click' }]),
    resolveEpisode('fix a price and save', shopPage(fixtureConfig(2, ['validation']), '/products/P-1001'), [
      { node: 'product.price', type: 'fill', text: '9.5' },
      { node: 'product.save', type: 'click' },
      { node: 'product.price', type: 'fill', text: '9.50' },
      { node: 'product.save', type: 'click' },
    ]),
    resolveEpisode('create a customer', shopPage(fixtureConfig(3, []), '/customers/new'), [
      { node: 'customer.name', type: 'fill', text: 'Ada Byron' },
      { node: 'customer.email', type: 'fill', text: 'ada@example.com' },
      { node: 'customer.tier', type: 'select_option', value: 'Pro' },
      { node: 'customer.newsletter', type: 'check' },
      { node: 'customer.create', type: 'click' },
    ]),
    resolveEpisode('search, open and ship', shopPage(fixtureConfig(4, []), '/orders'), [
      { node: 'orders.q', type: 'fill', text: 'grace' },
      { node: 'orders.q', type: 'press', press: 'Enter' },
      { node: 'orders.view.O-1003', type: 'click' },
      { node: 'order.ship', type: 'click' },
    ]),
    resolveEpisode('ship behind a cookie banner and a confirmation', shopPage(fixtureConfig(5, ['cookie-banner', 'confirm-dialog']), '/orders/O-1003'), [
      { node: 'layer.cookie.accept', type: 'click' },
      { node: 'order.ship', type: 'click' },
      { node: 'layer.confirm.yes', type: 'click' },
    ]),
  ];
}

/** A task's oracle episode: its initial page and its reference solution as web actions. */
export function taskEpisode(task: Task): Episode {
  const actions = task.spec.solution.map(toWebAction).filter((a): a is WebAction => a !== undefined);
  return { name: `${task.template} level ${task.level}`, start: pageOfTask(task), actions };
}
