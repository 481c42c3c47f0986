/**
 * A simulated page live in real Chromium: the Playwright driver that plays the action set in the browser,
 * with the browser deciding what can be acted on.
 */
import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { step, type PageState, type PageStep, type WebAction, type WebError, type WebErrorCode } from '../page.js';
import { renderDocument, renderView, type PageView } from './render.js';

/** The origin pages are served from (answered by `page.route`; nothing leaves the machine). */
export const SITE_ORIGIN = 'http://site.envharness.test';

/** The element actions: the browser decides whether their target can be acted on. */
const ELEMENT_ACTIONS = new Set<WebAction['type']>(['click', 'fill', 'select_option', 'check', 'uncheck', 'press']);

/** What a browser step returns: the page and the error as the site logic reports them, plus the browser's own verdict. */
export interface BrowserStep extends PageStep {
  /**
   * The rejection as the browser decided it: for unknown, hidden, covered and disabled targets the
   * browser's layout alone (undefined when it let the action through, even if the site logic behind it
   * then refused); for what only the site knows (a bad key, an off-site URL) the site logic's code.
   */
  verdict: WebErrorCode | undefined;
}

/** Codes a browser decides by itself, from layout and the DOM. */
const BROWSER_CODES = new Set<WebErrorCode>(['UNKNOWN_BID', 'HIDDEN', 'COVERED', 'DISABLED']);

export interface BrowserPageOptions {
  /** Playwright's timeout for an action the browser has already found actionable (ms). Default 5,000. */
  actionTimeoutMs?: number;
}

/** One element of the browser's accessibility tree, by the `data-bid` of its DOM node. */
export interface AxElement {
  role: string;
  name: string;
  /** Chromium left the node out of the accessibility tree (not rendered). */
  ignored: boolean;
  /** ARIA states and values Chromium reports: checked, disabled, expanded, selected, value, required, invalid. */
  states: Record<string, string | boolean>;
}

/**
 * A page state played in Chromium. Design: DOM events are routed to the Node side through
 * `page.exposeFunction`, where the site's pure `step` runs and the page is re-rendered; the browser
 * swaps the new body in. Chosen over bundling the site logic into the page because the simulation and
 * the browser then run the very same code object (no second build of the logic to drift, no
 * serialising the backing store into the page), and because the state hash the cross-check compares is
 * computed by the same function on the same state. What the browser decides is what a real browser
 * decides: whether the target exists, is rendered, is the top element at its click point (not under a
 * modal's backdrop) and is enabled, from real CSS layout and hit testing; then Playwright performs the
 * real input (mouse click, typing, select, key press) and the page's event handlers turn the DOM event
 * into the action the site logic runs. Actions with no target (scroll, goto, go_back, noop,
 * send_msg_to_user, finish) have nothing for a browser to judge and go straight to the site logic
 * through the same binding.
 */
export class BrowserPage {
  private state: PageState;
  private results: PageStep[] = [];
  private cdp: CDPSession | undefined;

  private constructor(
    readonly page: Page,
    start: PageState,
    private readonly timeoutMs: number,
  ) {
    this.state = start;
  }

  /**
   * Opens `start` in a new tab of `context`.
   * @example
   * const live = await BrowserPage.open(browser.context, openPage(shopSite, plainConfig(), store));
   * const { error } = await live.act({ type: 'click', bid: '12' });
   */
  static async open(context: BrowserContext, start: PageState, options: BrowserPageOptions = {}): Promise<BrowserPage> {
    const page = await context.newPage();
    const live = new BrowserPage(page, start, options.actionTimeoutMs ?? 5_000);
    await page.exposeFunction('__envharnessAct', (action: WebAction): PageView => {
      const result = step(live.state, action);
      live.state = result.page;
      live.results.push(result);
      return renderView(result.page);
    });
    await page.route(`${SITE_ORIGIN}/**`, (route) => route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: renderDocument(live.state) }));
    await page.goto(`${SITE_ORIGIN}${start.url}`);
    return live;
  }

  /** The page state now (the Node side's, as the browser's events have driven it). */
  get current(): PageState {
    return this.state;
  }

  /**
   * Plays one action in the browser. Returns the page after it and, when it was rejected, the error:
   * the browser's verdict for unknown, hidden, covered and disabled targets, the site logic's for
   * everything the site itself refuses (a bad key, an off-site URL).
   */
  async act(action: WebAction): Promise<BrowserStep> {
    const before = this.results.length;
    if (ELEMENT_ACTIONS.has(action.type)) {
      const target = action as Extract<WebAction, { bid: string }>;
      const args = { bid: String(target.bid), type: target.type, value: target.type === 'select_option' ? String(target.value) : '' };
      const verdict = await this.page.evaluate((a) => (globalThis as unknown as { __envharnessJudge(a: unknown): Verdict }).__envharnessJudge(a), args);
      if (verdict.code !== undefined) return { page: this.state, error: this.rejection(action, verdict.code), verdict: verdict.code };
      try {
        await this.perform(target, verdict);
      } catch (error) {
        const code = playwrightCode((error as Error).message);
        if (code === undefined) throw error;
        return { page: this.state, error: this.rejection(action, code), verdict: code };
      }
    } else {
      await this.page.evaluate((a) => (globalThis as unknown as { __envharnessSend(a: unknown): Promise<void> }).__envharnessSend(a), action as unknown as Record<string, unknown>);
    }
    await this.page.evaluate(() => (globalThis as unknown as { __envharnessSettled(): Promise<void> }).__envharnessSettled());
    const produced = this.results.slice(before);
    if (produced.length !== 1) {
      throw new Error(`the browser turned ${JSON.stringify(action)} into ${produced.length} site actions (${produced.length === 0 ? 'no DOM event reached a handler' : 'several DOM events'}); expected exactly one`);
    }
    const result = produced[0]!;
    const code = result.error?.code;
    return { ...result, verdict: code !== undefined && ELEMENT_ACTIONS.has(action.type) && BROWSER_CODES.has(code) ? undefined : code };
  }

  /** Chromium's accessibility tree (through CDP), keyed by the `data-bid` of each node's DOM element. */
  async accessibility(): Promise<Map<string, AxElement>> {
    this.cdp ??= await this.page.context().newCDPSession(this.page);
    const snapshot = (await this.cdp.send('DOMSnapshot.captureSnapshot', { computedStyles: [] })) as unknown as DomSnapshot;
    const { strings } = snapshot;
    const bidByBackend = new Map<number, string>();
    for (const doc of snapshot.documents) {
      const { backendNodeId, attributes } = doc.nodes;
      for (let i = 0; i < backendNodeId.length; i++) {
        const attrs = attributes[i] ?? [];
        for (let j = 0; j + 1 < attrs.length; j += 2) if (strings[attrs[j]!] === 'data-bid') bidByBackend.set(backendNodeId[i]!, strings[attrs[j + 1]!]!);
      }
    }
    const tree = (await this.cdp.send('Accessibility.getFullAXTree')) as unknown as { nodes: CdpAxNode[] };
    const out = new Map<string, AxElement>();
    for (const node of tree.nodes) {
      const bid = node.backendDOMNodeId === undefined ? undefined : bidByBackend.get(node.backendDOMNodeId);
      if (bid === undefined) continue;
      const states: Record<string, string | boolean> = {};
      for (const p of node.properties ?? []) if (AX_STATES.has(p.name)) states[p.name] = p.value.value as string | boolean;
      if (node.value?.value !== undefined) states['value'] = String(node.value.value);
      out.set(bid, { role: String(node.role?.value ?? ''), name: String(node.name?.value ?? ''), ignored: node.ignored === true, states });
    }
    return out;
  }

  /** A PNG of the viewport (or the full page). */
  async screenshot(options: { path?: string; fullPage?: boolean } = {}): Promise<Buffer> {
    return this.page.screenshot({ ...(options.path === undefined ? {} : { path: options.path }), fullPage: options.fullPage ?? false });
  }

  async close(): Promise<void> {
    await this.cdp?.detach().catch(() => {});
    await this.page.close();
  }

  private async perform(action: Extract<WebAction, { bid: string }>, verdict: Verdict): Promise<void> {
    const locator = this.page.locator(`[data-bid="${cssString(action.bid)}"]`);
    const timeout = this.timeoutMs;
    switch (action.type) {
      case 'click':
        // No point of its own (every pixel is a child's, as in a table row): the click is dispatched on it.
        if (verdict.point === null) return locator.dispatchEvent('click', undefined, { timeout });
        return locator.click({ timeout, ...(verdict.point === undefined ? {} : { position: verdict.point }) });
      case 'fill':
        return locator.fill(String(action.text), { timeout });
      case 'select_option':
        await locator.selectOption(String(action.value), { timeout });
        return;
      case 'check':
      case 'uncheck':
        // Already in the asked state: a real click would undo it, so the action goes to the site as is.
        if (verdict.checked === (action.type === 'check')) {
          await this.page.evaluate((a) => (globalThis as unknown as { __envharnessSend(a: unknown): Promise<void> }).__envharnessSend(a), action as unknown as Record<string, unknown>);
          return;
        }
        return action.type === 'check' ? locator.check({ timeout }) : locator.uncheck({ timeout });
      case 'press':
        return locator.press(String(action.key), { timeout });
    }
  }

  /** The rejection for a browser verdict, with the site logic's message when the two agree. */
  private rejection(action: WebAction, code: WebErrorCode): WebError {
    const sim = step(this.state, action).error;
    if (sim !== undefined && sim.code === code) return sim;
    const bid = 'bid' in action ? String(action.bid) : undefined;
    return { code, message: `the browser refused ${action.type}${bid === undefined ? '' : ` on [${bid}]`}: ${code.toLowerCase().replace(/_/g, ' ')}`, ...(bid === undefined ? {} : { bid }) };
  }
}

/** Playwright's actionability failures, as the simulation's codes. */
function playwrightCode(message: string): WebErrorCode | undefined {
  if (/element is not visible/i.test(message)) return 'HIDDEN';
  if (/intercepts pointer events/i.test(message)) return 'COVERED';
  if (/element is not enabled|element is disabled/i.test(message)) return 'DISABLED';
  if (/not an <input>|cannot be filled/i.test(message)) return 'NOT_EDITABLE';
  if (/not a checkbox/i.test(message)) return 'NOT_CHECKABLE';
  if (/not a <select>/i.test(message)) return 'NOT_SELECT';
  if (/unknown key/i.test(message)) return 'BAD_KEY';
  return undefined;
}

function cssString(text: string): string {
  return text.replace(/["\\]/g, (c) => `\\${c}`);
}

/** The page's answer to "can this be acted on?" (see `__envharnessJudge` in page-script.ts). */
interface Verdict {
  code?: WebErrorCode;
  checked?: boolean;
  /** Where to click a container: a point of its own; null when it has none. */
  point?: { x: number; y: number } | null;
}

const AX_STATES = new Set(['checked', 'disabled', 'expanded', 'selected', 'required', 'invalid', 'modal']);

interface DomSnapshot {
  strings: string[];
  documents: Array<{ nodes: { backendNodeId: number[]; attributes: number[][] } }>;
}

interface CdpAxNode {
  ignored?: boolean;
  role?: { value?: unknown };
  name?: { value?: unknown };
  value?: { value?: unknown };
  properties?: Array<{ name: string; value: { value?: unknown } }>;
  backendDOMNodeId?: number;
}
