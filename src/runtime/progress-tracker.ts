/** The progress tracker of an episode: subgoals reached, and steps since the last progress (NO_PROGRESS). */
import type { Action, Feedback, Subgoal } from '../core/index.js';
import { matchesPattern } from './patterns.js';

/** Tracks progress towards the goal; `reset` forgets it. */
export class ProgressTracker {
  private reached = new Set<string>();
  private since = 0;

  constructor(
    private readonly subgoals: readonly Subgoal[] | undefined,
    readonly noProgressSteps: number,
  ) {}

  reset(): void {
    // A fresh tracker's (or an unused one's) set is kept: the gates reset several episodes per task.
    if (this.reached.size > 0) this.reached = new Set();
    this.since = 0;
  }

  /** SUBGOAL_REACHED for each subgoal a successful action reaches first; returns whether it reached any. */
  observe(action: Action, feedback: Feedback[]): boolean {
    const subgoals = this.subgoals;
    if (subgoals === undefined) return false;
    let progress = false;
    for (const subgoal of subgoals) {
      if (this.reached.has(subgoal.id) || !matchesPattern(subgoal.pattern, action)) continue;
      this.reached.add(subgoal.id);
      progress = true;
      feedback.push({ code: 'SUBGOAL_REACHED', message: `subgoal ${subgoal.id} reached`, ref: subgoal.id });
    }
    return progress;
  }

  /** After a step that did not end the episode: NO_PROGRESS every `noProgressSteps` steps without progress. */
  afterStep(progress: boolean, feedback: Feedback[]): void {
    if (progress) this.since = 0;
    else if (++this.since >= this.noProgressSteps) {
      this.since = 0;
      feedback.push({ code: 'NO_PROGRESS', message: `${this.noProgressSteps} steps without progress towards the goal`, details: { steps: this.noProgressSteps } });
    }
  }
}
