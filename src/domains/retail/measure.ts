/**
 * Measures the built-in agents on retail and prints markdown tables: success by task type × level for
 * random, rule-based and oracle; the learner's learning curve on a fixed task set; and how fast the
 * learner learns each level on its own.
 * Run: `npx tsx src/domains/retail/measure.ts [--per-cell 200] [--only table|curve|levels]`.
 */
import type { Agent, Task } from '../../core/index.js';
import { createRetailDomain } from './domain.js';
import { runEpisode } from '../../runtime/rollout.js';
import { createLearnerAgent, createOracleAgent, createRandomAgent } from '../../agents/index.js';
import { createRetailRuleBasedAgent } from './rule-based.js';
import type { RegisteredTemplate } from '../../core/index.js';
import { mean, tasksOf, trainingTemplates } from '../../agents/testing.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: number): number => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;
const perCell = flag('--per-cell', 200);
const retail = createRetailDomain();
const templates = trainingTemplates(retail);
const heldoutTemplates = (retail.templates as RegisteredTemplate<any>[]).filter((t) => t.heldout === true);
const pct = (x: number): string => `${Math.round(100 * x)}`;

async function successOf(agent: Agent, tasks: readonly Task[], seedBase = 0): Promise<number> {
  let sum = 0;
  for (const [i, task] of tasks.entries()) sum += (await runEpisode(retail, task, agent, { seed: seedBase + i })).outcome;
  return tasks.length === 0 ? 0 : sum / tasks.length;
}

/** Success by task type × level for random, rule-based and oracle (generation seed 7). */
async function typeLevelTables(): Promise<void> {
  const tasks = tasksOf(templates, perCell, 7);
  const types = [...new Set(templates.map((t) => t.taskType))];
  const agents: Array<[string, Agent]> = [
    ['random', createRandomAgent({ seed: 1 })],
    ['rule-based', createRetailRuleBasedAgent()],
    ['oracle', createOracleAgent()],
  ];
  for (const [name, agent] of agents) {
    console.log(`\n**${name}**: success % (${perCell} tasks per cell, generation seed 7, episode seed = task index)\n`);
    console.log('| task type | L1 | L2 | L3 | L4 | L5 | all |');
    console.log('|---|---|---|---|---|---|---|');
    const byLevel: number[][] = [[], [], [], [], []];
    for (const type of types) {
      const row: number[] = [];
      for (let level = 1; level <= 5; level++) {
        const s = await successOf(agent, tasks.filter((t) => t.taskType === type && t.level === level));
        row.push(s);
        byLevel[level - 1]!.push(s);
      }
      console.log(`| ${type} | ${row.map(pct).join(' | ')} | ${pct(mean(row))} |`);
    }
    const means = byLevel.map(mean);
    console.log(`| **all types** | ${means.map((m) => `**${pct(m)}**`).join(' | ')} | **${pct(mean(means))}** |`);
  }
}

/** The learner trained uniformly on a fixed set, evaluated greedily on unseen tasks at checkpoints. */
async function learningCurve(): Promise<void> {
  const train = tasksOf(templates, 2, 21);
  const unseen = tasksOf(templates, 2, 22);
  const heldout = tasksOf(heldoutTemplates, 2, 23);
  const episodes = flag('--episodes', 3000);
  const every = flag('--every', 250);
  const learner = createLearnerAgent({ seed: 1 });
  console.log(`\n**learner**: trained uniformly on a fixed set of ${train.length} tasks (10 types × 5 levels × 2, generation seed 21), learner seed 1\n`);
  console.log('| episodes | training success (last window) | greedy: unseen tasks, same templates | greedy: held-out templates (phrasing) | table states |');
  console.log('|---|---|---|---|---|');
  const evaluate = async (n: number, window: number[]) => {
    learner.setTraining(false);
    const u = await successOf(learner, unseen, 100_000);
    const h = await successOf(learner, heldout, 200_000);
    learner.setTraining(true);
    const states = Object.values((learner.getState() as { tables: Record<string, object> }).tables).reduce((n, t) => n + Object.keys(t).length, 0);
    console.log(`| ${n} | ${window.length === 0 ? '–' : pct(mean(window))} | ${pct(u)} | ${pct(h)} | ${states} |`);
  };
  await evaluate(0, []);
  learner.setTraining(true);
  let window: number[] = [];
  for (let e = 0; e < episodes; e++) {
    window.push((await runEpisode(retail, train[e % train.length]!, learner, { seed: e })).outcome);
    if ((e + 1) % every === 0) {
      await evaluate(e + 1, window);
      window = [];
    }
  }
}

/** A fresh learner per level, trained on that level only: higher levels are slower to learn. */
async function perLevel(): Promise<void> {
  const episodes = flag('--level-episodes', 1500);
  const windows = [250, 500, 1000, episodes];
  console.log(`\n**learner by level**: a fresh learner (seed 1) per level, trained on that level only (10 types × 10 tasks, generation seed 31); training success % per window of episodes, then greedy success on 100 unseen tasks of the level\n`);
  console.log(`| level | ${windows.map((w, i) => `${i === 0 ? 0 : windows[i - 1]}-${w}`).join(' | ')} | greedy, unseen |`);
  console.log(`|---|${windows.map(() => '---|').join('')}---|`);
  for (let level = 1; level <= 5; level++) {
    const train = tasksOf(templates, 10, 31, [level]);
    const unseen = tasksOf(templates, 10, 32, [level]);
    const learner = createLearnerAgent({ seed: 1, training: true });
    const outcomes: number[] = [];
    for (let e = 0; e < episodes; e++) outcomes.push((await runEpisode(retail, train[e % train.length]!, learner, { seed: e })).outcome);
    learner.setTraining(false);
    const cells = windows.map((w, i) => pct(mean(outcomes.slice(i === 0 ? 0 : windows[i - 1], w))));
    console.log(`| L${level} | ${cells.join(' | ')} | ${pct(await successOf(learner, unseen, 100_000))} |`);
  }
}

const started = process.cpuUsage();
if (only === undefined || only === 'table') await typeLevelTables();
if (only === undefined || only === 'curve') await learningCurve();
if (only === undefined || only === 'levels') await perLevel();
const used = process.cpuUsage(started);
console.error(`(cpu ${Math.round((used.user + used.system) / 1000)} ms)`);
