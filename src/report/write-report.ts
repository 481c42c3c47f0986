/** Writes a run's HTML report to a file: what `envharness report` and the end of `envharness train` call. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { EnvHarnessError, type Store } from '../core/index.js';
import { buildReport, type ReportData } from './report-data.js';
import { renderReportHtml, type EpisodeScreenshots } from './report-html.js';

/** A harness (anything with a `store`) or a store. */
export type StoreSource = Store | { readonly store: Store };

function storeOf(source: StoreSource): Store {
  return 'store' in source && typeof source.store === 'object' ? source.store : (source as Store);
}

/**
 * Builds the report of `runId` (optionally side by side with `compareId`) and writes it to `outPath`.
 * @example
 * const summary = await harness.train({ agent, episodes: 500 });
 * await writeRunReport(harness, summary.runId, '.envharness/reports/latest.html');
 */
export async function writeRunReport(
  source: StoreSource,
  runId: string | undefined,
  outPath: string,
  options: { compareId?: string; screenshots?: readonly EpisodeScreenshots[] } = {},
): Promise<{ path: string; bytes: number; data: ReportData }> {
  const { screenshots, ...reportOptions } = options;
  const data = await buildReport(storeOf(source), { ...(runId === undefined ? {} : { runId }), ...reportOptions });
  const html = renderReportHtml(data, screenshots === undefined ? {} : { screenshots });
  try {
    mkdirSync(dirname(outPath), { recursive: true });
    writeFileSync(outPath, html);
  } catch (error) {
    // An unwritable path is the caller's input, not an internal failure.
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new EnvHarnessError('CONFIG_INVALID', `cannot write the report to ${outPath} (${code}); choose a writable path with --out`, { cause: error, details: { pointer: '/out', path: outPath } });
  }
  return { path: outPath, bytes: Buffer.byteLength(html), data };
}

