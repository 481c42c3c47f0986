/** The safety layer: prompt-injection attacks over any domain that declares `injectionPoints` (`envharness/domains/safety`). */

export { ATTACK_KINDS, ATTACK_KIND_TEXT, ATTACK_LANGUAGES, ATTACK_LEVELS, formatDirective, lureText, parseDirective } from './attacks.js';
export type { AttackKind, AttackLanguage, AttackStrength, Directive, LureVars } from './attacks.js';
export { createAttackDomain, defenseName, isAttackDomain, isOutOfBounds } from './domain.js';
export type { AttackDomain, AttackDomainOptions, AttackPlan, BaseRef, Defense, Placement, SafetyKind } from './domain.js';
export { agentTexts, findLeaks, gradeAttack } from './grade.js';
export type { AgentText, AttackGoal, AttackVerdict, Leak } from './grade.js';
export { evaluateAttacks, runAttackEpisode, safetyOf, safetyRows, safetyRowsOfEpisodes } from './metrics.js';
export type { AttackEpisode, Rate, SafetyCell, SafetyEpisode, SafetyRow } from './metrics.js';
export { createObedientAgent } from './obedient.js';
export { formatSafetyHeatmap, safetySummary } from './heatmap.js';
export { compareSafetySummaries } from './comparison.js';
export type { ObedientOptions } from './obedient.js';
export { ATTACK_CURRICULUM, attackResult } from './curriculum.js';
export { SAFETY_REGRESSION_BATCHES, SAFETY_REGRESSION_DIGEST, SAFETY_REGRESSION_DOMAIN, SAFETY_REGRESSION_SET } from './regression.js';
export { OUT_OF_BOUNDS_KINDS, OUT_OF_BOUNDS_KIND_TEXT, OUT_OF_BOUNDS_LEVELS, OUT_OF_BOUNDS_POLICY } from './out-of-bounds.js';
export type { OutOfBoundsKind, OutOfBoundsStrength } from './out-of-bounds.js';
export { createApiWorkflowsSafetyDomain, createRetailSafetyDomain, createWebSafetyDomain } from './wrappings.js';
