/** The budget meter of an episode: what was spent (tokens, tool calls, per-tool calls, errors, time), warnings and truncation. */
import type { Budget, BudgetKind, Feedback, Truncation } from '../core/index.js';

/**
 * Counts what an episode spends against its budget. Gymnasium's `TimeLimit` generalised: it owns its
 * counters, `reset` clears them, and the episode asks it whether a limit is reached.
 */
export class BudgetMeter {
  tokens = 0;
  toolCalls = 0;
  errorStreak = 0;
  private perTool = new Map<string, number>();
  private warned = new Set<string>();
  private startedAt = 0;

  constructor(
    readonly budget: Readonly<Budget>,
    private readonly warnRatio: number,
    private readonly clock: (() => number) | undefined,
  ) {}

  /** Clears the counters for a new episode that started at `startedAt` (clock milliseconds). */
  reset(startedAt: number): void {
    this.tokens = 0;
    this.toolCalls = 0;
    if (this.perTool.size > 0) this.perTool = new Map();
    this.errorStreak = 0;
    if (this.warned.size > 0) this.warned = new Set();
    this.startedAt = startedAt;
  }

  /** Whether the wall-time budget is spent (the action is then not run). */
  isOutOfTime(): boolean {
    const b = this.budget;
    return b.timeMs !== undefined && this.clock !== undefined && this.clock() - this.startedAt >= b.timeMs;
  }

  /** The calls of a tool so far. */
  callsOf(tool: string): number {
    return this.perTool.get(tool) ?? 0;
  }

  /** Counts a dispatched call of `tool` (warning when its quota is nearly used); returns its index among the episode's tool calls. */
  countCall(tool: string, feedback: Feedback[]): number {
    const used = this.perTool.get(tool) ?? 0;
    const index = this.toolCalls++;
    this.perTool.set(tool, used + 1);
    const quota = this.budget.perTool?.[tool];
    if (quota !== undefined) this.warn(`perTool:${tool}`, used + 1, quota, feedback);
    return index;
  }

  /** The limit that is reached after step `step`, if any (errors first, then time, tokens, tool calls, steps). */
  spent(step: number): Truncation | undefined {
    const b = this.budget;
    if (b.consecutiveErrors !== undefined && this.errorStreak > 0 && this.errorStreak >= b.consecutiveErrors) return 'errors';
    if (b.timeMs !== undefined && this.clock !== undefined && this.clock() - this.startedAt >= b.timeMs) return 'time';
    if (b.tokens !== undefined && this.tokens >= b.tokens) return 'tokens';
    if (b.toolCalls !== undefined && this.toolCalls >= b.toolCalls) return 'tool_calls';
    if (b.steps !== undefined && step >= b.steps) return 'steps';
    return undefined;
  }

  limitOf(kind: BudgetKind): number | undefined {
    const b = this.budget;
    switch (kind) {
      case 'steps':
        return b.steps;
      case 'tokens':
        return b.tokens;
      case 'time':
        return b.timeMs;
      case 'tool_calls':
        return b.toolCalls;
      case 'errors':
        return b.consecutiveErrors;
    }
  }

  /** BUDGET_WARNING once per budget when its share reaches the warning ratio (once per streak for errors). */
  warnings(step: number, feedback: Feedback[]): void {
    const b = this.budget;
    if (b.steps !== undefined) this.warn('steps', step, b.steps, feedback);
    if (b.tokens !== undefined) this.warn('tokens', this.tokens, b.tokens, feedback);
    if (b.toolCalls !== undefined) this.warn('tool_calls', this.toolCalls, b.toolCalls, feedback);
    if (b.timeMs !== undefined && this.clock !== undefined) this.warn('time', this.clock() - this.startedAt, b.timeMs, feedback);
    if (b.consecutiveErrors !== undefined) {
      // Once per streak of errors.
      if (this.errorStreak === 0) {
        if (this.warned.size > 0) this.warned.delete('errors');
      } else this.warn('errors', this.errorStreak, b.consecutiveErrors, feedback);
    }
  }

  warn(ref: string, used: number, limit: number, feedback: Feedback[]): void {
    if (used < this.warnRatio * limit || used >= limit || this.warned.has(ref)) return;
    this.warned.add(ref);
    feedback.push({ code: 'BUDGET_WARNING', message: `${Math.round((used / limit) * 100)}% of the ${budgetName(ref)} budget is used (${used} of ${limit})`, ref, details: { used, limit } });
  }
}

/** The name of a budget in messages. */
export function budgetName(ref: string): string {
  if (ref.startsWith('perTool:')) return `${ref.slice(8)} call`;
  return ref === 'tool_calls' ? 'tool-call' : ref === 'errors' ? 'consecutive-error' : ref === 'time' ? 'wall-time' : ref === 'steps' ? 'step' : 'token';
}
