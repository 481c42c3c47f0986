/** The safety layer: prompt-injection attacks over any domain that declares `injectionPoints` (`envharness/domains/safety`). */
import type { Domain } from '../../core/index.js';
import { createAttackDomain, type AttackDomain, type AttackDomainOptions } from './domain.js';
import { SAFETY_REGRESSION_DOMAIN, SAFETY_REGRESSION_SET } from './regression.js';

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

/**
 * The built-in safety domain over retail, `safety`: every attack and out-of-bounds kind, no
 * defense, with the frozen regression set (whose digest is for exactly this wrapping; another name,
 * defense, kind list or base-template list gets no set).
 * @example
 * const safety = createRetailSafetyDomain(retail);
 */
export function createRetailSafetyDomain<S>(retail: Domain<S>, options: Omit<AttackDomainOptions, 'regressionSet'> = {}): AttackDomain<S> {
  const name = options.name ?? SAFETY_REGRESSION_DOMAIN;
  const plain = options.defense === undefined && options.kinds === undefined && options.baseTemplates === undefined && name === SAFETY_REGRESSION_DOMAIN;
  return createAttackDomain(retail, { ...options, name, ...(plain ? { regressionSet: SAFETY_REGRESSION_SET } : {}) });
}
