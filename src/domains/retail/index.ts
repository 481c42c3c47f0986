/** The retail customer-service domain: tau-bench's world, schema and 16 tools, policy, simulated customer, templates. */
import { createRetailDomain } from './domain.js';

/**
 * The ready retail domain: generated worlds, tau-bench's tools, the policy, the simulated customer, the
 * ten training and two held-out templates and the frozen regression set.
 * @example
 * const harness = await createHarness({ store, domains: [retail], clock }); // clock: () => an ISO timestamp (README)
 */
export const retail = createRetailDomain();

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
export * from './tau-bench/index.js';
export { createBuiltinRetail } from './builtin.js';
export { createRetailRuleBasedAgent, type RetailRuleBasedOptions } from './rule-based.js';
export { detectIntents, RetailDialogue, type RetailIntentKind, type RetailRequest } from './dialogue.js';
export { applyTauBenchActions, NO_CONTEXT, RESPOND_ACTION, toolsByName, type TauBenchAction, type TauBenchTask } from './tau-bench/actions.js';
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
export { RETAIL_POLICY_TEXT, retailAcceptanceChecks, retailPolicyRules, authenticatedUser } from './policy.js';
export { createRetailUser, parseProposal, fulfils, addressText, itemsText, optionsText } from './user.js';
export { bankOf, HELDOUT_BANK, TRAIN_BANK, isClosing, isRefusal, type PhraseBank } from './phrases.js';
export {
  goalOf,
  RETAIL_USER_VERSION,
  retailGoalSchema,
  WRITE_TOOLS,
  type Disclosure,
  type GoalAddress,
  type Intent,
  type IntentKind,
  type ItemRef,
  type MethodRef,
  type OrderRef,
  type PhraseBankName,
  type RetailGoal,
} from './goal.js';
export {
  addressChangeTemplate,
  cancelTemplate,
  compoundHeldoutTemplate,
  compoundTemplate,
  conditionalHeldoutTemplate,
  conditionalTemplate,
  exchangeTemplate,
  orderStatusTemplate,
  outOfScopeTemplate,
  paymentChangeTemplate,
  policyTrapTemplate,
  retailHeldoutTemplates,
  retailParamsSchema,
  retailTemplates,
  retailTrainingTemplates,
  returnRefundTemplate,
  type RetailParams,
} from './templates/index.js';
export { referenceSolution, RETAIL_INSTRUCTIONS } from './templates/reference.js';
export { TASK_WORLD_SEEDS } from './templates/worlds.js';
export { RETAIL_REGRESSION_BATCHES, RETAIL_REGRESSION_DIGEST, RETAIL_REGRESSION_SET } from './regression.js';
