import { describe, expect, it } from 'vitest';
import { compareSafetySummaries } from './comparison.js';
import { safetySummary } from './heatmap.js';
import type { SafetyRow } from './metrics.js';

const rate = (rate: number, n: number) => ({ rate, low: Math.max(0, rate - 0.2), high: Math.min(1, rate + 0.2), n });
const row = (kind: string, level: number, success: number, utility: number, defense = 'none', outOfBounds = false): SafetyRow => ({
  base: 'retail', kind, level, strength: `s${level}`, defense, outOfBounds, utilityClean: rate(1, 4), utilityAttacked: rate(utility, 4), attackSuccess: rate(success, 4), leaks: 0,
});

describe('compareSafetySummaries (runs compare)', () => {
  it('one row per kind × level × defense in either run: A, B and B − A for attack success and utility under attack', () => {
    const a = safetySummary([row('canary', 1, 0.25, 1), row('canary', 7, 1, 0.5), row('exfiltrate', 2, 0.5, 1), row('policy-violation', 1, 0.75, 1, 'none', true)]);
    const b = safetySummary([row('canary', 1, 0.75, 0.75), row('canary', 7, 1, 0.5), row('canary', 1, 0, 1, 'toolFilter'), row('policy-violation', 1, 0.25, 1, 'none', true)]);
    const merged = compareSafetySummaries(a, b)!;
    expect(merged.tables.map((t) => t.title)).toEqual(['retail', 'retail · out of bounds (no attacker)']);
    const attacks = merged.tables[0]!;
    const text = (label: string, defense: string) => attacks.rows.find((r) => r.label === label && r.cells[0]!.text === defense)!.cells.map((c) => c.text);
    expect(attacks.rows.map((r) => `${r.label}/${r.cells[0]!.text}`)).toEqual(['canary L1 s1/none', 'canary L1 s1/toolFilter', 'canary L7 s7/none', 'exfiltrate L2 s2/none']);
    expect(text('canary L1 s1', 'none')).toEqual(['none', '25% (n 4)', '75% (n 4)', '+50 pts', '100% (n 4)', '75% (n 4)', '−25 pts']);
    expect(text('canary L7 s7', 'none').slice(1)).toEqual(['100% (n 4)', '100% (n 4)', '0', '50% (n 4)', '50% (n 4)', '0']);
    // A row one run lacks: – on that side and in the change.
    expect(text('canary L1 s1', 'toolFilter').slice(1)).toEqual(['–', '0% (n 4)', '–', '–', '100% (n 4)', '–']);
    expect(text('exfiltrate L2 s2', 'none').slice(1)).toEqual(['50% (n 4)', '–', '–', '100% (n 4)', '–', '–']);
    expect(merged.tables[1]!.rows[0]!.cells.map((c) => c.text).slice(1, 4)).toEqual(['75% (n 4)', '25% (n 4)', '−50 pts']);
    // Attack success is red where high; utility green where high.
    expect(attacks.rows[0]!.cells[2]!.score).toBe(0.25);
    expect(attacks.rows[0]!.cells[4]!.score).toBe(1);
    expect(merged.data).toHaveLength(5);
  });

  it("answers undefined for a summary that is not the safety layer's", () => {
    const a = safetySummary([row('canary', 1, 0.25, 1)]);
    expect(compareSafetySummaries(a, { ...a, data: [{ score: 1 }] })).toBeUndefined();
    expect(compareSafetySummaries({ ...a, data: 'x' }, a)).toBeUndefined();
  });
});
