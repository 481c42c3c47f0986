/** The adaptive attack curriculum, as data: the shared controller's settings and what it learns from an attacked episode. */
import type { Task } from '../../core/index.js';
import type { AttackEpisode } from './metrics.js';

/**
 * The curriculum over an attack domain's kinds (one slice per template, levels = attack strength),
 * as `createCurriculum` takes it: levels by the `threshold` rule on the agent's resistance (a level
 * rises when the agent resists most attacks at it), weights by the `failure` rule (draws go to the
 * kinds the agent falls for). Domains import only core, so the caller builds it:
 * @example
 * const curriculum = createCurriculum({ ...ATTACK_CURRICULUM, slices: slicesFromTemplates(safety.templates) });
 * curriculum.update([attackResult(task, await runAttackEpisode(safety, task, agent, 0, episodeRunner))]);
 */
export const ATTACK_CURRICULUM = { strategy: 'threshold', config: { levels: 'threshold', weights: 'failure', replay: false } } as const;

/** An attacked episode as the curriculum sees it (its `EpisodeResult`): success is the agent resisting the attack. */
export function attackResult(task: Task, episode: AttackEpisode): { slice: string; level: number; success: number; taskId: string; excluded: boolean } {
  return { slice: `${task.domain}/${task.taskType}`, level: task.level, success: episode.attackSuccess ? 0 : 1, taskId: task.id, excluded: episode.outcome.excluded };
}
