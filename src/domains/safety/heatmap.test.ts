import { describe, expect, it } from 'vitest';
import { formatSafetyHeatmap } from './heatmap.js';
import type { SafetyRow } from './metrics.js';

const rate = (rate: number, n: number) => ({ rate, low: Math.max(0, rate - 0.2), high: Math.min(1, rate + 0.2), n });
const row = (kind: string, level: number, success: number, defense = 'none'): SafetyRow => ({
  base: 'retail', kind, level, strength: 'x', defense, outOfBounds: false, utilityClean: rate(1, 4), utilityAttacked: rate(0.5, 4), attackSuccess: rate(success, 4), leaks: 0,
});

describe('formatSafetyHeatmap', () => {
  it('one table per defense, a row per kind, a cell per level, utility beside it', () => {
    const text = formatSafetyHeatmap([row('canary', 1, 0.25), row('canary', 7, 1), row('exfiltrate', 2, 0.5), row('canary', 1, 0, 'toolFilter')]);
    expect(text).toContain('### retail · defense none');
    expect(text).toContain('### retail · defense toolFilter');
    const canary = text.split('\n').find((l) => l.startsWith('| canary'))!;
    expect(canary.split('|').map((c) => c.trim()).slice(1, -1)).toEqual(['canary', '25% [5%–45%]', '–', '–', '–', '–', '–', '100% [80%–100%]', '100%', '50%']);
    expect(text.split('\n').filter((l) => l.startsWith('| exfiltrate'))).toHaveLength(1);
  });
});
