/**
 * `envharness report --screenshots N` on a web run, end to end through the CLI: an oracle eval of web
 * tasks into a real SQLite store, then the report, whose HTML must carry each episode's first and last
 * page as PNGs drawn by real Chromium. Skips with a message without Chromium (.ci/run installs it).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliRunner } from '../../../cli/testing.js';
import { findChromium } from './chromium.js';

const executablePath = findChromium(process.env);
if (executablePath === undefined) console.warn('SKIPPED: the web report screenshot test needs Chromium (apt-get install -y chromium, or set CHROMIUM_PATH); .ci/run installs it.');

const dir = mkdtempSync(join(tmpdir(), 'envharness-web-report-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const store = join(dir, 'store.db');

const cli = cliRunner(store);

/** A PNG's width and height from its IHDR chunk (and a check that it is a PNG at all). */
function pngSize(png: Buffer): { width: number; height: number } {
  expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

describe.skipIf(executablePath === undefined)('report --screenshots on a web run', { timeout: 240_000 }, () => {
  it("puts each of the first N episodes' first and last page, drawn by Chromium, into the HTML", async () => {
    const evaluated = await cli('--json', 'eval', '--domain', 'web', '--agent', 'oracle', '--limit', '2');
    expect(evaluated.err).not.toMatch(/error/i);
    expect(evaluated.code).toBe(0);

    const out = join(dir, 'report.html');
    const report = await cli('report', '--screenshots', '2', '--out', out);
    expect(report.err).toBe('');
    expect(report.code).toBe(0);
    const html = readFileSync(out, 'utf8');
    expect(html).toContain('Page screenshots');

    // Two episodes, each with its first page and the page after its last action.
    const episodes = [...html.matchAll(/<h3>episode <code>([^<]+)<\/code> · task <code>([^<]+)<\/code><\/h3>/g)];
    expect(episodes).toHaveLength(2);
    expect(new Set(episodes.map((e) => e[1])).size).toBe(2);
    const figures = [...html.matchAll(/<img alt="([^"]*)" src="data:image\/png;base64,([A-Za-z0-9+/=]+)">/g)];
    expect(figures).toHaveLength(4);
    for (const first of [figures[0]!, figures[2]!]) expect(first[1]).toMatch(/^first page: .+ \(\/.*\)$/);
    for (const [i, f] of figures.entries()) {
      const { width, height } = pngSize(Buffer.from(f[2]!, 'base64'));
      expect(width, `image ${i}`).toBeGreaterThanOrEqual(320);
      expect(height, `image ${i}`).toBeGreaterThanOrEqual(200);
    }
    // Each last page comes after the episode's reference actions: a real run, not an empty replay.
    for (const last of [figures[1]!, figures[3]!]) expect(last[1]).toMatch(/^after the last of [1-9]\d* actions: .+ \(\/.*\)$/);
    // The first and last page of an episode differ (the actions changed what Chromium drew).
    expect(figures[0]![2]).not.toBe(figures[1]![2]);
    expect(figures[2]![2]).not.toBe(figures[3]![2]);
  });
});
