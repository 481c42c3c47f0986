// The web domain's process feedback: wrong pages and distractor clicks judged from the task's hints.
import { describe, expect, it } from 'vitest';
import type { Task } from '../../core/index.js';
import { openPage } from './page.js';
import { plainConfig } from './perturbation.js';
import { shopSite } from './sites/shop.js';
import { createStore } from './store.js';
import { webFeedback } from './tools.js';

const tables = { orders: { 'O-1001': { customer: 'Ada Byron', total: 1250, status: 'pending', note: '' } }, products: {}, customers: {} };

describe('web process feedback', () => {
  it('flags a page off the task\'s paths (a path or a page below one is on them, a longer name is not), never the login page', () => {
    const offPath = (url: string, paths: string[]): boolean => {
      const page = openPage(shopSite, plainConfig(), createStore(tables), url);
      const task = { params: { hints: { paths, distractors: [] } } } as unknown as Task;
      const out = webFeedback({ action: { type: 'tool', tool: 'goto', args: { url } }, trace: [], state: { page }, task });
      return out.some((f) => f.ref === 'wrong-page');
    };
    expect(offPath('/orders', ['/orders'])).toBe(false);
    expect(offPath('/orders/O-1001', ['/customers', '/orders'])).toBe(false);
    expect(offPath('/orders?status=pending', ['/orders'])).toBe(false);
    expect(offPath('/products', ['/orders'])).toBe(true);
    expect(offPath('/orders', ['/order'])).toBe(true);
    expect(offPath('/orders/O-1001', ['/orders/O'])).toBe(true);
    expect(offPath('/login', ['/orders'])).toBe(false);
  });
});
