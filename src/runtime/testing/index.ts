/** Test fixtures of the runtime: the `inventory` test domain, the `null` bench domain and a task builder. */
export { clearanceTemplate, createInventoryDomain, inventoryWorld, restockTemplate } from './inventory.js';
export type { InventoryState, InventoryUserGoal } from './inventory.js';
export { createNullDomain, createNullTask } from './null-domain.js';
export { instantiate } from './tasks.js';
export { makeInventoryTask } from './fixtures.js';
