/**
 * The generic learner's before/after/random table on every built-in domain, with fixed seeds: random,
 * the untrained learner, the learner after uniform training on a fixed task set, and the domain's own
 * baselines, all on unseen tasks of the training templates. Figures go to docs/agents.md.
 * Run: `npx tsx bench/learner.ts [--domain NAME] [--episodes 3000] [--per-cell 4] [--eval-per-cell 4]`.
 */
import type { Agent, Domain, RegisteredTemplate, Task } from '../src/core/index.js';
import { createLearnerAgent, createRandomAgent } from '../src/agents/index.js';
import { runEpisode } from '../src/runtime/rollout.js';
import { instantiateTask } from '../src/generation/index.js';
import { builtinDomains } from '../src/builtins.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: number): number => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const only = args.includes('--domain') ? args[args.indexOf('--domain') + 1] : undefined;
const episodes = flag('--episodes', 3000);
const perCell = flag('--per-cell', 4);
const evalPerCell = flag('--eval-per-cell', 4);
const pct = (x: number): string => `${Math.round(100 * x)}%`;

function tasksOf(templates: readonly RegisteredTemplate<any>[], per: number, seed: number): Task[] {
  const out: Task[] = [];
  for (const t of templates) for (let level = 1; level <= t.levels.length; level++) for (let i = 0; i < per; i++) out.push(instantiateTask(t, { level, seed, index: i }));
  return out;
}

async function outcomes(domain: Domain<any>, agent: Agent, tasks: readonly Task[], seedBase: number): Promise<number[]> {
  const out: number[] = [];
  for (const [i, task] of tasks.entries()) out.push((await runEpisode(domain, task, agent, { seed: seedBase + i })).outcome);
  return out;
}

const mean = (xs: readonly number[]): number => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
const byLevel = (tasks: readonly Task[], xs: readonly number[]): string => {
  const levels = [...new Set(tasks.map((t) => t.level))].sort((a, b) => a - b);
  return levels.map((l) => `L${l} ${Math.round(100 * mean(xs.filter((_, i) => tasks[i]!.level === l)))}`).join(', ');
};

console.log(`| domain | tasks (train / unseen) | random | learner, untrained | learner, after ${episodes} episodes | after, by level | baselines | table keys | CPU s |`);
console.log('|---|---|---|---|---|---|---|---|---|');
for (const domain of builtinDomains()) {
  if (only !== undefined && domain.name !== only) continue;
  const started = process.cpuUsage();
  const templates = (domain.templates as RegisteredTemplate<any>[]).filter((t) => t.heldout !== true);
  let train: Task[];
  let unseen: Task[];
  try {
    train = tasksOf(templates, perCell, 21);
    unseen = tasksOf(templates, evalPerCell, 22);
  } catch (error) {
    // A domain whose tasks cannot be generated with these seeds is reported, not a reason to stop the table.
    console.log(`| ${domain.name} | not generated: ${(error as Error).message.replace(/\|/g, '/')} | | | | | | | |`);
    continue;
  }
  const random = mean(await outcomes(domain, createRandomAgent({ seed: 1 }), unseen, 100_000));
  const learner = createLearnerAgent({ seed: 1 });
  const untrained = mean(await outcomes(domain, learner, unseen, 100_000));
  learner.setTraining(true);
  for (let e = 0; e < episodes; e++) await runEpisode(domain, train[e % train.length]!, learner, { seed: e });
  learner.setTraining(false);
  const after = await outcomes(domain, learner, unseen, 100_000);
  const baselines: string[] = [];
  const declared = (domain as { baselines?: Record<string, () => Agent> }).baselines ?? {};
  for (const name of Object.keys(declared).sort()) baselines.push(`${name} ${pct(mean(await outcomes(domain, declared[name]!(), unseen, 100_000)))}`);
  const keys = Object.values((learner.getState() as { tables: Record<string, object> }).tables).reduce((n, t) => n + Object.keys(t).length, 0);
  const used = process.cpuUsage(started);
  console.log(
    `| ${domain.name} | ${train.length} / ${unseen.length} | ${pct(random)} | ${pct(untrained)} | **${pct(mean(after))}** | ${byLevel(unseen, after)} | ${baselines.join(', ') || '–'} | ${keys} | ${((used.user + used.system) / 1e6).toFixed(1)} |`,
  );
}
