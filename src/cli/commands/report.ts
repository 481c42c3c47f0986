/** CLI: envharness report, doctor, export. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Command } from 'commander';
import { createAgent, createEpisode, EnvHarnessError, type Action, type Split, type Store } from '../../index.js';
import { builtinDomains } from '../../builtins.js';
import {
  diagnose,
  encodeExport,
  EXPORT_FORMATS,
  EXPORT_KINDS,
  exportRows,
  resolveRun,
  writeRunReport,
  type DoctorReport,
  type EpisodeScreenshots,
  type DoctorThresholds,
  type ExportFormat,
  type ExportKind,
  type Finding,
} from '../../report/index.js';
import { EXIT_FINDINGS } from '../exit-codes.js';
import { collect, parseIntOption, type CliContext } from '../options.js';
import { withHarness } from '../open.js';
import { colors, printJson } from '../output.js';

export function registerReportCommands(program: Command, ctx: CliContext): void {
  program
    .command('report')
    .description('write a self-contained HTML report of a run: difficulty curves, slice weights, success by type × level, regression vs dynamic, generation log, feedback, pass^k')
    .option('--run <id>', 'run id or unique prefix (default: the latest run)')
    .option('--compare <id>', 'a second run to show side by side (warns when environment versions differ)')
    .option('--out <file>', 'output HTML file', 'report.html')
    .option('--screenshots <n>', "add page screenshots (first and last page) of the run's first n episodes whose domain draws pages (Domain.screenshots; needs Chromium)", parseIntOption('--screenshots', 0), 0)
    .action(async (opts: { run?: string; compare?: string; out: string; screenshots: number }) => {
      await withHarness(ctx.globals(), async (h) => {
        const screenshots = opts.screenshots > 0 ? await episodeScreenshots(h.store, opts.run, opts.screenshots) : undefined;
        const { path, bytes, data } = await writeRunReport(h, opts.run, opts.out, { ...(opts.compare === undefined ? {} : { compareId: opts.compare }), ...(screenshots === undefined ? {} : { screenshots }) });
        const runs = data.runs.map((r) => r.id);
        if (ctx.globals().json) return printJson(ctx.io, { file: path, bytes, runs, comparison: data.comparison });
        ctx.io.out(`wrote ${colors.bold(path)} (${Math.round(bytes / 1024)} KB): ${runs.join(' vs ')}`);
        if (data.comparison && !data.comparison.sameTemplates) ctx.io.err(`${colors.red(colors.bold('warning'))} ${data.comparison.message}`);
      });
    });

  program
    .command('doctor')
    .description('walk the troubleshooting chain for a run: generation log → sampling weights → difficulty curve → fixed regression set (exit 8 on errors)')
    .option('--run <id>', 'run id or unique prefix (default: the latest run)')
    .option('--threshold <name=value>', `override a threshold (e.g. dominantShare=0.8); repeatable`, collect, [])
    .option('--agent <name>', 'also evaluate the regression set with this built-in agent, frozen, --probe times (records eval runs); the scores must be equal')
    .option('--probe <n>', 'evaluations of the regression set with --agent', parseIntOption('--probe', 2), 2)
    .action(async (opts: { run?: string; threshold: string[]; agent?: string; probe: number }) => {
      const thresholds = parseThresholds(opts.threshold);
      await withHarness(ctx.globals(), async (h) => {
        // Resolve the run first: the probe's evaluation runs must not become "the latest run".
        const run = await resolveRun(h.store, opts.run);
        let regressionProbe: { scores: number[] } | undefined;
        if (opts.agent !== undefined) {
          const scores: number[] = [];
          for (let i = 0; i < opts.probe; i++) {
            const { rows } = await h.evaluate({ agent: createAgent(opts.agent, { seed: 0, domains: builtinDomains() }), split: 'regression', k: 1 });
            scores.push(rows.find((r) => r.slice === '*')?.passK[0] ?? 0);
          }
          regressionProbe = { scores };
        }
        const report = await diagnose(h.store, { runId: run.id, thresholds, ...(regressionProbe ? { regressionProbe } : {}) });
        if (ctx.globals().json) printJson(ctx.io, report);
        else ctx.io.out(formatDoctor(report));
        if (report.hasErrors) ctx.setExitCode(EXIT_FINDINGS);
      });
    });

  program
    .command('export')
    .description('export a run\'s tasks, episodes, transitions or chat-format trajectories as JSONL or Parquet (schema: docs/export.md)')
    .option('--run <id>', 'run id or unique prefix (default: the latest run)')
    .requiredOption('--what <kind>', `${EXPORT_KINDS.join(' | ')}`)
    .option('--format <format>', `${EXPORT_FORMATS.join(' | ')} (default: from the file extension, else jsonl)`)
    .option('--split <split>', 'with --what tasks: every task of this split instead of the run\'s tasks')
    .requiredOption('--out <file>', 'output file')
    .action(async (opts: { run?: string; what: string; format?: string; split?: string; out: string }) => {
      if (!(EXPORT_KINDS as readonly string[]).includes(opts.what)) {
        throw new EnvHarnessError('PARAMS_INVALID', `--what must be one of ${EXPORT_KINDS.join(', ')}, got "${opts.what}"`, { details: { pointer: '/what' } });
      }
      const format = (opts.format ?? (opts.out.endsWith('.parquet') ? 'parquet' : 'jsonl')) as ExportFormat;
      if (!(EXPORT_FORMATS as readonly string[]).includes(format)) {
        throw new EnvHarnessError('PARAMS_INVALID', `--format must be one of ${EXPORT_FORMATS.join(', ')}, got "${format}"`, { details: { pointer: '/format' } });
      }
      await withHarness(ctx.globals(), async (h) => {
        const table = await exportRows(h.store, {
          what: opts.what as ExportKind,
          ...(opts.run === undefined ? {} : { runId: opts.run }),
          ...(opts.split === undefined ? {} : { split: opts.split as Split }),
          // The exact opening observation (policy, opening message, tool schemas) from the task's domain.
          resetObservation: (task, episode) => {
            const domain = h.domains.get(task.domain);
            return domain ? createEpisode(domain, task, {}).reset({ seed: episode.seed }) : undefined;
          },
        });
        const bytes = encodeExport(table, format);
        mkdirSync(dirname(opts.out), { recursive: true });
        writeFileSync(opts.out, bytes);
        if (ctx.globals().json) printJson(ctx.io, { file: opts.out, what: table.what, format, run: table.runId, rows: table.rows.length, bytes: bytes.byteLength });
        else ctx.io.out(`wrote ${table.rows.length} ${table.what} rows${table.runId ? ` of run ${table.runId}` : ''} to ${colors.bold(opts.out)} (${format}, ${bytes.byteLength} bytes)`);
      });
    });
}

function parseThresholds(pairs: string[]): Partial<DoctorThresholds> {
  const out: Record<string, number | [number, number]> = {};
  for (const pair of pairs) {
    const m = /^([A-Za-z]+)=(.+)$/.exec(pair.trim());
    if (!m) throw new EnvHarnessError('PARAMS_INVALID', `--threshold takes name=value, got "${pair}"`, { details: { pointer: '/threshold' } });
    const [, name, raw] = m;
    if (name === 'band') {
      const band = raw!.split(',').map(Number);
      if (band.length !== 2 || band.some((x) => !Number.isFinite(x))) throw new EnvHarnessError('PARAMS_INVALID', `--threshold band=LOWER,UPPER, got "${raw}"`, { details: { pointer: '/threshold/band' } });
      out.band = [band[0]!, band[1]!];
      continue;
    }
    const value = Number(raw);
    if (!Number.isFinite(value)) throw new EnvHarnessError('PARAMS_INVALID', `--threshold ${name} must be a number, got "${raw}"`, { details: { pointer: `/threshold/${name}` } });
    out[name!] = value;
  }
  return out as Partial<DoctorThresholds>;
}

const MARK: Record<Finding['severity'], (s: string) => string> = {
  error: (s) => colors.red(colors.bold(s)),
  warning: (s) => colors.yellow(colors.bold(s)),
  info: (s) => colors.cyan(s),
};

/** The doctor's chain as text: each step, what it checked, and its findings with their evidence. */
/** Screenshots of the first `n` episodes of a run whose domain declares `screenshots`. */
async function episodeScreenshots(store: Store, runRef: string | undefined, n: number): Promise<EpisodeScreenshots[]> {
  const run = await resolveRun(store, runRef);
  const domains = new Map(builtinDomains().map((d) => [d.name, d]));
  const out: EpisodeScreenshots[] = [];
  for (const episode of await store.listEpisodes({ runId: run.id })) {
    if (out.length >= n) break;
    const task = await store.getTask(episode.taskId);
    const domain = task === undefined ? undefined : domains.get(task.domain);
    if (task === undefined || domain?.screenshots === undefined) continue;
    // An episode recorded as its inputs has its actions in its record: no replay to rebuild its transitions for them.
    const recorded = episode.inputs?.actions ?? (await store.listTransitions(episode.id)).map((t) => t.action);
    const actions = recorded.filter((a): a is Action => a.type !== 'invalid');
    out.push({ episodeId: episode.id, taskId: task.id, images: await domain.screenshots({ task, actions, env: process.env }) });
  }
  return out;
}

export function formatDoctor(report: DoctorReport): string {
  const lines: string[] = [`${colors.bold('doctor')}  run ${report.runId}`, ''];
  report.steps.forEach((step, i) => {
    const head = `${i + 1}. ${step.title.padEnd(22)}`;
    const checked = Object.entries(step.checked)
      .filter(([, v]) => v === null || typeof v !== 'object')
      .map(([k, v]) => `${k} ${typeof v === 'number' ? Math.round(v * 10000) / 10000 : String(v)}`)
      .join(', ');
    lines.push(`${colors.bold(head)} ${step.findings.length === 0 ? colors.green('ok') : `${step.findings.length} finding${step.findings.length > 1 ? 's' : ''}`}  ${colors.dim(checked)}`);
    for (const f of step.findings) {
      lines.push(`   ${MARK[f.severity](f.severity.padEnd(7))} ${f.check}: ${f.message}`);
      lines.push(`   ${' '.repeat(8)}${colors.dim(`evidence ${JSON.stringify(f.evidence)}`)}`);
    }
  });
  const { error, warning, info } = report.counts;
  lines.push('');
  if (error > 0) lines.push(`${colors.red(colors.bold('verdict'))} ${error} error(s), ${warning} warning(s): the environment is the likely problem; fix it before blaming the model.`);
  else if (warning > 0) lines.push(`${colors.yellow(colors.bold('verdict'))} ${warning} warning(s), no errors: look at them before tuning the model.`);
  else lines.push(`${colors.green(colors.bold('verdict'))} no problems found in the environment${info ? ` (${info} note${info > 1 ? 's' : ''})` : ''}.`);
  return lines.join('\n');
}
