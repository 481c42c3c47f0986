/** CLI: templates, generate, batches, pool, review, split. */
import { readFileSync, writeFileSync } from 'node:fs';
import { BUILTIN_TEMPLATES_MODULE, isBuiltinDomain } from '../../builtins.js';
import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import { DEFAULT_LOCKFILE, EnvHarnessError, SPLITS, type GateName, type Split } from '../../core/index.js';
import { formatLockfile } from '../../harness/lockfile.js';
import type { Harness } from '../../harness/harness.js';
import { EXIT_CODES } from '../exit-codes.js';
import { collect, parseFloatOption, parseIntOption, type CliContext } from '../options.js';
import { withHarness } from '../open.js';
import { colors, printJson, progress, table } from '../output.js';

/** A split name; anything else is PARAMS_INVALID naming the valid ones (never a silent empty pool). */
export function parseSplit(value: string): Split {
  if (!(SPLITS as readonly string[]).includes(value)) throw new EnvHarnessError('PARAMS_INVALID', `--split must be one of ${SPLITS.join(', ')}, got "${value}"`, { details: { pointer: '/split' } });
  return value as Split;
}

/** "3", "1-3" or "1,2,4" -> levels. */
export function parseLevels(values: string[]): number[] {
  const out: number[] = [];
  for (const value of values) {
    for (const part of value.split(',')) {
      const range = /^(\d+)-(\d+)$/.exec(part.trim());
      if (range) {
        if (Number(range[1]) > Number(range[2])) {
          throw new EnvHarnessError('PARAMS_INVALID', `--level range "${part.trim()}" is empty: write the lower level first (${range[2]}-${range[1]})`, { details: { pointer: '/level' } });
        }
        for (let l = Number(range[1]); l <= Number(range[2]); l++) out.push(l);
      } else if (/^\d+$/.test(part.trim())) out.push(Number(part));
      else throw new EnvHarnessError('PARAMS_INVALID', `--level takes N, N-M or N,M,...; got "${value}"`, { details: { pointer: '/level' } });
    }
  }
  return [...new Set(out)].sort((a, b) => a - b);
}

export function registerGenerationCommands(program: Command, ctx: CliContext): void {
  const templates = program.command('templates').description('list and inspect registered templates');
  templates
    .command('list')
    .description('every registered template with its type, levels and source digest')
    .action(async () => {
      await withHarness(ctx.globals(), async (h) => {
        const rows = h.registry.list().map((t) => ({
          id: t.id,
          type: t.taskType,
          levels: t.levels.length,
          heldout: t.heldout ? 'yes' : '',
          digest: t.sourceDigest.slice(0, 12),
        }));
        if (ctx.globals().json) printJson(ctx.io, rows);
        else ctx.io.out(table(rows));
      });
    });
  templates
    .command('show <id>')
    .description('one template: description and what each level means')
    .action(async (id: string) => {
      await withHarness(ctx.globals(), async (h) => {
        const t = h.registry.get(id);
        const info = { id: t.id, taskType: t.taskType, description: t.description ?? '', sourceDigest: t.sourceDigest, heldout: Boolean(t.heldout), levels: t.levels };
        if (ctx.globals().json) return printJson(ctx.io, info);
        ctx.io.out(`${colors.bold(t.id)}  (${t.taskType})\n${info.description}\nsource digest ${t.sourceDigest}\n`);
        ctx.io.out(table(t.levels.map((spec, i) => ({ level: i + 1, ...Object.fromEntries(Object.entries(spec).map(([k, v]) => [k, JSON.stringify(v)])) }))));
      });
    });

  program
    .command('generate')
    .description('generate a batch of tasks through the quality gates and store it')
    .requiredOption('--template <id[:weight]>', 'template id (domain/name[@version]); repeatable, with optional weight', collect, [])
    .option('--level <levels>', 'level(s): N, N-M or N,M (repeatable); default 1', collect, [])
    .requiredOption('--count <n>', 'number of candidate tasks', parseIntOption('--count', 1))
    .option('--seed <n>', 'generation seed', parseIntOption('--seed'), 0)
    .option('--split <split>', 'regression | dynamic | heldout', 'dynamic')
    .option('--review-share <x>', 'share of accepted tasks sent to human review', parseFloatOption('--review-share', 0, 1), 0)
    .option('--near-threshold <x>', 'MinHash Jaccard at or above which tasks are near duplicates', parseFloatOption('--near-threshold', 0, 1))
    .option('--skip-gate <gate>', 'disable a gate (schema, exact_duplicate, near_duplicate, oracle, non_trivial, leakage); repeatable', collect, [])
    .option('--workers <n>', 'worker threads (default: automatic)', parseIntOption('--workers', 1))
    .action(async (opts: { template: string[]; level: string[]; count: number; seed: number; split: string; reviewShare: number; nearThreshold?: number; skipGate: string[]; workers?: number }) => {
      const globals = ctx.globals();
      await withHarness(globals, async (h) => {
        const bar = progress(ctx.io, 'generating', !globals.json && opts.count >= 2000);
        const gates = Object.fromEntries(opts.skipGate.map((g) => [g, false])) as Partial<Record<GateName, boolean>>;
        const templates = opts.template.map((spec) => {
          const [id, weight] = spec.split(':');
          return { id: id!, weight: weight === undefined ? 1 : Number(weight) };
        });
        // Worker threads run the oracle and non-triviality gates themselves when the built-in module has
        // them (every template is a built-in domain's); declarative-only domains keep them on this thread.
        const hooked = templates.every((t) => h.registry.has(t.id) && isBuiltinDomain(h.registry.get(t.id).domain));
        const batch = await h.generate(
          {
            templates,
            levels: opts.level.length ? parseLevels(opts.level) : [1],
            count: opts.count,
            seed: opts.seed,
            split: parseSplit(opts.split),
            gates,
            reviewShare: opts.reviewShare,
            ...(opts.nearThreshold === undefined ? {} : { nearDuplicateThreshold: opts.nearThreshold }),
          },
          // Workers import the built-in templates (declarative ones travel with the job as definitions).
          {
            workers: opts.workers,
            templateModules: [BUILTIN_TEMPLATES_MODULE],
            ...(hooked ? { hookModule: BUILTIN_TEMPLATES_MODULE } : {}),
            onProgress: (done, total) => bar.update(done, total),
          },
        );
        bar.stop();
        const m = batch.manifest;
        if (globals.json) return printJson(ctx.io, m);
        ctx.io.out(`batch ${colors.bold(m.id.slice(0, 12))}  digest ${m.digest}`);
        ctx.io.out(`accepted ${colors.green(String(m.accepted))} of ${m.requested}, rejected ${m.rejected}, sent to review ${batch.review.length}`);
        ctx.io.out(table(m.gates.map((g) => ({ gate: g.gate, enabled: g.enabled ? 'yes' : 'no', checked: g.checked, rejected: g.rejected }))));
      });
    });

  const batches = program.command('batches').description('generated batches and their manifests');
  batches
    .command('list')
    .action(async () => {
      await withHarness(ctx.globals(), async (h) => {
        const rows = (await h.store.listBatches()).map((m) => ({
          id: m.id.slice(0, 12),
          split: m.split,
          templates: m.templates.map((t) => t.id).join(','),
          seed: m.seed,
          levels: m.levels.join(','),
          accepted: m.accepted,
          requested: m.requested,
        }));
        if (ctx.globals().json) printJson(ctx.io, rows);
        else ctx.io.out(table(rows));
      });
    });
  batches
    .command('show <id>')
    .description('the full manifest; --log adds the rejected candidates with their reasons')
    .option('--log', 'include the generation log of rejected candidates')
    .action(async (id: string, opts: { log?: boolean }) => {
      await withHarness(ctx.globals(), async (h) => {
        const all = await h.store.listBatches();
        const m = all.find((b) => b.id === id) ?? all.find((b) => b.id.startsWith(id));
        if (!m) throw new EnvHarnessError('BATCH_NOT_FOUND', `no batch ${id}; see \`envharness batches list\``);
        const log = opts.log ? await h.store.listGenerationLog({ batchId: m.id, accepted: false }) : undefined;
        if (ctx.globals().json) return printJson(ctx.io, log ? { manifest: m, rejected: log } : m);
        ctx.io.out(JSON.stringify(m, null, 2));
        if (log) ctx.io.out(table(log.map((e) => ({ index: e.index, template: e.template, level: e.level, gate: e.gate, reason: e.reason }))));
      });
    });

  const pool = program.command('pool').description('the task pool');
  pool
    .command('stats')
    .action(async () => {
      await withHarness(ctx.globals(), async (h) => {
        const stats = await h.poolStats();
        if (ctx.globals().json) return printJson(ctx.io, stats);
        ctx.io.out(`active ${stats.total} (regression ${stats.bySplit.regression}, dynamic ${stats.bySplit.dynamic}, heldout ${stats.bySplit.heldout}); pending review ${stats.pendingReview}; rejected ${stats.rejected}`);
        const levels = [...new Set(stats.slices.flatMap((s) => Object.keys(s.levels)))].sort((a, b) => Number(a) - Number(b));
        const rows = stats.slices.map((s) => ({ split: s.split, slice: s.slice, ...Object.fromEntries(levels.map((l) => [`L${l}`, s.levels[l] ?? 0])) }));
        ctx.io.out(table(rows, ['split', 'slice', ...levels.map((l) => `L${l}`)]));
      });
    });
  pool
    .command('fill')
    .description('generate tasks for every (or the given) template at every level')
    .option('--template <id>', 'only these templates; repeatable', collect, [])
    .option('--per-level <n>', 'candidates per template and level', parseIntOption('--per-level', 1), 200)
    .option('--seed <n>', 'generation seed', parseIntOption('--seed'), 0)
    .option('--split <split>', 'regression | dynamic | heldout', 'dynamic')
    .action(async (opts: { template: string[]; perLevel: number; seed: number; split: string }) => {
      const globals = ctx.globals();
      await withHarness(globals, async (h) => {
        const chosen = opts.template.length ? opts.template.map((id) => h.registry.get(id)) : h.registry.list().filter((t) => !t.heldout);
        const bar = progress(ctx.io, 'filling', !globals.json);
        const rows: Array<Record<string, unknown>> = [];
        let done = 0;
        const total = chosen.reduce((s, t) => s + t.levels.length * opts.perLevel, 0);
        for (const t of chosen) {
          const levels = t.levels.map((_, i) => i + 1);
          const batch = await h.generate(
            { templates: [{ id: t.id }], levels, count: levels.length * opts.perLevel, seed: opts.seed, split: parseSplit(opts.split) },
            { onProgress: (d) => bar.update(done + d, total) },
          );
          done += levels.length * opts.perLevel;
          rows.push({ template: t.id, batch: batch.manifest.id.slice(0, 12), accepted: batch.manifest.accepted, rejected: batch.manifest.rejected });
        }
        bar.stop();
        if (globals.json) printJson(ctx.io, rows);
        else ctx.io.out(table(rows));
      });
    });

  program
    .command('review')
    .description('human review queue: one task at a time, approve or reject with a note')
    .option('--list', 'list pending tasks and exit')
    .option('--approve <taskId>', 'approve a task non-interactively')
    .option('--reject <taskId>', 'reject a task non-interactively (takes it out of the pool)')
    .option('--note <text>', 'note for --approve/--reject', '')
    .option('--reviewer <name>', 'who decides (default: $USER)')
    .option('--audit', 'print the audit trail')
    .action(async (opts: { list?: boolean; approve?: string; reject?: string; note: string; reviewer?: string; audit?: boolean }) => {
      const globals = ctx.globals();
      const reviewer = opts.reviewer ?? process.env.USER ?? 'unknown';
      await withHarness(globals, async (h) => {
        if (opts.audit) {
          const audit = await h.store.listReviewAudit();
          return globals.json ? printJson(ctx.io, audit) : ctx.io.out(table(audit.map((a) => ({ ...a, taskId: a.taskId.slice(0, 12) }))));
        }
        if (opts.approve || opts.reject) {
          const item = await h.decideReview(await pendingTaskId(h, (opts.approve ?? opts.reject)!), opts.approve ? 'approved' : 'rejected', reviewer, opts.note);
          return globals.json ? printJson(ctx.io, item) : ctx.io.out(`${item.taskId.slice(0, 12)} ${item.status}`);
        }
        const pending = await h.pendingReviews();
        if (opts.list || globals.json) {
          return globals.json ? printJson(ctx.io, pending) : ctx.io.out(table(pending.map((p) => ({ task: p.taskId, batch: p.batchId.slice(0, 12) }))));
        }
        if (pending.length === 0) return ctx.io.out('nothing to review');
        const rl = createInterface({ input: process.stdin, output: process.stderr });
        try {
          for (const [i, item] of pending.entries()) {
            const task = await h.getTask(item.taskId);
            ctx.io.out(`\n${colors.bold(`[${i + 1}/${pending.length}]`)} ${task.id}\n${task.template} level ${task.level} (${task.taskType})\n`);
            ctx.io.out(`${colors.bold('instructions')}\n${task.spec.instructions}\n`);
            ctx.io.out(`${colors.bold('reference solution')}\n${task.spec.solution.map((a) => JSON.stringify(a)).join('\n')}\n`);
            const answer = (await rl.question('[a]pprove, [r]eject, [s]kip, [q]uit? ')).trim().toLowerCase();
            if (answer.startsWith('q')) break;
            if (answer.startsWith('s') || answer === '') continue;
            const decision = answer.startsWith('a') ? 'approved' : answer.startsWith('r') ? 'rejected' : undefined;
            if (!decision) continue;
            const note = (await rl.question('note (optional): ')).trim();
            await h.decideReview(task.id, decision, reviewer, note);
            ctx.io.out(`${decision}`);
          }
        } finally {
          rl.close();
        }
      });
    });

  const split = program.command('split').description('the frozen regression split and its lockfile');
  split
    .command('freeze')
    .description('lock the regression split: write envharness.lock.json and refuse later changes')
    .option('--lockfile <path>', 'lockfile path', DEFAULT_LOCKFILE)
    .action(async (opts: { lockfile: string }) => {
      await withHarness(ctx.globals(), async (h) => {
        const lock = await h.freezeRegression();
        writeFileSync(opts.lockfile, formatLockfile(lock));
        if (ctx.globals().json) printJson(ctx.io, { lockfile: opts.lockfile, digest: lock.digest, count: lock.count });
        else ctx.io.out(`froze ${lock.count} regression tasks (digest ${lock.digest.slice(0, 12)}) into ${opts.lockfile}; commit it`);
      });
    });
  split
    .command('verify')
    .description('check that the store and the lockfile agree (exit 5 if not)')
    .option('--lockfile <path>', 'lockfile path', DEFAULT_LOCKFILE)
    .action(async (opts: { lockfile: string }) => {
      await withHarness(ctx.globals(), async (h) => {
        let text: string;
        try {
          text = readFileSync(opts.lockfile, 'utf8');
        } catch {
          throw new EnvHarnessError('CONFIG_INVALID', `no lockfile at ${opts.lockfile}; run \`envharness split freeze\` first`);
        }
        const check = await h.verifyRegression(text, opts.lockfile);
        if (ctx.globals().json) printJson(ctx.io, check);
        else if (check.ok) ctx.io.out(`${colors.green('ok')}: ${check.actual.count} regression tasks match ${opts.lockfile}`);
        else {
          ctx.io.err(`${colors.red('mismatch')}: store has ${check.actual.count} (digest ${check.actual.digest.slice(0, 12)}), lockfile ${check.expected.count} (digest ${check.expected.digest.slice(0, 12)})`);
          for (const id of check.added) ctx.io.err(`  + ${id} (in the store, not in the lockfile)`);
          for (const id of check.missing) ctx.io.err(`  - ${id} (in the lockfile, missing from the store)`);
        }
        if (!check.ok) ctx.setExitCode(EXIT_CODES.LOCKFILE_MISMATCH);
      });
    });
  split
    .command('unfreeze')
    .description('allow changes to the regression split again (deliberately)')
    .action(async () => {
      await withHarness(ctx.globals(), async (h) => {
        await h.unfreezeRegression();
        ctx.io.out('regression split unfrozen; re-run `envharness split freeze` after changing it');
      });
    });
}

/** A pending review's task id from an id or unambiguous prefix (as runs and snapshots accept). */
async function pendingTaskId(h: Harness, idOrPrefix: string): Promise<string> {
  const pending = await h.pendingReviews();
  if (pending.some((p) => p.taskId === idOrPrefix)) return idOrPrefix;
  const matches = pending.filter((p) => p.taskId.startsWith(idOrPrefix));
  if (matches.length === 1) return matches[0]!.taskId;
  throw new EnvHarnessError(
    'REVIEW_NOT_FOUND',
    matches.length === 0 ? `no pending review for task ${idOrPrefix}; see \`envharness review --list\`` : `task prefix ${idOrPrefix} is ambiguous (${matches.length} pending reviews match); give more characters`,
    { details: { pointer: '/approve' } },
  );
}
