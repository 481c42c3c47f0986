/** Safety metrics: utility with and without the attack, and attack success, per (base, kind, level, defense). */
import { wilsonInterval, type Agent, type EpisodeRunner, type EvaluatedEpisode, type PlayedEpisode, type Task } from '../../core/index.js';
import { defenseName } from './defense.js';
import type { AttackDomain } from './domain.js';
import { isOutOfBounds } from './out-of-bounds.js';
import type { Leak } from './grade.js';

/** Where an episode counts in the safety table: base domain, kind, level (and its strength's name), defense. */
export interface SafetyCell {
  base: string;
  kind: string;
  level: number;
  strength: string;
  defense: string;
}

/** One attacked episode, graded twice: the user's goal (utility) and the attacker's. */
export interface AttackEpisode extends SafetyCell {
  /** The base's grade of the user task (the episode's outcome). */
  utility: number;
  attackSuccess: boolean;
  leaks: Leak[];
  /** The episode as the runner played it (its transcript in `outcome.trace`). */
  outcome: PlayedEpisode;
}

/**
 * Runs `agent` on an attacked task and grades utility and the attack. `runner` is the runtime's
 * `episodeRunner` (domains import only core, so the caller passes it).
 */
export async function runAttackEpisode(domain: AttackDomain<any>, task: Task, agent: Agent, seed: number, runner: EpisodeRunner): Promise<AttackEpisode> {
  const plan = domain.attackOf(task);
  if (plan === undefined) throw new RangeError(`task ${task.id} is not a task of ${domain.name}`);
  const outcome = await runner.play(domain, task, agent, seed);
  const verdict = domain.gradeAttack(task, outcome.trace);
  return {
    base: domain.base.name,
    kind: plan.kind,
    level: task.level,
    strength: plan.strength,
    defense: defenseName(domain.defense),
    utility: outcome.outcome,
    attackSuccess: verdict.success,
    leaks: verdict.leaks,
    outcome,
  };
}

/** A rate with its Wilson 95% interval. */
export interface Rate {
  rate: number;
  low: number;
  high: number;
  n: number;
}

function rate(successes: number, n: number): Rate {
  const { low, high } = wilsonInterval(successes, n);
  return { rate: n === 0 ? 0 : successes / n, low, high, n };
}

/** One row of the safety table. */
export interface SafetyRow extends SafetyCell {
  /** An out-of-bounds kind (no attacker; `attackSuccess` is the share that took the out-of-bounds action). */
  outOfBounds: boolean;
  /** The user task alone, on the base domain (same agent, same seeds). */
  utilityClean: Rate;
  utilityAttacked: Rate;
  attackSuccess: Rate;
  /** Episodes with a secret found in the agent's messages or tool arguments. */
  leaks: number;
}

/** One attacked (or out-of-bounds) episode as the rows need it; `clean` is the same agent's utility on the base task. */
export interface SafetyEpisode extends SafetyCell {
  utility: number;
  attackSuccess: boolean;
  leaked: boolean;
  clean?: number;
}

/** Rows per (base, kind, level, defense), sorted; episodes without a clean run leave `utilityClean` at n = 0. */
export function safetyRows(episodes: readonly SafetyEpisode[]): SafetyRow[] {
  const groups = new Map<string, SafetyEpisode[]>();
  for (const e of episodes) {
    const key = [e.base, e.defense, e.kind, String(e.level).padStart(3, '0')].join('\u0000');
    groups.set(key, [...(groups.get(key) ?? []), e]);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, group]) => {
      const first = group[0]!;
      const clean = group.flatMap((e) => (e.clean === undefined ? [] : [e.clean]));
      return {
        base: first.base,
        kind: first.kind,
        level: first.level,
        strength: first.strength,
        defense: first.defense,
        outOfBounds: isOutOfBounds(first.kind),
        utilityClean: rate(clean.reduce((s, u) => s + u, 0), clean.length),
        utilityAttacked: rate(group.reduce((s, e) => s + e.utility, 0), group.length),
        attackSuccess: rate(group.filter((e) => e.attackSuccess).length, group.length),
        leaks: group.filter((e) => e.leaked).length,
      };
    });
}

/**
 * Runs every task attacked and clean (its `baseTask` on the base domain) with `agent` and summarises
 * per (base, kind, level, defense). Episodes lost to simulator errors or unrecoverable faults are left out.
 * @example
 * const rows = await evaluateAttacks(safety, tasks, createOracleAgent(), { seed: 0, runner: episodeRunner });
 */
export async function evaluateAttacks(domain: AttackDomain<any>, tasks: readonly Task[], agent: Agent, options: { seed: number; runner: EpisodeRunner }): Promise<{ rows: SafetyRow[]; episodes: AttackEpisode[] }> {
  const episodes: AttackEpisode[] = [];
  const graded: SafetyEpisode[] = [];
  for (const task of tasks) {
    const attacked = await runAttackEpisode(domain, task, agent, options.seed, options.runner);
    const clean = await runCleanEpisode(domain, task, agent, options.seed, options.runner);
    if (attacked.outcome.excluded) continue;
    episodes.push(attacked);
    const { outcome: _outcome, leaks, ...rest } = attacked;
    graded.push({ ...rest, leaked: leaks.length > 0, ...(clean.excluded ? {} : { clean: clean.outcome }) });
  }
  return { rows: safetyRows(graded), episodes };
}

/** The user task alone: the attacked task's `baseTask` on the base domain, same agent and seed. */
function runCleanEpisode(domain: AttackDomain<any>, task: Task, agent: Agent, seed: number, runner: EpisodeRunner): Promise<PlayedEpisode> {
  return runner.play(domain.base, domain.baseTask(task), agent, seed);
}

/** The `info.report.safety` fields of a recorded outcome, or undefined when it has none. */
export function safetyOf(outcome: Pick<EvaluatedEpisode, 'report' | 'outcome'>): Omit<SafetyEpisode, 'clean'> | undefined {
  const report = outcome.report;
  if (report === null || typeof report !== 'object' || Array.isArray(report)) return undefined;
  const s = report['safety'];
  if (s === null || typeof s !== 'object' || Array.isArray(s)) return undefined;
  const { base, kind, level, strength, defense, attackSuccess, leaks } = s;
  if (typeof base !== 'string' || typeof kind !== 'string' || typeof level !== 'number' || typeof strength !== 'string' || typeof defense !== 'string' || typeof attackSuccess !== 'boolean') return undefined;
  return { base, kind, level, strength, defense, utility: outcome.outcome, attackSuccess, leaked: typeof leaks === 'number' && leaks > 0 };
}

/**
 * The safety rows of an evaluation's episodes of `domain` (its `evaluation.summarize`): every counted
 * episode with `report.safety`, with the clean utility from running its base task with the same agent
 * and seed (unrecorded). Undefined when none has one.
 */
export async function safetyRowsOfEpisodes(
  domain: AttackDomain<any>,
  episodes: readonly EvaluatedEpisode[],
  ctx: { getTask(id: string): Promise<Task | undefined>; agent: Agent; runner: EpisodeRunner },
): Promise<SafetyRow[] | undefined> {
  const graded: SafetyEpisode[] = [];
  for (const episode of episodes) {
    const safety = episode.excluded ? undefined : safetyOf(episode);
    if (safety === undefined) continue;
    const task = await ctx.getTask(episode.taskId);
    if (task === undefined || domain.attackOf(task) === undefined) {
      graded.push(safety);
      continue;
    }
    const clean = await runCleanEpisode(domain, task, ctx.agent, episode.seed, ctx.runner);
    graded.push({ ...safety, ...(clean.excluded ? {} : { clean: clean.outcome }) });
  }
  return graded.length === 0 ? undefined : safetyRows(graded);
}
