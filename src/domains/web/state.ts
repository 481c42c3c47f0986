/**
 * The domain state of the web domain: a task's initial page built from its JSON (`initialState`), and the
 * mutable box the runtime forks (O(1): the page and store inside are persistent) and hashes (the store).
 */
import { z } from 'zod';
import { digest, EnvHarnessError, type JsonObject, type JsonValue, type Task } from '../../core/index.js';
import { openPage, type PageState } from './page.js';
import { PERTURBATIONS, type PageConfig } from './perturbation.js';
import type { Site } from './site.js';
import { bookingSite } from './sites/booking.js';
import { shopSite } from './sites/shop.js';
import { createStore, exportStore, hashStore, type Tables } from './store.js';

/** Every site, by name. */
export const SITES: Readonly<Record<string, Site>> = { shop: shopSite, booking: bookingSite };

/** A task's `initialState`: which site, where the session starts, the perturbation config and the store's tables. */
export const webWorldSchema = z.object({
  site: z.enum(['shop', 'booking']),
  url: z.string().startsWith('/'),
  config: z.object({
    seed: z.number().int(),
    perturbations: z.array(z.enum(PERTURBATIONS)),
    pageSize: z.number().int().positive(),
    lateTicks: z.number().int().nonnegative(),
    newsletterAt: z.number().int().nonnegative(),
    timeoutTicks: z.number().int().nonnegative(),
    credentials: z.object({ user: z.string(), password: z.string() }),
  }),
  tables: z.record(z.string(), z.record(z.string(), z.record(z.string(), z.any()))),
});
export type WebWorld = { site: 'shop' | 'booking'; url: string; config: PageConfig; tables: Record<string, Record<string, Record<string, JsonValue>>> };

/** The runtime's state for one episode: the current page (persistent; replaced by every action). */
export interface WebState {
  page: PageState;
  /** Page notes already turned into feedback. */
  seen?: number;
}

/**
 * The initial page of a world (a task's `initialState`): the same JSON always gives an equal page.
 * @example
 * const page = initialPage(task.spec.initialState);
 */
export function initialPage(initialState: JsonValue): PageState {
  const parsed = webWorldSchema.safeParse(initialState);
  if (!parsed.success) throw new EnvHarnessError('PARAMS_INVALID', `web initialState is not a web world: ${parsed.error.issues[0]?.message ?? 'invalid'} at ${parsed.error.issues[0]?.path.join('/') ?? ''}`);
  const world = parsed.data as WebWorld;
  const tables = world.tables as unknown as Tables;
  return openPage(SITES[world.site]!, world.config, createStore(tables, digest(tables)), world.url);
}

/** The initial page of a task. */
export const pageOfTask = (task: Pick<Task, 'spec'>): PageState => initialPage(task.spec.initialState);

export const createWebState = (initialState: JsonValue): WebState => ({ page: initialPage(initialState) });

/** A working copy: O(1), since pages and stores are never mutated. */
export const forkWebState = (state: WebState): WebState => ({ page: state.page, seen: state.seen ?? 0 });

/** The graded digest: the backing store only (where the session is, what is typed, is not graded). */
export const hashWebState = (state: WebState): string => hashStore(state.page.store);

/** A page's digest for cross-checks: url, store and the whole tree with bids (not the clock). */
export function hashPage(page: PageState): string {
  return digest({ url: page.url, store: hashStore(page.store), tree: page.tree as unknown as JsonValue, scroll: page.scroll, dismissed: [...page.dismissed] });
}

/** The state as JSON: the store's tables plus where the session is. */
export function exportWebState(state: WebState): JsonObject {
  const p = state.page;
  return { site: p.site.name, url: p.url, tables: exportStore(p.store), messages: [...p.messages] };
}
