/** The checks a parsed tool call passes before it is dispatched: forbidden calls, per-tool quotas, confirmation, policy rules. */
import { toEnvHarnessError } from '../core/index.js';
import type { Action, Budget, Domain, Feedback, Finding, Task, Tool, TraceEntry } from '../core/index.js';
import type { BudgetMeter } from './budget-meter.js';
import { blank, refusal, simulatorFailure, violation } from './outcome.js';
import type { Outcome } from './outcome.js';
import { matchesPattern } from './patterns.js';
import type { PreparedTask } from './runtime-cache.js';

/**
 * The task's and the domain's rules for tool calls, checked in order: a forbidden call, a spent per-tool quota,
 * a missing confirmation, then every policy rule (each finding is feedback; a blocking one refuses the call).
 */
export class CallPolicy<S> {
  private readonly rules: NonNullable<Domain<S>['policy']>['rules'];
  private readonly task: Task;

  constructor(
    domain: Domain<S>,
    private readonly prepared: PreparedTask<S>,
    private readonly budget: Readonly<Budget>,
    private readonly meter: BudgetMeter,
  ) {
    this.rules = domain.policy?.rules ?? [];
    this.task = prepared.task;
  }

  /**
   * The outcome of a refused call, or undefined when the call may be dispatched (findings of non-blocking
   * rules are in `feedback` then). A rule that throws is a simulator error.
   */
  refusal(tool: Tool<S, any>, call: Action & { type: 'tool' }, confirmed: boolean, state: S, trace: readonly TraceEntry[], feedback: Feedback[]): Outcome | undefined {
    for (let i = 0; i < this.prepared.forbidden.length; i++) {
      const rule = this.prepared.forbidden[i]!;
      if (rule.tool === tool.name && (rule.args === undefined || matchesPattern({ args: rule.args }, call))) {
        const message = `${tool.name} is forbidden here${rule.reason !== undefined ? `: ${rule.reason}` : ''}; the call was refused`;
        return refusal('FORBIDDEN', message, feedback, { code: 'POLICY_VIOLATION', message, severity: 'high', ref: 'forbidden' }, call);
      }
    }
    const quota = this.budget.perTool?.[tool.name];
    if (quota !== undefined && this.meter.callsOf(tool.name) >= quota) {
      const message = `${tool.name} may be called at most ${quota} times in this task; the call was refused`;
      return refusal('QUOTA_EXCEEDED', message, feedback, { code: 'BUDGET_EXHAUSTED', message, ref: `perTool:${tool.name}`, details: { limit: quota } }, call);
    }
    if (this.prepared.confirm.has(tool.name) && !confirmed) {
      const message = `${tool.name} needs the user's explicit confirmation first (ask the user and get a yes since the last change); the call was refused`;
      return refusal('CONFIRMATION_REQUIRED', message, feedback, { code: 'POLICY_VIOLATION', message, severity: 'medium', ref: 'confirmation_required' }, call);
    }
    let blocked: string | undefined;
    for (let i = 0; i < this.rules.length; i++) {
      const rule = this.rules[i]!;
      let found: Finding | undefined;
      try {
        found = rule.check(call, { state, trace, task: this.task });
      } catch (error) {
        return simulatorFailure(`policy rule ${rule.id} failed: ${toEnvHarnessError(error).message}`, call);
      }
      if (found === undefined) continue;
      const message = typeof found === 'string' ? found : found.message;
      feedback.push(typeof found === 'string' ? { code: 'POLICY_VIOLATION', message, severity: rule.severity, ref: rule.id } : violation(found, rule.severity, rule.id));
      if (rule.block === true && blocked === undefined) blocked = message;
    }
    if (blocked === undefined) return undefined;
    const out = blank({ kind: 'tool', error: { code: 'POLICY_VIOLATION', message: `refused: ${blocked}` } });
    out.action = call;
    out.ok = false;
    out.agentError = true;
    return out;
  }
}
