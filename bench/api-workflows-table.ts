/** Per-level success table of api-workflows for random, the scripted baseline and the oracle: `npx tsx bench/api-workflows-table.ts [per-cell]`. */
import { apiWorkflows } from '../src/domains/api-workflows/index.js';
import { createApiBaselineAgent } from '../src/domains/api-workflows/baseline.js';
import { instantiateTask } from '../src/generation/index.js';
import { runEpisode } from '../src/runtime/index.js';
import { createOracleAgent, createRandomAgent } from '../src/agents/index.js';
const perCell = Number(process.argv[2] ?? 10);
const agents = [['random', createRandomAgent({ seed: 1 })], ['baseline', createApiBaselineAgent()], ['oracle', createOracleAgent()]] as const;
const rows: Record<string, number[][]> = {};
for (const template of apiWorkflows.templates as any[]) {
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
