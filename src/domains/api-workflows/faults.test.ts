/** Must-show fault behaviour: the oracle recovers from every fault kind; blind retries, ignored retry_after and stale writes are graded. */
import { describe, expect, it } from 'vitest';
import type { Action, Feedback, JsonObject, StepResult, Task } from '../../core/index.js';
import { instantiateTask } from '../../generation/index.js';
import { createEpisode } from '../../runtime/index.js';
import { apiTemplates, apiWorkflows, FAULT_KINDS, type FaultSpec } from './index.js';

const domain = apiWorkflows;

/** Generated tasks by the fault kinds their scenarios contain. */
function tasksWith(predicate: (f: FaultSpec) => boolean, limit = 3): Task[] {
  const found: Task[] = [];
  for (const template of apiTemplates) {
    for (let level = 1; level <= template.levels.length; level++) {
      for (let seed = 1; seed <= 8 && found.length < limit; seed++) {
        const task = instantiateTask(template, { level, seed, index: 0 });
        const faults = (task.spec.initialState as { scenario: { faults: FaultSpec[] } }).scenario.faults;
        // A stale replica matters only where the reference is actually served stale (it then re-reads consistently).
        const served = !faults.some((f) => f.kind === 'stale') || task.spec.solution.some((a) => a.type === 'tool' && a.args.consistent === true);
        if (faults.some(predicate) && served) found.push(task);
      }
    }
  }
  return found;
}

/** Plays actions (the solution by default, rewritten by `rewrite`), then finishes; returns every step. */
function play(task: Task, rewrite: (action: Action, last: StepResult | undefined, i: number) => Action | Action[] | undefined = (a) => a): StepResult[] {
  const episode = createEpisode(domain, task);
  episode.reset({ seed: 3 });
  const results: StepResult[] = [];
  task.spec.solution.forEach((action, i) => {
    if (episode.status !== 'running') return;
    const next = rewrite(action, results.at(-1), i);
    for (const a of next === undefined ? [] : Array.isArray(next) ? next : [next]) if (episode.status === 'running') results.push(episode.step(a));
  });
  if (episode.status === 'running') results.push(episode.step({ type: 'finish' }));
  return results;
}

const feedbackOf = (results: readonly StepResult[]): Feedback[] => results.flatMap((r) => r.feedback);
const serviceError = (r: StepResult | undefined): JsonObject | undefined => ((r?.observation.output as JsonObject | undefined)?.error as JsonObject | undefined);

describe('api-workflows faults', () => {
  for (const kind of FAULT_KINDS) {
    it(`the oracle recovers from ${kind} and scores 1, every injected fault handled`, () => {
      const tasks = tasksWith((f) => f.kind === kind);
      expect(tasks.length).toBeGreaterThan(0);
      for (const task of tasks) {
        const results = play(task);
        const last = results.at(-1)!;
        expect({ task: task.id, outcome: last.info.outcome }).toEqual({ task: task.id, outcome: 1 });
        const report = last.info.report as { faults: Array<{ kind: string; recovery: string }>; duplicates: number };
        expect(report.faults.some((f) => f.kind === kind)).toBe(true);
        expect(report.faults.filter((f) => f.recovery !== 'handled')).toEqual([]);
        expect(report.duplicates).toBe(0);
        const fb = feedbackOf(results);
        expect(fb.some((f) => f.code === 'FAULT_INJECTED' && f.ref === kind)).toBe(true);
        expect(fb.some((f) => f.code === 'RECOVERED' && f.ref === kind)).toBe(true);
        expect(fb.filter((f) => f.code === 'POLICY_VIOLATION')).toEqual([]);
      }
    });
  }

  it('grades a blind retry of a timed-out write that was applied as a duplicated side effect', () => {
    const tasks = tasksWith((f) => f.kind === 'timeout' && f.applied, 2);
    expect(tasks.length).toBeGreaterThan(0);
    for (const task of tasks) {
      // The agent sends no idempotency key and repeats the write as soon as it times out.
      const strip = (a: Action): Action => {
        if (a.type !== 'tool' || a.args.idempotency_key === undefined) return a;
        const args = { ...a.args };
        delete args.idempotency_key;
        return { ...a, args };
      };
      const results = play(task, (a) => strip(a));
      const last = results.at(-1)!;
      expect(last.info.outcome).toBe(0);
      const failed = (last.info.acceptance as { failedChecks: Array<{ id: string }> }).failedChecks.map((c) => c.id);
      expect(failed).toContain('no_duplicate_side_effects');
      expect(feedbackOf(results).some((f) => f.code === 'POLICY_VIOLATION' && f.ref === 'duplicate_side_effect')).toBe(true);
      expect((last.info.report as { duplicates: number }).duplicates).toBeGreaterThan(0);
    }
  });

  it('a timed-out write that was not applied, retried with the same key, applies once', () => {
    const tasks = tasksWith((f) => f.kind === 'timeout' && !f.applied, 2);
    expect(tasks.length).toBeGreaterThan(0);
    for (const task of tasks) expect(play(task).at(-1)!.info.outcome).toBe(1);
  });

  it('gives the rate-limit feedback code to an agent that ignores retry_after', () => {
    const tasks = tasksWith((f) => f.kind === 'rate_limit', 3);
    expect(tasks.length).toBeGreaterThan(0);
    for (const task of tasks) {
      // Instead of waiting, the agent retries the limited call at once (skips the solution's wait).
      let retried = false;
      const results = play(task, (a, last) => {
        if (a.type === 'tool' && a.tool === 'wait' && serviceError(last)?.code === 'rate_limited') {
          retried = true;
          const previous = task.spec.solution[task.spec.solution.indexOf(a) - 1]!;
          return [previous, a];
        }
        return a;
      });
      expect(retried).toBe(true);
      const fb = feedbackOf(results).filter((f) => f.code === 'POLICY_VIOLATION' && f.ref === 'retry_after_ignored');
      expect(fb.length).toBeGreaterThan(0);
      const report = results.at(-1)!.info.report as { faults: Array<{ kind: string; recovery: string }> };
      expect(report.faults.find((f) => f.kind === 'rate_limit')!.recovery).toBe('noticed');
    }
  });

  it('fails the acceptance check when a write acts on a stale read', () => {
    const tasks = tasksWith((f) => f.kind === 'stale', 4).filter((t) => t.template.startsWith('api-workflows/bulk-update'));
    expect(tasks.length).toBeGreaterThan(0);
    for (const task of tasks) {
      // The agent trusts the replica: where the reference re-reads consistently and skips, it writes.
      const goal = (task.params as { goal: { to: string } }).goal;
      let stale = false;
      const results = play(task, (a, last) => {
        if (a.type === 'tool' && a.tool === 'get_ticket' && a.args.consistent === true && typeof (last?.observation.output as JsonObject)?.replica_lag_s === 'number') {
          stale = true;
          return { type: 'tool', tool: 'update_ticket', args: { ticket_id: a.args.ticket_id as string, assignee: goal.to } };
        }
        return a;
      });
      expect(stale).toBe(true);
      const last = results.at(-1)!;
      expect(last.info.outcome).toBe(0);
      const failed = (last.info.acceptance as { failedChecks: Array<{ id: string }> }).failedChecks.map((c) => c.id);
      expect(failed).toContain('goal');
      expect(feedbackOf(results).some((f) => f.code === 'POLICY_VIOLATION' && f.ref === 'stale_write')).toBe(true);
    }
  });

  it('faults come from the task alone: two episodes with different seeds see the same faults', () => {
    const task = tasksWith((f) => f.kind === 'timeout', 1)[0]!;
    const run = (seed: number) => {
      const episode = createEpisode(domain, task);
      episode.reset({ seed });
      return task.spec.solution.filter((a) => a.type === 'tool').map((a) => JSON.stringify(episode.step(a).feedback));
    };
    expect(run(1)).toEqual(run(99));
  });
});
