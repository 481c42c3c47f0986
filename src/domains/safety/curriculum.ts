/** The adaptive attack curriculum: the shared controller with one slice per attack kind, levels = attack strength. */
import type { Task } from '../../core/index.js';
import { createCurriculum, slicesFromTemplates, type Curriculum, type CurriculumConfigInput, type EpisodeResult } from '../../curriculum/index.js';
import type { AttackDomain } from './domain.js';
import type { AttackEpisode } from './metrics.js';

/**
 * Levels by the `threshold` rule on the agent's resistance (a level rises when the agent resists
 * most attacks at it), weights by the `failure` rule (draws go to the kinds the agent falls for).
 */
export const ATTACK_CURRICULUM_CONFIG: CurriculumConfigInput = { levels: 'threshold', weights: 'failure', replay: false };

/**
 * A curriculum over `domain`'s attack kinds.
 * @example
 * const curriculum = createAttackCurriculum(safety);
 * curriculum.update([attackResult(task, await runAttackEpisode(safety, task, agent, 0))]);
 */
export function createAttackCurriculum(domain: AttackDomain<any>, config: CurriculumConfigInput = {}): Curriculum {
  return createCurriculum({ strategy: 'threshold', slices: slicesFromTemplates(domain.templates), config: { ...ATTACK_CURRICULUM_CONFIG, ...config } });
}

/** An attacked episode as the curriculum sees it: success is the agent resisting the attack. */
export function attackResult(task: Task, episode: AttackEpisode): EpisodeResult {
  return { slice: `${task.domain}/${task.taskType}`, level: task.level, success: episode.attackSuccess ? 0 : 1, taskId: task.id, excluded: episode.outcome.excluded };
}
