/** The fault injector of an episode: which fault hits which tool call, deterministic in (task id, seed, call index). */
import type { Feedback, FaultKind, FaultRule, JsonObject, Tool } from '../core/index.js';
import { fastRng } from '../core/index.js';
import { DEFAULT_RETRY_AFTER_MS } from './faults.js';

/** A fault that hit a call. */
export interface ActiveFault {
  rule: FaultRule;
  ruleIndex: number;
  persistent: boolean;
}

/**
 * Draws the task's fault profile over an episode's tool calls. It owns what the faults did so far
 * (firings per rule, tools stuck on a persistent fault, calls awaiting a retry); `reset` clears it.
 */
export class FaultInjector {
  /** A persistent fault fired: a failed end of this episode is blamed on it. */
  hitPersistent = false;
  /** A persistent fault used up its retries: the episode ends now. */
  lostToFault = false;
  private fired: number[] = [];
  private persistent = new Map<string, { fault: ActiveFault; left: number }>();
  /** Calls (by call key) that a fault hit and that have not succeeded since. */
  private faulted = new Set<string>();

  constructor(
    readonly rules: readonly FaultRule[],
    private readonly retries: number,
  ) {}

  reset(): void {
    // Empty collections are kept (no rules, or nothing fired): the gates reset several episodes per task.
    if (this.rules.length > 0 || this.fired.length > 0) this.fired = this.rules.map(() => 0);
    if (this.persistent.size > 0) this.persistent = new Map();
    if (this.faulted.size > 0) this.faulted = new Set();
    this.hitPersistent = false;
    this.lostToFault = false;
  }

  /** Whether a fault hit this call before (so a success now is a recovery). */
  isRetry(key: string): boolean {
    // Most episodes have no faulted call: no lookup (and no hash of the key) then.
    return this.faulted.size > 0 && this.faulted.has(key);
  }

  /** Marks a call as hit by a fault. */
  hit(key: string): void {
    this.faulted.add(key);
  }

  /** Marks a call as recovered. */
  recovered(key: string): void {
    this.faulted.delete(key);
  }

  /** Which fault, if any, hits call `callIndex` of `tool`; `hasPrevious`: a stale state exists to serve. */
  draw(tool: Tool<any, any>, callIndex: number, taskId: string, seed: number, hasPrevious: boolean): ActiveFault | undefined {
    if (this.rules.length === 0) return undefined;
    const stuck = this.persistent.get(tool.name);
    if (stuck !== undefined) {
      if (--stuck.left <= 0) this.lostToFault = true;
      return stuck.fault;
    }
    let rng: ReturnType<typeof fastRng> | undefined;
    for (let i = 0; i < this.rules.length; i++) {
      const rule = this.rules[i]!;
      if (rule.tool !== '*' && rule.tool !== tool.name) continue;
      if ((rule.kind === 'partial' || rule.kind === 'stale') && tool.effect === 'write') continue;
      if (rule.kind === 'stale' && !hasPrevious) continue;
      if (rule.maxPerEpisode !== undefined && this.fired[i]! >= rule.maxPerEpisode) continue;
      rng ??= fastRng([taskId, seed, 'fault', callIndex]);
      if (rng.next() >= rule.rate) continue;
      this.fired[i]!++;
      const fault: ActiveFault = { rule, ruleIndex: i, persistent: rule.persistent === true };
      if (fault.persistent) {
        this.hitPersistent = true;
        this.persistent.set(tool.name, { fault, left: this.retries });
        if (this.retries <= 0) this.lostToFault = true;
      }
      return fault;
    }
    return undefined;
  }
}

/** The FAULT_INJECTED feedback of a fault that hit call `call` of `tool`. */
export function faultFeedback(fault: ActiveFault, tool: string, call: number): Feedback {
  const kind: FaultKind = fault.rule.kind;
  const details: JsonObject = { tool, call, persistent: fault.persistent };
  if (kind === 'rate_limit') details.retryAfterMs = fault.rule.retryAfterMs ?? DEFAULT_RETRY_AFTER_MS;
  return { code: 'FAULT_INJECTED', message: `injected ${kind.replace('_', ' ')} fault on ${tool}`, ref: kind, details };
}
