import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { canonicalize, sha256 } from '../../../core/index.js';
import { createRetailDomain, type RetailDomain } from '../domain.js';
import { loadTauBenchTasks, loadTauBenchWorld } from '../load.js';
import { digestRetailExport, exportRetailState, hashRetailState, type RetailState } from '../state.js';
import { applyTauBenchActions, type TauBenchTask } from './actions.js';
import type { RetailWorld } from '../world.js';
import { skipWithoutTauBenchData, TAU_BENCH_DATA_DIR, TAU_BENCH_TOOL_NAMES, type TauBenchGold } from '../../../../test/support/tau-bench-data.js';

const dataDir = TAU_BENCH_DATA_DIR;
const TOOL_NAMES = TAU_BENCH_TOOL_NAMES;
type Gold = TauBenchGold;

describe.skipIf(skipWithoutTauBenchData())("tau-bench retail compatibility (gold digests from tau-bench's own tools)", () => {
  let world: RetailWorld;
  let retail: RetailDomain;
  let gold: Gold;
  let cases: Array<{ split: 'train' | 'dev'; index: number; task: TauBenchTask; sha256: string; state?: RetailState; errors?: number }>;

  beforeAll(() => {
    if (!existsSync(dataDir)) {
      throw new Error(
        `tau-bench retail data not found at ${dataDir}: put shared/ beside the clone or set TAU_BENCH_DATA to the folder holding users.json, orders.json, products.json, tasks_*.json and gold_final_states.json`,
      );
    }
    world = loadTauBenchWorld(dataDir);
    retail = createRetailDomain({ worlds: [world] });
    gold = JSON.parse(readFileSync(path.join(dataDir, 'gold_final_states.json'), 'utf8')) as Gold;
    cases = [];
    for (const split of ['train', 'dev'] as const) {
      const tasks = loadTauBenchTasks(dataDir, split);
      expect(gold[split]).toHaveLength(tasks.length);
      for (const { index, sha256: digest } of gold[split]) cases.push({ split, index, task: tasks[index]!, sha256: digest });
    }
  });

  const initial = (): RetailState => retail.createState({ world: 'tau-bench', digest: world.digest });

  it('loads the database with the digest tau-bench gives its initial state', () => {
    expect(world.digest).toBe(gold.initial_sha256);
    // The same digest through core's own canonicaliser, from the export.
    expect(sha256(canonicalize(exportRetailState(initial())))).toBe(gold.initial_sha256);
    expect(hashRetailState(initial())).toBe(gold.initial_sha256);
  });

  it('has all 16 of tau-bench retail tools', () => {
    expect(retail.tools.map((t) => t.name).sort()).toEqual(TOOL_NAMES);
  });

  it("replays the gold actions of all 520 train and dev tasks to tau-bench's final digests", () => {
    expect(cases).toHaveLength(520);
    const base = initial();
    const failures: string[] = [];
    for (const c of cases) {
      const state = retail.fork(base);
      const outcomes = applyTauBenchActions(state, c.task.actions, retail.tools);
      c.state = state;
      c.errors = outcomes.filter((o) => o !== undefined && !o.ok).length;
      const actual = digestRetailExport(state);
      if (actual !== c.sha256) failures.push(`${c.split}[${c.index}]: ${actual} != ${c.sha256}`);
    }
    expect(failures).toEqual([]);
    // The gold actions include 20 calls refused for insufficient gift-card balance; matching digests
    // show tau-bench refuses them too.
    expect(cases.reduce((n, c) => n + c.errors!, 0)).toBe(20);
    // Forks never touched the shared base state.
    expect(digestRetailExport(base)).toBe(gold.initial_sha256);
    expect(hashRetailState(base)).toBe(gold.initial_sha256);
  });

  it("exports states whose canonical JSON (core's canonicaliser) hashes to the gold digest", () => {
    // Core's canonicaliser is slow on a 1 MB world: a sample spread over both splits.
    for (const c of cases.filter((_, i) => i % 65 === 0)) {
      expect(sha256(canonicalize(exportRetailState(c.state!)))).toBe(c.sha256);
    }
  });

  it('leaves the initial hash under the empty trajectory, which fails every task that changes the database', () => {
    const changing = cases.filter((c) => c.sha256 !== gold.initial_sha256);
    expect(changing.length).toBeGreaterThan(500);
    const empty = retail.fork(initial());
    applyTauBenchActions(empty, [], retail.tools);
    expect(retail.hashState(empty)).toBe(gold.initial_sha256);
    for (const c of changing) expect(retail.hashState(empty)).not.toBe(retail.hashState(c.state!));
  });

  it('gives equal incremental hashes exactly when the exported digests are equal', () => {
    const byDigest = new Map<string, string>();
    for (const c of cases) {
      const incremental = retail.hashState(c.state!);
      const seen = byDigest.get(c.sha256);
      if (seen === undefined) byDigest.set(c.sha256, incremental);
      else expect(incremental).toBe(seen);
    }
    expect(new Set(byDigest.values()).size).toBe(byDigest.size);
  });

  it('grades a replay by the incremental hash against the gold replay', () => {
    // What an episode on an imported task does: fork, run the agent's actions, compare hashes.
    const c = cases.find((x) => x.task.actions.length > 1)!;
    const agent = retail.fork(initial());
    applyTauBenchActions(agent, c.task.actions.slice(0, -1), retail.tools);
    expect(retail.hashState(agent)).not.toBe(retail.hashState(c.state!));
    applyTauBenchActions(agent, c.task.actions.slice(-1), retail.tools);
    expect(retail.hashState(agent)).toBe(retail.hashState(c.state!));
  });
});
