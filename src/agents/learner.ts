/**
 * The `learner` agent: tabular Q-learning over a skill set's abstract dialogue states, with slot-filled
 * macros as actions. It starts knowing nothing about solutions and learns only from the outcome reward
 * and a small shaping from feedback. It never reads `ctx.task` (it is not privileged).
 */
import {
  createRng,
  digest,
  EnvHarnessError,
  type Action,
  type Agent,
  type AgentContext,
  type AgentEpisode,
  type FeedbackCode,
  type JsonObject,
  type JsonValue,
  type Observation,
  type Rng,
  type StepResult,
} from '../core/index.js';
import { genericSkills, type SkillSet, type SkillTracker } from './skill-set.js';

/** The format tag of a saved learner state. */
export const LEARNER_STATE_FORMAT = 'envharness-learner/1';

/** Shaping the learner adds to each step's reward, by feedback code (its own, independent of the runtime's). */
export const DEFAULT_LEARNER_SHAPING: Readonly<Partial<Record<FeedbackCode, number>>> = {
  INVALID_ACTION: -0.05,
  PRECONDITION_FAILED: -0.05,
  POLICY_VIOLATION: -0.05,
  ORDER_VIOLATION: -0.05,
  REDUNDANT_CALL: -0.02,
  SUBGOAL_REACHED: 0.1,
};

export interface LearnerOptions {
  /** Mixed with each episode's seed for exploration and tie-breaking (default 0). */
  seed?: number;
  /** Step size of the Q update (default 0.2). */
  alpha?: number;
  /** Discount per step (default 0.95): shorter macro chains are worth more. */
  gamma?: number;
  /** Exploration rate of a state never visited (default 0.3). */
  epsilon?: number;
  /** Exploration never falls below this (default 0.02). */
  epsilonMin?: number;
  /** Visits after which a state's exploration has halved (default 20): ε(s) = ε·k / (k + visits(s)). */
  explorationVisits?: number;
  /**
   * Count-based exploration while training (default 0.5): a macro scores Q + bonus / sqrt(1 + tries), so
   * every macro of a state that keeps coming back gets tried, which random exploration alone rarely
   * does deep in a long chain.
   */
  bonus?: number;
  /** Reward per feedback code (default `DEFAULT_LEARNER_SHAPING`). OFF_PATH is deliberately absent: it derives from the reference solution. */
  shaping?: Partial<Record<FeedbackCode, number>>;
  /** The learner finishes on its own after this many steps (default 40). */
  maxSteps?: number;
  /** Skill sets, the first that handles the episode's domain is used (default: the generic one, which handles every domain). */
  skills?: readonly SkillSet[];
  /** A saved state (`getState()`) to start from. */
  state?: JsonValue;
  /** Start in training mode (default false: frozen, greedy). */
  training?: boolean;
}

/** The learner's public surface: an Agent whose learning can be switched on and off and saved. */
export interface LearnerAgent extends Agent {
  setTraining(training: boolean): void;
  isTraining(): boolean;
  getState(): JsonValue;
  /** Training episodes begun so far. */
  episodes(): number;
  /** The greedy macro and the Q-values of a skill set's state (inspection and tests). */
  inspect(skill: string, state: string): { visits: number; q: Record<string, number> } | undefined;
}

interface Entry {
  /** Updates of this state. */
  n: number;
  q: Map<string, number>;
  /** Tries per macro. */
  c: Map<string, number>;
}

interface Step {
  key: string;
  macro: string;
  reward: number;
  next?: { key: string; options: readonly string[] };
}

/**
 * Creates a learner. Turn learning on with `setTraining(true)`; `getState()` is its Q-table, and
 * `createLearnerAgent({ state })` restores it.
 * @example
 * const learner = createLearnerAgent({ seed: 1, training: true });
 * for (const task of tasks) await runEpisode(domain, task, learner, { seed: 0 });
 * learner.setTraining(false);
 */
export function createLearnerAgent(options: LearnerOptions = {}): LearnerAgent {
  const seed = options.seed ?? 0;
  const alpha = options.alpha ?? 0.2;
  const gamma = options.gamma ?? 0.95;
  const epsilon = options.epsilon ?? 0.3;
  const bonus = options.bonus ?? 0.5;
  const epsilonMin = options.epsilonMin ?? 0.02;
  const k = options.explorationVisits ?? 20;
  const shaping = { ...(options.shaping ?? DEFAULT_LEARNER_SHAPING) };
  const maxSteps = options.maxSteps ?? 40;
  const skills = options.skills ?? [genericSkills];
  const tables = new Map<string, Map<string, Entry>>();
  for (const s of skills) tables.set(s.id, new Map());
  let episodes = 0;
  let training = options.training ?? false;
  if (options.state !== undefined) episodes = restore(options.state, tables, skills);

  const rewardOf = (result: StepResult): number => {
    let r = result.terminated || result.truncated ? result.info.outcome : 0;
    for (const f of result.feedback) r += shaping[f.code] ?? 0;
    return r;
  };
  const entryOf = (table: Map<string, Entry>, key: string): Entry => {
    let entry = table.get(key);
    if (entry === undefined) table.set(key, (entry = { n: 0, q: new Map(), c: new Map() }));
    return entry;
  };
  const best = (entry: Entry | undefined, options: readonly string[]): number => {
    let max = -Infinity;
    for (const m of options) max = Math.max(max, entry?.q.get(m) ?? 0);
    return max === -Infinity ? 0 : max;
  };
  const choose = (entry: Entry | undefined, choices: readonly string[], rng: Rng, learning: boolean): string => {
    if (learning) {
      const eps = Math.max(epsilonMin, (epsilon * k) / (k + (entry?.n ?? 0)));
      if (rng.chance(eps)) return rng.pick(choices);
    }
    let top = -Infinity;
    let ties: string[] = [];
    for (const m of choices) {
      let score = entry?.q.get(m) ?? 0;
      if (learning && bonus > 0) score += bonus / Math.sqrt(1 + (entry?.c.get(m) ?? 0));
      if (score > top) {
        top = score;
        ties = [m];
      } else if (score === top) ties.push(m);
    }
    return ties.length === 1 ? ties[0]! : rng.pick(ties);
  };
  const learn = (table: Map<string, Entry>, trajectory: readonly Step[]): void => {
    // One backward sweep: the outcome reaches the first step of the chain in a single episode.
    for (let t = trajectory.length - 1; t >= 0; t--) {
      const step = trajectory[t]!;
      const entry = entryOf(table, step.key);
      const future = step.next === undefined ? 0 : gamma * best(table.get(step.next.key), step.next.options);
      const q = entry.q.get(step.macro) ?? 0;
      entry.q.set(step.macro, q + alpha * (step.reward + future - q));
      entry.c.set(step.macro, (entry.c.get(step.macro) ?? 0) + 1);
      entry.n++;
    }
  };

  const agent: LearnerAgent = {
    name: 'learner',
    version: '4',
    config(): JsonValue {
      return {
        seed,
        alpha,
        gamma,
        epsilon,
        epsilonMin,
        explorationVisits: k,
        bonus,
        shaping: sortedObject(shaping as Record<string, number>),
        maxSteps,
        skills: skills.map((s) => s.id),
        episodes,
        stateDigest: digest(agent.getState()),
      };
    },
    setTraining(on: boolean): void {
      training = on;
    },
    isTraining: () => training,
    episodes: () => episodes,
    getState(): JsonValue {
      const out: JsonObject = {};
      for (const id of [...tables.keys()].sort()) {
        const table = tables.get(id)!;
        const states: JsonObject = {};
        for (const key of [...table.keys()].sort()) {
          const entry = table.get(key)!;
          const q: JsonObject = {};
          const c: JsonObject = {};
          for (const m of [...entry.q.keys()].sort()) {
            q[m] = entry.q.get(m)!;
            c[m] = entry.c.get(m) ?? 0;
          }
          states[key] = { n: entry.n, q, c };
        }
        out[id] = states;
      }
      return { format: LEARNER_STATE_FORMAT, episodes, tables: out };
    },
    inspect(skill: string, state: string) {
      const entry = tables.get(skill)?.get(state);
      if (entry === undefined) return undefined;
      return { visits: entry.n, q: Object.fromEntries([...entry.q.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1))) };
    },
    begin(ctx: AgentContext): AgentEpisode {
      // Only these two fields are read: the learner has no access to the task or its solution.
      const { seed: episodeSeed, domain } = ctx;
      const learning = training;
      const rng = createRng(['agent:learner', seed, episodeSeed, learning ? episodes : 'frozen']);
      if (learning) episodes++;
      const skill = skills.find((s) => s.handles(domain)) ?? genericSkills;
      const table = tables.get(skill.id) ?? tables.set(skill.id, new Map()).get(skill.id)!;
      const trajectory: Step[] = [];
      // Whether the skill set's state is unchanged since the previous step is part of the key ("#"), so
      // the learner can learn to try something else instead of going round in circles.
      let previous: string | undefined;
      const keyOf = (state: string): string => (state === previous ? `${state}#` : state);
      let tracker: SkillTracker | undefined;
      let pending: { key: string; macro: string; action: Action } | undefined;
      return {
        act(observation: Observation): Action {
          tracker ??= skill.start(observation);
          if (trajectory.length >= maxSteps) return { type: 'finish' };
          const state = tracker.state();
          const key = keyOf(state);
          previous = state;
          const macro = choose(table.get(key), tracker.options(), rng, learning && training);
          pending = { key, macro, action: tracker.expand(macro) };
          return pending.action;
        },
        observe(result: StepResult): void {
          if (tracker === undefined || pending === undefined) return;
          tracker.observe(pending.macro, pending.action, result);
          const ended = result.terminated || result.truncated;
          trajectory.push({
            key: pending.key,
            macro: pending.macro,
            reward: rewardOf(result),
            ...(ended ? {} : { next: { key: keyOf(tracker.state()), options: tracker.options() } }),
          });
          pending = undefined;
        },
        end(): void {
          if (learning && training) learn(table, trajectory);
        },
      };
    },
  };
  return agent;
}

function restore(state: JsonValue, tables: Map<string, Map<string, Entry>>, skills: readonly SkillSet[]): number {
  const fail = (pointer: string, why: string): never => {
    throw new EnvHarnessError('PARAMS_INVALID', `learner state is not valid at ${pointer || '/'}: ${why}; pass a value from learner.getState()`, { details: { pointer: `/state${pointer}` } });
  };
  if (state === null || typeof state !== 'object' || Array.isArray(state)) return fail('', 'expected an object');
  if (state['format'] !== LEARNER_STATE_FORMAT) fail('/format', `expected "${LEARNER_STATE_FORMAT}"`);
  const episodes = state['episodes'];
  if (typeof episodes !== 'number' || !Number.isInteger(episodes) || episodes < 0) fail('/episodes', 'expected a non-negative integer');
  const raw = state['tables'];
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return fail('/tables', 'expected an object');
  for (const [id, states] of Object.entries(raw)) {
    // A table is only valid for the skill-set version that made it (its states and macros mean something else in another).
    if (!skills.some((s) => s.id === id)) {
      fail(`/tables/${id.replace(/~/g, '~0').replace(/\//g, '~1')}`, `its table was learnt with skill set ${id}, which this learner (version 4, skill sets ${skills.map((s) => s.id).join(', ')}) cannot use; delete the saved state and train again`);
    }
    if (states === null || typeof states !== 'object' || Array.isArray(states)) fail(`/tables/${id}`, 'expected an object');
    const table = tables.get(id) ?? tables.set(id, new Map()).get(id)!;
    for (const [key, value] of Object.entries(states as JsonObject)) {
      const at = `/tables/${id}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return fail(at, 'expected { n, q, c }');
      const n = value['n'];
      const q = value['q'];
      const c = value['c'] ?? {};
      if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) fail(`${at}/n`, 'expected a non-negative integer');
      if (q === null || typeof q !== 'object' || Array.isArray(q)) return fail(`${at}/q`, 'expected an object');
      if (c === null || typeof c !== 'object' || Array.isArray(c)) return fail(`${at}/c`, 'expected an object');
      const entry: Entry = { n: n as number, q: new Map(), c: new Map() };
      for (const [m, v] of Object.entries(q)) {
        if (typeof v !== 'number' || !Number.isFinite(v)) fail(`${at}/q/${m}`, 'expected a finite number');
        entry.q.set(m, v as number);
      }
      for (const [m, v] of Object.entries(c)) {
        if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) fail(`${at}/c/${m}`, 'expected a non-negative integer');
        entry.c.set(m, v as number);
      }
      table.set(key, entry);
    }
  }
  return episodes as number;
}

function sortedObject(record: Record<string, number>): JsonObject {
  const out: JsonObject = {};
  for (const key of Object.keys(record).sort()) out[key] = record[key]!;
  return out;
}
