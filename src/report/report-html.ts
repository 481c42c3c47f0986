/** Renders ReportData as one self-contained HTML file: inline chart.js, inline data, no network. */
import { escapeInlineScript, inlineJson, loadChartJsSource } from './chart-source.js';
import { REPORT_APP_JS } from './report-app.js';
import type { BatchView, HeatmapCell, ReportData, RunReport } from './report-data.js';

export interface RenderOptions {
  /** chart.js UMD source to inline (default: read from the installed chart.js package). */
  chartJs?: string;
  /** Page screenshots of a few episodes (domains that declare `screenshots`), inlined as data: PNGs. */
  screenshots?: readonly EpisodeScreenshots[];
}

/** One episode's screenshots for the report. */
export interface EpisodeScreenshots {
  episodeId: string;
  taskId: string;
  images: ReadonlyArray<{ label: string; png: Uint8Array }>;
}

/**
 * The report as one HTML string. It loads nothing from the network (a Content-Security-Policy says so),
 * so it can be mailed, archived, or opened offline.
 * @example
 * writeFileSync('report.html', renderReportHtml(await buildReport(store)));
 */
export function renderReportHtml(data: ReportData, options: RenderOptions = {}): string {
  const chartJs = options.chartJs ?? loadChartJsSource();
  const runs = data.runs;
  const title = runs.length === 2 ? `EnvHarness report: ${runs[0]!.id} vs ${runs[1]!.id}` : `EnvHarness report: ${runs[0]!.id}`;
  const body = [
    header(data),
    banner(data),
    section('overview', 'Runs', runs.length === 2 ? compareTable(runs[0]!, runs[1]!) : '', perRun(runs, overview)),
    section('environment', 'Environment version', '<p class="note">What the run started from: its snapshot, the template versions (source digests) and the task pool. Runs are comparable only on the same environment version.</p>', perRun(runs, environment, data)),
    section('levels', 'Difficulty: level per slice', '<p class="note">The curriculum\'s level of each slice (domain/task type) after every update.</p>', perRun(runs, (r, i) => chartOrEmpty(r.levels.x.length > 0, `chart-levels-${i}`, 'No curriculum updates in this run (evaluation runs freeze the curriculum).'))),
    section('weights', 'Sampling weights', '<p class="note">Each slice\'s draw probability, stacked; the shares always sum to 100%.</p>', perRun(runs, (r, i) => chartOrEmpty(r.weights.x.length > 0, `chart-weights-${i}`, 'No curriculum updates in this run.'))),
    section('heatmap', 'Success by task type × level', '<p class="note">Mean outcome of the run\'s episodes per slice and level (excluded episodes left out); <i>n</i> is the number of episodes.</p>', perRun(runs, heatmap)),
    section('regression', 'Regression set vs dynamic set', '<p class="note">The frozen regression set\'s score at each evaluation against the dynamic set\'s recent success. Triangles and dashed lines mark regression-guard events (red: hold or rollback, green: release).</p>', perRun(runs, (r, i) => chartOrEmpty(r.regression.evals.length > 0, `chart-regression-${i}`, 'No regression-set evaluations in this run (train with evalEvery / --eval-every).'))),
    section('feedback', 'Feedback by code', '<p class="note">Process feedback events over the run\'s episodes, by code (green: progress, grey: injected faults, amber: budget warnings, red: mistakes).</p>', perRun(runs, (r, i) => chartOrEmpty(r.feedback.length > 0, `chart-feedback-${i}`, 'No feedback events were recorded.', 'chart', 90 + 30 * Math.max(...runs.map((x) => x.feedback.length))))),
    section('passk', 'pass^k', '<p class="note">pass^k as tau-bench computes it: per task, C(c, k) / C(n, k) over its n trials with c successes, averaged over tasks; 95% Wilson interval of pass^1.</p>', perRun(runs, passK)),
    options.screenshots?.length ? section('screenshots', 'Page screenshots', '<p class="note">Spot checks: the first page of an episode and the page after its last action, as real Chromium draws them.</p>', screenshots(options.screenshots)) : '',
    // What the evaluated domains added (Domain.evaluation), one section per title.
    ...[...new Set(runs.flatMap((r) => r.summaries.map((x) => x.summary.title)))].sort().map((title, i) => {
      const note = runs.flatMap((r) => r.summaries).find((x) => x.summary.title === title)!.summary.note;
      return section(`summary-${i + 1}`, title, `<p class="note">${esc(note)}</p>`, perRun(runs, (r) => summaryTables(r, title)));
    }),
    section('generation', 'Generation log', `<p class="note">Every batch in this store: accepted candidates and rejections by gate. ${data.generation.totals.candidates} candidates, ${data.generation.totals.accepted} accepted, ${data.generation.totals.rejected} rejected (${data.generation.totals.duplicates} duplicates).</p>`, generation(data)),
    `<footer>EnvHarness report · format ${esc(data.format)} · store ${esc(data.store)}</footer>`,
  ].join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<title>${esc(title)}</title>
<style>${CSS}</style>
</head>
<body class="${runs.length === 2 ? 'compare' : 'single'}">
${body}
<script>${escapeInlineScript(chartJs)}</script>
<script type="application/json" id="report-data">${inlineJson(data)}</script>
<script>${escapeInlineScript(REPORT_APP_JS)}</script>
</body>
</html>
`;
}

function header(data: ReportData): string {
  const r = data.runs[0]!;
  const sub = data.runs.length === 2
    ? `comparing run <b>${esc(r.id)}</b> with run <b>${esc(data.runs[1]!.id)}</b>`
    : `run <b>${esc(r.id)}</b> · ${esc(r.kind)} · agent ${esc(r.agent.name)}@${esc(r.agent.version)} · strategy ${esc(r.strategy)} · ${r.episodes} episodes · ${esc(r.status)}`;
  return `<header><h1>EnvHarness report</h1><p class="sub">${sub}</p></header>`;
}

function banner(data: ReportData): string {
  const c = data.comparison;
  if (c === null) return '';
  if (!c.sameTemplates) return `<div class="banner danger" role="alert"><b>⚠ Different environment versions.</b> ${esc(c.message)}</div>`;
  if (!c.samePool) return `<div class="banner caution" role="status"><b>Note.</b> ${esc(c.message)}</div>`;
  return `<div class="banner ok" role="status">${esc(c.message)}</div>`;
}

function section(id: string, title: string, intro: string, content: string): string {
  return `<section id="${id}"><h2>${esc(title)}</h2>${intro}${content}</section>`;
}

function perRun<T>(runs: RunReport[], render: (run: RunReport, index: number, extra: T) => string, extra?: T): string {
  const cols = runs.map((run, i) => `<div class="col">${runs.length === 2 ? `<h3>${i === 0 ? 'A' : 'B'}: ${esc(run.id)}</h3>` : ''}${render(run, i, extra as T)}</div>`);
  return `<div class="cols n${runs.length}">${cols.join('')}</div>`;
}

function chartOrEmpty(has: boolean, id: string, empty: string, cls = 'chart', height?: number): string {
  const style = height === undefined ? '' : ` style="height:${Math.round(height)}px"`;
  return has ? `<div class="${cls}"${style}><canvas id="${id}" role="img" aria-label="${esc(id)}"></canvas></div>` : `<p class="empty">${esc(empty)}</p>`;
}

function overview(r: RunReport): string {
  const rows: Array<[string, string]> = [
    ['run', `<code>${esc(r.id)}</code>${r.label ? ` (${esc(r.label)})` : ''}`],
    ['kind · status', `${esc(r.kind)} · ${esc(r.status)}`],
    ['agent', `${esc(r.agent.name)}@${esc(r.agent.version)} <span class="dim">config ${esc(r.agent.configDigest.slice(0, 12))}</span>`],
    ['strategy · seed', `${esc(r.strategy)} · ${r.seed}`],
    ['episodes', `${r.episodes}${r.excluded ? ` (${r.excluded} excluded from statistics)` : ''}`],
    ['success', fmtPct(r.success)],
    ['level moves', String(r.levelMoves)],
    ['regression evaluations', `${r.regression.evals.length}${r.regression.evals.length ? `, last ${fmtPct(r.regression.evals[r.regression.evals.length - 1]!.score)}` : ''}`],
    ['guard events', String(r.regression.guard.length)],
    ['final levels', Object.entries(r.final.levels).map(([s, l]) => `${esc(s)} ${l}`).join(', ') || '—'],
    ['created · updated', `${esc(r.createdAt)} · ${esc(r.updatedAt)}`],
  ];
  return `<table class="kv">${rows.map(([k, v]) => `<tr><th>${esc(k)}</th><td>${v}</td></tr>`).join('')}</table>`;
}

function compareTable(a: RunReport, b: RunReport): string {
  const lastEval = (r: RunReport) => r.regression.evals[r.regression.evals.length - 1]?.score ?? null;
  const overall = (r: RunReport) => r.passK.find((row) => row.slice === '*')?.passK[0] ?? null;
  const rows: Array<[string, number | null, number | null, 'pct' | 'int']> = [
    ['episodes', a.episodes, b.episodes, 'int'],
    ['success (dynamic)', a.success, b.success, 'pct'],
    ['last regression score', lastEval(a), lastEval(b), 'pct'],
    ['pass^1 (all slices)', overall(a), overall(b), 'pct'],
    ['level moves', a.levelMoves, b.levelMoves, 'int'],
    ['guard events', a.regression.guard.length, b.regression.guard.length, 'int'],
  ];
  const fmt = (v: number | null, kind: 'pct' | 'int') => (v === null ? '—' : kind === 'pct' ? fmtPct(v) : String(v));
  const delta = (x: number | null, y: number | null, kind: 'pct' | 'int') => {
    if (x === null || y === null) return '—';
    const d = y - x;
    const text = kind === 'pct' ? `${d >= 0 ? '+' : '−'}${Math.abs(Math.round(d * 1000) / 10)} pts` : `${d >= 0 ? '+' : '−'}${Math.abs(d)}`;
    return `<span class="${d > 0 ? 'up' : d < 0 ? 'down' : ''}">${text}</span>`;
  };
  const slices = [...new Set([...Object.keys(a.final.levels), ...Object.keys(b.final.levels)])].sort();
  const levelRows = slices.map((s) => `<tr><th>final level ${esc(s)}</th><td>${a.final.levels[s] ?? '—'}</td><td>${b.final.levels[s] ?? '—'}</td><td></td></tr>`);
  return `<table class="grid compare-table"><thead><tr><th></th><th>A: ${esc(a.id)}</th><th>B: ${esc(b.id)}</th><th>B − A</th></tr></thead><tbody>${rows
    .map(([label, x, y, kind]) => `<tr><th>${esc(label)}</th><td>${fmt(x, kind)}</td><td>${fmt(y, kind)}</td><td>${delta(x, y, kind)}</td></tr>`)
    .join('')}${levelRows.join('')}</tbody></table>`;
}

function environment(r: RunReport, index: number, data: ReportData | undefined): string {
  const env = r.environment;
  const other = data && data.runs.length === 2 ? data.runs[1 - index]!.environment : undefined;
  const otherDigests = new Map(other?.templates.map((t) => [t.id, t.sourceDigest]) ?? []);
  const head = `<table class="kv">
<tr><th>start snapshot</th><td><code title="${esc(env.snapshotStart)}">${esc(env.snapshotStart.slice(0, 16))}</code>${env.found ? '' : ' <span class="bad">(not in this store)</span>'}</td></tr>
<tr><th>end snapshot</th><td>${env.snapshotEnd ? `<code title="${esc(env.snapshotEnd)}">${esc(env.snapshotEnd.slice(0, 16))}</code>` : '—'}</td></tr>
<tr><th>templates digest</th><td><code title="${esc(env.templatesDigest)}">${esc(env.templatesDigest.slice(0, 16))}</code></td></tr>
<tr><th>pool</th><td>${(['regression', 'dynamic', 'heldout'] as const).map((s) => env.pool[s] ? `${s} ${env.pool[s]!.count} <span class="dim">(${esc(env.pool[s]!.digest.slice(0, 8))})</span>` : '').filter(Boolean).join(' · ') || '—'}</td></tr>
</table>`;
  const rows = env.templates.map((t) => {
    const note = other === undefined ? '' : !otherDigests.has(t.id) ? 'only in this run' : otherDigests.get(t.id) !== t.sourceDigest ? 'source differs' : '';
    return `<tr class="${note ? 'changed' : ''}"><td><code>${esc(t.id)}</code></td><td><code title="${esc(t.sourceDigest)}">${esc(t.sourceDigest.slice(0, 12))}</code>${note ? ` <b class="bad">${note}</b>` : ''}</td></tr>`;
  });
  return `${head}<table class="grid"><thead><tr><th>template</th><th>source digest</th></tr></thead><tbody>${rows.join('') || '<tr><td colspan="2">—</td></tr>'}</tbody></table>`;
}

function heatmap(r: RunReport): string {
  if (r.heatmap.length === 0) return '<p class="empty">No episodes in this run.</p>';
  const slices = [...new Set(r.heatmap.map((c) => c.slice))].sort();
  const levels = [...new Set(r.heatmap.map((c) => c.level))].sort((a, b) => a - b);
  const lo = levels[0]!;
  const hi = levels[levels.length - 1]!;
  const allLevels = Array.from({ length: hi - lo + 1 }, (_, i) => lo + i);
  const cells = new Map(r.heatmap.map((c) => [`${c.slice}\u0000${c.level}`, c]));
  const cell = (c: HeatmapCell | undefined) => {
    if (c === undefined) return '<td class="hm none">—</td>';
    if (c.success === null) return `<td class="hm none" title="${c.episodes} episodes, all excluded">excl.</td>`;
    return `<td class="hm" style="background:${heatColor(c.success)}" title="${c.successes} of ${c.episodes} succeeded"><b>${fmtPct(c.success)}</b><small>n=${c.episodes}</small></td>`;
  };
  const body = slices.map((s) => `<tr><th>${esc(s)}</th>${allLevels.map((l) => cell(cells.get(`${s}\u0000${l}`))).join('')}</tr>`);
  return `<table class="heatmap" data-run="${esc(r.id)}"><thead><tr><th>slice \\ level</th>${allLevels.map((l) => `<th>${l}</th>`).join('')}</tr></thead><tbody>${body.join('')}</tbody></table>
<div class="scale"><span>0%</span><i style="background:linear-gradient(90deg,${[0, 0.25, 0.5, 0.75, 1].map(heatColor).join(',')})"></i><span>100%</span></div>`;
}

/** A run's summary tables of one title; cells with a score are coloured red (0) to green (1). */
function summaryTables(r: RunReport, title: string): string {
  const mine = r.summaries.filter((x) => x.summary.title === title);
  if (mine.length === 0) return '<p class="empty">Not in this run.</p>';
  return mine.flatMap((x) => x.summary.tables.map((t) => {
    const head = `<tr>${t.columns.map((c) => `<th>${esc(c)}</th>`).join('')}</tr>`;
    const body = t.rows.map((row) => `<tr><th>${esc(row.label)}</th>${row.cells.map((c) => (c.score === null ? `<td class="hm none"${c.title ? ` title="${esc(c.title)}"` : ''}>${esc(c.text)}</td>` : `<td class="hm" style="background:${heatColor(c.score)}"${c.title ? ` title="${esc(c.title)}"` : ''}><b>${esc(c.text)}</b></td>`)).join('')}</tr>`);
    return `<h4>${esc(x.domain)} · ${esc(t.title)}</h4><table class="heatmap summary" data-run="${esc(r.id)}"><thead>${head}</thead><tbody>${body.join('')}</tbody></table>`;
  })).join('');
}

/** Red (0) through amber to green (1). */
export function heatColor(success: number): string {
  const s = Math.min(1, Math.max(0, success));
  return `hsl(${Math.round(s * 120)}, 70%, ${Math.round(78 - 10 * Math.abs(s - 0.5))}%)`;
}

function passK(r: RunReport): string {
  if (r.passK.length === 0) return '<p class="empty">No pass^k rows (no counted episodes).</p>';
  const k = Math.max(...r.passK.map((row) => row.passK.length));
  const head = `<tr><th>slice</th><th>tasks</th><th>trials</th>${Array.from({ length: k }, (_, i) => `<th>pass^${i + 1}</th>`).join('')}<th>95% CI (pass^1)</th></tr>`;
  const rows = r.passK.map((row) => `<tr class="${row.slice === '*' ? 'total' : ''}"><td>${row.slice === '*' ? 'all slices' : esc(row.slice)}</td><td>${row.tasks}</td><td>${row.trials}</td>${Array.from({ length: k }, (_, i) => `<td>${row.passK[i] === undefined ? '—' : fmtPct(row.passK[i]!, 1)}</td>`).join('')}<td>${row.low === null || row.high === null ? '—' : `${fmtPct(row.low, 1)} – ${fmtPct(row.high, 1)}`}</td></tr>`);
  return `<table class="grid num"><thead>${head}</thead><tbody>${rows.join('')}</tbody></table>`;
}

function generation(data: ReportData): string {
  const g = data.generation;
  if (g.batches.length === 0) return '<p class="empty">No batches in this store.</p>';
  const batchRow = (b: BatchView) => `<tr><td><code title="${esc(b.id)}">${esc(b.id.slice(0, 12))}</code></td><td>${esc(b.split)}</td><td>${b.seed}</td><td>${b.templates.map(esc).join('<br>')}</td><td>${b.levels.join(', ')}</td><td>${b.requested}</td><td>${b.accepted}</td><td>${b.rejected} <span class="dim">(${fmtPct(b.requested ? b.rejected / b.requested : 0)})</span></td><td>${b.duplicates}</td><td>${Object.entries(b.byGate).map(([gate, n]) => `${esc(gate)} ${n}`).join(', ') || '—'}</td><td>${b.gatesOff.length ? `<span class="bad">${b.gatesOff.map(esc).join(', ')}</span>` : '—'}</td></tr>`;
  const reasons = g.reasons.length
    ? `<table class="grid"><thead><tr><th>gate</th><th>reason (ids and numbers folded)</th><th>count</th></tr></thead><tbody>${g.reasons.map((r) => `<tr><td>${esc(r.gate)}</td><td>${esc(r.reason)}</td><td>${r.count}</td></tr>`).join('')}</tbody></table>`
    : '<p class="empty">No candidate was rejected.</p>';
  return `<div class="chart"><canvas id="chart-generation" role="img" aria-label="generation log"></canvas></div>
<h3>Batches</h3><div class="scroll"><table class="grid"><thead><tr><th>batch</th><th>split</th><th>seed</th><th>templates</th><th>levels</th><th>candidates</th><th>accepted</th><th>rejected</th><th>duplicates</th><th>rejections by gate</th><th>gates off</th></tr></thead><tbody>${g.batches.map(batchRow).join('')}</tbody></table></div>
<h3>Rejection reasons</h3>${reasons}`;
}

function screenshots(episodes: readonly EpisodeScreenshots[]): string {
  return episodes
    .map((e) => `<h3>episode <code>${esc(e.episodeId)}</code> · task <code>${esc(e.taskId)}</code></h3><div class="shots">${e.images
      .map((i) => `<figure><img alt="${esc(i.label)}" src="data:image/png;base64,${Buffer.from(i.png).toString('base64')}"><figcaption>${esc(i.label)}</figcaption></figure>`)
      .join('')}</div>`)
    .join('');
}

function fmtPct(value: number | null, decimals = 0): string {
  if (value === null) return '—';
  const f = 10 ** decimals;
  return `${Math.round(value * 100 * f) / f}%`;
}

/** Escapes text for HTML element content and attribute values. */
export function esc(text: string | number): string {
  return String(text).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

const CSS = `
:root { --fg:#0f172a; --dim:#64748b; --line:#e2e8f0; --card:#fff; --bg:#f8fafc; }
* { box-sizing: border-box; }
body { margin: 0; padding: 24px 32px 48px; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
header h1 { margin: 0 0 4px; font-size: 24px; }
.sub { margin: 0 0 16px; color: var(--dim); }
section { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 16px 20px; margin: 16px 0; }
h2 { margin: 0 0 8px; font-size: 18px; }
h3 { margin: 12px 0 6px; font-size: 14px; }
.note { margin: 0 0 12px; color: var(--dim); }
.cols { display: grid; gap: 20px; }
.cols.n2 { grid-template-columns: 1fr 1fr; }
.col { min-width: 0; }
.chart { position: relative; height: 300px; }
.empty { color: var(--dim); font-style: italic; padding: 12px 0; }
table { border-collapse: collapse; }
.kv th { text-align: left; font-weight: 500; color: var(--dim); padding: 2px 16px 2px 0; vertical-align: top; white-space: nowrap; }
.kv td { padding: 2px 0; }
.grid { width: 100%; margin: 4px 0 8px; }
.grid th, .grid td { border-bottom: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
.grid thead th { background: #f1f5f9; font-weight: 600; }
.grid.num td:not(:first-child), .grid.num th:not(:first-child) { text-align: right; font-variant-numeric: tabular-nums; }
.grid tr.total td { font-weight: 600; border-top: 2px solid var(--line); }
.grid tr.changed td { background: #fef2f2; }
.heatmap { margin: 4px 0; }
.heatmap th { padding: 4px 10px; font-weight: 600; text-align: left; }
.heatmap thead th { text-align: center; }
.heatmap td.hm { width: 84px; height: 46px; text-align: center; border: 2px solid #fff; border-radius: 4px; }
.heatmap td.hm b { display: block; font-size: 14px; }
.heatmap td.hm small { color: #334155; font-size: 11px; }
.heatmap td.none { background: #f1f5f9; color: var(--dim); }
.scale { display: flex; align-items: center; gap: 8px; color: var(--dim); font-size: 12px; margin-top: 6px; }
.scale i { display: inline-block; width: 160px; height: 10px; border-radius: 5px; }
.banner { padding: 14px 18px; border-radius: 10px; margin: 12px 0; font-size: 15px; }
.banner.danger { background: #dc2626; color: #fff; border: 3px solid #7f1d1d; font-size: 16px; }
.banner.caution { background: #fef3c7; border: 1px solid #d97706; }
.banner.ok { background: #ecfdf5; border: 1px solid #16a34a; }
.bad { color: #b91c1c; }
.dim { color: var(--dim); }
.up { color: #15803d; } .down { color: #b91c1c; }
.scroll { overflow-x: auto; }
code { font: 12px ui-monospace, SFMono-Regular, Menlo, monospace; }
.shots { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; }
.shots figure { margin: 0; } .shots img { width: 100%; border: 1px solid var(--line); border-radius: 6px; }
footer { color: var(--dim); font-size: 12px; margin-top: 24px; }
`;
