/** api-workflows benchmarks: full oracle episodes per level, tool steps with argument checks, gated generation. */
import { availableParallelism, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Action, Task, Tool } from '../src/core/index.js';
import { apiTemplates, apiTrainingTemplates, apiWorkflows, type ApiState } from '../src/domains/api-workflows/index.js';
import { createTemplateRegistry, generateBatch, instantiateTask } from '../src/generation/index.js';
import { createEpisode, createNonTrivialGate, createOracleGate, createRuntimeCache } from '../src/runtime/index.js';
import { fmt, measure, type BenchSection } from './lib.js';

/** Operations per second of process CPU time: steadier than wall time when other processes share the cores. */
function perCpuSecond(fn: (n: number) => void, n: number): number {
  const start = process.cpuUsage();
  fn(n);
  const used = process.cpuUsage(start);
  return (n * 1e6) / (used.user + used.system);
}

const load = (): string => `load ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores`;

export async function run(): Promise<BenchSection[]> {
  return [episodeSection(), toolSection(), await generationSection()];
}

function tasksAt(level: number, perTemplate = 6): Task[] {
  const tasks: Task[] = [];
  for (const template of apiTemplates) for (let i = 0; i < perTemplate; i++) tasks.push(instantiateTask(template, { level, seed: 500 + i, index: i }));
  return tasks;
}

function episodeSection(): BenchSection {
  const cache = createRuntimeCache(apiWorkflows);
  const rows = [];
  for (let level = 1; level <= 5; level++) {
    const tasks = tasksAt(level);
    for (const task of tasks) cache.prepare(task);
    const steps = tasks.reduce((s, t) => s + t.spec.solution.length + 1, 0) / tasks.length;
    let outcomes = 0;
    const episodes = (n: number): void => {
      for (let i = 0; i < n; i++) {
        const task = tasks[i % tasks.length]!;
        const episode = createEpisode(apiWorkflows, task, { cache });
        episode.reset({ seed: i });
        let last;
        for (const action of task.spec.solution) last = episode.step(action);
        if (episode.status === 'running') last = episode.step({ type: 'finish' });
        outcomes += last!.info.outcome;
      }
    };
    const m = measure(episodes);
    const cpu = perCpuSecond(episodes, 2000);
    if (outcomes !== 0 && outcomes % 1 !== 0) throw new Error('unreachable');
    rows.push({ level: `L${level}`, 'steps per episode (mean)': steps.toFixed(1), 'oracle episodes/s (wall)': fmt(m.opsPerSec), 'per CPU-second': fmt(cpu), target: '≥ 5,000/s' });
  }
  return {
    title: 'api-workflows: full oracle episodes per level',
    description: `Reset, every reference step (faults, events, the user, per-step domain feedback) and the final grading (goal / duplicate / stray checks and the outcome report), on prepared tasks of all 8 templates (6 per template per level), in-process, one core. Machine load: ${load()}.`,
    rows,
  };
}

function toolSection(): BenchSection {
  const tools = new Map<string, Tool<ApiState, any>>(apiWorkflows.tools.map((t) => [t.name, t]));
  const calls: Array<Action & { type: 'tool' }> = [];
  for (const task of tasksAt(3, 4)) for (const a of task.spec.solution) if (a.type === 'tool' && tools.get(a.tool)!.effect === 'read') calls.push(a);
  const base = apiWorkflows.createState({ world: 3, patches: [], scenario: { faults: [], events: [] } });
  const state = apiWorkflows.fork(base);
  const ctx = { task: undefined as never, rng: undefined as never };
  const toolCalls = (n: number): void => {
    for (let i = 0; i < n; i++) {
      const call = calls[i % calls.length]!;
      const tool = tools.get(call.tool)!;
      const parsed = tool.args.safeParse(call.args);
      if (parsed.success) tool.run(state, parsed.data, ctx);
    }
  };
  const raw = measure(toolCalls);
  const rawCpu = perCpuSecond(toolCalls, 50_000);
  const task = tasksAt(1, 1).find((t) => t.taskType === 'lookup')!;
  const episode = createEpisode(apiWorkflows, task);
  episode.reset({ seed: 1 });
  const step = task.spec.solution.find((a) => a.type === 'tool')!;
  const steps = (n: number): void => {
    for (let i = 0; i < n; i++) {
      if (episode.status !== 'running' || episode.steps > 1_000_000) episode.reset({ seed: i });
      episode.step(step);
    }
  };
  const stepped = measure(steps);
  const stepCpu = perCpuSecond(steps, 50_000);
  return {
    title: 'api-workflows: tool steps',
    description: `Read calls taken from level-3 reference solutions (lookups by id, filtered and paginated lists over a 2,000-record world). "tool call" = zod argument check + the service layer + the tool; "episode step" = the runtime's step() on a lookup (validation, constraints, feedback, domain feedback). Machine load: ${load()}.`,
    rows: [
      { workload: 'tool call with argument check (mixed reads)', 'ops/s (wall)': fmt(raw.opsPerSec), 'per CPU-second': fmt(rawCpu), target: '≥ 200,000/s' },
      { workload: 'episode step (first lookup call)', 'ops/s (wall)': fmt(stepped.opsPerSec), 'per CPU-second': fmt(stepCpu), target: '-' },
    ],
    notes: ['List reads by a field use a per-world index of that field plus the episode\'s changed records (O(matches + changes)); lookups by id are map reads.'],
  };
}

async function generationSection(): Promise<BenchSection> {
  const registry = createTemplateRegistry(apiTemplates);
  const hooks = { oracle: createOracleGate(apiWorkflows), nonTrivial: createNonTrivialGate(apiWorkflows) };
  const request = { templates: apiTrainingTemplates.map((t) => ({ id: t.id })), levels: [1, 2, 3, 4, 5], count: 140, seed: 7, split: 'dynamic' as const };
  await generateBatch({ ...request, count: 14, seed: 1 }, { registry, hooks });
  const t0 = performance.now();
  const batch = await generateBatch(request, { registry, hooks });
  const ms = performance.now() - t0;
  return {
    title: 'api-workflows: gated generation',
    description: `One batch of ${request.count} candidates over the 7 training templates × 5 levels with every gate on (schema, near-duplicate, oracle, non-triviality), in-process. Machine load: ${load()}.`,
    rows: [{ candidates: request.count, accepted: batch.tasks.length, 'tasks/s': fmt((batch.tasks.length * 1000) / ms), 'ms per task': (ms / batch.tasks.length).toFixed(2) }],
  };
}
