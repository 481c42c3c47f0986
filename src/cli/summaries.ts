/** Domain evaluation summaries (`Domain.evaluation`) of an eval's outcomes, and their text form for the terminal. */
import type { Agent, EvaluationSummary } from '../core/index.js';
import type { Harness } from '../harness/harness.js';
import { episodeRunner, type EpisodeOutcome } from '../runtime/index.js';

/** One domain's summary of an evaluation, as the `summary` run event keeps it. */
export interface DomainSummary {
  domain: string;
  summary: EvaluationSummary;
}

/** Asks every evaluated domain that declares `evaluation` for its summary of its own outcomes. */
export async function summarizeEvaluation(h: Harness, outcomes: readonly EpisodeOutcome[], agent: Agent): Promise<DomainSummary[]> {
  const byDomain = new Map<string, EpisodeOutcome[]>();
  // A slice is `<domain>/<task type>`, and domain names have no slash.
  for (const o of outcomes) {
    const domain = o.slice.slice(0, o.slice.indexOf('/'));
    byDomain.set(domain, [...(byDomain.get(domain) ?? []), o]);
  }
  const out: DomainSummary[] = [];
  for (const [name, list] of [...byDomain.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const evaluation = h.domains.get(name)?.evaluation;
    if (evaluation === undefined) continue;
    const summary = await evaluation.summarize(list, { getTask: (id) => h.store.getTask(id), agent, runner: episodeRunner });
    if (summary !== undefined) out.push({ domain: name, summary });
  }
  return out;
}

/** A summary as markdown tables. */
export function formatSummary(s: EvaluationSummary): string {
  const lines = [s.title, ''];
  for (const t of s.tables) {
    lines.push(`### ${t.title}`, '', `| ${t.columns.join(' | ')} |`, `| ${t.columns.map(() => '---').join(' | ')} |`);
    for (const row of t.rows) lines.push(`| ${[row.label, ...row.cells.map((c) => c.text)].join(' | ')} |`);
    lines.push('');
  }
  return lines.join('\n');
}
