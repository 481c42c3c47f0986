/**
 * The simulator gates play their episodes in a lean episode (`createGateEpisode`): no informational
 * feedback, no call keys, the reference solution's calls served from the replay `prepare` ran. Over every
 * built-in domain, template and level, the reference solution played that way shows what a full episode
 * shows of it: the same observations, verdict feedback, end, outcome and final state hash. (The retail-only
 * test beside the gates, src/runtime/gates-equivalence.test.ts, also plays broken solutions and random
 * trajectories.)
 */
import { describe, expect, it } from 'vitest';
import type { Domain, Feedback, RegisteredTemplate, StepResult, Task } from '../../src/core/index.js';
import { builtinDomains } from '../../src/builtins.js';
import { instantiateTask } from '../../src/generation/index.js';
import { createEpisode } from '../../src/runtime/index.js';
import { createGateEpisode } from '../../src/runtime/episode.js';

/** The runtime's informational feedback, which a gate episode leaves out (a domain's own stays). */
const RUNTIME_INFO = new Set(['NO_PROGRESS', 'BUDGET_WARNING', 'REDUNDANT_CALL', 'OFF_PATH']);

/** What a gate can read of one step: a full episode's SUBGOAL_REACHED from the task's subgoals is the runtime's. */
function seen(result: StepResult, dropSubgoals: ReadonlySet<string>): unknown {
  const ended = result.terminated || result.truncated;
  const feedback = result.feedback.filter((f: Feedback) => !RUNTIME_INFO.has(f.code) && !(f.code === 'SUBGOAL_REACHED' && dropSubgoals.has(f.ref ?? '')));
  return { observation: result.observation, feedback, terminated: result.terminated, truncated: result.truncated, outcome: result.info.outcome, ...(ended ? { stateHash: result.info.stateHash } : {}) };
}

function tasksOf(domain: Domain<any>): Task[] {
  const tasks: Task[] = [];
  for (const template of domain.templates) {
    for (let level = 1; level <= template.levels.length; level++) {
      for (let seed = 1; seed <= 2; seed++) tasks.push(instantiateTask(template as RegisteredTemplate<any>, { seed, index: 0, level }));
    }
  }
  return tasks;
}

describe('gate episodes play the reference solution as full episodes do', () => {
  for (const domain of builtinDomains()) {
    it(`${domain.name}: every template and level`, () => {
      const tasks = tasksOf(domain);
      expect(tasks.length).toBeGreaterThan(0);
      let steps = 0;
      for (const task of tasks) {
        const subgoals = new Set((task.spec.acceptance.subgoals ?? []).map((s) => s.id));
        const full = createEpisode(domain, task, { faults: false });
        const gate = createGateEpisode(domain, task, undefined);
        expect(gate.reset({ seed: 0 })).toEqual(full.reset({ seed: 0 }));
        for (const action of task.spec.solution) {
          if (full.status !== 'running') break;
          const expected = seen(full.step(action), subgoals);
          expect(seen(gate.step(action), subgoals), `${task.template} step ${steps}`).toEqual(expected);
          steps++;
        }
        expect(gate.status).toBe(full.status);
        expect(gate.stateHash()).toBe(full.stateHash());
      }
      expect(steps).toBeGreaterThanOrEqual(tasks.length);
    });
  }
});
