/** The api-workflows domain object: seeded company worlds behind faulty services, graded on state, duplicates and recovery. */
import { defineDomain, type Domain, type InjectionPoint, type JsonValue, type Template } from '../../core/index.js';
import { createApiBaselineAgent } from './baseline.js';
import { apiAcceptanceChecks, apiFeedback, apiReport } from './grading.js';
import { API_POLICY_TEXT } from './policy.js';
import { API_REGRESSION_SET } from './regression.js';
import { exportApiState, forkApiState, hashApiState, type ApiState } from './state.js';
import { apiTemplates } from './templates/index.js';
import { apiTools } from './tools/index.js';
import { createApiUser } from './user.js';
import { stateFor } from './worlds.js';

export interface CreateApiWorkflowsOptions {
  /** Templates to offer instead of the built-in eight. */
  templates?: readonly Template<any>[];
  /** Ship the regression set (default true). */
  regression?: boolean;
}

/**
 * Free-text fields a third party writes (the safety layer places attacker text only there): the
 * records carry none of them today, so they are the fields a real CRM, helpdesk and billing would have.
 */
export const API_INJECTION_POINTS: readonly InjectionPoint[] = [
  { tool: 'get_customer', pointer: '/notes', description: 'free-text notes on the customer record' },
  { tool: 'get_ticket', pointer: '/body', description: 'the text of a support ticket, written by the customer' },
  { tool: 'get_invoice', pointer: '/memo', description: 'the memo line of an invoice' },
];

/**
 * The api-workflows domain: 33 tools over CRM, billing, inventory, shipping, tickets, calendar and mail, each
 * call going through a service layer that injects the task's seeded faults and world events.
 * @example
 * const domain = createApiWorkflowsDomain();
 * const harness = await createHarness({ store, domains: [domain], clock }); // clock: () => an ISO timestamp (README)
 */
export function createApiWorkflowsDomain(options: CreateApiWorkflowsOptions = {}): Domain<ApiState> {
  return defineDomain<ApiState>({
    name: 'api-workflows',
    version: 1,
    description: "Tool calling against a small company's APIs with injected faults (timeouts, 429, 5xx, partial pages, stale reads, schema drift, expired auth, a tool down) and world events; graded on goal, duplicated side effects and recovery.",
    createState: (initialState: JsonValue) => stateFor(initialState),
    fork: forkApiState,
    hashState: hashApiState,
    exportState: (state) => exportApiState(state) as unknown as JsonValue,
    tools: apiTools,
    policy: { text: API_POLICY_TEXT, rules: [] },
    acceptance: apiAcceptanceChecks,
    createUser: createApiUser,
    templates: [...(options.templates ?? apiTemplates)],
    feedback: apiFeedback,
    report: apiReport,
    injectionPoints: API_INJECTION_POINTS,
    // The scripted bot the built-in `rule-based` agent runs on this domain (observations only).
    baselines: { 'rule-based': () => createApiBaselineAgent() },
    ...(options.regression === false || options.templates !== undefined ? {} : { regressionSet: API_REGRESSION_SET }),
  });
}
