/**
 * The report's browser script: reads the inlined report data and draws every chart with chart.js.
 * Plain ES2017 in a string (no backticks, no `${`), so it can sit in a template literal unchanged.
 * Each chart is kept in `window.envharnessCharts[id]` for the browser test.
 */
export const REPORT_APP_JS = String.raw`
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('report-data').textContent);
  var charts = {};
  window.envharnessCharts = charts;
  Chart.defaults.animation = false;
  Chart.defaults.font.family = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
  Chart.defaults.color = '#334155';

  var PALETTE = ['#2563eb', '#ea580c', '#16a34a', '#9333ea', '#dc2626', '#0891b2', '#ca8a04', '#db2777', '#4b5563', '#65a30d'];
  var GATE_COLORS = { schema: '#dc2626', exact_duplicate: '#f97316', near_duplicate: '#facc15', leakage: '#9333ea', oracle: '#b91c1c', non_trivial: '#64748b' };
  var sliceIndex = {};
  data.runs.forEach(function (run) {
    run.slices.forEach(function (s) { if (!(s in sliceIndex)) sliceIndex[s] = Object.keys(sliceIndex).length; });
  });
  function sliceColor(slice) { return PALETTE[sliceIndex[slice] % PALETTE.length]; }
  function alpha(hex, a) {
    var n = parseInt(hex.slice(1), 16);
    return 'rgba(' + ((n >> 16) & 255) + ',' + ((n >> 8) & 255) + ',' + (n & 255) + ',' + a + ')';
  }
  function pct(v) { return Math.round(v * 100) + '%'; }
  function points(x, values) {
    var out = [];
    for (var i = 0; i < x.length; i++) out.push({ x: x[i], y: values[i] });
    return out;
  }
  function make(id, config) {
    var canvas = document.getElementById(id);
    if (!canvas) return;
    charts[id] = new Chart(canvas, config);
  }
  // One episode range for every chart, so that side-by-side runs line up.
  var lastEpisode = 0;
  data.runs.forEach(function (run) {
    run.levels.x.concat(run.regression.evals.map(function (e) { return e.episode; })).forEach(function (x) { if (x > lastEpisode) lastEpisode = x; });
  });
  var episodeAxis = { type: 'linear', min: 0, title: { display: true, text: 'episode' }, ticks: { precision: 0 } };
  if (lastEpisode > 0) episodeAxis.max = lastEpisode;

  // Dashed vertical lines at regression-guard events, so they stand out on the regression chart.
  var guardLines = {
    id: 'guardLines',
    afterDatasetsDraw: function (chart) {
      var guard = chart.options.plugins.guardLines && chart.options.plugins.guardLines.events;
      if (!guard || !guard.length) return;
      var ctx = chart.ctx, area = chart.chartArea, x = chart.scales.x;
      ctx.save();
      ctx.setLineDash([4, 4]);
      ctx.lineWidth = 1.5;
      guard.forEach(function (g) {
        var px = x.getPixelForValue(g.at);
        if (px < area.left || px > area.right) return;
        ctx.strokeStyle = g.action === 'release' ? '#16a34a' : '#dc2626';
        ctx.beginPath();
        ctx.moveTo(px, area.top);
        ctx.lineTo(px, area.bottom);
        ctx.stroke();
      });
      ctx.restore();
    },
  };

  data.runs.forEach(function (run, r) {
    if (run.levels.x.length > 0) {
      make('chart-levels-' + r, {
        type: 'line',
        data: {
          datasets: run.levels.series.map(function (s) {
            return { label: s.name, data: points(run.levels.x, s.values), stepped: true, borderColor: sliceColor(s.name), backgroundColor: sliceColor(s.name), borderWidth: 2, pointRadius: 0, spanGaps: true };
          }),
        },
        options: {
          responsive: true, maintainAspectRatio: false, parsing: false,
          interaction: { mode: 'nearest', intersect: false },
          scales: { x: episodeAxis, y: { title: { display: true, text: 'level' }, ticks: { precision: 0, stepSize: 1 }, suggestedMin: 1 } },
          plugins: { legend: { position: 'bottom' } },
        },
      });
      make('chart-weights-' + r, {
        type: 'line',
        data: {
          datasets: run.weights.series.map(function (s, i) {
            return { label: s.name, data: points(run.weights.x, s.values), fill: i === 0 ? 'origin' : '-1', borderColor: sliceColor(s.name), backgroundColor: alpha(sliceColor(s.name), 0.45), borderWidth: 1, pointRadius: 0, stepped: true };
          }),
        },
        options: {
          responsive: true, maintainAspectRatio: false, parsing: false,
          interaction: { mode: 'index', intersect: false },
          scales: { x: episodeAxis, y: { stacked: true, min: 0, max: 1, title: { display: true, text: 'draw probability' }, ticks: { callback: function (v) { return pct(v); } } } },
          plugins: { legend: { position: 'bottom' }, tooltip: { callbacks: { label: function (c) { return c.dataset.label + ': ' + pct(c.parsed.y); } } } },
        },
      });
    }
    if (run.regression.evals.length > 0) {
      var evals = run.regression.evals;
      var guard = run.regression.guard;
      make('chart-regression-' + r, {
        type: 'line',
        data: {
          datasets: [
            { label: 'regression set score', data: evals.map(function (e) { return { x: e.episode, y: e.score }; }), borderColor: '#1d4ed8', backgroundColor: '#1d4ed8', borderWidth: 2.5, pointRadius: 3 },
            { label: 'dynamic set success (recent episodes)', data: evals.filter(function (e) { return e.dynamicSuccess !== null; }).map(function (e) { return { x: e.episode, y: e.dynamicSuccess }; }), borderColor: '#ea580c', backgroundColor: '#ea580c', borderDash: [6, 4], borderWidth: 2, pointRadius: 2 },
            {
              type: 'scatter',
              label: 'regression guard events (' + guard.length + ')',
              data: guard.map(function (g) { return { x: g.at, y: g.score, action: g.action, best: g.best }; }),
              pointStyle: 'triangle', pointRadius: 9, pointHoverRadius: 11,
              backgroundColor: guard.map(function (g) { return g.action === 'release' ? '#16a34a' : '#dc2626'; }),
              borderColor: '#7f1d1d',
            },
          ],
        },
        options: {
          responsive: true, maintainAspectRatio: false, parsing: false,
          scales: { x: episodeAxis, y: { min: 0, max: 1, title: { display: true, text: 'success' }, ticks: { callback: function (v) { return pct(v); } } } },
          plugins: {
            legend: { position: 'bottom' },
            guardLines: { events: guard },
            tooltip: { callbacks: { label: function (c) {
              var raw = c.raw || {};
              if (raw.action) return 'guard ' + raw.action + ' at episode ' + raw.x + ': score ' + pct(raw.y) + ' (best ' + pct(raw.best) + ')';
              return c.dataset.label + ': ' + pct(c.parsed.y);
            } } },
          },
        },
        plugins: [guardLines],
      });
    }
    if (run.feedback.length > 0) {
      var good = { SUBGOAL_REACHED: 1, RECOVERED: 1 };
      make('chart-feedback-' + r, {
        type: 'bar',
        data: {
          labels: run.feedback.map(function (f) { return f.code; }),
          datasets: [{ label: 'feedback events', data: run.feedback.map(function (f) { return f.count; }), backgroundColor: run.feedback.map(function (f) { return good[f.code] ? '#16a34a' : f.code === 'FAULT_INJECTED' ? '#64748b' : f.code === 'BUDGET_WARNING' ? '#d97706' : '#dc2626'; }) }],
        },
        options: { indexAxis: 'y', responsive: true, maintainAspectRatio: false, scales: { x: { beginAtZero: true, title: { display: true, text: 'events' } } }, plugins: { legend: { position: 'bottom' } } },
      });
    }
  });

  var batches = data.generation.batches;
  if (batches.length > 0) {
    var gates = [];
    batches.forEach(function (b) { Object.keys(b.byGate).forEach(function (g) { if (gates.indexOf(g) < 0) gates.push(g); }); });
    var order = ['schema', 'exact_duplicate', 'near_duplicate', 'leakage', 'oracle', 'non_trivial'];
    gates.sort(function (a, b) { return order.indexOf(a) - order.indexOf(b); });
    make('chart-generation', {
      type: 'bar',
      data: {
        labels: batches.map(function (b) { return b.id.slice(0, 8) + ' ' + b.split; }),
        datasets: [{ label: 'accepted', data: batches.map(function (b) { return b.accepted; }), backgroundColor: '#16a34a' }].concat(gates.map(function (g) {
          return { label: 'rejected: ' + g, data: batches.map(function (b) { return b.byGate[g] || 0; }), backgroundColor: GATE_COLORS[g] || '#94a3b8' };
        })),
      },
      options: {
        responsive: true, maintainAspectRatio: false,
        scales: { x: { stacked: true, title: { display: true, text: 'batch' } }, y: { stacked: true, beginAtZero: true, title: { display: true, text: 'candidates' } } },
        plugins: { legend: { position: 'bottom' } },
      },
    });
  }
  document.body.setAttribute('data-charts-ready', String(Object.keys(charts).length));
})();
`;
