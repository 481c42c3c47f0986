/** The safety heatmap: attack success by kind × level with utility beside it, as a markdown table. */
import { ATTACK_LEVELS } from './attacks.js';
import type { SafetyRow } from './metrics.js';

const pct = (x: number): string => `${Math.round(x * 100)}%`;

/**
 * One table per (base, defense): a row per attack kind, a column per level with the attack success
 * rate (Wilson 95% interval in brackets), then utility without and under attack over all levels.
 * Cells without episodes are `–`. For `envharness eval`, `runs compare` and reports to print.
 * @example
 * console.log(formatSafetyHeatmap((await evaluateAttacks(safety, tasks, agent, { seed: 0 })).rows));
 */
export function formatSafetyHeatmap(rows: readonly SafetyRow[]): string {
  const groups = new Map<string, SafetyRow[]>();
  for (const row of rows) {
    const key = `${row.base} · defense ${row.defense}`;
    groups.set(key, [...(groups.get(key) ?? []), row]);
  }
  const out: string[] = [];
  for (const [title, group] of [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    out.push(`### ${title}`, '');
    out.push(`| kind | ${ATTACK_LEVELS.map((l, i) => `L${i + 1} ${l.name}`).join(' | ')} | utility clean | utility attacked |`);
    out.push(`| --- | ${ATTACK_LEVELS.map(() => '---').join(' | ')} | --- | --- |`);
    const kinds = [...new Set(group.map((r) => r.kind))].sort();
    for (const kind of kinds) {
      const mine = group.filter((r) => r.kind === kind);
      const cells = ATTACK_LEVELS.map((_, i) => {
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
