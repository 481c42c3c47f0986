/** The safety layer through the CLI: eval prints and keeps attack success and utility, runs compare and the report show them, train runs on it. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliRunner } from '../../src/cli/testing.js';

const dir = mkdtempSync(join(tmpdir(), 'envharness-safety-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const store = join(dir, 'store.db');

const cli = cliRunner(store);

interface Rate { rate: number; n: number }
interface Row { base: string; kind: string; level: number; outOfBounds: boolean; attackSuccess: Rate; utilityAttacked: Rate; utilityClean: Rate }

describe('safety (over retail) through the CLI', { timeout: 300_000 }, () => {
  it('eval keeps full utility and no attack success for the oracle, and prints the heatmap for the rule-based bot', async () => {
    const oracle = await cli('--json', 'eval', '--domain', 'safety', '--agent', 'oracle', '--limit', '12');
    expect(oracle.code, oracle.err).toBe(0);
    const { runId, summaries } = JSON.parse(oracle.out) as { runId: string; summaries: Array<{ domain: string; data: Row[] }> };
    expect(summaries.map((s) => s.domain)).toEqual(['safety']);
    const safety = summaries[0]!.data;
    expect(runId).toBe('eval-1');
    expect(safety.length).toBeGreaterThan(0);
    expect(safety.reduce((n, r) => n + r.attackSuccess.n, 0)).toBe(12);
    for (const r of safety) {
      expect([r.base, r.attackSuccess.rate, r.utilityAttacked.rate, r.utilityClean.rate], `${r.kind} L${r.level}`).toEqual(['retail', 0, 1, 1]);
      expect(r.utilityClean.n).toBe(r.attackSuccess.n);
    }

    const bot = await cli('eval', '--domain', 'safety', '--agent', 'rule-based', '--limit', '12');
    expect(bot.code, bot.err).toBe(0);
    expect(bot.out).toContain('safety: Safety: attack success by kind × level');
    expect(bot.out).toContain('### retail · defense none');
    expect(bot.out).toMatch(/\| (forbidden-tool|foreign-write|exfiltrate|canary|skip-confirmation|policy-violation|bulk-destructive) \|/);
  });

  it('runs compare merges both runs\' safety rows side by side (A, B, change); the report has the safety section', async () => {
    const text = await cli('runs', 'compare', 'eval-1', 'eval-2');
    expect(text.code, text.err).toBe(0);
    expect(text.out).toContain('safety, A (eval-1) against B (eval-2): Safety: run A against run B, by kind × level × defense');
    expect(text.out).not.toContain('A (eval-1) safety:');
    expect(text.out).toContain('| kind × level | defense | attack success A | attack success B | Δ attack | utility attacked A | utility attacked B | Δ utility |');
    const json = await cli('--json', 'runs', 'compare', 'eval-1', 'eval-2');
    type Stored = { domain: string; summary: { data: Row[] } };
    type Merged = { domain: string; summary: { data: Array<{ kind: string; level: number; a: Row | null; b: Row | null }> } };
    const { summaries } = JSON.parse(json.out) as { summaries: { a: Stored[]; b: Stored[]; merged: Merged[] } };
    expect(summaries.a[0]!.summary.data.every((r) => r.attackSuccess.rate === 0)).toBe(true);
    expect(summaries.b[0]!.summary.data.reduce((n, r) => n + r.attackSuccess.n, 0)).toBe(12);
    // Every (kind, level) of either run is one merged row, with each run's row on its side.
    const merged = summaries.merged.find((m) => m.domain === 'safety')!.summary.data;
    const cells = (rows: Row[]) => rows.map((r) => `${r.kind}/${r.level}`);
    expect(merged.map((m) => `${m.kind}/${m.level}`).sort()).toEqual([...new Set([...cells(summaries.a[0]!.summary.data), ...cells(summaries.b[0]!.summary.data)])].sort());
    for (const m of merged) {
      if (m.a !== null) expect(m.a.attackSuccess.rate).toBe(0);
    }
    expect(merged.reduce((n, m) => n + (m.b?.attackSuccess.n ?? 0), 0)).toBe(12);
    // A row's text: A's 0% beside B's rate and the change in points.
    const both = merged.find((m) => m.a !== null && m.b !== null);
    expect(both, 'a cell both runs have').toBeDefined();
    const points = Math.round(both!.b!.attackSuccess.rate * 100);
    const change = points === 0 ? '0' : `\\+${points} pts`;
    expect(text.out).toMatch(new RegExp(`\\| ${both!.kind} L${both!.level} \\S+ \\| none \\| 0% \\(n ${both!.a!.attackSuccess.n}\\) \\| ${points}% \\(n ${both!.b!.attackSuccess.n}\\) \\| ${change} \\|`));

    const out = join(dir, 'report.html');
    const report = await cli('report', '--run', 'eval-1', '--compare', 'eval-2', '--out', out);
    expect(report.code, report.err).toBe(0);
    const html = readFileSync(out, 'utf8');
    expect(html).toContain('<h2>Safety: attack success by kind × level</h2>');
    expect(html).toContain('class="heatmap summary"');
    expect(html).toContain('utility clean');
    // A run without wrapped domains has no safety section.
    const plain = await cli('eval', '--domain', 'retail', '--agent', 'oracle', '--limit', '2');
    expect(plain.code, plain.err).toBe(0);
    expect(plain.out).not.toContain('Safety:');
    await cli('report', '--run', 'eval-3', '--out', out);
    expect(readFileSync(out, 'utf8')).not.toContain('Safety: attack success');
  });

  it('train runs on safety (one slice per attack and out-of-bounds kind)', async () => {
    const train = await cli('--json', 'train', '--domain', 'safety', '--agent', 'rule-based', '--episodes', '14', '--per-level', '1', '--eval-every', '0', '--no-report');
    expect(train.code, train.err).toBe(0);
    const summary = JSON.parse(train.out) as { episodes: number; slices: Array<{ slice: string }> };
    expect(summary.episodes).toBe(14);
    expect(summary.slices.map((s) => s.slice).sort()).toEqual(
      ['bulk-destructive', 'canary', 'exfiltrate', 'forbidden-tool', 'foreign-write', 'policy-violation', 'skip-confirmation'].map((k) => `safety/${k}`),
    );
  });
});
