/**
 * The `web` domain: generated web sites (a shop back office and a booking site) as a fast simulated page
 * with an accessibility-tree observation, seeded perturbations as difficulty knobs, and tasks graded by
 * the backing store and messages to the user.
 */
export * from './tree.js';
export * from './page.js';
export * from './observation.js';
export * from './perturbation.js';
export * from './store.js';
export * from './state.js';
export type { Site, Spec, View, Effect, RenderContext, HandleContext } from './site.js';
export { playPlan, type Plan, type PlanStep } from './plan.js';
export { WEB_TOOLS, toWebAction, fromWebAction, runWebAction, webFeedback, type ProcessHints } from './tools.js';
export { WEB_TEMPLATES, type WebParams } from './templates.js';
export { createWebBaselineAgent } from './baseline.js';
export { createWebDomain, web, webTemplates, WEB_REGRESSION_SET } from './domain.js';
