/** The agent contract: what the harness drives during training and evaluation. */
import type { Action, Observation, StepResult } from './episode.js';
import type { JsonValue } from './json.js';
import type { Task } from './template.js';

/** What an agent is told when an episode starts. Never the reference solution (unless privileged). */
export interface AgentContext {
  episodeId: string;
  seed: number;
  domain: string;
  /** Only for agents that declare `privileged: true` (the oracle): the whole task. */
  task?: Task;
}

/** How an episode ended, as the agent learns it. */
export interface EpisodeSummary {
  reward: number;
  outcome: number;
  steps: number;
  terminated: boolean;
  truncated: boolean;
}

/** One agent's side of one episode. */
export interface AgentEpisode {
  /** The next action for the latest observation (the reset observation first). */
  act(observation: Observation): Action | Promise<Action>;
  /** Each step's full result: reward and feedback, which is how learners learn. */
  observe?(result: StepResult): void;
  end?(summary: EpisodeSummary): void | Promise<void>;
}

/** An agent. Agents see observations only; the harness never hands them reference solutions. */
export interface Agent {
  readonly name: string;
  readonly version: string;
  /** Declares that the agent needs the task itself (the oracle; a gate and an upper bound). */
  readonly privileged?: boolean;
  /** Configuration (and, for learners, a digest of the learned state): recorded with every run. */
  config(): JsonValue;
  begin(ctx: AgentContext): AgentEpisode;
  /** Learning on (training) or off (evaluation). Agents that do not learn ignore it. */
  setTraining?(training: boolean): void;
  /** Learned state, serialisable, for saving and versioning a learner. */
  getState?(): JsonValue;
}
