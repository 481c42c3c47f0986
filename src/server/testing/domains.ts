/**
 * Domains for server tests, benches and the Python client's tests (`envharness serve --domain-module`):
 * the runtime's `inventory` test domain (tools, state, a simulated user) and a `null` domain with one
 * template whose steps cost nothing but the framework (for measuring the server itself).
 */
import { z } from 'zod';
import { defineTemplate, type Domain } from '../../core/index.js';
import { createInventoryDomain, createNullDomain } from '../../runtime/testing/index.js';

/** `null/noop@1`: call `noop` as often as you like, then finish; a budget no test reaches. */
export const noopTemplate = defineTemplate<Record<string, never>>({
  domain: 'null',
  name: 'noop',
  version: 1,
  taskType: 'noop',
  description: 'Call noop any number of times, then finish (for measuring the framework).',
  levels: [{}],
  params: z.object({}).strict() as unknown as z.ZodType<Record<string, never>>,
  sample: () => ({}),
  build: () => ({
    instructions: 'Call noop, then finish.',
    initialState: null,
    budget: { steps: 1_000_000_000, consecutiveErrors: 1_000_000_000 },
    acceptance: { finalState: true },
  }),
  solve: () => [{ type: 'tool', tool: 'noop', args: {} }, { type: 'finish' }],
});

/** A fresh copy of each test domain. */
export function createTestDomains(): Domain<any>[] {
  return [createInventoryDomain(), { ...createNullDomain(), templates: [noopTemplate] }];
}

export const domains: Domain<any>[] = createTestDomains();
