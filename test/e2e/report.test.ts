/**
 * The HTML report in a real browser: every chart draws (non-blank canvas, expected legend entries via
 * chart.js's API), no console errors, no network requests; screenshots go to test-output/.
 * Skips with a visible message when no Chromium is installed (.ci/run installs Debian's chromium).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTemplate } from '../../src/core/index.js';
import { chainSum } from '../../src/domains/math/index.js';
import { main } from '../../src/cli/main.js';
import type { Io } from '../../src/cli/output.js';
import { writeRunReport } from '../../src/report/index.js';
import { makeMathRun } from '../../src/report/testing/math-run.js';

function findChromium(): string | undefined {
  if (process.env.CHROMIUM_PATH) return existsSync(process.env.CHROMIUM_PATH) ? process.env.CHROMIUM_PATH : undefined;
  for (const name of ['chromium', 'chromium-browser']) {
    try {
      const path = execFileSync('which', [name], { encoding: 'utf8' }).trim();
      if (path) return path;
    } catch {
      // not on PATH
    }
  }
  return undefined;
}

const executablePath = findChromium();
if (!executablePath) {
  console.warn('SKIPPED: the report browser test needs Chromium (apt-get install -y chromium, or set CHROMIUM_PATH); .ci/run installs it.');
}

const OUTPUT = join(process.cwd(), 'test-output');
const dir = mkdtempSync(join(tmpdir(), 'envharness-report-'));
let single = '';
let compare = '';
let runA = '';
let runB = '';
let context: BrowserContext | undefined;
const profile = mkdtempSync(join(tmpdir(), 'envharness-chromium-'));

beforeAll(async () => {
  // Run A: learnability, with a stretch of forgetting so the regression guard fires (hold, then release).
  const a = await makeMathRun(dir, { strategy: 'learnability', episodes: 600, evalEvery: 50, agent: { dip: { from: 250, to: 330, by: 1.2 } } });
  runA = a.summary.runId;
  single = join(dir, 'report.html');
  await writeRunReport(a.harness, runA, single);
  await a.harness.close();
  // Run B on the same store, with a new template version registered: a different environment version.
  const chainSum2 = defineTemplate({ ...chainSum, version: 2 });
  const b = await makeMathRun(dir, { strategy: 'threshold', episodes: 300, evalEvery: 50, seed: 9, generate: false, templates: [chainSum2], clockDay: 15 });
  runB = b.summary.runId;
  await b.harness.close();
  compare = join(dir, 'compare.html');
  const io: Io = { out: () => {}, err: () => {}, isTTY: false };
  const code = await main(['node', 'envharness', '--store', join(dir, 'math.db'), 'report', '--run', runA, '--compare', runB, '--out', compare], io);
  expect(code).toBe(0);
  if (executablePath) {
    context = await chromium.launchPersistentContext(profile, {
      executablePath,
      headless: true,
      viewport: { width: 1400, height: 900 },
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
    });
  }
}, 120_000);

afterAll(async () => {
  await context?.close();
  rmSync(dir, { recursive: true, force: true });
  rmSync(profile, { recursive: true, force: true });
});

interface ChartInfo {
  id: string;
  type: string;
  legend: string[];
  painted: number;
  total: number;
}

/** Opens a report; returns its charts (from chart.js's API), console errors and requests beyond the file. */
async function open(file: string): Promise<{ page: Page; charts: ChartInfo[]; errors: string[]; requests: string[] }> {
  const page = await context!.newPage();
  const errors: string[] = [];
  const requests: string[] = [];
  const url = pathToFileURL(file).href;
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('request', (r) => {
    if (r.url() !== url) requests.push(r.url());
  });
  await page.goto(url);
  await page.waitForSelector('body[data-charts-ready]', { timeout: 15_000 });
  const charts = await page.evaluate(() => {
    // Runs in the page (the test's tsconfig has no DOM types).
    const w = globalThis as any;
    return [...w.document.querySelectorAll('canvas')].map((canvas: any) => {
      const chart = w.Chart.getChart(canvas);
      const pixels = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
      let painted = 0;
      for (let i = 3; i < pixels.length; i += 4) if (pixels[i]! > 0) painted++;
      return {
        id: canvas.id,
        type: chart ? String(chart.config.type) : 'none',
        legend: chart ? (chart.legend.legendItems as Array<{ text: string }>).map((item) => item.text) : [],
        painted,
        total: canvas.width * canvas.height,
      };
    });
  });
  return { page, charts, errors, requests };
}

describe('the HTML report in headless Chromium', () => {
  it.skipIf(!executablePath)('draws every chart with its legend, no console errors and no network', async () => {
    const { page, charts, errors, requests } = await open(single);
    const byId = Object.fromEntries(charts.map((c) => [c.id, c]));
    expect(Object.keys(byId).sort()).toEqual(['chart-feedback-0', 'chart-generation', 'chart-levels-0', 'chart-regression-0', 'chart-weights-0']);
    for (const chart of charts) {
      expect(chart.type, chart.id).not.toBe('none');
      // A drawn chart paints axes, labels and data: well over 2% of its pixels.
      expect(chart.painted / chart.total, chart.id).toBeGreaterThan(0.02);
    }
    expect(byId['chart-levels-0']!.legend).toEqual(['math/arithmetic', 'math/counting']);
    expect(byId['chart-weights-0']!.legend).toEqual(['math/arithmetic', 'math/counting']);
    expect(byId['chart-regression-0']!.legend).toEqual(['regression set score', 'dynamic set success (recent episodes)', 'regression guard events (2)']);
    expect(byId['chart-feedback-0']!.legend).toEqual(['feedback events']);
    expect(byId['chart-generation']!.legend).toEqual(['accepted', 'rejected: exact_duplicate']);
    // The heatmap is a coloured table: one row per slice, a coloured cell per (slice, level) played.
    const heat = await page.$$eval('table.heatmap td.hm:not(.none)', (cells) => cells.map((c) => (globalThis as any).getComputedStyle(c).backgroundColor as string));
    expect(heat.length).toBeGreaterThanOrEqual(8);
    expect(new Set(heat).size).toBeGreaterThan(2);
    expect(await page.$$eval('table.heatmap tbody tr', (rows) => rows.length)).toBe(2);
    expect(await page.textContent('#passk')).toContain('all slices');
    expect(await page.textContent('#environment')).toContain('math/chain-sum@1');
    expect(errors).toEqual([]);
    expect(requests).toEqual([]);
    mkdirSync(OUTPUT, { recursive: true });
    await page.screenshot({ path: join(OUTPUT, 'report.png'), fullPage: true });
    await page.close();
  });

  it.skipIf(!executablePath)('shows two runs side by side with a loud banner when their environment versions differ', async () => {
    const { page, charts, errors, requests } = await open(compare);
    const ids = charts.map((c) => c.id).sort();
    for (const id of ['chart-levels-0', 'chart-levels-1', 'chart-weights-0', 'chart-weights-1', 'chart-regression-0', 'chart-regression-1', 'chart-generation']) expect(ids).toContain(id);
    for (const chart of charts) expect(chart.painted / chart.total, chart.id).toBeGreaterThan(0.02);
    const banner = await page.$('.banner.danger');
    expect(banner).not.toBeNull();
    expect(await banner!.isVisible()).toBe(true);
    expect(await banner!.textContent()).toContain('Different environment versions');
    expect(await banner!.textContent()).toContain('math/chain-sum@2');
    expect(await page.textContent('.compare-table')).toContain(runB);
    expect(errors).toEqual([]);
    expect(requests).toEqual([]);
    mkdirSync(OUTPUT, { recursive: true });
    await page.screenshot({ path: join(OUTPUT, 'report-compare.png'), fullPage: true });
    await page.close();
  });
});

describe('the report file', () => {
  it('is one self-contained file: chart.js and the data inline, nothing to fetch', () => {
    const html = readFileSync(single, 'utf8');
    expect(html).toContain('Chart.js v4.6.1');
    expect(html).toContain('<script type="application/json" id="report-data">');
    expect(html).toContain("default-src 'none'");
    expect(html).not.toMatch(/\s(src|href)=["']?(https?:)?\/\//i);
    expect(html).not.toMatch(/<link\b/i);
    expect(html.match(/<\/script>/g)).toHaveLength(3);
  });
});
