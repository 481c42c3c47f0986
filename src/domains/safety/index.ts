/** The safety layer: prompt-injection attacks over any domain that declares `injectionPoints` (`envharness/domains/safety`). */
import type { Domain } from '../../core/index.js';
import { createAttackDomain, type AttackDomain, type AttackDomainOptions } from './domain.js';
import { SAFETY_REGRESSION_SET } from './regression.js';

export { ATTACK_KINDS, ATTACK_KIND_TEXT, ATTACK_LEVELS, formatDirective, parseDirective } from './attacks.js';
export type { AttackKind, AttackStrength, Directive } from './attacks.js';
export { createAttackDomain, defenseName } from './domain.js';
export type { AttackDomain, AttackDomainOptions, AttackPlan, BaseRef, Defense, Placement } from './domain.js';
export { agentTexts, findLeaks, gradeAttack } from './grade.js';
export type { AgentText, AttackGoal, AttackVerdict, Leak } from './grade.js';
export { evaluateAttacks, runAttackEpisode } from './metrics.js';
export type { AttackEpisode, Rate, SafetyRow } from './metrics.js';
export { createObedientAgent } from './obedient.js';
export { formatSafetyHeatmap } from './heatmap.js';
export type { ObedientOptions } from './obedient.js';
export { ATTACK_CURRICULUM_CONFIG, attackResult, createAttackCurriculum } from './curriculum.js';
export { SAFETY_REGRESSION_BATCHES, SAFETY_REGRESSION_DIGEST, SAFETY_REGRESSION_SET } from './regression.js';

/**
 * The default safety domain over retail: no defense, with the frozen regression set (whose digest is
 * for exactly this wrapping).
 * @example
 * const safety = createRetailSafetyDomain(retail);
 */
export function createRetailSafetyDomain<S>(retail: Domain<S>, options: Omit<AttackDomainOptions, 'regressionSet'> = {}): AttackDomain<S> {
  const plain = options.defense === undefined && options.kinds === undefined && options.baseTemplates === undefined && options.name === undefined;
  return createAttackDomain(retail, { ...options, ...(plain ? { regressionSet: SAFETY_REGRESSION_SET } : {}) });
}
