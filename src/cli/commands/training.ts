/** CLI: envharness train, eval, runs, experiment. */
import type { Command } from 'commander';
import { EnvHarnessError, type JsonValue } from '../../core/index.js';
import type { StrategyName } from '../../curriculum/index.js';
import { createAgent } from '../../agents/index.js';
import { createHarness, type Harness } from '../../harness/harness.js';
import { runStaticVsAdaptive } from '../../harness/experiment.js';
import { readRunTimeline, resolveRun } from '../../report/run-timeline.js';
import type { TrainProgress, TrainSummary } from '../../harness/train.js';
import type { Agent } from '../../core/index.js';
import { builtinDomains } from '../../builtins.js';
import { formatSummary, summarizeEvaluation } from '../summaries.js';
// Read while commands are registered, before src/index.ts has finished evaluating: from its own module.
import { DEFAULT_TRAIN_STRATEGY } from '../../harness/train.js';
import { resolveAgent, saveAgentState } from '../agents.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { collect, parseFloatOption, parseIntOption, type CliContext } from '../options.js';
import { withHarness } from '../open.js';
import { describeFill, ensurePool } from '../fill.js';
import { parseSplit } from './generation.js';
import { colors, printJson, progress, table, type Io } from '../output.js';
import { systemClock } from '../clock.js';

const STRATEGIES = ['uniform', 'threshold', 'learning-progress', 'prioritized-replay', 'learnability'];

export function parseStrategy(value: string): StrategyName {
  if (!STRATEGIES.includes(value)) {
    throw new EnvHarnessError('PARAMS_INVALID', `--strategy must be one of ${STRATEGIES.join(', ')}, got "${value}"`, { details: { pointer: '/strategy' } });
  }
  return value as StrategyName;
}

/** The domains to train on: the given ones, or the harness's defaults (retail when it has templates). */
export function chooseDomains(h: Harness, given: string[]): string[] {
  if (given.length > 0) {
    for (const d of given) if (!h.domains.has(d)) throw new EnvHarnessError('DOMAIN_NOT_FOUND', `no domain ${d}; known: ${[...h.domains.keys()].join(', ')}`, { details: { pointer: '/domain' } });
    return given;
  }
  return h.defaultDomains();
}

function sliceRows(summary: TrainSummary) {
  return summary.slices.map((s) => ({
    slice: s.slice,
    level: s.level,
    weight: s.weight.toFixed(3),
    episodes: s.episodes,
    success: s.success.toFixed(3),
    'window (95% CI)': s.windowSuccess === null ? '' : `${s.windowSuccess.toFixed(2)} [${s.low.toFixed(2)}, ${s.high.toFixed(2)}]`,
  }));
}

export function registerTrainingCommands(program: Command, ctx: CliContext): void {
  program
    .command('train')
    .description('the main job: train an agent under an adaptive curriculum, guarded by the frozen regression set')
    .option('--agent <name>', 'learner | rule-based | random | oracle | openai', 'learner')
    .option('--episodes <n>', 'training episodes', parseIntOption('--episodes', 1), 3000)
    .option('--strategy <name>', `curriculum: ${STRATEGIES.join(', ')}`, DEFAULT_TRAIN_STRATEGY)
    .option('--seed <n>', 'seed for sampling, episodes and the agent', parseIntOption('--seed'), 0)
    .option('--eval-every <n>', 'run the regression set every N episodes (0: never)', parseIntOption('--eval-every', 0), 500)
    .option('--concurrency <n>', 'episodes in flight per round', parseIntOption('--concurrency', 1), 8)
    .option('--domain <name>', 'train on this domain; repeatable (default: the domains that declare defaults.train)', collect, [])
    .option('--per-level <n>', 'tasks generated per template and level when the pool lacks them', parseIntOption('--per-level', 1), 60)
    .option('--group-size <k>', 'GRPO-style groups: k episodes per task with one seed', parseIntOption('--group-size', 1), 1)
    .option('--skip-zero-variance', 'skip groups that all pass or all fail (DAPO dynamic sampling)')
    .option('--delta <x>', 'regression guard: hold levels when the score drops more than this below the best', parseFloatOption('--delta', 0, 1), 0.1)
    .option('--rollback', 'regression guard: also roll the curriculum back to the last good state')
    .option('--agent-state <file>', 'where the learner state is saved (and read from with --resume-agent)', '.envharness/agents/learner.json')
    .option('--resume-agent', 'continue the learner from --agent-state instead of starting it fresh')
    .option('--resume <run>', 'continue an interrupted training run from its last checkpoint, with the options it started with')
    .option('--checkpoint-every <n>', 'write a resumable checkpoint every N episodes', parseIntOption('--checkpoint-every', 1), 100)
    .option('--report <file>', 'where to write the HTML report (default .envharness/reports/<run>.html)')
    .option('--no-report', 'do not write the HTML report')
    .option('--base-url <url>', 'OpenAI-compatible endpoint for --agent openai')
    .option('--model <name>', 'model for --agent openai')
    .action(async (opts: {
      agent: string; episodes: number; strategy: string; seed: number; evalEvery: number; concurrency: number; domain: string[];
      perLevel: number; groupSize: number; skipZeroVariance?: boolean; delta: number; rollback?: boolean; agentState: string;
      resumeAgent?: boolean; resume?: string; checkpointEvery: number; report: string | boolean; baseUrl?: string; model?: string;
    }, command: Command) => {
      const globals = ctx.globals();
      const strategy = parseStrategy(opts.strategy);
      await withHarness(globals, async (h) => {
        if (opts.resume !== undefined) return resumeRun(h, ctx, opts, command);
        const domains = chooseDomains(h, opts.domain);
        const show = !globals.json;
        const filled = describeFill(await ensurePool(h, ctx.io, domains, opts.perLevel, opts.seed, show));
        if (filled !== undefined && show) ctx.io.err(filled);
        const agent = await resolveAgent(
          { agent: opts.agent, seed: opts.seed, ...(opts.resumeAgent ? { agentState: opts.agentState } : {}), baseUrl: opts.baseUrl, model: opts.model },
          process.env,
        );
        const bar = progress(ctx.io, `training ${agent.name} (${strategy})`, show);
        const summary = await h.train({
          agent,
          episodes: opts.episodes,
          strategy,
          seed: opts.seed,
          evalEvery: opts.evalEvery,
          concurrency: opts.concurrency,
          domains,
          guard: { delta: opts.delta, rollback: Boolean(opts.rollback) },
          ...(opts.groupSize > 1 ? { group: { size: opts.groupSize, skipZeroVariance: Boolean(opts.skipZeroVariance) } } : {}),
          checkpointEvery: opts.checkpointEvery,
          onProgress: progressView(bar, show, opts.episodes),
        });
        bar.stop();
        await finishTrain(h, ctx, opts, agent, summary);
      });
    });

  program
    .command('eval')
    .description('evaluate an agent on a split with the curriculum frozen: pass^1..pass^k per slice')
    .option('--agent <name>', 'learner | rule-based | random | oracle | openai', 'learner')
    .option('--split <split>', 'regression | dynamic | heldout', parseSplit, 'regression')
    .option('-k, --k <n>', 'trials per task (as tau-bench eval -k)', parseIntOption('--k', 1), 1)
    .option('--limit <n>', 'at most this many tasks', parseIntOption('--limit', 1))
    .option('--domain <name>', 'only this domain; repeatable', collect, [])
    .option('--seed <n>', 'agent seed', parseIntOption('--seed'), 0)
    .option('--agent-state <file>', 'learner state to evaluate', '.envharness/agents/learner.json')
    .option('--base-url <url>', 'OpenAI-compatible endpoint for --agent openai')
    .option('--model <name>', 'model for --agent openai')
    .action(async (opts: { agent: string; split: string; k: number; limit?: number; domain: string[]; seed: number; agentState: string; baseUrl?: string; model?: string }) => {
      const globals = ctx.globals();
      await withHarness(globals, async (h) => {
        const agent = await resolveAgent({ agent: opts.agent, seed: opts.seed, agentState: opts.agentState, baseUrl: opts.baseUrl, model: opts.model }, process.env);
        const bar = progress(ctx.io, `evaluating ${agent.name}`, !globals.json);
        const result = await h.evaluate({
          agent,
          split: opts.split as 'regression',
          k: opts.k,
          ...(opts.limit ? { limit: opts.limit } : {}),
          ...(opts.domain.length ? { domains: opts.domain } : {}),
          onProgress: (d, t) => bar.update(d, t),
        });
        bar.stop();
        // What the evaluated domains add (Domain.evaluation, e.g. attack success under attack), kept with the run.
        const summaries = await summarizeEvaluation(h, result.outcomes, agent);
        if (summaries.length > 0) {
          await h.store.appendRunEvents(summaries.map((s, i) => ({ runId: result.runId, seq: result.outcomes.length + i, kind: 'summary', data: s as unknown as JsonValue })));
        }
        if (globals.json) return printJson(ctx.io, { runId: result.runId, rows: result.rows, ...(summaries.length > 0 ? { summaries: summaries.map((s) => ({ domain: s.domain, title: s.summary.title, data: s.summary.data })) } : {}) });
        ctx.io.out(`run ${colors.bold(result.runId)} (${opts.split}, k=${opts.k})`);
        ctx.io.out(table(result.rows.map((r) => ({
          slice: r.slice,
          tasks: r.tasks,
          trials: r.trials,
          ...Object.fromEntries(r.passK.map((v, i) => [`pass^${i + 1}`, v.toFixed(3)])),
          '95% CI (pass^1)': `[${r.low.toFixed(2)}, ${r.high.toFixed(2)}]`,
        }))));
        for (const s of summaries) ctx.io.out(`\n${s.domain}: ${formatSummary(s.summary)}`);
      });
    });

  const experiment = program.command('experiment').description('measured claims');
  experiment
    .command('static-vs-adaptive')
    .description('train the learner uniformly on a fixed task set vs under adaptive curricula; evaluate on held-out templates and the regression set')
    .option('--episodes <n>', 'training budget per arm', parseIntOption('--episodes', 1), 3000)
    .option('--eval-every <n>', 'checkpoint every N episodes', parseIntOption('--eval-every', 1), 250)
    .option('--seed <n>', 'seed shared by every arm', parseIntOption('--seed'), 0)
    .option('--strategy <name>', 'adaptive strategies to compare; repeatable (default: all)', collect, [])
    .option('--fixed-per-slice <n>', 'static arm: tasks per slice in the fixed set', parseIntOption('--fixed-per-slice', 1), 20)
    .option('--eval-limit <n>', 'at most N held-out and N regression tasks per checkpoint', parseIntOption('--eval-limit', 1), 200)
    .option('--per-level <n>', 'generated tasks per template and level', parseIntOption('--per-level', 1), 60)
    .option('--domain <name>', 'domain (default: the domains that declare defaults.train)', collect, [])
    .option('--agent <name>', 'the agent trained in every arm', 'learner')
    .action(async (opts: { episodes: number; evalEvery: number; seed: number; strategy: string[]; fixedPerSlice: number; evalLimit: number; perLevel: number; domain: string[]; agent: string }) => {
      const globals = ctx.globals();
      const strategies = (opts.strategy.length ? opts.strategy : ['threshold', 'learning-progress', 'prioritized-replay', 'learnability']).map(parseStrategy);
      const dir = mkdtempSync(join(tmpdir(), 'envharness-experiment-'));
      try {
        // Build the world once, then give every arm an identical copy through a snapshot export.
        const base = await createHarness({ clock: systemClock, store: join(dir, 'base.db'), domains: builtinDomains() });
        await base.initialize({ seed: opts.seed });
        const domains = chooseDomains(base, opts.domain);
        await ensurePool(base, ctx.io, domains, opts.perLevel, opts.seed, !globals.json);
        const { text } = await base.exportSnapshot();
        await base.close();
        let n = 0;
        const bar = progress(ctx.io, 'experiment', !globals.json);
        const totalArms = strategies.length + 1;
        let armIndex = 0;
        let lastArm = '';
        const result = await runStaticVsAdaptive({
          harness: async () => {
            const h = await createHarness({ clock: systemClock, store: join(dir, `arm${n++}.db`), domains: builtinDomains() });
            await h.initialize({ seed: opts.seed });
            await h.importSnapshot(text);
            return h;
          },
          agent: (seed) => {
            const agent = createAgentByName(opts.agent, seed);
            return agent;
          },
          episodes: opts.episodes,
          evalEvery: opts.evalEvery,
          seed: opts.seed,
          strategies,
          fixedPerSlice: opts.fixedPerSlice,
          evalLimit: opts.evalLimit,
          domains,
          onProgress: (arm, done, total) => {
            if (arm !== lastArm) {
              lastArm = arm;
              armIndex++;
            }
            bar.update((armIndex - 1) * total + done, totalArms * total);
          },
        });
        bar.stop();
        if (globals.json) return printJson(ctx.io, result);
        ctx.io.out(`\nstatic vs adaptive: ${opts.agent}, ${opts.episodes} episodes per arm, seed ${opts.seed}; held-out tasks ${result.heldoutTasks}, regression tasks ${result.regressionTasks}`);
        ctx.io.out(table(result.final.map((f) => {
          const reach = result.reachStaticFinal.find((r) => r.arm === f.arm);
          return {
            arm: f.arm,
            'held-out (95% CI)': `${f.heldout.toFixed(3)} [${f.heldoutLow.toFixed(2)}, ${f.heldoutHigh.toFixed(2)}]`,
            'regression (95% CI)': `${f.regression.toFixed(3)} [${f.regressionLow.toFixed(2)}, ${f.regressionHigh.toFixed(2)}]`,
            'reaches static final at': f.arm === 'static' ? '' : reach?.episodes === null || reach === undefined ? 'never' : `${reach.episodes} (${(100 * reach.share!).toFixed(0)}%)`,
          };
        })));
        ctx.io.out('\nheld-out success by checkpoint');
        const episodes = result.arms[0]!.points.map((p) => p.episodes);
        ctx.io.out(table(episodes.map((e, i) => ({ episodes: e, ...Object.fromEntries(result.arms.map((a) => [a.arm, a.points[i]!.heldout.toFixed(3)])) }))));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

  const runs = program.command('runs').description('experiment records');
  runs.command('list').action(async () => {
    await withHarness(ctx.globals(), async (h) => {
      const rows = (await h.store.listRuns()).map((r) => ({
        id: r.id,
        kind: r.kind,
        agent: `${r.agent.name}@${r.agent.version}`,
        strategy: r.strategy,
        status: r.status,
        snapshot: r.snapshotStart.slice(0, 12),
        created: r.createdAt,
      }));
      if (ctx.globals().json) printJson(ctx.io, rows);
      else ctx.io.out(table(rows));
    });
  });
  runs.command('show <id>').action(async (id: string) => {
    await withHarness(ctx.globals(), async (h) => {
      printJson(ctx.io, await resolveRun(h.store, id));
    });
  });
  runs
    .command('compare <a> <b>')
    .description('two runs side by side; warns loudly when their environment versions differ')
    .action(async (a: string, b: string) => {
      await withHarness(ctx.globals(), async (h) => {
        // Ids or unambiguous prefixes, as every verb that takes a run accepts.
        const [ra, rb] = await Promise.all([resolveRun(h.store, a), resolveRun(h.store, b)]);
        const [sa, sb] = await Promise.all([h.store.getSnapshot(ra.snapshotStart), h.store.getSnapshot(rb.snapshotStart)]);
        const envA = sa ? JSON.stringify(sa.templates) : ra.snapshotStart;
        const envB = sb ? JSON.stringify(sb.templates) : rb.snapshotStart;
        const sameEnv = envA === envB;
        const summary = (r: typeof ra) => (r.summary ?? {}) as { success?: number; episodes?: number; evals?: Array<{ score: number }> };
        const rows = [ra, rb].map((r) => ({
          run: r.id,
          kind: r.kind,
          agent: `${r.agent.name}@${r.agent.version} ${r.agent.configDigest.slice(0, 8)}`,
          strategy: r.strategy,
          episodes: summary(r).episodes ?? '',
          success: summary(r).success?.toFixed(3) ?? '',
          'last regression': summary(r).evals?.at(-1)?.score.toFixed(3) ?? '',
          environment: r.snapshotStart.slice(0, 12),
        }));
        const startOf = (r: typeof ra) => ((r.config ?? {}) as { agentStart?: string | null }).agentStart ?? null;
        const sameStart = startOf(ra) === startOf(rb);
        const [summariesA, summariesB] = await Promise.all([ra, rb].map(async (r) => (await readRunTimeline(h.store, r)).summaries));
        const hasSummaries = summariesA!.length + summariesB!.length > 0;
        const domains = [...new Set([...summariesA!, ...summariesB!].map((s) => s.domain))].sort();
        // A domain that declares `evaluation.compare` merges its two summaries into one (A, B, change).
        const merged = domains.flatMap((domain) => {
          const [sa, sb] = [summariesA!, summariesB!].map((list) => list.find((x) => x.domain === domain)?.summary);
          const summary = sa && sb ? h.domains.get(domain)?.evaluation?.compare?.(sa, sb) : undefined;
          return summary === undefined ? [] : [{ domain, summary }];
        });
        if (ctx.globals().json) return printJson(ctx.io, { sameEnvironment: sameEnv, sameAgentStart: sameStart, runs: rows, ...(hasSummaries ? { summaries: { a: summariesA, b: summariesB, merged } } : {}) });
        if (!sameEnv) {
          ctx.io.err(colors.red(colors.bold('WARNING: these runs used different environment versions (template sets or digests differ); their numbers are not comparable.')));
        }
        if (!sameStart) {
          ctx.io.err(colors.red(colors.bold(`WARNING: the agents started from different states (${startOf(ra)?.slice(0, 12) ?? 'fresh'} vs ${startOf(rb)?.slice(0, 12) ?? 'fresh'}; e.g. one continued a saved learner with --resume-agent); their numbers are not comparable.`)));
        }
        ctx.io.out(table(rows));
        // Domain summaries (Domain.evaluation), domain by domain: merged, or else A then B.
        for (const domain of domains) {
          const m = merged.find((x) => x.domain === domain);
          if (m !== undefined) {
            ctx.io.out(`\n${domain}, A (${ra.id}) against B (${rb.id}): ${formatSummary(m.summary)}`);
            continue;
          }
          for (const [label, run, list] of [['A', ra, summariesA!], ['B', rb, summariesB!]] as const) {
            const s = list.find((x) => x.domain === domain);
            ctx.io.out(`\n${label} (${run.id}) ${domain}: ${s === undefined ? 'no summary\n' : formatSummary(s.summary)}`);
          }
        }
      });
    });
}

function createAgentByName(name: string, seed: number) {
  return createAgent(name, { seed, domains: builtinDomains() });
}

/** The options of `train` the resume helpers read. */
interface TrainFlags {
  agent: string; episodes: number; strategy: string; seed: number; evalEvery: number; concurrency: number; domain: string[];
  groupSize: number; skipZeroVariance?: boolean; delta: number; rollback?: boolean; agentState: string;
  resume?: string; checkpointEvery: number; report: string | boolean; baseUrl?: string; model?: string;
}

/** The progress bar, with a curriculum line every fifth of the run. */
function progressView(bar: ReturnType<typeof progress>, show: boolean, total: number): (p: TrainProgress) => void {
  let nextView = Math.max(1, Math.floor(total / 5));
  return (p) => {
    bar.update(p.episodes, p.total);
    if (show && p.episodes >= nextView && p.episodes < p.total) {
      while (nextView <= p.episodes) nextView += Math.max(1, Math.floor(total / 5));
      const line = Object.keys(p.levels)
        .sort()
        .map((s) => `${s.split('/')[1]} L${p.levels[s]} ${(100 * p.weights[s]!).toFixed(0)}%`)
        .join('  ');
      bar.log(`  ${colors.dim(`@${p.episodes}`)} success ${p.recentSuccess.toFixed(2)}${p.lastEval === undefined ? '' : `, regression ${p.lastEval.toFixed(2)}`} | ${line}`);
    }
  };
}

/** After a run: the learner's state, the report, and the summary (JSON or a table). */
async function finishTrain(h: Harness, ctx: CliContext, opts: TrainFlags, agent: Agent, summary: TrainSummary): Promise<void> {
  const globals = ctx.globals();
  const saved = agent.name === 'learner' ? saveAgentState(agent, opts.agentState) : undefined;
  let reportPath: string | undefined;
  if (opts.report !== false) {
    reportPath = typeof opts.report === 'string' ? opts.report : `.envharness/reports/${summary.runId}.html`;
    // The report writer (and its chart bundle) loads only when a report is written.
    const { writeRunReport } = await import('../../report/write-report.js');
    reportPath = (await writeRunReport(h, summary.runId, reportPath)).path;
  }
  if (globals.json) return printJson(ctx.io, { ...summary, ...(reportPath ? { report: reportPath } : {}), ...(saved ? { agentState: saved } : {}) });
  ctx.io.out(`\nrun ${colors.bold(summary.runId)}: ${summary.episodes} episodes, success ${summary.success.toFixed(3)}, strategy ${summary.strategy}`);
  ctx.io.out(table(sliceRows(summary)));
  if (summary.evals.length) ctx.io.out(`regression set: ${summary.evals.map((e) => `${e.score.toFixed(2)}@${e.episode}`).join(' ')}`);
  if (summary.guardEvents.length) ctx.io.out(colors.yellow(`regression guard fired ${summary.guardEvents.length} time(s)`));
  ctx.io.out(`environment: snapshot ${summary.snapshotStart.slice(0, 12)} -> ${summary.snapshotEnd.slice(0, 12)}`);
  if (saved) ctx.io.out(`learner state: ${saved}`);
  if (reportPath) ctx.io.out(`report: ${reportPath}`);
}

/** Each resume field, as the command line spells it (for the mismatch message). */
const RESUME_FLAGS: Record<string, string> = {
  episodes: '--episodes',
  strategy: '--strategy',
  seed: '--seed',
  evalEvery: '--eval-every',
  concurrency: '--concurrency',
  domains: '--domain',
  group: '--group-size/--skip-zero-variance',
  guard: '--delta/--rollback',
  agent: '--agent',
  checkpointEvery: '--checkpoint-every',
};

/**
 * `train --resume RUN`: continues the run from its checkpoint with the options it started with. Options
 * given on the command line must agree with the run's (never the pool fill: the pool must stay the run's).
 */
async function resumeRun(h: Harness, ctx: CliContext, opts: TrainFlags, command: Command): Promise<void> {
  const globals = ctx.globals();
  const show = !globals.json;
  const set = (name: string): boolean => command.getOptionValueSource(name) === 'cli';
  const given: Record<string, JsonValue | undefined> = {
    ...(set('episodes') ? { episodes: opts.episodes } : {}),
    ...(set('strategy') ? { strategy: opts.strategy } : {}),
    ...(set('seed') ? { seed: opts.seed } : {}),
    ...(set('evalEvery') ? { evalEvery: opts.evalEvery } : {}),
    ...(set('concurrency') ? { concurrency: opts.concurrency } : {}),
    ...(set('domain') ? { domains: opts.domain } : {}),
    ...(set('groupSize') || set('skipZeroVariance') ? { group: opts.groupSize > 1 ? { size: opts.groupSize, skipZeroVariance: Boolean(opts.skipZeroVariance) } : null } : {}),
    ...(set('delta') || set('rollback') ? { guard: { delta: opts.delta, rollback: Boolean(opts.rollback) } } : {}),
    ...(set('agent') ? { agent: opts.agent } : {}),
    ...(set('checkpointEvery') ? { checkpointEvery: opts.checkpointEvery } : {}),
  };
  const runId = opts.resume!;
  const run = await h.store.getRun(runId);
  let agent: Agent | undefined;
  const bar = progress(ctx.io, `resuming ${runId}`, show);
  const summary = await h.resumeTrain(runId, {
    agent: async (state) =>
      (agent = await resolveAgent({ agent: run?.agent.name ?? opts.agent, seed: run?.seed ?? opts.seed, baseUrl: opts.baseUrl, model: opts.model }, process.env, state)),
    given,
    flag: (field) => RESUME_FLAGS[field] ?? field,
    onProgress: progressView(bar, show, run?.config && typeof run.config === 'object' && !Array.isArray(run.config) ? Number(run.config.episodes) || 1 : 1),
  });
  bar.stop();
  await finishTrain(h, ctx, opts, agent!, summary);
}
