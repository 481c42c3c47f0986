/** The safety heatmap: attack success by kind × level with utility beside it, as a markdown table. */
import { ATTACK_LEVELS } from './attacks.js';
import type { EvaluationSummary, JsonValue, SummaryTable } from '../../core/index.js';
import type { SafetyRow } from './metrics.js';
import { OUT_OF_BOUNDS_LEVELS } from './out-of-bounds.js';

/** A rate as a whole percentage. */
export const pct = (x: number): string => `${Math.round(x * 100)}%`;

/**
 * One table per (base, defense): a row per attack kind, a column per level with the attack success
 * rate (Wilson 95% interval in brackets), then utility without and under attack over all levels.
 * Out-of-bounds kinds (no attacker; their levels are how hard the user pushes) get a table of their own.
 * Cells without episodes are `–`. For `envharness eval`, `runs compare` and reports to print.
 * @example
 * console.log(formatSafetyHeatmap((await evaluateAttacks(safety, tasks, agent, { seed: 0, runner: episodeRunner })).rows));
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
 * The rows as an evaluation summary (`Domain.evaluation`): the same tables as `formatSafetyHeatmap`,
 * with each attack-success cell scored 1 − rate (red where attacks succeed) for the report's heatmap.
 */
export function safetySummary(rows: readonly SafetyRow[]): EvaluationSummary {
  const groups = new Map<string, SafetyRow[]>();
  for (const row of rows) {
    const key = `${row.base} · defense ${row.defense}${row.outOfBounds ? ' · out of bounds (no attacker)' : ''}`;
    groups.set(key, [...(groups.get(key) ?? []), row]);
  }
  const tables: SummaryTable[] = [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([title, group]) => {
    const levels: ReadonlyArray<{ name: string }> = group[0]!.outOfBounds ? OUT_OF_BOUNDS_LEVELS : ATTACK_LEVELS;
    const kinds = [...new Set(group.map((r) => r.kind))].sort();
    return {
      title,
      columns: ['kind', ...levels.map((l, i) => `L${i + 1} ${l.name}`), 'utility clean', 'utility attacked'],
      rows: kinds.map((kind) => {
        const mine = group.filter((r) => r.kind === kind);
        const cells = levels.map((_, i) => {
          const r = mine.find((m) => m.level === i + 1);
          if (r === undefined || r.attackSuccess.n === 0) return { text: '–', score: null };
          return { text: `${pct(r.attackSuccess.rate)} (n ${r.attackSuccess.n})`, score: 1 - r.attackSuccess.rate, title: `95% CI ${pct(r.attackSuccess.low)}–${pct(r.attackSuccess.high)}; utility under attack ${pct(r.utilityAttacked.rate)}${r.leaks > 0 ? `; ${r.leaks} leaks` : ''}` };
        });
        const pooled = (pick: (r: SafetyRow) => { rate: number; n: number }) => {
          const n = mine.reduce((s, r) => s + pick(r).n, 0);
          const value = n === 0 ? null : mine.reduce((s, r) => s + pick(r).rate * pick(r).n, 0) / n;
          return { text: value === null ? '–' : pct(value), score: value };
        };
        return { label: kind, cells: [...cells, pooled((r) => r.utilityClean), pooled((r) => r.utilityAttacked)] };
      }),
    };
  });
  return {
    title: 'Safety: attack success by kind × level',
    note: "Per attack kind (or out-of-bounds request, no attacker) and strength level: the share of episodes where the attacker's goal (or the out-of-bounds action) was reached, with n; utility (the user's goal) without the attack and under it beside it. The 95% Wilson interval is in each cell's detail.",
    tables,
    data: rows as unknown as JsonValue,
  };
}
