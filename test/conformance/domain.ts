/** The domain conformance suite: every domain runs `describeDomain(domain)` in its own test file. */
import { describe, expect, it } from 'vitest';
import { canonicalize, createRng } from '../../src/core/index.js';
import type { Action, Agent, Domain, RegisteredTemplate, Task } from '../../src/core/index.js';
import {
  createEpisode,
  createMemoryRecorder,
  createNonTrivialGate,
  createOracleGate,
  createRuntimeCache,
  verifyReplay,
} from '../../src/runtime/index.js';
import { instantiateTask } from '../../src/generation/index.js';
import { checkDeterminism, checkFailingCallsChangeNothing, checkLevelsDiffer } from './domain-checks.js';

export { checkDeterminism, checkFailingCallsChangeNothing, checkLevelsDiffer, type CheckOptions } from './domain-checks.js';

export interface DescribeDomainOptions {
  /** Generation seeds tried for every template and level (default 1, 2, 3). */
  seeds?: readonly number[];
  /** How a task is built; default: src/generation's `instantiateTask`. */
  instantiate?: (template: RegisteredTemplate<any>, level: number, seed: number, index: number) => Task;
  /** Also require a seeded random trajectory to fail (default true). */
  randomMustFail?: boolean;
  /** Episode seeds used for record-and-replay per task (default 0 and 7). */
  episodeSeeds?: readonly number[];
  /** Scripted baselines (observation contract only) whose success per level must not rise (default: the domain's `baselines`). */
  baselines?: readonly Agent[];
  /** Tasks per level when comparing adjacent levels (default 16). */
  levelSamples?: number;
}

/**
 * Registers the conformance tests of a domain: tools are well declared; forks and hashes behave;
 * every template generates at every level for several seeds; the same seed gives a deep-equal task;
 * the reference solution terminates with outcome 1; the empty (and a random) trajectory fails;
 * recorded episodes replay to identical per-step observations, rewards and state hashes; fuzzed tool calls
 * that fail change nothing; adjacent levels really differ and baselines do not do better at higher levels;
 * tools, build and user are deterministic (`domain-checks.ts`, which tests can call directly).
 * @example
 * describeDomain(createInventoryDomain());
 */
export function describeDomain(domain: Domain<any>, options: DescribeDomainOptions = {}): void {
  const seeds = options.seeds ?? [1, 2, 3];
  const episodeSeeds = options.episodeSeeds ?? [0, 7];
  const build = options.instantiate ?? ((t, level, seed, index) => instantiateTask(t, { level, seed, index }));
  const cache = createRuntimeCache(domain);

  const tasksOf = (template: RegisteredTemplate<any>): Task[] => {
    const tasks: Task[] = [];
    for (let level = 1; level <= template.levels.length; level++) for (const seed of seeds) tasks.push(build(template, level, seed, 0));
    return tasks;
  };

  describe(`domain ${domain.name}@${domain.version} (conformance)`, () => {
    it('declares unique snake_case tools whose arguments have a JSON Schema', () => {
      const names = domain.tools.map((t) => t.name);
      expect(new Set(names).size).toBe(names.length);
      for (const tool of domain.tools) {
        expect(tool.name).toMatch(/^[a-z][a-z0-9_]*$/);
        expect(['read', 'write']).toContain(tool.effect);
        expect(tool.description.length).toBeGreaterThan(0);
      }
      expect(domain.templates.length).toBeGreaterThan(0);
      for (const template of domain.templates) expect(template.domain).toBe(domain.name);
    });

    it('forks without touching the source, and a fork hashes like its source', () => {
      for (const template of domain.templates) {
        const task = build(template as RegisteredTemplate<any>, 1, seeds[0]!, 0);
        const base = domain.createState(task.spec.initialState);
        const before = domain.hashState(base);
        const exported = canonicalize(domain.exportState(base));
        expect(domain.hashState(domain.fork(base))).toBe(before);
        const fork = domain.fork(base);
        const tools = new Map(domain.tools.map((t) => [t.name, t]));
        for (const action of task.spec.solution) {
          if (action.type !== 'tool') continue;
          const tool = tools.get(action.tool)!;
          tool.run(fork, tool.args.parse(action.args), { task, rng: createRng([task.id, 'conformance']) });
        }
        expect(domain.hashState(base)).toBe(before);
        expect(canonicalize(domain.exportState(base))).toBe(exported);
        expect(domain.hashState(domain.createState(task.spec.initialState))).toBe(before);
      }
    });

    it('changes nothing when a tool fails (tools mutate only on success)', () => {
      const tools = new Map(domain.tools.map((t) => [t.name, t]));
      for (const template of domain.templates as readonly RegisteredTemplate<any>[]) {
        for (let level = 1; level <= template.levels.length; level++) {
          const task = build(template, level, seeds[0]!, 0);
          const state = domain.fork(domain.createState(task.spec.initialState));
          const calls = task.spec.solution.filter((a): a is Action & { type: 'tool' } => a.type === 'tool');
          // Every reference call twice (a second cancel or delete usually fails), then every tool with every call's arguments.
          const attempts = [...calls.flatMap((c) => [c, c]), ...domain.tools.flatMap((t) => calls.map((c) => ({ ...c, tool: t.name })))];
          attempts.forEach((call, i) => {
            const tool = tools.get(call.tool)!;
            const parsed = tool.args.safeParse(call.args);
            if (!parsed.success) return;
            const before = domain.hashState(state);
            const outcome = tool.run(state, parsed.data, { task, rng: createRng([task.id, 'conformance', i]) });
            if (!outcome.ok) expect({ call, hash: domain.hashState(state) }).toEqual({ call, hash: before });
          });
        }
      }
    });

    // The domain's own baselines (`Domain.baselines`) unless the caller names others.
    const declared = (domain as { baselines?: Readonly<Record<string, () => Agent>> }).baselines ?? {};
    const baselines = options.baselines ?? Object.keys(declared).sort().map((name) => declared[name]!());
    const checks = { seeds, instantiate: build, cache, levelSamples: options.levelSamples, baselines };

    it('leaves the state unchanged on every failing call (tools fuzzed with schema-sampled arguments on reference and random-play states)', { timeout: 120_000 }, () => {
      expect(checkFailingCallsChangeNothing(domain, checks)).toEqual([]);
    });

    it('has levels that really differ, and baselines do not do better at higher levels', () => {
      expect(checkLevelsDiffer(domain, checks)).toEqual([]);
    });

    it('is deterministic in tools, build and user', () => {
      expect(checkDeterminism(domain, checks)).toEqual([]);
    });

    for (const template of domain.templates as readonly RegisteredTemplate<any>[]) {
      describe(template.id, () => {
        it('generates a valid task at every level for every seed', () => {
          for (let level = 1; level <= template.levels.length; level++) {
            for (const seed of seeds) {
              const task = build(template, level, seed, 0);
              expect(task.template).toBe(template.id);
              expect(task.level).toBe(level);
              expect(task.domain).toBe(domain.name);
              expect(task.spec.solution.length).toBeGreaterThan(0);
              // Plain JSON: survives a canonical round trip unchanged.
              expect(JSON.parse(canonicalize(task))).toEqual(JSON.parse(JSON.stringify(task)));
              expect(template.validate?.(task) ?? []).toEqual([]);
              // The runtime accepts it (allowed tools, budgets, faults and reference solution fit the domain).
              expect(() => cache.prepare(task)).not.toThrow();
            }
          }
        });

        it('gives a deep-equal task for the same seed', () => {
          for (let level = 1; level <= template.levels.length; level++) {
            for (const seed of seeds) expect(build(template, level, seed, 0)).toEqual(build(template, level, seed, 0));
          }
        });

        it('reaches outcome 1 with the reference solution', () => {
          const oracle = createOracleGate(domain, { cache });
          for (const task of tasksOf(template)) expect({ task: task.id, level: task.level, verdict: oracle(task) }).toEqual({ task: task.id, level: task.level, verdict: { ok: true } });
        });

        it('fails the empty trajectory' + (options.randomMustFail === false ? '' : ' and a seeded random one'), () => {
          const gate = createNonTrivialGate(domain, { cache, random: options.randomMustFail !== false });
          for (const task of tasksOf(template)) expect({ task: task.id, level: task.level, verdict: gate(task) }).toEqual({ task: task.id, level: task.level, verdict: { ok: true } });
        });

        it('replays recorded episodes to identical steps and state hashes', () => {
          for (const task of tasksOf(template)) {
            for (const seed of episodeSeeds) {
              for (const agent of ['oracle', 'chaos'] as const) {
                const recorder = createMemoryRecorder();
                const episode = createEpisode(domain, task, { recorder, cache });
                episode.reset({ seed });
                const seen: string[] = [];
                for (const action of agent === 'oracle' ? task.spec.solution : chaosActions(task, seed)) {
                  if (episode.status !== 'running') break;
                  seen.push(canonicalize(episode.step(action).observation));
                }
                if (episode.status === 'running') episode.step({ type: 'finish' });
                const transitions = recorder.transitions(episode.id!);
                // Observations must not alias live state: what was seen then is what is recorded now.
                expect(transitions.slice(0, seen.length).map((t) => canonicalize(t.observation))).toEqual(seen);
                expect(verifyReplay(domain, task, seed, transitions, { cache })).toEqual([]);
              }
            }
          }
        });
      });
    }
  });
}

/** A seeded messy trajectory: reference actions shuffled and perturbed, repeats, bad calls and chatter. */
function chaosActions(task: Task, seed: number): Action[] {
  const rng = createRng([task.id, seed, 'conformance-chaos']);
  const pool = task.spec.solution.filter((a) => a.type !== 'finish');
  const actions: Action[] = [];
  const count = Math.min(12, (task.spec.budget.steps ?? 30) + 2);
  for (let i = 0; i < count; i++) {
    const roll = rng.int(0, 5);
    const pick = pool.length > 0 ? rng.pick(pool) : undefined;
    if (roll <= 2 && pick !== undefined) actions.push(pick);
    else if (roll === 3 && pick?.type === 'tool') actions.push({ ...pick, args: { ...pick.args, unexpected: rng.int(0, 9) } });
    else if (roll === 4) actions.push({ type: 'tool', tool: 'no_such_tool', args: {} });
    else actions.push({ type: 'message', text: rng.pick(['Could you confirm?', 'One moment.', 'Anything else?', 'Thanks']) });
  }
  return actions;
}
