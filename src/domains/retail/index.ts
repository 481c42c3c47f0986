/** The retail customer-service domain: tau-bench's world, schema and 16 tools on copy-on-write state. */
export {
  createRetailDomain,
  worldRef,
  type CreateRetailDomainOptions,
  type RetailDomain,
  type RetailInitialState,
} from './domain.js';
export {
  createRetailWorld,
  validateRetailData,
  type CreateRetailWorldOptions,
  type RetailWorld,
} from './world.js';
export {
  createRetailState,
  digestRetailExport,
  exportRetailState,
  forkRetailState,
  getOrder,
  getProduct,
  getRecord,
  getUser,
  hashRetailState,
  listChanges,
  listKeys,
  putRecord,
  type RetailState,
} from './state.js';
export {
  generateRetailWorld,
  normalizeWorldParams,
  RETAIL_GENERATOR_VERSION,
  type GeneratedWorldParams,
  type GenerateRetailWorldOptions,
} from './generator.js';
export { loadTauBenchTasks, loadTauBenchWorld } from './load.js';
export { applyTauBenchActions, NO_CONTEXT, RESPOND_ACTION, toolsByName, type TauBenchAction, type TauBenchTask } from './tau-bench.js';
export { RETAIL_TOOL_NAMES, retailTools } from './tools.js';
export { evaluateExpression, type CalculateResult } from './calculate.js';
export { pyFloatRepr, pyRound2 } from './py.js';
export { itemOf, makeCatalogue, makeOrder, makeProduct, makeRetailWorld, makeUser } from './fixtures.js';
export { RETAIL_TABLES } from './schema.js';
export type {
  CreditCard,
  Fulfillment,
  GiftCard,
  OrderItem,
  OrderStatus,
  PaymentMethod,
  PaymentTransaction,
  PaypalAccount,
  RetailAddress,
  RetailData,
  RetailOrder,
  RetailProduct,
  RetailRecord,
  RetailTable,
  RetailUser,
  RetailVariant,
} from './schema.js';
