import { describe, expect, it } from 'vitest';
import type { Domain, Task, Tool } from '../core/index.js';
import { retail, retailTrainingTemplates } from '../domains/retail/index.js';
import { instantiateTask } from '../generation/index.js';
import { createEpisode, createGateEpisode } from './episode.js';
import { createOracleGate } from './gates.js';
import { createRuntimeCache } from './runtime-cache.js';
import { createInventoryDomain, makeInventoryTask } from './testing/index.js';

/** The domain with each tool's runs counted, and a tool that reads its rng when `rngTool` names it. */
function counted<S>(domain: Domain<S>, rngTool?: string): { domain: Domain<S>; runs: () => number } {
  let runs = 0;
  const tools = domain.tools.map(
    (tool): Tool<S, any> => ({
      ...tool,
      run: (state, args, ctx) => {
        runs++;
        if (tool.name === rngTool) void ctx.rng;
        return tool.run(state, args, ctx);
      },
    }),
  );
  return { domain: { ...domain, tools }, runs: () => runs };
}

function retailTasks(): Task[] {
  return Array.from({ length: 20 }, (_, i) => instantiateTask(retailTrainingTemplates[i % 10]!, { level: 1 + (i % 5), seed: 700 + i, index: 0 }));
}

/** Final hash and trace of the reference solution played in an episode. */
function play(episode: ReturnType<typeof createEpisode>, task: Task): unknown {
  episode.reset({ seed: 0 });
  for (const action of task.spec.solution) if (episode.status === 'running') episode.step(action);
  return [episode.status, episode.stateHash(), episode.trace];
}

describe('gate episodes serving the reference solution', () => {
  it('serve every call of a retail solution from its replay: no tool runs twice, same trace and final hash', () => {
    const { domain, runs } = counted(retail);
    const cache = createRuntimeCache(domain);
    const oracle = createOracleGate(domain, { cache });
    for (const task of retailTasks()) {
      const calls = task.spec.solution.filter((a) => a.type === 'tool').length;
      const before = runs();
      expect(oracle(task)).toEqual({ ok: true });
      // The replay in prepare ran each call once; the oracle's episode ran none.
      expect(runs() - before).toBe(calls);
      expect(cache.prepare(task).replay.length).toBe(calls);
      expect(play(createGateEpisode(domain, task, cache), task)).toEqual(play(createEpisode(domain, task, { cache, faults: false }), task));
    }
  });

  it('run the tools when a solution call read its rng (its result may depend on the seed)', () => {
    const { domain, runs } = counted(retail, 'get_order_details');
    const cache = createRuntimeCache(domain);
    const task = retailTasks().find((t) => t.spec.solution.some((a) => a.type === 'tool' && a.tool === 'get_order_details'))!;
    expect(cache.prepare(task).replay).toEqual([]);
    const before = runs();
    expect(play(createGateEpisode(domain, task, cache), task)).toEqual(play(createEpisode(domain, task, { cache, faults: false }), task));
    expect(runs() - before).toBe(2 * task.spec.solution.filter((a) => a.type === 'tool').length);
  });

  it('stop serving before a call whose output is a mutable object', () => {
    const inventory = createInventoryDomain();
    const task = makeInventoryTask();
    const cache = createRuntimeCache(inventory);
    expect(cache.prepare(task).replay).toEqual([]);
    expect(play(createGateEpisode(inventory, task, cache), task)).toEqual(play(createEpisode(inventory, task, { cache, faults: false }), task));
  });
});
