/** Templates: versioned, parameterised task generators, and the tasks they produce. */
import type { ZodType } from 'zod';
import type { Action, Budget, Constraints, FaultProfile } from './episode.js';
import type { JsonObject, JsonValue } from './json.js';
import type { Rng } from './rng.js';
import type { Finding } from './problem.js';

/** What one difficulty level means for a template's parameters: values, [min, max] ranges or lists. */
export type LevelSpec = Readonly<Record<string, JsonValue>>;

/** An ordering assertion: the first action matching `before` must come before any matching `after`. */
export interface OrderingRule {
  id: string;
  before: ActionPattern;
  after: ActionPattern;
  message?: string;
}

/** Matches an action by type, tool name, and a subset of argument values. */
export interface ActionPattern {
  type?: Action['type'];
  tool?: string;
  args?: JsonObject;
}

/** A subgoal reached when an action matching `pattern` succeeds (SUBGOAL_REACHED feedback). */
export interface Subgoal {
  id: string;
  pattern: ActionPattern;
}

/** How a task is graded. */
export interface Acceptance {
  /** Compare the final world with the world after the reference solution. */
  finalState: boolean;
  /** Strings that must have been said to the user (normalised substring match). */
  outputs?: string[];
  /** Expected `finish` answer, for question/answer tasks (normalised equality). */
  answer?: string;
  ordering?: OrderingRule[];
  subgoals?: Subgoal[];
}

/** The content of a task: everything an episode needs, and nothing about where it came from. */
export interface TaskSpec {
  instructions: string;
  /** Input of the domain's `createState`; JSON so the task stays content-addressed. */
  initialState: JsonValue;
  budget: Budget;
  constraints?: Constraints;
  faults?: FaultProfile;
  acceptance: Acceptance;
  /** The reference solution: actions that reach the goal. Never shown to agents. */
  solution: Action[];
  /** Hidden goal and facts for the domain's simulated user, when the task has one. */
  user?: JsonValue;
  tags?: string[];
}

export type Split = 'regression' | 'dynamic' | 'heldout';
export const SPLITS: readonly Split[] = ['regression', 'dynamic', 'heldout'];

/** A concrete task. `id` is the sha256 of the canonical JSON of the task without `id` and `origin`. */
export interface Task {
  id: string;
  /** `domain/name@version` */
  template: string;
  domain: string;
  taskType: string;
  level: number;
  params: JsonValue;
  spec: TaskSpec;
  /** Provenance, not part of the identity: two seeds that give the same content give the same id. */
  origin: { seed: number; index: number; templateDigest: string };
}

/** Context given to `build` and `solve`. */
export interface BuildContext {
  rng: Rng;
  level: number;
  levelSpec: LevelSpec;
}

/** A template as authored with `defineTemplate`. */
export interface Template<P = JsonValue> {
  domain: string;
  name: string;
  version: number;
  taskType: string;
  description?: string;
  /** levels[i] describes level i + 1. */
  levels: readonly LevelSpec[];
  params: ZodType<P>;
  /** Draws parameters for a level. Pure in (rng, level). */
  sample(rng: Rng, level: number, levelSpec: LevelSpec): P;
  /** The task content for these parameters. Pure. */
  build(params: P, ctx: BuildContext): Omit<TaskSpec, 'solution'>;
  /** The reference solution. Pure. */
  solve(params: P, spec: Omit<TaskSpec, 'solution'>, ctx: BuildContext): Action[];
  /** Extra checks; returns problems (`Problem`s, or their messages alone), empty when fine. */
  validate?(task: Task): Finding[];
  /**
   * Extra text folded into the source digest (declarative templates put their definition here). A
   * function is called when the digest is first computed: for a wrapper whose text depends on other
   * templates' digests, which would otherwise be computed at definition time.
   */
  sourceText?: string | (() => string);
  /**
   * A digest of everything this template's output depends on, computed by its author (retail: over
   * its domain's source files). When absent, the digest probes the template's output on fixed seeds
   * instead (docs/generation.md, "Template digests").
   */
  contentDigest?: string;
  /** Labels that keep a template out of training (e.g. held-out phrasing). */
  heldout?: boolean;
}

/** A registered template with its id and the digest of its source. */
export interface RegisteredTemplate<P = JsonValue> extends Template<P> {
  id: string;
  sourceDigest: string;
}
