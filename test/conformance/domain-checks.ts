/**
 * The domain checks that look for planted mistakes, as plain functions returning problems (so a test can
 * plant a mistake and assert that a check reports it): tools that change the state and then fail, levels
 * that are not really different, and non-determinism in tools, build or user.
 */
import { canonicalize, createRng, digest, sampleFromSchema } from '../../src/core/index.js';
import type { Action, Agent, Domain, JsonObject, JsonValue, Observation, RegisteredTemplate, Rng, Task, Tool } from '../../src/core/index.js';
import { createEpisode, createRuntimeCache, toolSpec, type RuntimeCache } from '../../src/runtime/index.js';
import { instantiateTask } from '../../src/generation/index.js';

/** How a check builds tasks and which baselines it may play. */
export interface CheckOptions {
  /** Generation seeds per template and level (default 1, 2, 3). */
  seeds?: readonly number[];
  /** How a task is built; default: src/generation's `instantiateTask`. */
  instantiate?: (template: RegisteredTemplate<any>, level: number, seed: number, index: number) => Task;
  /** Tasks per level for the level comparison (default 16). */
  levelSamples?: number;
  /** Scripted baselines that know the domain (observation contract only), played per level. */
  baselines?: readonly Agent[];
  /** Schema-sampled calls per tool and fuzzed state (default 3). */
  fuzzCalls?: number;
  cache?: RuntimeCache;
}

type Build = NonNullable<CheckOptions['instantiate']>;
const defaultBuild: Build = (t, level, seed, index) => instantiateTask(t, { level, seed, index });
const templatesOf = (domain: Domain<any>) => domain.templates as readonly RegisteredTemplate<any>[];

/** Every string, number and object key in a JSON value: the words a fuzzer fills arguments with. */
function wordsOf(value: JsonValue, out: Set<string>, depth = 0): void {
  if (depth > 12 || out.size > 4000) return;
  if (typeof value === 'string') out.add(value);
  else if (typeof value === 'number') out.add(String(value));
  else if (Array.isArray(value)) for (const v of value) wordsOf(v, out, depth + 1);
  else if (value !== null && typeof value === 'object') {
    for (const key of Object.keys(value)) {
      out.add(key);
      wordsOf(value[key]!, out, depth + 1);
    }
  }
}

/** Arguments that break the schema: a required key dropped, a value of the wrong type, an unknown key. */
function invalidArgs(schema: JsonObject, valid: JsonObject, rng: Rng): JsonObject[] {
  const required = Array.isArray(schema['required']) ? (schema['required'] as string[]) : [];
  const out: JsonObject[] = [{ ...valid, __unexpected__: rng.int(0, 9) }];
  if (required.length > 0) {
    const key = rng.pick(required);
    const dropped = { ...valid };
    delete dropped[key];
    out.push(dropped, { ...valid, [key]: typeof valid[key] === 'number' ? 'not-a-number' : [rng.int(0, 9)] });
  }
  return out;
}

/**
 * Fuzzes every tool on states reached by the reference solution and by seeded random play, with
 * schema-sampled valid arguments (filled with the task's own words and ids) and invalid ones: a call
 * that fails (or is rejected by its schema) must leave the state hash unchanged.
 */
export function checkFailingCallsChangeNothing(domain: Domain<any>, options: CheckOptions = {}): string[] {
  const build = options.instantiate ?? defaultBuild;
  const seed = (options.seeds ?? [1])[0]!;
  const calls = options.fuzzCalls ?? 3;
  const problems: string[] = [];
  const specs = domain.tools.map((t) => ({ tool: t as Tool<any, any>, schema: { type: 'object', ...toolSpec(t).parameters } as JsonObject }));
  const run = (tool: Tool<any, any>, state: unknown, args: JsonValue, task: Task, rng: Rng, where: string): boolean => {
    const parsed = tool.args.safeParse(args);
    const before = domain.hashState(state);
    if (!parsed.success) return false;
    const outcome = tool.run(state, parsed.data, { task, rng });
    if (!outcome.ok && domain.hashState(state) !== before && problems.length < 20) {
      problems.push(`${task.template} level ${task.level}, ${where}: ${tool.name}(${canonicalize(args)}) failed (${outcome.error.code}) but changed the state`);
    }
    return outcome.ok;
  };
  for (const template of templatesOf(domain)) {
    for (let level = 1; level <= template.levels.length; level++) {
      const task = build(template, level, seed, 0);
      const rng = createRng([task.id, 'conformance-fuzz']);
      const initial = domain.createState(task.spec.initialState);
      const words = new Set<string>();
      wordsOf(domain.exportState(initial), words);
      wordsOf(task.spec.instructions, words);
      for (const a of task.spec.solution) if (a.type === 'tool') wordsOf(a.args, words);
      const pool = [...words].sort();
      // States along the reference solution, then along a seeded random walk from the start.
      const states: Array<{ state: unknown; where: string }> = [];
      let walk = domain.fork(initial);
      states.push({ state: domain.fork(walk), where: 'initial state' });
      task.spec.solution.forEach((action, i) => {
        if (action.type !== 'tool') return;
        const tool = domain.tools.find((t) => t.name === action.tool);
        if (tool !== undefined && run(tool, walk, action.args, task, rng, `reference step ${i}`)) states.push({ state: domain.fork(walk), where: `after reference step ${i}` });
      });
      walk = domain.fork(initial);
      for (let i = 0; i < 8 && specs.length > 0; i++) {
        const { tool, schema } = rng.pick(specs);
        if (run(tool, walk, sampleFromSchema(schema, rng, pool), task, rng, `random play step ${i}`)) states.push({ state: domain.fork(walk), where: `after random play step ${i}` });
      }
      for (const { state, where } of states) {
        for (const { tool, schema } of specs) {
          for (let k = 0; k < calls; k++) {
            const args = sampleFromSchema(schema, rng, pool) as JsonObject;
            run(tool, domain.fork(state), args, task, rng, where);
            for (const bad of invalidArgs(schema, args, rng)) {
              const target = domain.fork(state);
              const before = domain.hashState(target);
              run(tool, target, bad, task, rng, `${where} (invalid arguments)`);
              if (!tool.args.safeParse(bad).success && domain.hashState(target) !== before) problems.push(`${tool.name}: a rejected call changed the state`);
            }
          }
        }
      }
    }
  }
  return problems;
}

/** Summary statistics of a task's params and reference solution, for comparing levels. */
function features(task: Task): Map<string, number> {
  const out = new Map<string, number>();
  const add = (key: string, v: number) => out.set(key, (out.get(key) ?? 0) + v);
  const walk = (value: JsonValue, path: string, depth: number): void => {
    if (depth > 8) return;
    add(`count ${path}`, 1);
    if (typeof value === 'number') {
      add(`sum ${path}`, value);
      // Magnitude too: signed values drawn from a wider range have the same mean and a larger spread.
      add(`magnitude ${path}`, Math.abs(value));
    }
    else if (typeof value === 'string') {
      add(`length ${path}`, value.length);
      if (value.length <= 16) add(`value ${path}=${value}`, 1);
    } else if (typeof value === 'boolean') add(`true ${path}`, value ? 1 : 0);
    else if (Array.isArray(value)) for (const v of value) walk(v, `${path}/*`, depth + 1);
    else if (value !== null && typeof value === 'object') {
      // Keys that look like ids (digits in them) are one kind of key, so worlds of random ids compare.
      for (const key of Object.keys(value)) walk(value[key]!, `${path}/${/\d/.test(key) ? '#' : key}`, depth + 1);
    }
  };
  walk(task.params, 'params', 0);
  out.set('reference length', task.spec.solution.length);
  out.set('reference tool calls', task.spec.solution.filter((a) => a.type === 'tool').length);
  return out;
}

/** Whether two samples of one feature differ by more than chance (Welch's z above 4, or two constants that differ). */
function differ(a: readonly number[], b: readonly number[]): boolean {
  const mean = (x: readonly number[]) => x.reduce((s, v) => s + v, 0) / x.length;
  const variance = (x: readonly number[], m: number) => x.reduce((s, v) => s + (v - m) ** 2, 0) / Math.max(1, x.length - 1);
  const ma = mean(a);
  const mb = mean(b);
  const se = Math.sqrt(variance(a, ma) / a.length + variance(b, mb) / b.length);
  if (se === 0) return Math.abs(ma - mb) > 1e-9;
  return Math.abs(ma - mb) / se > 4;
}

/** Plays an agent on a task in a real episode (faults on, as in training); returns the outcome. */
function play(domain: Domain<any>, task: Task, agent: Agent, seed: number, cache: RuntimeCache): number {
  const episode = createEpisode(domain, task, { cache });
  let observation: Observation = episode.reset({ seed });
  const session = agent.begin({ episodeId: `conformance-${seed}`, seed, domain: domain.name });
  for (let i = 0; i < 200; i++) {
    const action = session.act(observation);
    if (action instanceof Promise) throw new Error(`baseline ${agent.name} is asynchronous; the conformance suite plays synchronous baselines only`);
    const result = episode.step(action as Action);
    session.observe?.(result);
    if (result.terminated || result.truncated) return result.info.outcome;
    observation = result.observation;
  }
  return 0;
}

/**
 * Levels must really differ: per template, each level's tasks must differ from the adjacent level's in
 * the distribution of their params, their reference solution's length or a baseline's success; and a
 * baseline's success must not rise with the level (more than chance allows).
 */
export function checkLevelsDiffer(domain: Domain<any>, options: CheckOptions = {}): string[] {
  const build = options.instantiate ?? defaultBuild;
  const n = options.levelSamples ?? 16;
  const cache = options.cache ?? createRuntimeCache(domain);
  const problems: string[] = [];
  for (const template of templatesOf(domain)) {
    const levels = template.levels.length;
    if (levels < 2) continue;
    const tasks: Task[][] = [];
    for (let level = 1; level <= levels; level++) tasks.push(Array.from({ length: n }, (_, i) => build(template, level, 1000 + i, i)));
    const feats = tasks.map((ts) => ts.map(features));
    const success = (options.baselines ?? []).map((agent) => tasks.map((ts) => ts.map((t, i) => play(domain, t, agent, i, cache))));
    for (let l = 0; l + 1 < levels; l++) {
      const keys = new Set([...feats[l]!.flatMap((f) => [...f.keys()]), ...feats[l + 1]!.flatMap((f) => [...f.keys()])]);
      const column = (level: number, key: string) => feats[level]!.map((f) => f.get(key) ?? 0);
      const paramsDiffer = [...keys].some((key) => differ(column(l, key), column(l + 1, key)));
      const baselineDiffers = success.some((s) => differ(s[l]!, s[l + 1]!));
      if (!paramsDiffer && !baselineDiffers) {
        problems.push(`${template.id}: level ${l + 2} is not different from level ${l + 1} (same distribution of params and reference length${success.length > 0 ? ', same baseline success' : ''})`);
      }
      for (const [b, s] of success.entries()) {
        const rate = (x: readonly number[]) => x.reduce((a, v) => a + v, 0) / x.length;
        const [lo, hi] = [rate(s[l]!), rate(s[l + 1]!)];
        // A rise beyond chance: more than a tenth of the tasks and 2.5 standard errors.
        if (hi - lo > Math.max(0.1, 2.5 * Math.sqrt((lo * (1 - lo) + hi * (1 - hi)) / n))) {
          problems.push(`${template.id}: baseline ${options.baselines![b]!.name} succeeds more at level ${l + 2} (${Math.round(100 * hi)}%) than at level ${l + 1} (${Math.round(100 * lo)}%): levels should get harder`);
        }
      }
    }
  }
  return problems;
}

/**
 * Tools, build and user must be deterministic: the same seed builds the same task and world; the same
 * call on equal states with equal rngs gives the same outcome and state; two users built with the same
 * rng answer the same messages the same way.
 */
export function checkDeterminism(domain: Domain<any>, options: CheckOptions = {}): string[] {
  const build = options.instantiate ?? defaultBuild;
  const seeds = options.seeds ?? [1, 2, 3];
  const problems: string[] = [];
  for (const template of templatesOf(domain)) {
    for (let level = 1; level <= template.levels.length; level++) {
      for (const seed of seeds) {
        const task = build(template, level, seed, 0);
        const again = build(template, level, seed, 0);
        if (canonicalize(task) !== canonicalize(again)) {
          problems.push(`${template.id} level ${level} seed ${seed}: building twice gives different tasks`);
          continue;
        }
        const a = domain.createState(task.spec.initialState);
        const b = domain.createState(task.spec.initialState);
        if (domain.hashState(a) !== domain.hashState(b)) problems.push(`${template.id} level ${level}: createState twice gives different hashes`);
        // Every reference call, run on two equal states with equal rngs.
        const [x, y] = [domain.fork(a), domain.fork(b)];
        task.spec.solution.forEach((action, i) => {
          if (action.type !== 'tool') return;
          const tool = domain.tools.find((t) => t.name === action.tool);
          const parsed = tool?.args.safeParse(action.args);
          if (tool === undefined || parsed === undefined || !parsed.success) return;
          const ox = tool.run(x, parsed.data, { task, rng: createRng([task.id, 'determinism', i]) });
          const oy = tool.run(y, tool.args.parse(action.args), { task, rng: createRng([task.id, 'determinism', i]) });
          if (canonicalize(ox as unknown as JsonValue) !== canonicalize(oy as unknown as JsonValue) || domain.hashState(x) !== domain.hashState(y)) {
            problems.push(`${template.id} level ${level}: ${tool.name} gives different results for the same call on equal states`);
          }
        });
        if (domain.createUser !== undefined && task.spec.user !== undefined) {
          const transcript = (): string => {
            const user = domain.createUser!(task, createRng([task.id, 'determinism-user']));
            const said: JsonValue[] = [user.opening()];
            for (const action of [...task.spec.solution, { type: 'message', text: 'Could you confirm?' } as Action]) {
              if (action.type === 'message') said.push(canonicalize(user.respond(action.text, { trace: [] }) as unknown as JsonValue));
            }
            return digest(said);
          };
          if (transcript() !== transcript()) problems.push(`${template.id} level ${level}: two users built with the same rng answer differently`);
        }
      }
    }
  }
  return problems;
}
