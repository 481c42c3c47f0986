/** Episodes of imported tau-bench tasks: an awaitable simulated user, tau-bench's end on transfer, and its reward beside EnvHarness's. */
import {
  createRng,
  EnvHarnessError,
  toEnvHarnessError,
  type Action,
  type Agent,
  type FeedbackCode,
  type JsonValue,
  type Observation,
  type Rng,
  type SimulatedUser,
  type StepResult,
  type Task,
  type TraceEntry,
  type UserTurn,
} from '../../../core/index.js';
import type { RetailDomain } from '../domain.js';
import { createEpisode, createRuntimeCache, validateAction, type DynamicsOptions, type Recorder } from '../../../runtime/index.js';
import { playEpisode, type EpisodeOutcome } from '../../../runtime/rollout.js';
import { createTauBenchDomain, isTauBenchTask, tauBenchUserGoal, type TauBenchUserGoal } from './domain.js';
import { gradeTauBenchDetailed, type TauBenchGrade } from './grade.js';
import { TAU_BENCH_TERMINATE_TOOLS } from './labels.js';
import { callsOfTrace, rebuildRetailState } from './state.js';

/**
 * A simulated user whose turns may be awaited (an LLM behind an HTTP endpoint). Every `SimulatedUser`
 * is one. The runtime's user is synchronous, so the runner awaits each turn before the step that
 * delivers it.
 */
export interface AwaitableUser {
  opening(): string | Promise<string>;
  respond(agentText: string, ctx: { trace: readonly TraceEntry[] }): UserTurn | Promise<UserTurn>;
  /** What to record for replay (an LLM user: its prompts and completions); lands in the last step's `info.user`. */
  record?(): JsonValue;
}

/** Makes the simulated user of one episode of an imported task. */
export type TauBenchUserFactory = (task: Task, ctx: { seed: number; goal: TauBenchUserGoal; rng: Rng }) => AwaitableUser;

export interface TauBenchRunnerOptions {
  /** The user of imported tasks (default: none, the oracle needs none). */
  user?: TauBenchUserFactory;
  /** End the episode after a successful `transfer_to_human_agents`, as tau-bench does (default true). */
  endOnTransfer?: boolean;
  /** Also compute the canonical sha256 of each final world and its gold world (default false: a few ms per episode). */
  digests?: boolean;
}

export interface TauBenchEpisodeOptions {
  seed: number;
  recorder?: Recorder;
  episodeId?: string;
  runId?: string;
  clock?: () => number;
  dynamics?: DynamicsOptions;
}

/** One episode of an imported task: EnvHarness's outcome and feedback, and tau-bench's reward, side by side. */
export interface TauBenchEpisodeResult extends Omit<EpisodeOutcome, 'shaping'> {
  /** tau-bench's verdict; `reward` is 0 when the episode did not end (tau-bench's loop scores 0 then). */
  tauBench: TauBenchGrade;
  /** What the agent said to the user, in order. */
  messages: string[];
}

/** Runs agents on imported tau-bench tasks. */
export interface TauBenchRunner {
  /** The domain episodes run in (`createTauBenchDomain` of the retail domain given). */
  readonly domain: RetailDomain;
  runEpisode(task: Task, agent: Agent, options: TauBenchEpisodeOptions): Promise<TauBenchEpisodeResult>;
}

/**
 * Creates a runner for imported tasks. Its loop is the harness's (reset, act, step until the episode
 * ends) plus: an awaitable simulated user, the end of the episode on a transfer to a human, and
 * tau-bench's reward computed from the final world and the agent's messages.
 * @example
 * const runner = createTauBenchRunner(imported.domain);
 * const result = await runner.runEpisode(task, createOracleAgent(), { seed: 0 });
 * result.tauBench.reward === result.outcome; // 1
 */
export function createTauBenchRunner(retail: RetailDomain, options: TauBenchRunnerOptions = {}): TauBenchRunner {
  let current: SimulatedUser | undefined;
  // reset() asks the domain for the user synchronously: the runner hands over the one it prepared.
  const domain = createTauBenchDomain(retail, { user: () => current });
  const cache = createRuntimeCache(domain);
  const endOnTransfer = options.endOnTransfer ?? true;

  async function runEpisode(task: Task, agent: Agent, run: TauBenchEpisodeOptions): Promise<TauBenchEpisodeResult> {
    const goal = tauBenchUserGoal(task);
    if (!isTauBenchTask(task) || goal === undefined) {
      throw new EnvHarnessError('PARAMS_INVALID', `task ${task.id} (${task.template}) was not imported from tau-bench; use harness.runEpisode for other tasks`, { details: { taskId: task.id } });
    }
    const episode = createEpisode(domain, task, {
      ...run.dynamics,
      cache,
      agent: agent.name,
      ...(run.recorder ? { recorder: run.recorder } : {}),
      ...(run.runId ? { runId: run.runId } : {}),
      ...(run.clock ? { clock: run.clock } : {}),
      ...(run.episodeId ? { episodeId: () => run.episodeId! } : {}),
    });
    let bridge: UserBridge | undefined;
    if (options.user !== undefined) {
      const user = options.user(task, { seed: run.seed, goal, rng: createRng([task.id, run.seed, 'user']) });
      bridge = createUserBridge(user, await user.opening());
    }
    let observation: Observation;
    current = bridge;
    try {
      observation = episode.reset({ seed: run.seed });
    } finally {
      current = undefined;
    }
    const { outcome, last } = await playEpisode(episode, observation, { task, agent, seed: run.seed, domain: domain.name, flush: run.recorder !== undefined }, {
      beforeStep: async (action) => {
        if (bridge !== undefined && validateAction(action) === undefined && (action as Action).type === 'message') {
          await bridge.prepare((action as Action & { type: 'message' }).text, episode.trace);
        }
      },
      // tau-bench ends the conversation on a successful transfer to a human agent.
      followUp: (action, result) => (endOnTransfer && isTransfer(action as Action) && result.observation.error === undefined ? { type: 'finish' } : undefined),
    });

    const messages = episode.trace.filter((e) => e.action.type === 'message').map((e) => (e.action as Action & { type: 'message' }).text);
    const state = rebuildRetailState(domain, task, callsOfTrace(episode.trace), episode.stateHash());
    const grade = gradeTauBenchDetailed(task, state, messages, { digests: options.digests === true });
    const { shaping: _shaping, ...common } = outcome;
    return { ...common, tauBench: last.terminated ? grade : { ...grade, reward: 0 }, messages };
  }

  return { domain, runEpisode };
}

function isTransfer(action: Action): boolean {
  return action?.type === 'tool' && TAU_BENCH_TERMINATE_TOOLS.has(action.tool);
}

/** A synchronous face for an awaitable user: each reply is awaited (`prepare`) before the step that delivers it. */
interface UserBridge extends SimulatedUser {
  prepare(text: string, trace: readonly TraceEntry[]): Promise<void>;
}

function createUserBridge(user: AwaitableUser, first: string): UserBridge {
  let next: { turn: UserTurn } | { error: unknown } | undefined;
  const bridge: UserBridge = {
    opening: () => first,
    async prepare(text, trace) {
      try {
        next = { turn: await user.respond(text, { trace }) };
      } catch (error) {
        // Thrown inside the step, where the runtime turns it into a simulator error (excluded from stats).
        next = { error };
      }
    },
    respond() {
      const prepared = next;
      next = undefined;
      if (prepared === undefined) throw new EnvHarnessError('INTERNAL', 'the simulated user was asked for a reply that was not prepared');
      if ('error' in prepared) throw toEnvHarnessError(prepared.error);
      return prepared.turn;
    },
  };
  if (user.record !== undefined) bridge.record = () => user.record!();
  return bridge;
}
