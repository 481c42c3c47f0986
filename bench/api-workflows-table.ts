/** Per-level success table of api-workflows for random, the scripted baseline, the generic learner (untrained and trained) and the oracle: `npx tsx bench/api-workflows-table.ts [per-cell] [training-passes]`. */
import { apiWorkflows } from '../src/domains/api-workflows/index.js';
import { createApiBaselineAgent } from '../src/domains/api-workflows/baseline.js';
import { instantiateTask } from '../src/generation/index.js';
import { runEpisode } from '../src/runtime/index.js';
import { createLearnerAgent, createOracleAgent, createRandomAgent } from '../src/agents/index.js';
import type { Agent } from '../src/core/index.js';
const perCell = Number(process.argv[2] ?? 10);
const passes = Number(process.argv[3] ?? 2);
const templates = apiWorkflows.templates as any[];

// Training set: the seven training templates × five levels × 20 tasks, generation seeds 5000–5019
// (disjoint from the table's 1000–…), `passes` times over in a fixed order; the held-out type is never trained on.
const learnerUntrained = createLearnerAgent({ seed: 7 });
const learnerTrained = createLearnerAgent({ seed: 7, training: true });
let trainEpisodes = 0;
for (let pass = 0; pass < passes; pass++) {
  for (let i = 0; i < 20; i++) {
    for (let level = 1; level <= 5; level++) {
      for (const template of templates) {
        if (template.heldout) continue;
        const task = instantiateTask(template, { level, seed: 5000 + i, index: i });
        await runEpisode(apiWorkflows, task, learnerTrained, { seed: pass * 1000 + i });
        trainEpisodes++;
      }
    }
  }
}
learnerTrained.setTraining(false);
console.log(`learner trained on ${trainEpisodes} episodes (${passes} passes over 700 training tasks)`);

const agents: [string, Agent][] = [
  ['random', createRandomAgent({ seed: 1 })],
  ['baseline', createApiBaselineAgent()],
  ['learner (untrained)', learnerUntrained],
  [`learner (trained, ${trainEpisodes} ep.)`, learnerTrained],
  ['oracle', createOracleAgent()],
];
const rows: Record<string, number[][]> = {};
for (const template of templates) {
  for (const [name, agent] of agents) {
    const row: number[] = [];
    for (let level = 1; level <= 5; level++) {
      let sum = 0;
      for (let i = 0; i < perCell; i++) {
        const task = instantiateTask(template, { level, seed: 1000 + i, index: i });
        sum += (await runEpisode(apiWorkflows, task, agent, { seed: i })).outcome;
      }
      row.push(sum / perCell);
    }
    (rows[name] ??= []).push(row);
    console.log(`| ${template.taskType}${template.heldout ? ' (held out)' : ''} | ${name} | ${row.map((x) => Math.round(100 * x)).join(' | ')} |`);
  }
}
for (const [name] of agents) {
  const m = [0, 1, 2, 3, 4].map((l) => rows[name]!.reduce((s, r) => s + r[l]!, 0) / rows[name]!.length);
  console.log(`| **all** | ${name} | ${m.map((x) => `**${Math.round(100 * x)}**`).join(' | ')} |`);
}
