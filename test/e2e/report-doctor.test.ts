/**
 * `doctor` walks the troubleshooting chain: each of four planted faults is found at its link of the
 * chain, with evidence in numbers, and a healthy run (synthetic and real) gets no findings.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/core/index.js';
import { main } from '../../src/cli/main.js';
import type { Io } from '../../src/cli/output.js';
import { EXIT_FINDINGS } from '../../src/cli/exit-codes.js';
import { diagnose, type DoctorReport, type Finding } from '../../src/report/index.js';
import { makeMathRun } from '../../src/report/testing/math-run.js';
import { plantBatch, plantRun, type SyntheticRunSpec } from '../../src/report/testing/synthetic.js';
import { createSqliteStore } from '../../src/storage/sqlite/index.js';
import { systemClock } from '../../src/cli/clock.js';

const dir = mkdtempSync(join(tmpdir(), 'envharness-doctor-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
/** A store holding one clean batch per slice and a healthy synthetic run, with `fault` applied. */
async function healthyStore(fault: { run?: Partial<SyntheticRunSpec>; batches?: (store: Store) => Promise<unknown> } = {}): Promise<{ store: Store; path: string }> {
  const path = join(dir, `doctor-${n++}.db`);
  const store = await createSqliteStore(path, { now: systemClock });
  await plantBatch(store, { seed: 1, template: 'toy/t-alpha@1', rejected: { exact_duplicate: 3, near_duplicate: 2 } });
  await plantBatch(store, { seed: 2, template: 'toy/t-beta@1', rejected: { exact_duplicate: 4 } });
  await plantBatch(store, { seed: 3, template: 'toy/t-alpha@1', rejected: { near_duplicate: 5, non_trivial: 1 } });
  await fault.batches?.(store);
  await plantRun(store, { id: 'train-synthetic', ...fault.run });
  return { store, path };
}

const problems = (report: DoctorReport) => report.findings.filter((f) => f.severity !== 'info');
const only = (report: DoctorReport, check: Finding['check']) => report.findings.filter((f) => f.check === check);

describe('doctor on a healthy run', () => {
  it('reports nothing on a healthy synthetic run, and checks all four links in order', async () => {
    const { store } = await healthyStore();
    const report = await diagnose(store);
    expect(report.steps.map((s) => s.step)).toEqual(['generation-log', 'sampling-weights', 'difficulty-curve', 'regression-set', 'store-recovery']);
    expect(report.findings).toEqual([]);
    expect(report.hasErrors).toBe(false);
    expect(report.steps[0]!.checked).toMatchObject({ batches: 3, candidates: 300, duplicates: 14 });
    expect(report.steps[3]!.checked).toMatchObject({ evaluations: 8, regressionTasks: 40 });
    await store.close();
  });

  it('reports nothing on a real training run of the math domain', async () => {
    const { harness, summary } = await makeMathRun(dir, { file: 'healthy-real.db', strategy: 'threshold', episodes: 400, evalEvery: 50 });
    const report = await diagnose(harness.store, { runId: summary.runId });
    expect(report.findings).toEqual([]);
    expect(report.steps[1]!.checked).toMatchObject({ slices: 2, episodes: 400 });
    expect((report.steps[3]!.checked as { evaluations: number }).evaluations).toBe(8);
    await harness.close();
    // Evaluating the regression set again with a frozen deterministic agent gives equal scores.
    const out: string[] = [];
    const io: Io = { out: (s) => out.push(s), err: (s) => out.push(s), isTTY: false };
    expect(await main(['node', 'envharness', '--store', join(dir, 'healthy-real.db'), '--json', 'doctor', '--agent', 'oracle', '--probe', '2'], io)).toBe(0);
    const probed = JSON.parse(out.join('')) as DoctorReport;
    expect(probed.runId).toBe(summary.runId);
    expect(probed.steps[3]!.checked.probeScores).toEqual([1, 1]);
    expect(probed.findings).toEqual([]);
  });
});

describe('doctor finds each planted fault at its link of the chain', () => {
  it('1. generation log: duplicate-heavy generation', async () => {
    const { store } = await healthyStore({
      batches: (s) => plantBatch(s, { seed: 9, template: 'toy/t-beta@1', candidates: 200, rejected: { exact_duplicate: 90, near_duplicate: 50 } }),
    });
    const report = await diagnose(store);
    const [dup] = only(report, 'duplicates');
    expect(dup).toMatchObject({ step: 'generation-log', severity: 'error' });
    expect(dup!.evidence).toMatchObject({ duplicates: 154, candidates: 500, exact: 97, near: 57 });
    expect((dup!.evidence.batches as Array<{ share: number; seed: number }>)[0]).toMatchObject({ seed: 9, share: 0.7 });
    expect(dup!.message).toContain('70%');
    // The same batch is also a rejection spike against the other batches; nothing later in the chain fires.
    expect(only(report, 'rejection-spike')).toHaveLength(1);
    expect(problems(report).every((f) => f.step === 'generation-log')).toBe(true);
    expect(report.hasErrors).toBe(true);
    await store.close();
  });

  it('1. generation log: missing fields and wrong answers', async () => {
    const { store } = await healthyStore({
      batches: (s) => plantBatch(s, { seed: 10, candidates: 100, rejected: { schema: 8, oracle: 2 } }),
    });
    const report = await diagnose(store);
    expect(only(report, 'missing-fields')[0]).toMatchObject({ severity: 'warning', evidence: { rejected: 8, missingFields: 8, candidates: 400 } });
    expect(only(report, 'wrong-answers')[0]).toMatchObject({ severity: 'warning', evidence: { rejected: 2 } });
    await store.close();
  });

  it('2. sampling weights: a dominant slice and a starved one', async () => {
    const { store } = await healthyStore({
      run: {
        slices: ['toy/alpha', 'toy/beta', 'toy/gamma'],
        weight: (slice) => (slice === 'toy/alpha' ? 0.9 : slice === 'toy/beta' ? 0.1 : 0.0005),
      },
    });
    const report = await diagnose(store);
    const [dominant] = only(report, 'dominant-slice');
    expect(dominant).toMatchObject({ step: 'sampling-weights', severity: 'warning', evidence: { slice: 'toy/alpha', threshold: 0.75 } });
    expect(dominant!.evidence.drawShare as number).toBeGreaterThan(0.8);
    expect(dominant!.evidence.meanWeight as number).toBeCloseTo(0.8996, 3);
    const [starved] = only(report, 'starved-slice');
    expect(starved).toMatchObject({ step: 'sampling-weights', evidence: { slice: 'toy/gamma' } });
    expect(starved!.evidence.meanWeight as number).toBeLessThan(0.005);
    expect(problems(report).map((f) => f.check).sort()).toEqual(['dominant-slice', 'starved-slice']);
    await store.close();
  });

  it('3. difficulty curve: a runaway level that outruns the agent', async () => {
    const { store } = await healthyStore({
      run: {
        // alpha climbs one level on every update from episode 160 on; the agent fails from level 4.
        level: (slice, u) => (slice === 'toy/alpha' ? Math.max(1, Math.min(9, u - 18)) : 2),
        success: (slice, level) => (slice === 'toy/alpha' && level >= 4 ? 0.05 : 0.65),
      },
    });
    const report = await diagnose(store);
    const [runaway] = only(report, 'runaway-difficulty');
    expect(runaway).toMatchObject({ step: 'difficulty-curve', severity: 'warning', evidence: { slice: 'toy/alpha', rises: 8 } });
    expect(runaway!.evidence.levels).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(runaway!.evidence.successAfter as number).toBeLessThan(0.3);
    // Held at level 9 far below the band: the same fault seen from the other side.
    expect(only(report, 'held-beyond-ability')[0]).toMatchObject({ evidence: { slice: 'toy/alpha', level: 9 } });
    expect(problems(report).every((f) => f.step === 'difficulty-curve')).toBe(true);
    await store.close();
  });

  it('4. fixed regression set: an unstable regression score is an environment error', async () => {
    const scores = [0.8, 0.3, 0.85, 0.25, 0.8, 0.35, 0.9, 0.3];
    const { store } = await healthyStore({
      run: { evals: scores.map((score, i) => ({ episode: 50 * (i + 1), score, dynamicSuccess: 0.65 })) },
    });
    const report = await diagnose(store);
    const [unstable] = only(report, 'regression-unstable');
    expect(unstable).toMatchObject({ step: 'regression-set', severity: 'error', evidence: { scores, reversals: 6, regressionTasks: 40 } });
    expect(unstable!.evidence.swing as number).toBeGreaterThan(0.4);
    expect(unstable!.message).toContain('the environment is the problem');
    expect(problems(report).map((f) => f.check)).toEqual(['regression-unstable']);
    expect(report.hasErrors).toBe(true);
    await store.close();
  });

  it('4. fixed regression set: stable regression with swinging dynamic success is a normal distribution shift (info)', async () => {
    const { store } = await healthyStore({
      run: { evals: Array.from({ length: 8 }, (_, i) => ({ episode: 50 * (i + 1), score: 0.5 + 0.02 * i, dynamicSuccess: i % 2 ? 0.35 : 0.85 })) },
    });
    const report = await diagnose(store);
    expect(report.findings.map((f) => [f.check, f.severity])).toEqual([['distribution-shift', 'info']]);
    expect(report.hasErrors).toBe(false);
    await store.close();
  });

  it('4. fixed regression set: a set that changed during the run, and a frozen agent scored differently', async () => {
    const { store } = await healthyStore({ run: { regressionTasks: 40, regressionAtEnd: 44 } });
    const report = await diagnose(store, { regressionProbe: { scores: [0.6, 0.6, 0.55] } });
    expect(only(report, 'regression-changed')[0]).toMatchObject({ severity: 'error', evidence: { startCount: 40, endCount: 44 } });
    expect(only(report, 'regression-nondeterministic')[0]).toMatchObject({ severity: 'error', evidence: { spread: 0.05 } });
    await store.close();
  });
});

describe('envharness doctor', () => {
  const capture = () => {
    const out: string[] = [];
    const io: Io = { out: (s) => out.push(s), err: (s) => out.push(s), isTTY: false };
    return { out, io };
  };

  it('prints the chain, exits 8 on errors, and --json gives the report', async () => {
    const { store, path } = await healthyStore({ run: { evals: [0.8, 0.3, 0.85, 0.25, 0.8].map((score, i) => ({ episode: 50 * (i + 1), score, dynamicSuccess: 0.6 })) } });
    await store.close();
    const text = capture();
    expect(await main(['node', 'envharness', '--store', path, 'doctor'], text.io)).toBe(EXIT_FINDINGS);
    const printed = text.out.join('\n');
    expect(printed).toMatch(/1\. generation log[\s\S]*2\. sampling weights[\s\S]*3\. difficulty curve[\s\S]*4\. fixed regression set/);
    expect(printed).toContain('regression-unstable');
    expect(printed).toContain('the environment is the likely problem');

    const json = capture();
    expect(await main(['node', 'envharness', '--store', path, 'doctor', '--json', '--run', 'train-syn'], json.io)).toBe(EXIT_FINDINGS);
    const report = JSON.parse(json.out.join('')) as DoctorReport;
    expect(report.runId).toBe('train-synthetic');
    expect(report.findings.map((f) => f.check)).toEqual(['regression-unstable']);
  });

  it('exits 0 on a healthy run and takes threshold overrides', async () => {
    const { store, path } = await healthyStore();
    await store.close();
    const ok = capture();
    expect(await main(['node', 'envharness', '--store', path, 'doctor'], ok.io)).toBe(0);
    expect(ok.out.join('\n')).toContain('no problems found');
    // With a dominance threshold below an even split, both slices dominate: a warning, still exit 0.
    const strict = capture();
    expect(await main(['node', 'envharness', '--store', path, '--json', 'doctor', '--threshold', 'dominantShare=0.4'], strict.io)).toBe(0);
    expect((JSON.parse(strict.out.join('')) as DoctorReport).findings.map((f) => f.check)).toEqual(['dominant-slice', 'dominant-slice']);
    const bad = capture();
    expect(await main(['node', 'envharness', '--store', path, 'doctor', '--threshold', 'nonsense'], bad.io)).toBe(2);
  });
});
