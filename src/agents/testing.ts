/** Test and measurement helpers: inventory and retail task sets and a loop that runs an agent over tasks. */
import type { Action, Agent, AgentContext, Domain, RegisteredTemplate, Task } from '../core/index.js';
import { instantiateTask } from '../generation/index.js';
import { runEpisode } from '../runtime/rollout.js';
import { createEpisode } from '../runtime/index.js';
import { clearanceTemplate, instantiate, restockTemplate } from '../runtime/testing/index.js';

/** `perLevel` inventory tasks per template and level (restock 1-4, clearance 1-3). */
export function inventoryTasks(perLevel: number, seed = 0): Task[] {
  const tasks: Task[] = [];
  for (let level = 1; level <= restockTemplate.levels.length; level++) for (let i = 0; i < perLevel; i++) tasks.push(instantiate(restockTemplate, level, seed, i));
  for (let level = 1; level <= clearanceTemplate.levels.length; level++) for (let i = 0; i < perLevel; i++) tasks.push(instantiate(clearanceTemplate, level, seed, i));
  return tasks;
}

/** The training (not held-out) templates of a domain, optionally only some task types. */
export function trainingTemplates(domain: Domain<any>, types?: readonly string[]): RegisteredTemplate<any>[] {
  return (domain.templates as RegisteredTemplate<any>[]).filter((t) => t.heldout !== true && (types === undefined || types.includes(t.taskType)));
}

/** `perCell` tasks per template and level of `templates` (levels: all by default), generated with `seed`. */
export function tasksOf(templates: readonly RegisteredTemplate<any>[], perCell: number, seed: number, levels?: readonly number[]): Task[] {
  const tasks: Task[] = [];
  for (const template of templates) {
    for (let level = 1; level <= template.levels.length; level++) {
      if (levels !== undefined && !levels.includes(level)) continue;
      for (let i = 0; i < perCell; i++) tasks.push(instantiateTask(template, { level, seed, index: i }));
    }
  }
  return tasks;
}

/** Runs `episodes` episodes cycling through `tasks` (episode e gets seed `seedBase + e`); returns each outcome. */
export async function runMany(domain: Domain<any>, tasks: readonly Task[], agent: Agent, episodes: number, seedBase = 0): Promise<number[]> {
  const outcomes: number[] = [];
  for (let e = 0; e < episodes; e++) {
    const task = tasks[e % tasks.length]!;
    outcomes.push((await runEpisode(domain, task, agent, { seed: seedBase + e })).outcome);
  }
  return outcomes;
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
}

/** Plays one episode by hand, handing the agent `ctx` exactly as given (e.g. a task it should never read); returns its actions. */
export async function playEpisode(domain: Domain<any>, task: Task, agent: Agent, seed: number, ctx: AgentContext): Promise<Action[]> {
  const episode = createEpisode(domain, task);
  let observation = episode.reset({ seed });
  const session = agent.begin(ctx);
  const actions: Action[] = [];
  let outcome = 0;
  for (;;) {
    const action = await session.act(observation);
    actions.push(action);
    const result = episode.step(action);
    session.observe?.(result);
    if (result.terminated || result.truncated) {
      outcome = result.info.outcome;
      await session.end?.({ reward: result.reward, outcome, steps: actions.length, terminated: result.terminated, truncated: result.truncated });
      return actions;
    }
    observation = result.observation;
  }
}
