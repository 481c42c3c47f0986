/**
 * The module worker threads load for gated retail generation (`templateModules` and `hookModule` of
 * generateBatch): the retail templates, and the oracle and non-triviality gates over the retail domain.
 */
import { retail, retailTemplates } from '../src/domains/retail/index.js';
import { createDomainGateHooks } from '../src/runtime/index.js';

export const templates = retailTemplates;

export function createGateHooks(): ReturnType<typeof createDomainGateHooks> {
  return createDomainGateHooks(retail);
}
