/** Running one episode of a task with an agent: the loop shared by training, evaluation and the CLI. */
import type { Action, Agent, Domain, EpisodeRunner, FeedbackCode, JsonValue, Observation, StepResult, StoredTask, Task } from '../core/index.js';
import { createEpisode, type DynamicsOptions, type Episode } from './episode.js';
import type { Recorder } from './recorder.js';

export interface EpisodeRunOptions extends DynamicsOptions {
  seed: number;
  recorder?: Recorder;
  runId?: string;
  /** Wall clock (ms) for time budgets; absent: time budgets never fire and replay stays exact. */
  clock?: () => number;
  /** The episode's id (default: derived from task id and seed). Must be unique per recorded episode. */
  episodeId?: string;
  /** What the recorder gets (`EpisodeOptions.recordAs`). Default: transitions. */
  recordAs?: 'transitions' | 'inputs';
  /**
   * Wait until the recorder has made the episode durable before returning (default true). False: the episode neither
   * waits nor asks for a commit when it ends (`EpisodeOptions.flushOnEnd`); it goes with the recorder's next group
   * commit, and the caller flushes the recorder once it needs its episodes durable.
   */
  flush?: boolean;
}

/** What one episode produced, as the curriculum, runs and reports need it. */
export interface EpisodeOutcome {
  episodeId: string;
  taskId: string;
  slice: string;
  level: number;
  seed: number;
  reward: number;
  outcome: number;
  shaping: number;
  steps: number;
  terminated: boolean;
  truncated: boolean;
  excluded: boolean;
  endReason?: string;
  feedback: Partial<Record<FeedbackCode, number>>;
  /** The domain's outcome fields (`Domain.report`, the last step's `info.report`), when it declares them. */
  report?: JsonValue;
}

/** Hooks of `playEpisode`, for runners that add protocol around the agent's steps (tau-bench interop). */
export interface PlayHooks {
  /** Awaited before the agent's action is stepped (e.g. an awaitable simulated user prepares its reply). */
  beforeStep?(action: unknown, episode: Episode): Promise<void>;
  /** An action the runner takes itself right after the agent's, while the episode runs (e.g. `finish` after a transfer). */
  followUp?(action: unknown, result: StepResult): Action | undefined;
}

/** What `playEpisode` saw: the outcome, and the last step's result. */
export interface PlayResult {
  outcome: EpisodeOutcome;
  last: StepResult;
}

/** The core `EpisodeRunner`: one unrecorded episode with its trace, for domains that play episodes of their own. */
export const episodeRunner: EpisodeRunner = {
  async play(domain, task, agent, seed) {
    const episode = createEpisode(domain, task, { agent: agent.name });
    const { outcome } = await playEpisode(episode, episode.reset({ seed }), { task, agent, seed, domain: domain.name, flush: false });
    return { outcome: outcome.outcome, excluded: outcome.excluded, feedback: outcome.feedback, trace: episode.trace };
  },
};

/** Runs `agent` on `task` until the episode terminates or is truncated. */
export async function runEpisode(domain: Domain<any>, task: Task | StoredTask, agent: Agent, options: EpisodeRunOptions): Promise<EpisodeOutcome> {
  const { seed, recorder, runId, clock, episodeId, recordAs, flush, ...dynamics } = options;
  const episode = createEpisode(domain, task, {
    ...dynamics,
    recorder,
    ...(flush === false ? { flushOnEnd: false } : {}),
    ...(recordAs !== undefined ? { recordAs } : {}),
    runId,
    agent: agent.name,
    ...(clock ? { clock } : {}),
    ...(episodeId ? { episodeId: () => episodeId } : {}),
  });
  const observation = episode.reset({ seed });
  return (await playEpisode(episode, observation, { task, agent, seed, domain: domain.name, flush: recorder !== undefined && flush !== false })).outcome;
}

/**
 * The agent loop, once for every runner: `begin`, then act → step → observe until the episode ends,
 * then `end`, and (when recording) flush. `episode` has been reset already; `observation` is what the
 * reset returned.
 */
export async function playEpisode(
  episode: Episode,
  observation: Observation,
  run: { task: Task | StoredTask; agent: Agent; seed: number; domain: string; flush: boolean },
  hooks: PlayHooks = {},
): Promise<PlayResult> {
  const { task, agent, seed } = run;
  const session = agent.begin({ episodeId: episode.id!, seed, domain: run.domain, ...(agent.privileged ? { task } : {}) });
  const feedback: Partial<Record<FeedbackCode, number>> = {};
  let reward = 0;
  let shaping = 0;
  let last: StepResult | undefined;
  const take = (result: StepResult): void => {
    session.observe?.(result);
    for (const f of result.feedback) feedback[f.code] = (feedback[f.code] ?? 0) + 1;
    reward += result.reward;
    shaping += result.info.shaping;
    observation = result.observation;
    last = result;
  };
  do {
    const action = await session.act(observation);
    if (hooks.beforeStep !== undefined) await hooks.beforeStep(action, episode);
    const result = episode.step(action);
    take(result);
    const next = episode.status === 'running' ? hooks.followUp?.(action, result) : undefined;
    if (next !== undefined) take(episode.step(next));
  } while (episode.status === 'running');
  const final = last!;
  await session.end?.({ reward, outcome: final.info.outcome, steps: episode.steps, terminated: final.terminated, truncated: final.truncated });
  if (run.flush) await episode.flush();
  const outcome: EpisodeOutcome = {
    episodeId: episode.id!,
    taskId: task.id,
    slice: `${task.domain}/${task.taskType}`,
    level: task.level,
    seed,
    reward,
    outcome: final.info.outcome,
    shaping,
    steps: episode.steps,
    terminated: final.terminated,
    truncated: final.truncated,
    excluded: final.info.excludeFromStats === true,
    ...(final.info.endReason ? { endReason: final.info.endReason } : {}),
    feedback,
    ...(final.info.report !== undefined ? { report: final.info.report } : {}),
  };
  return { outcome, last: final };
}
