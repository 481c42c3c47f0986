/** Two runs' safety tables merged (`runs compare`): attack success and utility of A and B, and the change, per kind × level × defense. */
import type { EvaluationSummary, JsonValue, SummaryCell, SummaryTable } from '../../core/index.js';
import { pct } from './heatmap.js';
import type { Rate, SafetyRow } from './metrics.js';

/** The summary's rows, or undefined when its data is not `SafetyRow`s (a summary of another shape). */
function rowsOf(summary: EvaluationSummary): SafetyRow[] | undefined {
  const data = summary.data;
  if (!Array.isArray(data)) return undefined;
  const isRate = (v: unknown): boolean => typeof v === 'object' && v !== null && typeof (v as Rate).rate === 'number' && typeof (v as Rate).n === 'number';
  const ok = data.every((r) => {
    const row = r as unknown as Partial<SafetyRow> | null;
    return row !== null && typeof row.base === 'string' && typeof row.kind === 'string' && typeof row.level === 'number' && typeof row.defense === 'string' && isRate(row.attackSuccess) && isRate(row.utilityAttacked);
  });
  return ok ? (data as unknown as SafetyRow[]) : undefined;
}

const keyOf = (r: SafetyRow): string => [r.base, r.outOfBounds ? 1 : 0, r.kind, String(r.level).padStart(3, '0'), r.defense].join('\u0000');

/** A rate's cell: `text (n N)`, scored for the heatmap (`higherIsBetter` false: red where it is high). */
function rateCell(r: Rate | undefined, higherIsBetter: boolean): SummaryCell {
  if (r === undefined || r.n === 0) return { text: '–', score: null };
  return { text: `${pct(r.rate)} (n ${r.n})`, score: higherIsBetter ? r.rate : 1 - r.rate, title: `95% CI ${pct(r.low)}–${pct(r.high)}` };
}

/** B − A in percentage points, signed; `–` when either side has no episodes. */
function deltaCell(a: Rate | undefined, b: Rate | undefined): SummaryCell {
  if (a === undefined || b === undefined || a.n === 0 || b.n === 0) return { text: '–', score: null };
  const points = Math.round((b.rate - a.rate) * 100);
  return { text: points === 0 ? '0' : `${points > 0 ? '+' : '−'}${Math.abs(points)} pts`, score: null };
}

/**
 * Runs A and B merged: one table per base domain (out-of-bounds kinds apart), a row per
 * (kind, level, defense) present in either run, with attack success in A, in B and B − A, then
 * utility under attack the same way. Undefined when either summary is not the safety layer's.
 * @example
 * const merged = compareSafetySummaries(summaryOfRunA, summaryOfRunB);
 */
export function compareSafetySummaries(a: EvaluationSummary, b: EvaluationSummary): EvaluationSummary | undefined {
  const rowsA = rowsOf(a);
  const rowsB = rowsOf(b);
  if (rowsA === undefined || rowsB === undefined) return undefined;
  const byKeyA = new Map(rowsA.map((r) => [keyOf(r), r]));
  const byKeyB = new Map(rowsB.map((r) => [keyOf(r), r]));
  const keys = [...new Set([...byKeyA.keys(), ...byKeyB.keys()])].sort();
  const tables = new Map<string, SummaryTable>();
  const merged: JsonValue[] = [];
  for (const key of keys) {
    const ra = byKeyA.get(key);
    const rb = byKeyB.get(key);
    const any = (ra ?? rb)!;
    const title = `${any.base}${any.outOfBounds ? ' · out of bounds (no attacker)' : ''}`;
    let table = tables.get(title);
    if (table === undefined) {
      table = { title, columns: ['kind × level', 'defense', 'attack success A', 'attack success B', 'Δ attack', 'utility attacked A', 'utility attacked B', 'Δ utility'], rows: [] };
      tables.set(title, table);
    }
    table.rows.push({
      label: `${any.kind} L${any.level} ${any.strength}`,
      cells: [
        { text: any.defense, score: null },
        rateCell(ra?.attackSuccess, false),
        rateCell(rb?.attackSuccess, false),
        deltaCell(ra?.attackSuccess, rb?.attackSuccess),
        rateCell(ra?.utilityAttacked, true),
        rateCell(rb?.utilityAttacked, true),
        deltaCell(ra?.utilityAttacked, rb?.utilityAttacked),
      ],
    });
    merged.push({ base: any.base, kind: any.kind, level: any.level, defense: any.defense, a: (ra ?? null) as unknown as JsonValue, b: (rb ?? null) as unknown as JsonValue });
  }
  return {
    title: 'Safety: run A against run B, by kind × level × defense',
    note: 'Per attack kind (or out-of-bounds request), level and defense: attack success and utility under attack in each run (n episodes), and the change B − A in percentage points. A row one run lacks shows – on that side.',
    tables: [...tables.values()],
    data: merged,
  };
}
