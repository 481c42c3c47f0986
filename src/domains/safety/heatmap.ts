/** The safety heatmap: attack success by kind × level with utility beside it, as a markdown table. */
import { ATTACK_LEVELS } from './attacks.js';
import type { SafetyRow } from './metrics.js';
import { OUT_OF_BOUNDS_LEVELS } from './out-of-bounds.js';

const pct = (x: number): string => `${Math.round(x * 100)}%`;

/**
 * One table per (base, defense): a row per attack kind, a column per level with the attack success
 * rate (Wilson 95% interval in brackets), then utility without and under attack over all levels.
 * Out-of-bounds kinds (no attacker; their levels are how hard the user pushes) get a table of their own.
 * Cells without episodes are `–`. For `envharness eval`, `runs compare` and reports to print.
 * @example
 * console.log(formatSafetyHeatmap((await evaluateAttacks(safety, tasks, agent, { seed: 0 })).rows));
 */
export function formatSafetyHeatmap(rows: readonly SafetyRow[]): string {
  const groups = new Map<string, SafetyRow[]>();
  for (const row of rows) {
    const key = `${row.base} · defense ${row.defense}${row.outOfBounds ? ' · out of bounds (no attacker)' : ''}`;
    groups.set(key, [...(groups.get(key) ?? []), row]);
  }
  const out: string[] = [];
  for (const [title, group] of [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const levels: ReadonlyArray<{ name: string }> = group[0]!.outOfBounds ? OUT_OF_BOUNDS_LEVELS : ATTACK_LEVELS;
    out.push(`### ${title}`, '');
    out.push(`| kind | ${levels.map((l, i) => `L${i + 1} ${l.name}`).join(' | ')} | utility clean | utility attacked |`);
    out.push(`| --- | ${levels.map(() => '---').join(' | ')} | --- | --- |`);
    const kinds = [...new Set(group.map((r) => r.kind))].sort();
    for (const kind of kinds) {
      const mine = group.filter((r) => r.kind === kind);
      const cells = levels.map((_, i) => {
        const r = mine.find((m) => m.level === i + 1);
        return r === undefined || r.attackSuccess.n === 0 ? '–' : `${pct(r.attackSuccess.rate)} [${pct(r.attackSuccess.low)}–${pct(r.attackSuccess.high)}]`;
      });
      const mean = (pick: (r: SafetyRow) => { rate: number; n: number }): string => {
        const n = mine.reduce((s, r) => s + pick(r).n, 0);
        return n === 0 ? '–' : pct(mine.reduce((s, r) => s + pick(r).rate * pick(r).n, 0) / n);
      };
      out.push(`| ${kind} | ${cells.join(' | ')} | ${mean((r) => r.utilityClean)} | ${mean((r) => r.utilityAttacked)} |`);
    }
    out.push('');
  }
  return out.join('\n');
}

/**
 * Two runs' safety rows side by side, one line per (base, defense, kind, level) either run has: attack
 * success and utility under attack of each (`–` where a run has no such cell). For `runs compare`.
 */
export function compareSafetyRows(a: readonly SafetyRow[], b: readonly SafetyRow[]): Array<Record<string, string>> {
  const key = (r: SafetyRow): string => [r.base, r.defense, r.kind, String(r.level).padStart(3, '0')].join('\u0000');
  const byA = new Map(a.map((r) => [key(r), r]));
  const byB = new Map(b.map((r) => [key(r), r]));
  const cell = (r: SafetyRow | undefined, pick: (r: SafetyRow) => { rate: number; n: number }): string => (r === undefined || pick(r).n === 0 ? '–' : `${pct(pick(r).rate)} (n ${pick(r).n})`);
  return [...new Set([...byA.keys(), ...byB.keys()])].sort().map((k) => {
    const ra = byA.get(k);
    const rb = byB.get(k);
    const any = (ra ?? rb)!;
    return {
      base: any.base,
      defense: any.defense,
      kind: any.kind,
      level: `L${any.level} ${any.strength}`,
      'attack success A': cell(ra, (r) => r.attackSuccess),
      'attack success B': cell(rb, (r) => r.attackSuccess),
      'utility attacked A': cell(ra, (r) => r.utilityAttacked),
      'utility attacked B': cell(rb, (r) => r.utilityAttacked),
      'utility clean A': cell(ra, (r) => r.utilityClean),
      'utility clean B': cell(rb, (r) => r.utilityClean),
    };
  });
}
