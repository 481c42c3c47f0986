/** tau-bench's reward rule, exactly: the final database must equal the gold one and every output must have been said. */
import { EnvHarnessError, type JsonValue, type Task } from '../../../core/index.js';
import { applyTauBenchActions, RESPOND_ACTION, toolsByName, type TauBenchTask } from './actions.js';
import { createRetailState, digestRetailExport, hashRetailState, type RetailState } from '../state.js';
import { retailTools } from '../tools.js';
import { type RetailWorld } from '../world.js';
import { TAU_BENCH_TERMINATE_TOOLS } from './labels.js';

/** What an imported task keeps in `params`: the tau-bench task verbatim and where it came from. */
export interface TauBenchParams {
  source: 'tau-bench';
  /** The task set: the file name without `tasks_` and `.json` (`train`, `dev`). */
  set: string;
  /** Index in tau-bench's task list (its task id). */
  index: number;
  task: TauBenchTask;
}

/** tau-bench's verdict on one episode, with the parts it is made of. */
export interface TauBenchGrade {
  /** 1 iff `finalState` and every output: tau-bench's `reward`. */
  reward: 0 | 1;
  /** The database after the agent's actions equals the database after the gold actions (tau-bench's `r_actions`). */
  finalState: boolean;
  /** Per required output, whether some message to the user contained it (tau-bench's `outputs`). */
  outputs: Record<string, boolean>;
  /** sha256 of the RFC 8785 canonical JSON of the agent's and of the gold database (when asked for). */
  sha256?: string;
  goldSha256?: string;
}

const TOOLS = toolsByName(retailTools);
const goldCache = new WeakMap<RetailWorld, Map<string, Gold>>();

/** The tau-bench task an imported task came from; PARAMS_INVALID for tasks that were not imported. */
export function tauBenchParams(task: Task): TauBenchParams {
  const params = task.params as unknown as Partial<TauBenchParams> | null;
  if (params === null || typeof params !== 'object' || params.source !== 'tau-bench' || typeof params.task !== 'object' || params.task === null) {
    throw new EnvHarnessError('PARAMS_INVALID', `task ${task.id} (${task.template}) was not imported from tau-bench; import it with importTauBench or \`envharness import tau-bench\``, {
      details: { taskId: task.id, pointer: '/params' },
    });
  }
  return params as TauBenchParams;
}

/**
 * The gold database of an imported task, as tau-bench's `calculate_reward` builds it: a fresh copy of
 * the world, every gold action replayed through the tools except `respond` and the terminate tools
 * (refused calls change nothing, as in tau-bench).
 */
export function tauBenchGoldState(task: Task, world: RetailWorld): RetailState {
  const { task: source } = tauBenchParams(task);
  checkWorld(task, world);
  const state = createRetailState(world);
  applyTauBenchActions(
    state,
    source.actions.filter((a) => a.name !== RESPOND_ACTION && !TAU_BENCH_TERMINATE_TOOLS.has(a.name)),
    TOOLS,
  );
  return state;
}

/** sha256 of the canonical JSON of the gold database (memoised per world and task id). */
export function tauBenchGoldDigest(task: Task, world: RetailWorld): string {
  const gold = goldOf(task, world);
  return (gold.sha256 ??= digestRetailExport(gold.state));
}

interface Gold {
  state: RetailState;
  hash: string;
  sha256?: string;
}

function goldOf(task: Task, world: RetailWorld): Gold {
  let perWorld = goldCache.get(world);
  if (perWorld === undefined) goldCache.set(world, (perWorld = new Map()));
  let gold = perWorld.get(task.id);
  if (gold === undefined) {
    const state = tauBenchGoldState(task, world);
    gold = { state, hash: hashRetailState(state) };
    perWorld.set(task.id, gold);
  }
  return gold;
}

/**
 * Whether tau-bench counts `output` as told to the user: `output.lower() in content.lower().replace(",", "")`
 * for some message. Only the message loses its commas; an output that contains a comma never matches.
 */
export function tauBenchOutputSaid(output: string, agentMessages: readonly string[]): boolean {
  const want = output.toLowerCase();
  return agentMessages.some((m) => m.toLowerCase().replace(/,/g, '').includes(want));
}

/**
 * tau-bench's reward for an imported task: 1 iff the world after the agent's actions equals the
 * world after the gold actions (canonical JSON digest) and every required output appears in what
 * the agent said to the user (`agentMessages`, the texts of its `message` actions). The world
 * comparison uses the states' incremental hashes, which are equal exactly when the canonical
 * digests are; `gradeTauBenchDetailed` computes the digests themselves.
 * @example
 * gradeTauBench(task, finalState, ['Your order #W123 is cancelled.']); // 0 or 1
 */
export function gradeTauBench(task: Task, finalState: RetailState, agentMessages: readonly string[]): 0 | 1 {
  const { task: source } = tauBenchParams(task);
  // States of one world hash equal exactly when their canonical exports are equal (hashRetailState's
  // guarantee), so the incremental hash decides what the full canonical digest would.
  if (hashRetailState(finalState) !== goldOf(task, finalState.world).hash) return 0;
  return source.outputs.every((output) => tauBenchOutputSaid(output, agentMessages)) ? 1 : 0;
}

/**
 * `gradeTauBench` with its parts: state match and each output; with `digests` (default true) also
 * both canonical digests, which cost a pass over the whole world (a few ms for tau-bench's).
 */
export function gradeTauBenchDetailed(task: Task, finalState: RetailState, agentMessages: readonly string[], options: { digests?: boolean } = {}): TauBenchGrade {
  const { task: source } = tauBenchParams(task);
  const gold = goldOf(task, finalState.world);
  const outputs: Record<string, boolean> = {};
  let said = true;
  for (const output of source.outputs) {
    const found = tauBenchOutputSaid(output, agentMessages);
    outputs[output] = found;
    said &&= found;
  }
  const finalStateOk = hashRetailState(finalState) === gold.hash;
  const grade: TauBenchGrade = { reward: finalStateOk && said ? 1 : 0, finalState: finalStateOk, outputs };
  if (options.digests !== false) {
    grade.sha256 = digestRetailExport(finalState);
    grade.goldSha256 = tauBenchGoldDigest(task, finalState.world);
  }
  return grade;
}

/** The grade as JSON (for run events and reports). */
export function gradeJson(grade: TauBenchGrade): JsonValue {
  const json: { [key: string]: JsonValue } = { reward: grade.reward, finalState: grade.finalState, outputs: grade.outputs };
  if (grade.sha256 !== undefined) json.sha256 = grade.sha256;
  if (grade.goldSha256 !== undefined) json.goldSha256 = grade.goldSha256;
  return json;
}

function checkWorld(task: Task, world: RetailWorld): void {
  const ref = task.spec.initialState as { digest?: unknown } | null;
  const digest = ref !== null && typeof ref === 'object' ? ref.digest : undefined;
  if (digest !== world.digest) {
    throw new EnvHarnessError(
      'PARAMS_INVALID',
      `task ${task.id} starts from world ${String(digest)}, but the state given is on world ${world.digest}; grade a state forked from the task's own world`,
      { details: { taskId: task.id, pointer: '/spec/initialState/digest' } },
    );
  }
}
