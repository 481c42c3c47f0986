import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createRng, type Agent, type JsonValue } from '../core/index.js';
import { math } from '../domains/math/index.js';
import { createHarness, type Harness } from './harness.js';
import { binomial, passHatK } from '../report/metrics.js';

const dir = mkdtempSync(join(tmpdir(), 'envharness-train-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
let tick = 0;
const clock = () => new Date(Date.UTC(2026, 0, 1, 0, 0, tick++)).toISOString();

/**
 * A synthetic agent with a known skill curve: it answers a math task correctly with probability
 * sigmoid(skill - level), decided by the episode seed alone (so it has no hidden state). It reads the
 * question, not the reference solution.
 */
function skilledAgent(skill: number): Agent {
  return {
    name: 'synthetic',
    version: '1',
    config: () => ({ skill }),
    begin(ctx) {
      let level = 1;
      return {
        act(observation) {
          const text = observation.text ?? '';
          const terms = /What is (.+)\? Answer/.exec(text)?.[1];
          const letter = /letter "(.)" appear in "(.+)"\?/.exec(text);
          let answer = '0';
          if (terms) {
            const nums = terms.replace(/- /g, '-').replace(/\+ /g, '').split(' ').map(Number);
            level = nums.length;
            answer = String(nums.reduce((a, b) => a + b, 0));
          } else if (letter) {
            level = letter[2]!.split(' ').length + 1;
            answer = String([...letter[2]!].filter((c) => c === letter[1]).length);
          }
          const p = 1 / (1 + Math.exp(-(skill - level)));
          const right = createRng([ctx.seed, 'skill']).next() < p;
          return { type: 'finish', answer: right ? answer : `${answer}1` };
        },
      };
    },
  };
}

async function fresh(): Promise<Harness> {
  const h = await createHarness({ store: join(dir, `t${n++}.db`), domains: [math], clock });
  await h.initialize({ seed: 11 });
  return h;
}

async function populate(h: Harness): Promise<void> {
  await h.generate({ templates: [{ id: 'math/chain-sum@1' }], levels: [1, 2, 3, 4, 5], count: 1500, seed: 1, split: 'dynamic' });
  await h.generate({ templates: [{ id: 'math/count-letters@1' }], levels: [1, 2, 3, 4], count: 800, seed: 2, split: 'dynamic' });
  await h.generate({ templates: [{ id: 'math/chain-sum@1' }, { id: 'math/count-letters@1' }], levels: [1, 2, 3], count: 40, seed: 3, split: 'regression' });
}

describe('pass^k', () => {
  it('matches tau-bench on a hand-computed example', () => {
    // task a: 3 of 4; task b: 1 of 4; task c: 4 of 4.
    const trials = [
      ...[1, 1, 1, 0].map((s) => ({ taskId: 'a', success: s === 1 })),
      ...[0, 1, 0, 0].map((s) => ({ taskId: 'b', success: s === 1 })),
      ...[1, 1, 1, 1].map((s) => ({ taskId: 'c', success: s === 1 })),
    ];
    expect(passHatK(trials, 1).value).toBeCloseTo((3 / 4 + 1 / 4 + 1) / 3, 12);
    expect(passHatK(trials, 2).value).toBeCloseTo((3 / 6 + 0 + 1) / 3, 12);
    expect(passHatK(trials, 4).value).toBeCloseTo((0 + 0 + 1) / 3, 12);
    expect(binomial(4, 2)).toBe(6);
  });
});

describe('training loop', () => {
  it('moves levels with the agent, records the run, evaluates the regression set', async () => {
    const h = await fresh();
    await populate(h);
    const summary = await h.train({ agent: skilledAgent(4), episodes: 240, strategy: 'threshold', evalEvery: 80, seed: 5, concurrency: 4 });
    expect(summary.episodes).toBe(240);
    expect(summary.evals.map((e) => e.episode)).toEqual([80, 160, 240]);
    const arithmetic = summary.slices.find((s) => s.slice === 'math/arithmetic')!;
    // Skill 4: level 2 tasks pass ~88%, so the threshold curriculum must have raised the level.
    expect(arithmetic.level).toBeGreaterThan(1);
    const run = await h.store.getRun(summary.runId);
    expect(run?.status).toBe('finished');
    expect(run?.snapshotStart).toBe(summary.snapshotStart);
    const episodes = await h.store.listRunEvents(summary.runId, 'episode');
    expect(episodes).toHaveLength(240);
    const curriculum = await h.store.listRunEvents(summary.runId, 'curriculum');
    expect(curriculum.length).toBeGreaterThan(10);
    expect((await h.store.listRunEvents(summary.runId, 'eval')).length).toBe(3);
    // Transitions were recorded for every episode.
    const first = episodes[0]!.data as { episodeId: string };
    expect((await h.store.listTransitions(first.episodeId)).length).toBeGreaterThan(0);
    await h.close();
  });

  it('a snapshot taken mid-training, restored into a fresh store, continues identically', async () => {
    const a = await fresh();
    await populate(a);
    a.useCurriculum('learnability');
    await a.train({ agent: skilledAgent(3), episodes: 60, concurrency: 3 });
    const { text } = await a.exportSnapshot();
    const restA = await a.train({ agent: skilledAgent(3), episodes: 90, concurrency: 3 });

    const b = await fresh();
    await b.importSnapshot(text);
    const restB = await b.train({ agent: skilledAgent(3), episodes: 90, concurrency: 3 });

    const view = async (h: Harness, runId: string) =>
      (await h.store.listRunEvents(runId)).map((e) => {
        const d = e.data as Record<string, JsonValue>;
        return e.kind === 'episode' ? [e.kind, d.taskId, d.level, d.outcome] : [e.kind, d.levels ?? null, d.weights ?? null];
      });
    expect(await view(b, restB.runId)).toEqual(await view(a, restA.runId));
    expect(restB.slices).toEqual(restA.slices);
    await a.close();
    await b.close();
  });

  it('groups run one task k times with one seed and can skip zero-variance groups', async () => {
    const h = await fresh();
    await populate(h);
    const summary = await h.train({ agent: skilledAgent(20), episodes: 40, strategy: 'uniform', group: { size: 4, skipZeroVariance: true }, seed: 1 });
    // A near-perfect agent: every group is all-pass, so every group is zero-variance and skipped.
    expect(summary.skippedGroups).toBe(10);
    const episodes = (await h.store.listRunEvents(summary.runId, 'episode')).map((e) => e.data as { taskId: string });
    for (let g = 0; g < 10; g++) expect(new Set(episodes.slice(g * 4, g * 4 + 4).map((e) => e.taskId)).size).toBe(1);
    await h.close();
  });

  it('evaluate and train commit their episodes in groups, every one stored and ended once they return', async () => {
    const h = await fresh();
    await populate(h);
    let commits = 0;
    const append = h.store.appendTransitions.bind(h.store);
    h.store.appendTransitions = async (transitions, options) => {
      commits++;
      return append(transitions, options);
    };
    const evaluation = await h.evaluate({ agent: skilledAgent(3), split: 'regression', k: 3 });
    const evaluated = await h.store.listEpisodes({ runId: evaluation.runId });
    expect(evaluated.map((e) => e.id).sort()).toEqual(evaluation.outcomes.map((o) => o.episodeId).sort());
    expect(evaluated.every((e) => e.status === 'terminated' || e.status === 'truncated')).toBe(true);
    // Not a commit per episode (each episode's end used to ask for one): the evaluation's flush at its end.
    expect(evaluation.outcomes.length).toBeGreaterThan(20);
    expect(commits).toBeLessThan(evaluation.outcomes.length / 4);

    commits = 0;
    const summary = await h.train({ agent: skilledAgent(4), episodes: 48, strategy: 'uniform', seed: 2, concurrency: 8 });
    const trained = await h.store.listEpisodes({ runId: summary.runId });
    expect(trained).toHaveLength(48);
    expect(trained.every((e) => e.status === 'terminated' || e.status === 'truncated')).toBe(true);
    // One commit per round of 8 episodes (the round's flush), not one per episode.
    expect(commits).toBeLessThanOrEqual(48 / 8);
    await h.close();
  });

  it('evaluate freezes nothing it should not and computes pass^k per slice', async () => {
    const h = await fresh();
    await populate(h);
    const result = await h.evaluate({ agent: skilledAgent(3), split: 'regression', k: 3 });
    const all = result.rows.find((r) => r.slice === '*')!;
    expect(all.trials).toBe(result.outcomes.length);
    expect(all.passK[0]).toBeGreaterThanOrEqual(all.passK[1]!);
    expect(all.passK[1]).toBeGreaterThanOrEqual(all.passK[2]!);
    expect(all.low).toBeLessThanOrEqual(all.passK[0]!);
    expect((await h.store.getRun(result.runId))?.kind).toBe('eval');
    await h.close();
  });
});
