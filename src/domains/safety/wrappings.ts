/**
 * The built-in wrappings of the attack layer: which kinds each base can host, and the frozen set each
 * ships. A wrapping's name is derived from its base's (`safety-<base>`; `safety` over retail), so no
 * base is named here.
 */
import type { Domain } from '../../core/index.js';
import { ATTACK_KINDS } from './attacks.js';
import { createAttackDomain, type AttackDomain, type AttackDomainOptions, type SafetyKind } from './domain.js';
import { OUT_OF_BOUNDS_KINDS } from './out-of-bounds.js';
import { safetyRegressionBatches, SAFETY_REGRESSION_DOMAIN, SAFETY_REGRESSION_SET } from './regression.js';

type Options = Omit<AttackDomainOptions, 'regressionSet'>;

/**
 * `base` wrapped as `name` with `kinds`. The frozen set's digest is for exactly that wrapping: another
 * name, defense, kind list or base-template list gets no set.
 */
function wrap<S>(base: Domain<S>, name: string, kinds: readonly SafetyKind[], regressionSet: AttackDomainOptions['regressionSet'], options: Options): AttackDomain<S> {
  const plain = options.defense === undefined && options.kinds === undefined && options.baseTemplates === undefined && (options.name ?? name) === name;
  return createAttackDomain(base, { kinds, ...options, name: options.name ?? name, ...(plain && regressionSet !== undefined ? { regressionSet } : {}) });
}

/**
 * The built-in safety domain over retail, `safety`: every attack and out-of-bounds kind, no defense,
 * with the frozen regression set.
 * @example
 * const safety = createRetailSafetyDomain(retail);
 */
export function createRetailSafetyDomain<S>(retail: Domain<S>, options: Options = {}): AttackDomain<S> {
  return wrap(retail, SAFETY_REGRESSION_DOMAIN, [...ATTACK_KINDS, ...OUT_OF_BOUNDS_KINDS], SAFETY_REGRESSION_SET, options);
}

/**
 * The built-in safety domain over api-workflows, `safety-api-workflows`: every kind but
 * skip-confirmation, no defense. No api-workflows training task both reads an injectable output and
 * makes a write that needs confirmation: only `conditional` at levels 3-5 asks for confirmation; at 3
 * its reference reads no customer, ticket or invoice record, and at 4-5 the re-read invoice is paid, so
 * it charges nothing.
 * @example
 * const safety = createApiWorkflowsSafetyDomain(apiWorkflows);
 */
export function createApiWorkflowsSafetyDomain<S>(api: Domain<S>, options: Options = {}): AttackDomain<S> {
  const name = `${SAFETY_REGRESSION_DOMAIN}-${api.name}`;
  const kinds = [...ATTACK_KINDS.filter((k) => k !== 'skip-confirmation'), ...OUT_OF_BOUNDS_KINDS];
  // 68 tasks: 4 attack kinds x 7 levels and 2 out-of-bounds kinds x 3 levels, two each.
  return wrap(api, name, kinds, { batches: safetyRegressionBatches(name, kinds, 20_261_301, '1'), digest: '5ab0690223210a21390644245f063e76c7cfd671294739bb2efe636fc3d04d90' }, options);
}

/**
 * The built-in safety domain over web, `safety-web`: the attack kinds but skip-confirmation (attacks in
 * page text), no defense. Web tasks ask for no confirmation and carry no record ids (an element id is
 * not a record), so skip-confirmation and the out-of-bounds kinds have nothing to hold on to there.
 * @example
 * const safety = createWebSafetyDomain(web);
 */
export function createWebSafetyDomain<S>(web: Domain<S>, options: Options = {}): AttackDomain<S> {
  const name = `${SAFETY_REGRESSION_DOMAIN}-${web.name}`;
  const kinds = ATTACK_KINDS.filter((k) => k !== 'skip-confirmation');
  // 56 tasks: 4 attack kinds x 7 levels, two each.
  return wrap(web, name, kinds, { batches: safetyRegressionBatches(name, kinds, 20_261_401, '1'), digest: '3dd56647e2c96c482b1b6e45d0f210fafd725d9c04a4279e70787f55ae34310d' }, options);
}
