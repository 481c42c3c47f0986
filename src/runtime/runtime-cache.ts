/** Per-domain caches: built initial states (by content), prepared tasks and their reference final states (by task id). */
import {
  DEFAULT_BUDGET,
  EnvHarnessError,
  toEnvHarnessError,
} from '../core/index.js';
import type { Action, Budget, Domain, FaultRule, JsonObject, JsonValue, Rng, RngState, Task, Tool, ToolContext, ToolSpec } from '../core/index.js';
import { canonicalize, fastDigest, fastRng } from '../core/index.js';
import { DEFAULT_STATE_CACHE_SIZE, DEFAULT_TASK_CACHE_SIZE } from './defaults.js';
import { Lru } from './lru.js';
import { parseArgs } from './action.js';
import { callKey } from './patterns.js';
import { deepFreeze, toolSpec } from './tool-specs.js';

/** A built initial state and its hash; never mutated (episodes work on forks). */
interface BaseEntry<S> {
  state: S;
  hash: string;
}

/** Everything an episode needs from its task that does not depend on the seed, computed once per task id. */
export interface PreparedTask<S> {
  task: Task;
  base: S;
  baseHash: string;
  /** The final state of the reference solution, played on a fork of `base` (tools only, no faults). */
  referenceState: S;
  referenceHash: string;
  /** Allowed tools by name. */
  tools: ReadonlyMap<string, Tool<S, any>>;
  toolSpecs: readonly ToolSpec[];
  budget: Readonly<Budget>;
  confirm: ReadonlySet<string>;
  forbidden: ReadonlyArray<{ tool: string; args?: JsonObject; reason?: string }>;
  faultRules: readonly FaultRule[];
  hasStaleRule: boolean;
  /** Call keys of the reference solution's tool actions (OFF_PATH); made on first read (the gates never read them). */
  readonly solutionKeys: ReadonlySet<string>;
  /**
   * @internal The reference solution's tool calls in order, for gate episodes to serve instead of running
   * them while they play the solution itself (`createGateEpisode`): the call's action object (matched by
   * identity), its output and, after a write, the state it left. Empty when a call read its rng (its
   * result may depend on the seed), and cut before the first call whose output is a mutable object.
   */
  readonly replay: ReadonlyArray<ReplayedCall<S>>;
  /**
   * @internal The simulated user's generator state for the last seed an episode was reset with:
   * `fastRng([task.id, seed, 'user'])` costs a sha256, and the gates reset three episodes of a task with seed 0.
   */
  userRng?: { seed: number; state: RngState };
}

/** @internal One served call of `PreparedTask.replay`. */
export interface ReplayedCall<S> {
  readonly action: Action;
  /** The action's arguments as the tool's schema parsed them (a pure function of them). */
  readonly args: JsonObject;
  readonly output: JsonValue;
  /** The state after the call, when it is a write (a snapshot never stepped on: fork it). */
  readonly after: S | undefined;
}

/**
 * The caches of one domain. Building a world (`createState`) happens once per distinct initial state;
 * preparing a task (checking it, replaying its reference solution) once per task id.
 */
export interface RuntimeCache<S = unknown> {
  readonly domain: Domain<S>;
  /** Prepared task for `task` (cached by id); throws TASK_INVALID when the task does not fit the domain. */
  prepare(task: Task): PreparedTask<S>;
  /** Drops every cached state and task. */
  clear(): void;
  readonly stats: { states: number; tasks: number; statesBuilt: number; tasksPrepared: number };
}

/** Sizes of a runtime cache. */
export interface RuntimeCacheOptions {
  /** Distinct initial states kept (LRU). */
  maxStates?: number;
  /** Prepared tasks kept (LRU). */
  maxTasks?: number;
}

/** Creates the state and task caches for one domain. */
export function createRuntimeCache<S>(domain: Domain<S>, options: RuntimeCacheOptions = {}): RuntimeCache<S> {
  const bases = new Lru<string, BaseEntry<S>>(options.maxStates ?? DEFAULT_STATE_CACHE_SIZE);
  const tasks = new Lru<string, PreparedTask<S>>(options.maxTasks ?? DEFAULT_TASK_CACHE_SIZE);
  const specs = new Map<string, ToolSpec>();
  // Per allowed-tool list, confirm list and budget: the tasks of a template share a handful of each.
  const toolSets = new Map<string, { tools: ReadonlyMap<string, Tool<S, any>>; toolSpecs: readonly ToolSpec[] }>();
  const confirmSets = new Map<string, ReadonlySet<string>>();
  const budgets = new Map<string, Readonly<Budget>>();
  const toolsByName = new Map<string, Tool<S, any>>(domain.tools.map((t) => [t.name, t]));
  let statesBuilt = 0;
  let tasksPrepared = 0;

  function specOf(tool: Tool<S, any>): ToolSpec {
    let spec = specs.get(tool.name);
    if (spec === undefined) {
      spec = toolSpec(tool);
      specs.set(tool.name, spec);
    }
    return spec;
  }

  function checkTool(task: Task, name: string, list: string, i: number, suffix: string): void {
    if (!toolsByName.has(name)) throw unknownTool(task, name, `/spec/constraints/${list}/${i}${suffix}`);
  }

  function unknownTool(task: Task, name: string, pointer: string): EnvHarnessError {
    return invalid(task, `task ${task.id} names tool "${name}" that domain ${domain.name} does not have; known: ${[...toolsByName.keys()].join(', ')}`, pointer);
  }

  function baseFor(task: Task): BaseEntry<S> {
    // A small initial state (a world reference) is its own key: no sha256 per task.
    const text = canonicalize(task.spec.initialState);
    const key = text.length <= SHORT_STATE_KEY ? text : fastDigest(text);
    let entry = bases.get(key);
    if (entry === undefined) {
      let state: S;
      try {
        state = domain.createState(task.spec.initialState);
      } catch (error) {
        throw invalid(task, `domain ${domain.name} cannot build its initial state: ${toEnvHarnessError(error).message}`, '/spec/initialState', error);
      }
      entry = { state, hash: domain.hashState(state) };
      bases.set(key, entry);
      statesBuilt++;
    }
    return entry;
  }

  // The gates prepare one task object several times in a row: the last one is kept outside the LRU.
  let lastTask: Task | undefined;
  let lastId = '';
  let lastPrepared: PreparedTask<S> | undefined;

  function prepare(task: Task): PreparedTask<S> {
    if (task === lastTask && task.id === lastId) return lastPrepared!;
    // Task ids are content digests: the same id is the same task.
    let prepared = tasks.get(task.id);
    if (prepared === undefined) {
      prepared = build(task);
      tasks.set(task.id, prepared);
      tasksPrepared++;
    }
    lastTask = task;
    lastId = task.id;
    lastPrepared = prepared;
    return prepared;
  }

  function build(task: Task): PreparedTask<S> {
    if (task.domain !== domain.name) {
      throw invalid(task, `task ${task.id} belongs to domain "${task.domain}", not "${domain.name}"`, '/domain');
    }
    const spec = task.spec;
    const constraints = spec.constraints ?? {};
    // Loops rather than callbacks, and pointers built only for an error: this runs once per generated task.
    const { allowedTools, confirmTools, forbidden } = constraints;
    if (allowedTools !== undefined) for (let i = 0; i < allowedTools.length; i++) checkTool(task, allowedTools[i]!, 'allowedTools', i, '');
    if (confirmTools !== undefined) for (let i = 0; i < confirmTools.length; i++) checkTool(task, confirmTools[i]!, 'confirmTools', i, '');
    if (forbidden !== undefined) for (let i = 0; i < forbidden.length; i++) checkTool(task, forbidden[i]!.tool, 'forbidden', i, '/tool');
    const faultRules = spec.faults?.rules ?? [];
    for (let i = 0; i < faultRules.length; i++) {
      const rule = faultRules[i]!;
      if (rule.tool !== '*' && !toolsByName.has(rule.tool)) throw unknownTool(task, rule.tool, `/spec/faults/rules/${i}/tool`);
      if (!(rule.rate >= 0 && rule.rate <= 1)) throw invalid(task, `fault rule ${i}: rate must be within [0, 1], got ${rule.rate}`, `/spec/faults/rules/${i}/rate`);
    }
    const budget = budgetOf(task);
    const toolKey = allowedTools === undefined ? '*' : allowedTools.join('\n');
    let toolSet = toolSets.get(toolKey);
    if (toolSet === undefined) {
      const allowed = allowedTools === undefined ? undefined : new Set(allowedTools);
      const map = new Map<string, Tool<S, any>>();
      for (const tool of domain.tools) if (allowed === undefined || allowed.has(tool.name)) map.set(tool.name, tool);
      toolSet = { tools: map, toolSpecs: deepFreeze([...map.values()].map(specOf)) };
      toolSets.set(toolKey, toolSet);
    }
    const tools = toolSet.tools;
    const confirmKey = confirmTools === undefined ? '' : confirmTools.join('\n');
    let confirm = confirmSets.get(confirmKey);
    if (confirm === undefined) {
      confirm = new Set(confirmTools ?? []);
      confirmSets.set(confirmKey, confirm);
    }

    const base = baseFor(task);
    const referenceState = domain.fork(base.state);
    const solutionCalls: Array<readonly [string, JsonObject]> = [];
    const replay: Array<{ action: Action; args: JsonObject; output: JsonValue; after: S | undefined }> = [];
    let replayable = true;
    let call = 0;
    const solution = spec.solution;
    for (let i = 0; i < solution.length; i++) {
      const action = solution[i]!;
      if (action.type !== 'tool') continue;
      const tool = tools.get(action.tool);
      if (tool === undefined) throw invalid(task, `reference solution step ${i} calls tool "${action.tool}", which this task does not allow or the domain lacks`, `/spec/solution/${i}/tool`);
      const parsed = parseArgs(tool.args, action.args);
      if (!parsed.success) {
        throw invalid(task, `reference solution step ${i}: invalid arguments for ${action.tool}: ${parsed.issue?.message ?? 'invalid'}`, `/spec/solution/${i}/args`);
      }
      solutionCalls.push([tool.name, parsed.data]);
      const ctx = new LazyToolContext(task, 'reference', call++);
      let outcome;
      try {
        outcome = tool.run(referenceState, parsed.data, ctx);
      } catch (error) {
        throw invalid(task, `reference solution step ${i} (${action.tool}) threw: ${toEnvHarnessError(error).message}`, `/spec/solution/${i}`, error);
      }
      if (!outcome.ok) {
        throw invalid(task, `reference solution step ${i} (${action.tool}) failed with ${outcome.error.code}: ${outcome.error.message}`, `/spec/solution/${i}`);
      }
      if (ctx.usedRng) replayable = false;
      // A mutable output could change under later calls here before an episode shows it: stop serving there.
      const output = outcome.output;
      if (typeof output === 'object' && output !== null && !Object.isFrozen(output)) replayable = false;
      if (replayable) replay.push({ action, args: parsed.data, output, after: tool.effect === 'write' ? domain.fork(referenceState) : undefined });
    }
    const referenceHash = domain.hashState(referenceState);
    if (!replayable) replay.length = 0;
    else {
      // The last write left the final state: serve a fork taken after hashing (a domain may keep the hash on it).
      for (let k = replay.length - 1; k >= 0; k--) {
        if (replay[k]!.after === undefined) continue;
        replay[k]!.after = domain.fork(referenceState);
        break;
      }
    }

    let hasStaleRule = false;
    for (let i = 0; i < faultRules.length; i++) if (faultRules[i]!.kind === 'stale') hasStaleRule = true;
    return new Prepared<S>(
      {
        task,
        base: base.state,
        baseHash: base.hash,
        referenceState,
        referenceHash,
        tools,
        toolSpecs: toolSet.toolSpecs,
        budget,
        confirm,
        forbidden: constraints.forbidden ?? [],
        faultRules,
        hasStaleRule,
        replay,
      },
      solutionCalls,
    );
  }

  /** The task's budget over the defaults, checked and frozen; shared by tasks with the same plain numbers. */
  function budgetOf(task: Task): Readonly<Budget> {
    const own = task.spec.budget as Budget | undefined;
    let key: string | undefined;
    if (own !== undefined && own.perTool === undefined) {
      key = '';
      for (const name in own) {
        const value = own[name as keyof Budget];
        // Only finite numbers make a key: anything else (undefined included) is merged and checked afresh.
        if (typeof value !== 'number' || !Number.isFinite(value)) {
          key = undefined;
          break;
        }
        key += name + '=' + value + ';';
      }
    }
    const known = key === undefined ? undefined : budgets.get(key);
    if (known !== undefined) return known;
    const budget = { ...DEFAULT_BUDGET, ...own };
    checkBudget(task, budget);
    const frozen = deepFreeze(budget);
    if (key !== undefined && budgets.size < MAX_SHARED_BUDGETS) budgets.set(key, frozen);
    return frozen;
  }

  return {
    domain,
    prepare,
    clear() {
      lastTask = undefined;
      lastPrepared = undefined;
      bases.clear();
      tasks.clear();
      toolSets.clear();
      confirmSets.clear();
      budgets.clear();
    },
    get stats() {
      return { states: bases.size, tasks: tasks.size, statesBuilt, tasksPrepared };
    },
  };
}

/** A prepared task; the solution's call keys are made on first read. */
class Prepared<S> implements PreparedTask<S> {
  readonly task: Task;
  readonly base: S;
  readonly baseHash: string;
  readonly referenceState: S;
  readonly referenceHash: string;
  readonly tools: ReadonlyMap<string, Tool<S, any>>;
  readonly toolSpecs: readonly ToolSpec[];
  readonly budget: Readonly<Budget>;
  readonly confirm: ReadonlySet<string>;
  readonly forbidden: PreparedTask<S>['forbidden'];
  readonly faultRules: readonly FaultRule[];
  readonly hasStaleRule: boolean;
  readonly replay: ReadonlyArray<ReplayedCall<S>>;
  userRng: PreparedTask<S>['userRng'] = undefined;
  private keys: ReadonlySet<string> | undefined = undefined;

  constructor(
    fields: Omit<PreparedTask<S>, 'solutionKeys' | 'userRng'>,
    private readonly solutionCalls: ReadonlyArray<readonly [string, JsonObject]>,
  ) {
    this.task = fields.task;
    this.base = fields.base;
    this.baseHash = fields.baseHash;
    this.referenceState = fields.referenceState;
    this.referenceHash = fields.referenceHash;
    this.tools = fields.tools;
    this.toolSpecs = fields.toolSpecs;
    this.budget = fields.budget;
    this.confirm = fields.confirm;
    this.forbidden = fields.forbidden;
    this.faultRules = fields.faultRules;
    this.hasStaleRule = fields.hasStaleRule;
    this.replay = fields.replay;
  }

  get solutionKeys(): ReadonlySet<string> {
    return (this.keys ??= new Set(this.solutionCalls.map(([tool, args]) => callKey(tool, args))));
  }
}

/**
 * The context of tool call `call` in an episode with `seed` (or of the reference solution): its rng,
 * `createRng([task.id, seed, 'tool', call])`, is only derived (one sha256) when a tool asks for it.
 */
export function lazyToolContext(task: Task, seed: number | 'reference', call: number): ToolContext {
  return new LazyToolContext(task, seed, call);
}

class LazyToolContext implements ToolContext {
  private generator: Rng | undefined;

  constructor(
    readonly task: Task,
    private readonly seed: number | 'reference',
    private readonly call: number,
  ) {}

  get rng(): Rng {
    return (this.generator ??= fastRng([this.task.id, this.seed, 'tool', this.call]));
  }

  /** Whether the tool asked for its rng. */
  get usedRng(): boolean {
    return this.generator !== undefined;
  }
}

function checkBudget(task: Task, budget: Budget): void {
  for (const key of ['steps', 'tokens', 'timeMs', 'toolCalls', 'consecutiveErrors'] as const) {
    const value = budget[key];
    if (value !== undefined && !(typeof value === 'number' && value >= 0 && Number.isFinite(value))) {
      throw invalid(task, `budget.${key} must be a non-negative number, got ${String(value)}`, `/spec/budget/${key}`);
    }
  }
  for (const [tool, quota] of Object.entries(budget.perTool ?? {})) {
    if (!(typeof quota === 'number' && quota >= 0 && Number.isFinite(quota))) {
      throw invalid(task, `budget.perTool.${tool} must be a non-negative number, got ${String(quota)}`, `/spec/budget/perTool/${tool}`);
    }
  }
}

function invalid(task: Task, message: string, pointer: string, cause?: unknown): EnvHarnessError {
  return new EnvHarnessError('TASK_INVALID', message, { details: { pointer, taskId: task.id }, cause });
}

/** Distinct task budgets a runtime cache shares (beyond that, each task's is merged afresh). */
const MAX_SHARED_BUDGETS = 256;

/** Longest canonical initial state kept as its own cache key (longer ones are keyed by their digest). */
const SHORT_STATE_KEY = 256;

/** One cache per domain object, made on first use. Caches of pure functions only: results never depend on them. */
const defaultCaches = new WeakMap<Domain<any>, RuntimeCache<any>>();

/** The shared cache of a domain (created on first use), used when an episode is not given one. */
export function runtimeCacheFor<S>(domain: Domain<S>): RuntimeCache<S> {
  let cache = defaultCaches.get(domain) as RuntimeCache<S> | undefined;
  if (cache === undefined) {
    cache = createRuntimeCache(domain);
    defaultCaches.set(domain, cache);
  }
  return cache;
}
