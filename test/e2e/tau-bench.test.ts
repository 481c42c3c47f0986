import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalize, sha256, type Action, type Task } from '../../src/core/index.js';
import { createRetailState, digestRetailExport, type RetailDomain, type RetailState } from '../../src/domains/retail/index.js';
import {
  callsOfTransitions,
  exportTauBenchState,
  gradeTauBench,
  importTauBench,
  rebuildRetailState,
  tauBenchParams,
  type TauBenchImport,
} from '../../src/domains/retail/tau-bench/index.js';
import { createEpisode, createMemoryRecorder, createRuntimeCache, type RuntimeCache } from '../../src/runtime/index.js';
import { skipWithoutTauBenchData, TAU_BENCH_DATA_DIR, TAU_BENCH_TOOL_NAMES, type TauBenchGold } from '../support/tau-bench-data.js';

const dataDir = TAU_BENCH_DATA_DIR;
const TOOL_NAMES = TAU_BENCH_TOOL_NAMES;
type Gold = TauBenchGold;

interface Replayed {
  task: Task;
  gold: string;
  state: RetailState;
  outcome: number;
  messages: string[];
}

// Whole-set replays: give them room when the machine is shared.
describe.skipIf(skipWithoutTauBenchData())("tau-bench retail imported into EnvHarness (gold digests from tau-bench's own tools)", { timeout: 180_000 }, () => {
  let imported: TauBenchImport;
  let domain: RetailDomain;
  let cache: RuntimeCache<RetailState>;
  let gold: Gold;
  let tasks: Array<{ task: Task; gold: string }>;
  const replayed: Replayed[] = [];

  beforeAll(() => {
    if (!existsSync(dataDir)) {
      throw new Error(
        `tau-bench retail data not found at ${dataDir}: put shared/ beside the clone or set TAU_BENCH_DATA to the folder holding users.json, orders.json, products.json, tasks_train.json, tasks_dev.json and gold_final_states.json`,
      );
    }
    imported = importTauBench({ dir: dataDir });
    domain = imported.domain;
    cache = createRuntimeCache(domain);
    gold = JSON.parse(readFileSync(path.join(dataDir, 'gold_final_states.json'), 'utf8')) as Gold;
    tasks = [];
    for (const set of imported.sets) {
      const digests = new Map(gold[set.set as 'train' | 'dev'].map((g) => [g.index, g.sha256]));
      for (const task of set.batch.tasks) tasks.push({ task, gold: digests.get(tauBenchParams(task).index)! });
    }
  });

  it('imports all 500 train and 20 dev tasks, each a batch whose gates accepted every task', () => {
    expect(imported.sets.map((s) => [s.template, s.split, s.batch.manifest.accepted, s.batch.manifest.rejected])).toEqual([
      ['retail/tau-bench-train@1', 'dynamic', 500, 0],
      ['retail/tau-bench-dev@1', 'regression', 20, 0],
    ]);
    expect(tasks).toHaveLength(520);
    expect(tasks.every((t) => typeof t.gold === 'string')).toBe(true);
    for (const set of imported.sets) {
      const gates = Object.fromEntries(set.batch.manifest.gates.map((g) => [g.gate, g]));
      for (const name of ['schema', 'exact_duplicate', 'oracle']) expect(gates[name]).toMatchObject({ enabled: true, rejected: 0, checked: set.batch.tasks.length });
      for (const name of ['near_duplicate', 'non_trivial', 'leakage']) expect(gates[name]!.enabled).toBe(false);
    }
  });

  it("loads the initial database with the digest tau-bench gives it", () => {
    expect(imported.world.digest).toBe(gold.initial_sha256);
    expect(sha256(canonicalize(exportTauBenchState(createRetailState(imported.world))))).toBe(gold.initial_sha256);
    for (const { task } of tasks) expect(task.spec.initialState).toEqual({ world: 'tau-bench', digest: gold.initial_sha256 });
  });

  it("offers all 16 of tau-bench's retail tools to the agent", () => {
    const episode = createEpisode(domain, tasks[0]!.task, { cache });
    const observation = episode.reset({ seed: 0 });
    expect(observation.tools!.map((t) => t.name).sort()).toEqual(TOOL_NAMES);
    expect(domain.tools.map((t) => t.name).sort()).toEqual(TOOL_NAMES);
  });

  it('replays the gold actions of all 520 tasks through the episode runtime to outcome 1 and tau-bench\'s final digests', () => {
    const failures: string[] = [];
    let policyFeedback = 0;
    for (const { task, gold: expected } of tasks) {
      const recorder = createMemoryRecorder();
      const episode = createEpisode(domain, task, { cache, recorder });
      episode.reset({ seed: 0 });
      let last;
      for (const action of task.spec.solution) {
        last = episode.step(action);
        policyFeedback += last.feedback.filter((f) => f.code === 'POLICY_VIOLATION').length;
      }
      const transitions = recorder.transitions(episode.id!);
      // The world after the episode, rebuilt from the recorded transitions, as `episode state` does.
      const state = rebuildRetailState(domain, task, callsOfTransitions(transitions), transitions.at(-1)!.info.stateHash);
      const messages = task.spec.solution.filter((a): a is Action & { type: 'message' } => a.type === 'message').map((a) => a.text);
      const digest = digestRetailExport(state);
      const name = `${tauBenchParams(task).set}[${tauBenchParams(task).index}]`;
      if (!last!.terminated || last!.info.outcome !== 1) failures.push(`${name}: outcome ${last!.info.outcome}`);
      if (digest !== expected) failures.push(`${name}: ${digest} != ${expected}`);
      if (gradeTauBench(task, state, messages) !== 1) failures.push(`${name}: tau-bench reward 0`);
      replayed.push({ task, gold: expected, state, outcome: last!.info.outcome, messages });
    }
    expect(failures).toEqual([]);
    expect(replayed).toHaveLength(520);
    // EnvHarness's policy checks report on tau-bench's gold actions (which skip authentication) without changing the grade.
    if ((domain.policy?.rules.length ?? 0) > 0) expect(policyFeedback).toBeGreaterThan(0);
  });

  it("exports final states whose RFC 8785 canonical JSON hashes to tau-bench's digest", () => {
    // Core's canonicaliser on the whole 1.2 MB world: a sample spread over both splits.
    for (const r of replayed.filter((_, i) => i % 40 === 0)) {
      expect(sha256(canonicalize(exportTauBenchState(r.state)))).toBe(r.gold);
    }
    // The runtime's own export of a live episode, too.
    const r = replayed.find((x) => x.gold !== gold.initial_sha256)!;
    const episode = createEpisode(domain, r.task, { cache });
    episode.reset({ seed: 0 });
    for (const action of r.task.spec.solution) episode.step(action);
    const { orders, products, users } = episode.exportState() as Record<string, unknown>;
    expect(sha256(canonicalize({ users, orders, products }))).toBe(r.gold);
  });

  it('scores the empty trajectory 0 on every task that changes the database, in the runtime and by tau-bench\'s rule', () => {
    const changing = replayed.filter((r) => r.gold !== gold.initial_sha256);
    expect(changing).toHaveLength(514);
    const initial = createRetailState(imported.world);
    for (const r of replayed) {
      const episode = createEpisode(domain, r.task, { cache });
      episode.reset({ seed: 0 });
      const outcome = episode.step({ type: 'finish' }).info.outcome;
      const reward = gradeTauBench(r.task, initial, []);
      expect(outcome).toBe(reward);
      expect(outcome).toBe(r.gold === gold.initial_sha256 ? 1 : 0);
    }
  });

  it('grades planted wrong trajectories 0 in the runtime exactly as tau-bench does', () => {
    let checked = 0;
    for (const r of replayed.filter((x) => x.gold !== gold.initial_sha256)) {
      const writes = r.task.spec.solution.filter((a) => a.type === 'tool');
      // A missing write: the gold trajectory without its last write.
      const missing = r.task.spec.solution.filter((a) => a !== writes.at(-1));
      const recorder = createMemoryRecorder();
      const episode = createEpisode(domain, r.task, { cache, recorder });
      episode.reset({ seed: 1 });
      let last;
      for (const action of missing) last = episode.step(action);
      const transitions = recorder.transitions(episode.id!);
      const state = rebuildRetailState(domain, r.task, callsOfTransitions(transitions), transitions.at(-1)!.info.stateHash);
      expect(last!.info.outcome).toBe(0);
      expect(gradeTauBench(r.task, state, r.messages)).toBe(0);
      checked++;
    }
    expect(checked).toBe(514);
  });

  describe('import determinism', () => {
    let copy: string;
    afterAll(() => {
      if (copy) rmSync(copy, { recursive: true, force: true });
    });

    it('gives the same task ids, manifests and logs for the same files, wherever they are', () => {
      copy = mkdtempSync(path.join(tmpdir(), 'envharness-tau-bench-'));
      for (const file of ['users.json', 'orders.json', 'products.json', 'tasks_train.json', 'tasks_dev.json']) cpSync(path.join(dataDir, file), path.join(copy, file));
      const again = importTauBench({ dir: copy });
      expect(again.sets.map((s) => s.batch.manifest)).toEqual(imported.sets.map((s) => s.batch.manifest));
      expect(again.sets.map((s) => s.batch.tasks.map((t) => t.id))).toEqual(imported.sets.map((s) => s.batch.tasks.map((t) => t.id)));
      expect(canonicalize(again.sets.map((s) => s.batch.log))).toBe(canonicalize(imported.sets.map((s) => s.batch.log)));
      expect(new Set(tasks.map((t) => t.task.id)).size).toBe(520);
    });
  });
});
