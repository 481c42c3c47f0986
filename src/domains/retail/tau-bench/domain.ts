/** The retail domain as imported tau-bench tasks need it: tau-bench's grading, EnvHarness's feedback. */
import type { AcceptanceCheck, JsonValue, PolicyRule, Rng, SimulatedUser, Task } from '../../../core/index.js';
import type { RetailDomain } from '../domain.js';
import type { RetailState } from '../state.js';

/** Template names of imported tau-bench task sets start with this (`retail/tau-bench-train@1`). */
export const TAU_BENCH_TEMPLATE_PREFIX = 'retail/tau-bench-';

/** The hidden goal an imported task hands its simulated user (`spec.user`). */
export interface TauBenchUserGoal {
  source: 'tau-bench';
  user_id: string;
  /** tau-bench's `instruction`: what its LLM user simulator is told to pursue. */
  instruction: string;
}

/** Whether a task was imported from tau-bench (`importTauBench`). */
export function isTauBenchTask(task: Pick<Task, 'template' | 'spec'>): boolean {
  return task.template.startsWith(TAU_BENCH_TEMPLATE_PREFIX) && tauBenchUserGoal(task) !== undefined;
}

/** The hidden goal of an imported task, or undefined for any other task. */
export function tauBenchUserGoal(task: Pick<Task, 'spec'>): TauBenchUserGoal | undefined {
  const user = task.spec.user as { [key: string]: JsonValue } | undefined | null;
  if (user === null || typeof user !== 'object' || Array.isArray(user) || user['source'] !== 'tau-bench') return undefined;
  if (typeof user['user_id'] !== 'string' || typeof user['instruction'] !== 'string') return undefined;
  return user as unknown as TauBenchUserGoal;
}

export interface TauBenchDomainOptions {
  /**
   * The simulated user of imported tasks; none by default (the oracle needs none). Other tasks keep
   * the retail domain's own user.
   */
  user?: (task: Task, rng: Rng) => SimulatedUser | undefined;
}

/**
 * Wraps the retail domain so imported tau-bench tasks are graded exactly as tau-bench grades them,
 * and leaves every other task as it was. For imported tasks: policy rules still report
 * POLICY_VIOLATION feedback but never block a call (tau-bench's tools do not enforce its policy, so
 * a blocked call would change the final state), the domain's extra acceptance checks are skipped
 * (tau-bench grades the final state and the outputs only), and the simulated user is `options.user`.
 * The result is still the `retail` domain: register it in a harness in place of the plain one.
 * @example
 * const retail = createTauBenchDomain(createRetailDomain({ worlds: [loadTauBenchWorld(dir)] }));
 * const harness = await createHarness({ store, domains: [retail], clock }); // clock: () => an ISO timestamp (README)
 */
export function createTauBenchDomain(retail: RetailDomain, options: TauBenchDomainOptions = {}): RetailDomain {
  const policy = retail.policy === undefined ? undefined : { text: retail.policy.text, rules: retail.policy.rules.flatMap(splitRule) };
  const acceptance = retail.acceptance?.map(
    (check): AcceptanceCheck<RetailState> => ({ id: check.id, check: (ctx) => (isTauBenchTask(ctx.task) ? undefined : check.check(ctx)) }),
  );
  const baseUser = retail.createUser;
  const view: RetailDomain = {
    ...retail,
    createUser: (task, rng) => (isTauBenchTask(task) ? options.user?.(task, rng) : baseUser?.call(retail, task, rng)) as SimulatedUser,
  };
  if (policy === undefined) delete view.policy;
  else view.policy = policy;
  if (acceptance === undefined) delete view.acceptance;
  else view.acceptance = acceptance;
  return view;
}

/** A blocking rule becomes two: blocking for other tasks, advisory (feedback only) for imported ones. */
function splitRule(rule: PolicyRule<RetailState>): Array<PolicyRule<RetailState>> {
  if (rule.block !== true) return [rule];
  return [
    { ...rule, check: (action, ctx) => (isTauBenchTask(ctx.task) ? undefined : rule.check(action, ctx)) },
    { ...rule, block: false, check: (action, ctx) => (isTauBenchTask(ctx.task) ? rule.check(action, ctx) : undefined) },
  ];
}
