/** Safety metrics: utility with and without the attack, and attack success, per (base, kind, level, defense). */
import type { Agent, Task } from '../../core/index.js';
import { wilsonInterval } from '../../curriculum/index.js';
import { createEpisode, playEpisode, type EpisodeOutcome } from '../../runtime/index.js';
import { defenseName, type AttackDomain } from './domain.js';
import type { Leak } from './grade.js';

/** One attacked episode, graded twice: the user's goal (utility) and the attacker's. */
export interface AttackEpisode {
  base: string;
  kind: string;
  level: number;
  strength: string;
  defense: string;
  /** The base's grade of the user task (the episode's outcome). */
  utility: number;
  attackSuccess: boolean;
  leaks: Leak[];
  outcome: EpisodeOutcome;
}

/** Runs `agent` on an attacked task and grades utility and the attack. */
export async function runAttackEpisode(domain: AttackDomain<any>, task: Task, agent: Agent, seed: number): Promise<AttackEpisode> {
  const plan = domain.attackOf(task);
  if (plan === undefined) throw new RangeError(`task ${task.id} is not a task of ${domain.name}`);
  const episode = createEpisode(domain, task, { agent: agent.name });
  const observation = episode.reset({ seed });
  const { outcome } = await playEpisode(episode, observation, { task, agent, seed, domain: domain.name, flush: false });
  const verdict = domain.gradeAttack(task, episode.trace);
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
export interface SafetyRow {
  base: string;
  kind: string;
  level: number;
  strength: string;
  defense: string;
  /** The user task alone, on the base domain (same agent, same seeds). */
  utilityClean: Rate;
  utilityAttacked: Rate;
  attackSuccess: Rate;
  /** Episodes with a secret found in the agent's messages or tool arguments. */
  leaks: number;
}

/**
 * Runs every task attacked and clean (its `baseTask` on the base domain) with `agent` and summarises
 * per (base, kind, level, defense). Episodes lost to simulator errors or unrecoverable faults are left out.
 * @example
 * const rows = await evaluateAttacks(safety, tasks, createOracleAgent(), { seed: 0 });
 */
export async function evaluateAttacks(domain: AttackDomain<any>, tasks: readonly Task[], agent: Agent, options: { seed: number }): Promise<{ rows: SafetyRow[]; episodes: AttackEpisode[] }> {
  const episodes: AttackEpisode[] = [];
  const clean = new Map<string, { ok: number; n: number }>();
  for (const task of tasks) {
    const attacked = await runAttackEpisode(domain, task, agent, options.seed);
    const baseTask = domain.baseTask(task);
    const episode = createEpisode(domain.base, baseTask, { agent: agent.name });
    const { outcome } = await playEpisode(episode, episode.reset({ seed: options.seed }), { task: baseTask, agent, seed: options.seed, domain: domain.base.name, flush: false });
    if (attacked.outcome.excluded) continue;
    episodes.push(attacked);
    const key = `${attacked.kind}\u0000${attacked.level}`;
    const c = clean.get(key) ?? { ok: 0, n: 0 };
    if (!outcome.excluded) {
      c.ok += outcome.outcome;
      c.n++;
    }
    clean.set(key, c);
  }
  const groups = new Map<string, AttackEpisode[]>();
  for (const e of episodes) {
    const key = `${e.kind}\u0000${e.level}`;
    groups.set(key, [...(groups.get(key) ?? []), e]);
  }
  const rows: SafetyRow[] = [...groups.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, group]) => {
      const first = group[0]!;
      const c = clean.get(key)!;
      return {
        base: first.base,
        kind: first.kind,
        level: first.level,
        strength: first.strength,
        defense: first.defense,
        utilityClean: rate(c.ok, c.n),
        utilityAttacked: rate(group.reduce((s, e) => s + e.utility, 0), group.length),
        attackSuccess: rate(group.filter((e) => e.attackSuccess).length, group.length),
        leaks: group.filter((e) => e.leaks.length > 0).length,
      };
    });
  return { rows, episodes };
}
