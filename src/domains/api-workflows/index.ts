/** The api-workflows domain: tool calling over a small company's faulty APIs (CRM, billing, inventory, shipping, tickets, calendar, mail). */
import { createApiWorkflowsDomain } from './domain.js';

/** The ready domain with its eight templates and regression set. */
export const apiWorkflows = createApiWorkflowsDomain();

export { API_INJECTION_POINTS, createApiWorkflowsDomain, type CreateApiWorkflowsOptions } from './domain.js';
export { apiTools, API_TOOL_NAMES } from './tools/index.js';
export { apiTemplates, apiTrainingTemplates, apiHeldoutTemplates, type ApiParams } from './templates/index.js';
export { API_REGRESSION_SET, API_REGRESSION_BATCHES, API_REGRESSION_DIGEST } from './regression.js';
export { FAULT_KINDS, type FaultSpec, type Scenario, type Recovery } from './scenario.js';
export { compareWorlds } from './grading.js';
export { generateWorld, type World } from './world.js';
export { createApiState, forkApiState, hashApiState, type ApiState } from './state.js';
export { API_POLICY_TEXT } from './policy.js';
export { createApiUser } from './user.js';
export { createApiBaselineAgent } from './baseline.js';
