/** The grader of an episode: what the agent said and answered, and the outcome against the task's acceptance. */
import { toEnvHarnessError } from '../core/index.js';
import type { Domain, Finding, JsonObject, Task, TraceEntry } from '../core/index.js';

/** What grading reads of the episode at its end. */
export interface GradeInput<S> {
  /** The final state's hash (computed only when the task compares final states). */
  stateHash: () => string;
  state: S;
  trace: readonly TraceEntry[];
  /** The broken ordering rules, sorted. */
  orderViolations: () => string[];
}

/** Collects the agent's messages and final answer (`reset` forgets them) and grades the episode. */
export class Grader<S> {
  private messages: string[] = [];
  private answer: string | undefined;
  private readonly normalize: (text: string) => string;

  constructor(
    private readonly domain: Domain<S>,
    private readonly task: Task,
    private readonly referenceHash: string,
    private readonly referenceState: S,
  ) {
    this.normalize = domain.normalizeOutput ?? normalizeOutput;
  }

  reset(): void {
    this.messages = [];
    this.answer = undefined;
  }

  /** A message the agent sent (required outputs are looked for in them). */
  said(text: string): void {
    this.messages.push(text);
  }

  /** The answer of the agent's finish action. */
  answered(answer: string | undefined): void {
    this.answer = answer;
  }

  /** The outcome: 1 iff every acceptance criterion of the task holds, with what each check found. */
  grade(input: GradeInput<S>): { outcome: number; checks: JsonObject } {
    const acceptance = this.task.spec.acceptance;
    const checks: JsonObject = {};
    let pass = true;
    if (acceptance.finalState) {
      const same = input.stateHash() === this.referenceHash;
      checks.finalState = same;
      pass &&= same;
    }
    if (acceptance.outputs !== undefined && acceptance.outputs.length > 0) {
      const said = this.messages.map(this.normalize);
      const missing = acceptance.outputs.filter((o) => {
        const want = this.normalize(o);
        return !said.some((m) => m.includes(want));
      });
      checks.missingOutputs = missing;
      pass &&= missing.length === 0;
    }
    if (acceptance.answer !== undefined) {
      const same = this.answer !== undefined && this.normalize(this.answer).trim() === this.normalize(acceptance.answer).trim();
      checks.answer = same;
      pass &&= same;
    }
    if (acceptance.ordering !== undefined && acceptance.ordering.length > 0) {
      const violations = input.orderViolations();
      checks.orderViolations = violations;
      pass &&= violations.length === 0;
    }
    const domainChecks = this.domain.acceptance;
    if (domainChecks !== undefined && domainChecks.length > 0) {
      const failed: JsonObject[] = [];
      for (const check of domainChecks) {
        let found: Finding | undefined;
        try {
          found = check.check({ state: input.state, trace: input.trace as TraceEntry[], task: this.task, referenceState: this.referenceState });
        } catch (error) {
          found = `check failed to run: ${toEnvHarnessError(error).message}`;
        }
        // A message is recorded as { id, message } (as before); a Problem adds its code and pointer.
        if (typeof found === 'string') failed.push({ id: check.id, message: found });
        else if (found !== undefined) failed.push({ id: check.id, ...found });
      }
      checks.failedChecks = failed;
      pass &&= failed.length === 0;
    }
    return { outcome: pass ? 1 : 0, checks };
  }
}

/** Default normalisation of required outputs (tau-bench's): lower-case, commas removed. */
export function normalizeOutput(text: string): string {
  return text.toLowerCase().replace(/,/g, '');
}
