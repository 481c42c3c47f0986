import { describe, expect, it } from 'vitest';
import { computeTaskId, fastDigest } from '../core/index.js';
import type { Action, GateVerdict, Task } from '../core/index.js';
import { retail, retailTrainingTemplates } from '../domains/retail/index.js';
import { instantiateTask } from '../generation/index.js';
import { createEpisode, createGateEpisode } from './episode.js';
import { playRandomTrajectory } from './gates.js';
import { createNonTrivialGate, createOracleGate, createRuntimeCache } from './index.js';

/** Feedback codes a gate verdict reads; a gate episode skips the others. */
const VERDICT_CODES = new Set(['INVALID_ACTION', 'PRECONDITION_FAILED', 'POLICY_VIOLATION', 'ORDER_VIOLATION', 'BUDGET_EXHAUSTED']);

/** What a gate reads of each step of `actions`, played in a gate episode or a full one. */
function stepsOf(episode: ReturnType<typeof createEpisode>, actions: readonly Action[]): unknown[] {
  const out: unknown[] = [episode.reset({ seed: 0 })];
  for (const action of actions) {
    if (episode.status !== 'running') break;
    const r = episode.step(action);
    const { stateHash: _hash, ...info } = r.info;
    out.push({ ...r, info, feedback: r.feedback.filter((f) => VERDICT_CODES.has(f.code)) });
  }
  out.push(episode.stateHash(), episode.trace);
  return out;
}

/** A task with a changed spec, under its own id (the runtime cache is keyed by id). */
function mutant(task: Task, spec: Partial<Task['spec']>): Task {
  const changed = { ...task, spec: { ...task.spec, ...spec } };
  return { ...changed, id: computeTaskId(changed) };
}

/** Seeded retail tasks over every training template and level, and broken variants of each. */
function seededTasks(): Task[] {
  const out: Task[] = [];
  for (let i = 0; i < 150; i++) {
    const task = instantiateTask(retailTrainingTemplates[i % 10]!, { level: 1 + (Math.floor(i / 10) % 5), seed: 4_000 + i, index: 0 });
    const solution = task.spec.solution;
    const lastTool = solution.map((a) => a.type).lastIndexOf('tool');
    const confirm = solution.findIndex((a, k) => a.type === 'message' && solution[k + 1]?.type === 'tool');
    const without = (k: number): Action[] => solution.filter((_, j) => j !== k);
    out.push(task);
    out.push(mutant(task, { solution: solution.slice(0, -1) }));
    if (lastTool >= 0) out.push(mutant(task, { solution: without(lastTool) }));
    if (confirm >= 0) out.push(mutant(task, { solution: without(confirm) }));
    if (lastTool >= 1) out.push(mutant(task, { solution: [...solution.slice(lastTool), ...solution.slice(0, lastTool)] }));
    out.push(mutant(task, { acceptance: { finalState: true } }));
    out.push(mutant(task, { solution: [{ type: 'tool', tool: 'no_such_tool', args: {} }, ...solution] }));
  }
  return out;
}

function verdicts(tasks: readonly Task[], options: { shortcut?: boolean } = {}): Array<[string, GateVerdict, GateVerdict | null]> {
  const cache = createRuntimeCache(retail);
  const oracle = createOracleGate(retail, { cache, ...options });
  const nonTrivial = createNonTrivialGate(retail, { cache, ...options });
  return tasks.map((task) => {
    const o = oracle(task);
    return [task.id, o, o.ok ? nonTrivial(task) : null];
  });
}

describe('retail gate verdicts', () => {
  const tasks = seededTasks();
  const found = verdicts(tasks);

  it('are the verdicts pinned before the gates reused the reference episode', () => {
    const kinds = new Map<string, number>();
    for (const [, o, n] of found) {
      const kind = !o.ok ? `oracle: ${o.reason.replace(/step \d+.*?: /, '').replace(/^task \w+/, 'task').slice(0, 40)}` : n!.ok ? 'accepted' : `non_trivial: ${n!.reason}`;
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    }
    // Accepted tasks, rejections by both gates and tasks that cannot be played all occur.
    expect(kinds.get('accepted')).toBeGreaterThanOrEqual(150);
    expect([...kinds.keys()].filter((k) => k.startsWith('oracle')).length).toBeGreaterThanOrEqual(3);
    expect([...kinds.keys()].some((k) => k.startsWith('non_trivial'))).toBe(true);
    expect(fastDigest(found as never), 'the verdicts of the pinned batch changed').toBe('969174cee69b7ffee5fd1191dd3819913841ed7e5ae652141f762e45cb98d34d');
  });

  it('come from gate episodes that play like full episodes (observations, outcomes, verdict feedback, trace, final hash)', () => {
    const cache = createRuntimeCache(retail);
    let played = 0;
    for (const task of tasks.slice(0, 350)) {
      const random: Action[] = [];
      try {
        playRandomTrajectory(retail, task, { cache }, random);
      } catch {
        continue; // a task that cannot be played (no_such_tool): both kinds of episode refuse it alike
      }
      // Without its order look-ups, a change breaks the task's ordering rules (ORDER_VIOLATION).
      const unlooked = task.spec.solution.filter((a) => a.type !== 'tool' || a.tool !== 'get_order_details');
      for (const actions of [task.spec.solution, random, unlooked, [{ type: 'finish' } as Action]]) {
        expect(stepsOf(createGateEpisode(retail, task, cache), actions)).toEqual(stepsOf(createEpisode(retail, task, { cache, faults: false }), actions));
        played++;
      }
    }
    expect(played).toBeGreaterThan(800);
  });

  it('are the same as playing every episode (no shortcut)', () => {
    expect(found).toEqual(verdicts(tasks, { shortcut: false }));
  });
});
