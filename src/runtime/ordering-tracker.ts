/** The ordering tracker of an episode: which "before" actions happened, and which ordering rules were broken. */
import type { Action, Feedback, OrderingRule } from '../core/index.js';
import { matchesPattern } from './patterns.js';

/** Watches the successful actions of an episode against the task's ordering rules; `reset` forgets them. */
export class OrderingTracker {
  private before: boolean[] = [];
  private violated = new Set<string>();

  constructor(private readonly rules: readonly OrderingRule[] | undefined) {}

  reset(): void {
    const n = this.rules?.length ?? 0;
    if (this.before.length === n) this.before.fill(false);
    else this.before = new Array<boolean>(n).fill(false);
    if (this.violated.size > 0) this.violated = new Set();
  }

  /** ORDER_VIOLATION, once per rule, when an "after" action comes before the rule's first "before" action. */
  observe(action: Action, feedback: Feedback[]): void {
    const rules = this.rules;
    if (rules === undefined) return;
    for (let i = 0; i < rules.length; i++) {
      const rule = rules[i]!;
      if (this.before[i]) continue;
      if (matchesPattern(rule.before, action)) {
        this.before[i] = true;
      } else if (matchesPattern(rule.after, action) && !this.violated.has(rule.id)) {
        this.violated.add(rule.id);
        feedback.push({ code: 'ORDER_VIOLATION', message: rule.message ?? `an action that must come after another came first (rule ${rule.id})`, severity: 'medium', ref: rule.id });
      }
    }
  }

  /** Ids of the broken rules, sorted. */
  violations(): string[] {
    return [...this.violated].sort();
  }
}
