/** Running one episode of a task with an agent: the loop shared by training, evaluation and the CLI. */
import type { Agent, Domain, FeedbackCode, StoredTask, Task } from '../core/index.js';
import { createEpisode, type DynamicsOptions, type Recorder } from '../runtime/index.js';

export interface EpisodeRunOptions extends DynamicsOptions {
  seed: number;
  recorder?: Recorder;
  runId?: string;
  /** Wall clock (ms) for time budgets; absent: time budgets never fire and replay stays exact. */
  clock?: () => number;
  /** The episode's id (default: derived from task id and seed). Must be unique per recorded episode. */
  episodeId?: string;
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
}

/** Runs `agent` on `task` until the episode terminates or is truncated. */
export async function runEpisode(domain: Domain<any>, task: Task | StoredTask, agent: Agent, options: EpisodeRunOptions): Promise<EpisodeOutcome> {
  const { seed, recorder, runId, clock, episodeId, ...dynamics } = options;
  const episode = createEpisode(domain, task, {
    ...dynamics,
    recorder,
    runId,
    agent: agent.name,
    ...(clock ? { clock } : {}),
    ...(episodeId ? { episodeId: () => episodeId } : {}),
  });
  let observation = episode.reset({ seed });
  const session = agent.begin({ episodeId: episode.id!, seed, domain: domain.name, ...(agent.privileged ? { task } : {}) });
  const feedback: Partial<Record<FeedbackCode, number>> = {};
  let reward = 0;
  let outcome = 0;
  let shaping = 0;
  let terminated = false;
  let truncated = false;
  let excluded = false;
  let endReason: string | undefined;
  for (;;) {
    const action = await session.act(observation);
    const result = episode.step(action);
    session.observe?.(result);
    for (const f of result.feedback) feedback[f.code] = (feedback[f.code] ?? 0) + 1;
    reward += result.reward;
    shaping += result.info.shaping;
    observation = result.observation;
    if (result.terminated || result.truncated) {
      outcome = result.info.outcome;
      terminated = result.terminated;
      truncated = result.truncated;
      excluded = result.info.excludeFromStats === true;
      endReason = result.info.endReason;
      break;
    }
  }
  const summary = { reward, outcome, steps: episode.steps, terminated, truncated };
  await session.end?.(summary);
  if (recorder) await episode.flush();
  return {
    episodeId: episode.id!,
    taskId: task.id,
    slice: `${task.domain}/${task.taskType}`,
    level: task.level,
    seed,
    reward,
    outcome,
    shaping,
    steps: episode.steps,
    terminated,
    truncated,
    excluded,
    ...(endReason ? { endReason } : {}),
    feedback,
  };
}
