import { describe, expect, it } from 'vitest';
import { digest, type RunRecord } from '../core/index.js';
import { createSqliteStore } from '../storage/sqlite/index.js';
import { escapeInlineScript, inlineJson } from './chart-source.js';
import { diagnose, swing } from './doctor.js';
import { buildReport, compareEnvironments, foldReason, thin, type EnvironmentVersion } from './report-data.js';
import { esc, heatColor, renderReportHtml } from './report-html.js';
import { timelineFromEvents } from './run-timeline.js';
import { plantBatch, plantRun } from './testing/synthetic.js';
import { writeRunReport } from './write-report.js';
import { systemClock } from '../cli/clock.js';

const FAKE_CHART_JS = '/* chart.js stand-in */ window.Chart = function () {};';

describe('buildReport', () => {
  it('computes level and weight series, the heatmap, feedback and pass^1 from a run', async () => {
    const store = await createSqliteStore(':memory:', { now: systemClock });
    await plantBatch(store, { seed: 1, rejected: { exact_duplicate: 6, near_duplicate: 4, oracle: 1 } });
    await plantRun(store, { id: 'train-a', episodes: 200 });
    const data = await buildReport(store);
    const run = data.runs[0]!;
    expect(run.id).toBe('train-a');
    expect(run.slices).toEqual(['toy/alpha', 'toy/beta']);
    expect(run.levels.x[0]).toBe(0);
    expect(run.levels.x.at(-1)).toBe(200);
    expect(run.levels.series[0]!.values.at(-1)).toBe(2);
    for (let i = 0; i < run.weights.x.length; i++) {
      expect(run.weights.series.reduce((sum, s) => sum + (s.values[i] ?? 0), 0)).toBeCloseTo(1, 3);
    }
    expect(run.heatmap.map((c) => `${c.slice}@${c.level}`)).toEqual(['toy/alpha@1', 'toy/alpha@2', 'toy/beta@1', 'toy/beta@2']);
    expect(run.heatmap.reduce((n, c) => n + c.episodes, 0)).toBe(200);
    const failures = 200 - run.heatmap.reduce((n, c) => n + c.successes, 0);
    expect(run.feedback).toEqual([{ code: 'INVALID_ACTION', count: failures }]);
    // No stored summary: pass^1 per slice and overall from the episodes.
    expect(run.passK.at(-1)).toMatchObject({ slice: '*', trials: 200, passK: [run.success] });
    expect(run.regression.evals).toHaveLength(4);
    expect(data.generation.totals).toMatchObject({ candidates: 100, rejected: 11, duplicates: 10, byGate: { exact_duplicate: 6, near_duplicate: 4, oracle: 1 } });
    expect(data.generation.reasons[0]).toEqual({ gate: 'exact_duplicate', reason: 'same task id as candidate # of this batch', count: 6 });
    await store.close();
  });

  it('reads evaluation runs (episode events without a position) and renders them without curriculum charts', async () => {
    const run: RunRecord = {
      id: 'eval-1', kind: 'eval', agent: { name: 'a', version: '1', configDigest: 'x' }, strategy: 'frozen', seed: 0, config: {},
      snapshotStart: 'missing', status: 'finished', createdAt: 't', updatedAt: 't',
      summary: { passK: [{ slice: '*', tasks: 2, trials: 4, passK: [0.5, 0.25], low: 0.15, high: 0.85 }] },
    };
    const timeline = timelineFromEvents(run, [
      { runId: 'eval-1', seq: 0, kind: 'episode', data: { episodeId: 'e0', taskId: 't1', slice: 'm/x', level: 2, outcome: 1, reward: 1, steps: 1, excluded: false, feedback: {} } },
      { runId: 'eval-1', seq: 1, kind: 'episode', data: { episodeId: 'e1', taskId: 't1', slice: 'm/x', level: 2, outcome: 0, reward: 0, steps: 1, excluded: false, feedback: { NO_PROGRESS: 2 } } },
      { runId: 'eval-1', seq: 2, kind: 'episode', data: { broken: true } },
    ]);
    expect(timeline.episodes.map((e) => e.n)).toEqual([1, 2]);
    const store = await createSqliteStore(':memory:', { now: systemClock });
    await store.saveRun(run);
    await store.appendRunEvents([{ runId: 'eval-1', seq: 0, kind: 'episode', data: { taskId: 't1', slice: 'm/x', level: 2, outcome: 1 } }]);
    const data = await buildReport(store, { runId: 'eval' });
    expect(data.runs[0]!.passK[0]!.passK).toEqual([0.5, 0.25]);
    expect(data.runs[0]!.environment.found).toBe(false);
    const html = renderReportHtml(data, { chartJs: FAKE_CHART_JS });
    expect(html).not.toContain('id="chart-levels-0"');
    expect(html).toContain('No curriculum updates in this run');
    expect(html).toContain('<th>pass^2</th>');
    await store.close();
  });

  it('refuses an unknown run with RUN_NOT_FOUND and an empty store with a hint', async () => {
    const store = await createSqliteStore(':memory:', { now: systemClock });
    await expect(buildReport(store)).rejects.toMatchObject({ code: 'RUN_NOT_FOUND', message: expect.stringContaining('envharness train') });
    await plantRun(store, { id: 'train-a', episodes: 16 });
    await plantRun(store, { id: 'train-b', episodes: 16, seed: 2 });
    await expect(buildReport(store, { runId: 'train-' })).rejects.toMatchObject({ code: 'RUN_NOT_FOUND', message: expect.stringContaining('ambiguous') });
    expect((await buildReport(store)).runs[0]!.id).toBe('train-b');
    await store.close();
  });
});

describe('diagnose', () => {
  it('judges no difficulty curve and no regression stability on an evaluation run', async () => {
    const store = await createSqliteStore(':memory:', { now: systemClock });
    await store.saveRun({
      id: 'eval-1', kind: 'eval', agent: { name: 'a', version: '1', configDigest: 'x' }, strategy: 'frozen', seed: 0, config: {},
      snapshotStart: 'missing', status: 'finished', createdAt: 't', updatedAt: 't',
    });
    // 150 failed episodes of one slice: a weak agent, not a held curriculum.
    await store.appendRunEvents(Array.from({ length: 150 }, (_, i) => ({ runId: 'eval-1', seq: i, kind: 'episode', data: { taskId: `t${i % 7}`, slice: 'm/x', level: 3, outcome: 0 } })));
    const report = await diagnose(store);
    expect(report.steps[2]!.checked).toEqual({ slices: 1, curriculum: false });
    expect(report.findings).toEqual([]);
    expect(report.steps[3]!.checked).toMatchObject({ kind: 'eval', evaluations: 0 });
    await expect(diagnose(store, { thresholds: { band: [0.8, 0.2] } })).rejects.toMatchObject({ code: 'PARAMS_INVALID' });
    // A training run: too few evaluations is a note; no regression split at all is a warning.
    await plantRun(store, { id: 'train-few', episodes: 100, evals: [{ episode: 50, score: 0.5, dynamicSuccess: 0.5 }] });
    expect((await diagnose(store, { runId: 'train-few' })).findings.map((f) => [f.check, f.severity])).toEqual([['no-regression-evals', 'info']]);
    await plantRun(store, { id: 'train-none', episodes: 100, regressionTasks: 0, evals: [] });
    expect((await diagnose(store, { runId: 'train-none' })).findings.map((f) => [f.check, f.severity])).toEqual([['no-regression-set', 'warning']]);
    await expect(diagnose(store, { thresholds: { dominantShare: -1 } })).rejects.toMatchObject({ code: 'PARAMS_INVALID' });
    await store.close();
  });
});

describe('renderReportHtml', () => {
  it('escapes run data: a label cannot close the script element or inject markup', async () => {
    const store = await createSqliteStore(':memory:', { now: systemClock });
    const evil = '</script><script>alert(1)</script><!-- <b>';
    await plantRun(store, { id: 'train-evil', episodes: 16, config: { label: evil, curriculum: { floor: 0.02 } } });
    const html = renderReportHtml(await buildReport(store), { chartJs: `${FAKE_CHART_JS} var s = "</script><!--";` });
    expect(html.match(/<\/script>/g)).toHaveLength(3);
    expect(html).not.toContain('<script>alert(1)');
    expect(html).toContain(esc(evil));
    expect(html).toContain('\\u003c/script>\\u003cscript>alert(1)');
    expect(html).toContain('var s = "<\\/script><\\!--";');
    await store.close();
  });

  it('puts a loud banner on runs with different template versions, and a note on different pools', async () => {
    const store = await createSqliteStore(':memory:', { now: systemClock });
    await plantRun(store, { id: 'train-a', episodes: 16 });
    await plantRun(store, { id: 'train-b', episodes: 16, slices: ['toy/alpha', 'toy/gamma'] });
    await plantRun(store, { id: 'train-c', episodes: 16, regressionTasks: 41 });
    const differs = renderReportHtml(await buildReport(store, { runId: 'train-a', compareId: 'train-b' }), { chartJs: FAKE_CHART_JS });
    expect(differs).toContain('class="banner danger"');
    expect(differs).toContain('Different environment versions');
    expect(differs).toContain('id="chart-levels-1"');
    const pool = await buildReport(store, { runId: 'train-a', compareId: 'train-c' });
    expect(pool.comparison).toMatchObject({ sameTemplates: true, samePool: false });
    expect(renderReportHtml(pool, { chartJs: FAKE_CHART_JS })).toContain('class="banner caution"');
    await store.close();
  });
});

describe('helpers', () => {
  const env = (templates: Array<[string, string]>, pool = 'p'): EnvironmentVersion => ({
    snapshotStart: 's', snapshotEnd: null, found: true,
    templates: templates.map(([id, sourceDigest]) => ({ id, sourceDigest })),
    templatesDigest: digest(templates), pool: { regression: { count: 1, digest: pool } },
  });

  it('compareEnvironments names changed, added and removed templates', () => {
    const c = compareEnvironments(env([['a@1', 'x'], ['b@1', 'y']]), env([['a@1', 'z'], ['c@1', 'w']]));
    expect(c).toMatchObject({ sameTemplates: false, changed: ['a@1'], onlyInA: ['b@1'], onlyInB: ['c@1'] });
    expect(c.message).toContain('template source changed: a@1');
    expect(compareEnvironments(env([['a@1', 'x']]), env([['a@1', 'x']]))).toMatchObject({ sameTemplates: true, samePool: true });
    expect(compareEnvironments(env([['a@1', 'x']]), { ...env([['a@1', 'x']]), found: false }).sameTemplates).toBe(false);
  });

  it('thin keeps the first and last items and at most max', () => {
    const items = Array.from({ length: 1001 }, (_, i) => i);
    const out = thin(items, 10);
    expect(out).toHaveLength(10);
    expect(out[0]).toBe(0);
    expect(out.at(-1)).toBe(1000);
    expect(thin([1, 2], 10)).toEqual([1, 2]);
  });

  it('foldReason folds ids and numbers', () => {
    expect(foldReason(`near duplicate of candidate 12 (task ${'ab'.repeat(32)}): estimated Jaccard 0.94 >= 0.9`)).toBe('near duplicate of candidate # (task …): estimated Jaccard # >= #');
  });

  it('swing is zero for a trend and large for a zig-zag', () => {
    expect(swing([0.2, 0.3, 0.5, 0.9])).toEqual({ swing: 0, reversals: 0 });
    const z = swing([0.8, 0.3, 0.8, 0.3]);
    expect(z.reversals).toBe(2);
    expect(z.swing).toBeCloseTo((1.5 - 0.5) / 3, 10);
  });

  it('escapes inline scripts and JSON', () => {
    expect(escapeInlineScript('a</SCRIPT>b<!--c')).toBe('a<\\/SCRIPT>b<\\!--c');
    expect(JSON.parse(inlineJson({ s: '</script>\u2028' }))).toEqual({ s: '</script>\u2028' });
    expect(inlineJson({ s: '</script>' })).not.toContain('<');
  });

  it('heatColor runs from red to green', () => {
    expect(heatColor(0)).toMatch(/^hsl\(0,/);
    expect(heatColor(1)).toMatch(/^hsl\(120,/);
  });

  it('writeRunReport takes a store or anything with a store', async () => {
    const store = await createSqliteStore(':memory:', { now: systemClock });
    await plantRun(store, { id: 'train-a', episodes: 16 });
    const { mkdtempSync, readFileSync, rmSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'envharness-write-report-'));
    const a = await writeRunReport(store, undefined, join(dir, 'nested', 'a.html'));
    const b = await writeRunReport({ store }, 'train-a', join(dir, 'b.html'));
    expect(readFileSync(a.path, 'utf8')).toBe(readFileSync(b.path, 'utf8'));
    expect(a.bytes).toBeGreaterThan(200_000);
    rmSync(dir, { recursive: true, force: true });
    await store.close();
  });
});
