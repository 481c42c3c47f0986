import { describe, expect, it } from 'vitest';
import { EnvHarnessError, type Action, type AgentContext, type Task } from '../core/index.js';
import { runEpisode } from '../runtime/rollout.js';
import { createEpisode } from '../runtime/index.js';
import { createInventoryDomain } from '../runtime/testing/index.js';
import { createAgent } from './index.js';
import { createLearnerAgent, type LearnerAgent } from './learner.js';
import { inventoryTasks, mean, playEpisode, runMany } from './testing.js';

const inventory = createInventoryDomain();
const tasks = inventoryTasks(2);

describe('learner agent', () => {
  it('learns: success over the last 100 training episodes is far above the first 100', async () => {
    const learner = createLearnerAgent({ seed: 1, training: true });
    const outcomes = await runMany(inventory, tasks, learner, 800);
    const first = mean(outcomes.slice(0, 100));
    const last = mean(outcomes.slice(-100));
    expect(first).toBeLessThan(0.6);
    expect(last).toBeGreaterThan(0.85);
    expect(last - first).toBeGreaterThan(0.3);
    learner.setTraining(false);
    expect(mean(await runMany(inventory, tasks, learner, tasks.length, 10_000))).toBeGreaterThanOrEqual(0.9);
  });

  it('is deterministic given its seed and the episode seeds', async () => {
    const a = createLearnerAgent({ seed: 3, training: true });
    const b = createLearnerAgent({ seed: 3, training: true });
    expect(await runMany(inventory, tasks, a, 150)).toEqual(await runMany(inventory, tasks, b, 150));
    expect(a.getState()).toEqual(b.getState());
    const c = createLearnerAgent({ seed: 4, training: true });
    await runMany(inventory, tasks, c, 150);
    expect(c.getState()).not.toEqual(a.getState());
  });

  it('is never handed the task: runEpisode gives non-privileged agents no task', async () => {
    const learner = createLearnerAgent({ training: true });
    const seen: AgentContext[] = [];
    const spy = { ...learner, begin: (ctx: AgentContext) => (seen.push(ctx), learner.begin(ctx)) };
    await runEpisode(inventory, tasks[0]!, spy, { seed: 0 });
    expect(learner.privileged).toBeUndefined();
    expect(seen).toHaveLength(1);
    expect(seen[0]!.task).toBeUndefined();
  });

  it('never reads ctx.task, even when a faulty harness hands one over', async () => {
    const learner = createLearnerAgent({ seed: 2, training: true });
    const ctx = new Proxy({ episodeId: 'e', seed: 5, domain: 'inventory' } as AgentContext, {
      get(target, key) {
        if (key === 'task') throw new Error('the learner read ctx.task');
        return target[key as keyof AgentContext];
      },
    });
    await expect(playEpisode(inventory, tasks[0]!, learner, 5, ctx)).resolves.not.toHaveLength(0);
  });

  it('acts and learns the same whether the reference solution is intact or corrupted', async () => {
    const task = tasks[1]!;
    // Same id, same user, same final state: only the reference solution's read calls differ (so OFF_PATH feedback differs).
    const corrupted: Task = {
      ...task,
      spec: { ...task.spec, solution: [{ type: 'tool', tool: 'list_items', args: {} }, { type: 'tool', tool: 'list_items', args: { prefix: 'zzz' } }, ...task.spec.solution.filter((a) => !(a.type === 'tool' && a.tool === 'get_stock'))] },
    };
    const run = async (t: Task, handOver: boolean) => {
      const domain = createInventoryDomain(); // a fresh domain: no runtime cache shared between the two versions
      const learner = createLearnerAgent({ seed: 9, training: true });
      const trajectories: Action[][] = [];
      for (let e = 0; e < 60; e++) {
        trajectories.push(await playEpisode(domain, t, learner, e, { episodeId: `e${e}`, seed: e, domain: 'inventory', ...(handOver ? { task: t } : {}) }));
      }
      return { trajectories, state: learner.getState() };
    };
    // The corruption is visible to the environment: the same call is on the reference path in one and off it in the other.
    const offPath = (t: Task) => {
      const episode = createEpisode(createInventoryDomain(), t);
      episode.reset({ seed: 0 });
      return episode.step({ type: 'tool', tool: 'get_stock', args: (task.spec.solution[0] as { args: Record<string, string> }).args }).feedback.some((f) => f.code === 'OFF_PATH');
    };
    expect([offPath(task), offPath(corrupted)]).toEqual([false, true]);
    const intact = await run(task, false);
    expect(await run(corrupted, false)).toEqual(intact);
    expect(await run(corrupted, true)).toEqual(intact);
  });

  it('restores from getState() and then behaves identically', async () => {
    const original = createLearnerAgent({ seed: 5, training: true });
    await runMany(inventory, tasks, original, 200);
    const saved = JSON.parse(JSON.stringify(original.getState()));
    const restored = createAgent('learner', { seed: 5, state: saved, training: true }) as LearnerAgent;
    expect(restored.getState()).toEqual(original.getState());
    expect(restored.config()).toEqual(original.config());
    expect(await runMany(inventory, tasks, restored, 100, 500)).toEqual(await runMany(inventory, tasks, original, 100, 500));
    expect(restored.getState()).toEqual(original.getState());
  });

  it('does not change while frozen, and records its state digest in config()', async () => {
    const learner = createLearnerAgent({ seed: 6, training: true });
    await runMany(inventory, tasks, learner, 100);
    learner.setTraining(false);
    const before = learner.config() as { stateDigest: string; episodes: number };
    await runMany(inventory, tasks, learner, 50, 900);
    expect(learner.config()).toEqual(before);
    expect(before.episodes).toBe(100);
    expect(before.stateDigest).toMatch(/^[0-9a-f]{64}$/);
  });

  it('rejects a malformed state with the pointer of the bad field', () => {
    expect(() => createLearnerAgent({ state: { format: 'envharness-learner/1', episodes: 1, tables: { 'generic@4': { s: { n: 1, q: { finish: 'x' } } } } } })).toThrow(
      /\/tables\/generic@4\/s\/q\/finish/,
    );
    expect(() => createLearnerAgent({ state: [] })).toThrow(/expected an object/);
  });

  it('refuses a state learnt by an older skill set (generic@3) with a typed error that says to train again', () => {
    const old = { format: 'envharness-learner/1', episodes: 3, tables: { 'generic@3': { s: { n: 1, q: { finish: 0.5 }, c: { finish: 1 } } } } };
    let error: unknown;
    try {
      createLearnerAgent({ state: old });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(EnvHarnessError);
    expect((error as EnvHarnessError).code).toBe('PARAMS_INVALID');
    expect((error as EnvHarnessError).message).toMatch(/skill set generic@3.*train again/);
    expect((error as EnvHarnessError).details).toEqual({ pointer: '/state/tables/generic@3' });
    // The same table under the current version loads.
    expect(createLearnerAgent({ state: { ...old, tables: { 'generic@4': old.tables['generic@3'] } } }).episodes()).toBe(3);
  });

  it('serialises its table in canonical (sorted) order', async () => {
    const learner = createLearnerAgent({ seed: 7, training: true });
    await runMany(inventory, tasks, learner, 30);
    const tables = (learner.getState() as { tables: Record<string, Record<string, unknown>> }).tables;
    const keys = Object.keys(tables['generic@4']!);
    expect(keys).toEqual([...keys].sort());
  });
});
