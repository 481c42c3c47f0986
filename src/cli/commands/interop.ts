/** CLI: envharness import tau-bench, envharness episode state, envharness tau-bench eval. */
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import {
  createEpisode,
  createStoreRecorder,
  EnvHarnessError,
  openStore,
  sentInput,
  SPLITS,
  type Split,
  type Store,
  type StoredTask,
} from '../../index.js';
import { builtinDomains } from '../../builtins.js';
import { META_FROZEN } from '../../harness/harness.js';
import { createRetailDomain, loadTauBenchWorld, type RetailDomain } from '../../domains/retail/index.js';
import {
  createTauBenchDomain,
  createTauBenchLlmUser,
  createTauBenchRunner,
  defaultSplitFor,
  evaluateTauBench,
  formatEpisodeState,
  importTauBench,
  loadEpisodeState,
  TAU_BENCH_TEMPLATE_VERSION,
  type TauBenchTaskFile,
} from '../../interop/index.js';
import { collect, parseIntOption, type CliContext } from '../main.js';
import { colors, printJson, progress, table } from '../output.js';

/** Store meta key under which imports remember where tau-bench's data folder is. */
export const TAU_BENCH_META = 'interop.tau-bench';

interface TauBenchMeta {
  dir: string;
  world: string;
}

/** `FILE` or `FILE:split` (the split suffix only when it names a split). */
export function parseTaskFileOption(value: string): TauBenchTaskFile {
  const colon = value.lastIndexOf(':');
  const suffix = colon > 0 ? value.slice(colon + 1) : '';
  if ((SPLITS as readonly string[]).includes(suffix)) return { file: value.slice(0, colon), split: suffix as Split };
  if (colon > 0 && /^[a-z]+$/.test(suffix) && !existsSync(value)) {
    throw new EnvHarnessError('PARAMS_INVALID', `--tasks ${value}: "${suffix}" is not a split; use one of ${SPLITS.join(', ')}`, { details: { pointer: '/tasks' } });
  }
  return { file: value, split: defaultSplitFor(value) };
}

export function registerInteropCommands(program: Command, ctx: CliContext): void {
  const importCommand = findOrAdd(program, 'import', 'import task sets from other benchmarks');
  importCommand
    .command('tau-bench')
    .description("tau-bench's retail database as a world and its task files as batches (train → dynamic, dev → regression)")
    .requiredOption('--data <dir>', "tau-bench's retail data folder (users.json, orders.json, products.json, tasks_*.json)")
    .option('--tasks <file[:split]>', 'a task file, relative to --data, with an optional split; repeatable (default: tasks_train.json:dynamic, tasks_dev.json:regression)', collect, [])
    .action(async (opts: { data: string; tasks: string[] }) => {
      const globals = ctx.globals();
      const dir = path.resolve(opts.data);
      const files = opts.tasks.length > 0 ? opts.tasks.map(parseTaskFileOption) : undefined;
      await withStore(globals.store, async (store) => {
        let imported = importTauBench({ dir, ...(files ? { tasks: files } : {}) });
        const saved = new Set<string>();
        for (const set of imported.sets) if ((await store.getBatch(set.batch.manifest.id)) !== undefined) saved.add(set.batch.manifest.id);
        const fresh = imported.sets.filter((s) => !saved.has(s.batch.manifest.id));
        const stored = await store.findExistingTaskIds(fresh.flatMap((s) => s.batch.tasks.map((t) => t.id)));
        if (stored.size > 0) {
          // Tasks another batch already holds are exact duplicates, recorded in this batch's log.
          imported = importTauBench({ dir, existingIds: stored, ...(files ? { tasks: files } : {}) });
        }
        // A set bound for a frozen regression split is refused before anything is written.
        const intoRegression = imported.sets.filter((s) => s.split === 'regression' && !saved.has(s.batch.manifest.id));
        if (intoRegression.length > 0 && (await store.getMeta(META_FROZEN)) === true) {
          throw new EnvHarnessError(
            'SPLIT_FROZEN',
            `the regression split of ${store.location} is frozen, so ${intoRegression.map((s) => s.set).join(', ')} cannot be imported into it; import into heldout (\`--tasks tasks_dev.json:heldout\`), or \`envharness split unfreeze\` first and \`envharness split freeze\` after`,
            { details: { pointer: '/tasks' } },
          );
        }
        const rows: Array<Record<string, string | number>> = [];
        for (const set of imported.sets) {
          const m = set.batch.manifest;
          const already = saved.has(m.id) || (await store.getBatch(m.id)) !== undefined;
          if (!already) await store.saveBatch(set.batch);
          rows.push({ set: set.set, split: m.split, template: set.template, accepted: m.accepted, rejected: m.rejected, batch: m.id.slice(0, 12), status: already ? 'already imported' : 'imported' });
        }
        const meta: TauBenchMeta = { dir, world: imported.world.digest };
        await store.setMeta(TAU_BENCH_META, { ...meta });
        if (globals.json) {
          return printJson(ctx.io, { world: imported.world.digest, worldFiles: imported.worldFiles, batches: imported.sets.map((s) => ({ ...s.batch.manifest, status: rows.find((r) => r.template === s.template)!.status })) });
        }
        ctx.io.out(`world ${colors.bold(imported.world.digest.slice(0, 12))} (tau-bench retail, ${dir})`);
        ctx.io.out(table(rows));
      });
    });

  const episode = findOrAdd(program, 'episode', 'recorded episodes');
  episode
    .command('state')
    .description("the world after a recorded episode, rebuilt from its transitions: tau-bench's { users, orders, products } or EnvHarness's export")
    .requiredOption('--episode <id>', 'episode id')
    .option('--format <format>', "tau-bench (RFC 8785 canonical JSON, comparable byte for byte) or json (EnvHarness's export)", 'tau-bench')
    .option('--out <file>', 'write to this file instead of stdout')
    .option('--data <dir>', "tau-bench's data folder (default: the one recorded by `import tau-bench`)")
    .action(async (opts: { episode: string; format: string; out?: string; data?: string }) => {
      const globals = ctx.globals();
      if (opts.format !== 'tau-bench' && opts.format !== 'json') {
        throw new EnvHarnessError('PARAMS_INVALID', `--format must be tau-bench or json, got "${opts.format}"`, { details: { pointer: '/format' } });
      }
      await withStore(globals.store, async (store) => {
        const record = await store.getEpisode(opts.episode);
        if (record === undefined) throw new EnvHarnessError('EPISODE_NOT_FOUND', `no episode ${opts.episode} in ${store.location}`, { details: { episodeId: opts.episode } });
        const task = await store.getTask(record.taskId);
        if (task === undefined) throw new EnvHarnessError('TASK_NOT_FOUND', `episode ${opts.episode} ran task ${record.taskId}, which is not in the store`);
        let text: string;
        let summary: Record<string, string>;
        if (task.domain === 'retail') {
          const retail = await retailFor(store, opts.data);
          const exported = await loadEpisodeState(store, retail, opts.episode);
          text = formatEpisodeState(retail, exported.state, opts.format as 'tau-bench' | 'json');
          summary = { episode: exported.episodeId, task: exported.taskId, sha256: exported.sha256, stateHash: exported.stateHash };
        } else {
          if (opts.format === 'tau-bench') {
            throw new EnvHarnessError('PARAMS_INVALID', `episode ${opts.episode} ran a ${task.domain} task; --format tau-bench is for retail worlds, use --format json`, { details: { pointer: '/format' } });
          }
          text = replayedExport(task, await store.listTransitions(opts.episode), record.seed);
          summary = { episode: opts.episode, task: task.id };
        }
        if (opts.out === undefined) {
          ctx.io.out(text);
          return;
        }
        writeFileSync(opts.out, text);
        if (globals.json) printJson(ctx.io, { ...summary, format: opts.format, out: opts.out });
        else ctx.io.err(`episode ${summary.episode}: ${opts.format} state${summary.sha256 ? ` (sha256 ${summary.sha256})` : ''} written to ${opts.out}`);
      });
    });

  const tauBench = findOrAdd(program, 'tau-bench', 'run agents on imported tau-bench tasks');
  tauBench
    .command('eval')
    .description("pass^k on an imported tau-bench task set, as tau-bench computes it, beside EnvHarness's own outcome")
    .option('--set <name>', 'the imported task set (train, dev, ...)', 'dev')
    .option('--agent <name>', 'agent: oracle, random, rule-based, learner, openai', 'oracle')
    .option('-k, --k <n>', 'trials per task', parseIntOption('-k', 1), 1)
    .option('--limit <n>', 'only the first n tasks of the set', parseIntOption('--limit', 1))
    .option('--user <kind>', 'simulated user of the tasks: none, or llm (an OpenAI-compatible chat-completions endpoint)', 'none')
    .option('--base-url <url>', 'OpenAI-compatible endpoint for --user llm and --agent openai (env OPENAI_BASE_URL)')
    .option('--model <name>', 'model for --user llm and --agent openai (env ENVHARNESS_MODEL)')
    .option('--data <dir>', "tau-bench's data folder (default: the one recorded by `import tau-bench`)")
    .action(async (opts: { set: string; agent: string; k: number; limit?: number; user: string; baseUrl?: string; model?: string; data?: string }) => {
      const globals = ctx.globals();
      if (opts.user !== 'none' && opts.user !== 'llm') throw new EnvHarnessError('PARAMS_INVALID', `--user must be none or llm, got "${opts.user}"`, { details: { pointer: '/user' } });
      await withStore(globals.store, async (store) => {
        const template = `retail/tau-bench-${opts.set}@${TAU_BENCH_TEMPLATE_VERSION}`;
        let tasks: StoredTask[] = await store.listTasks({ template, status: 'active' });
        if (opts.limit !== undefined) tasks = tasks.slice(0, opts.limit);
        if (tasks.length === 0) throw new EnvHarnessError('POOL_EMPTY', `no imported tasks of ${template}; run \`envharness import tau-bench --data DIR\` first`);
        const retail = await retailFor(store, opts.data);
        const llm = opts.user === 'llm' ? createTauBenchLlmUser({ baseUrl: opts.baseUrl, model: opts.model, env: process.env }) : undefined;
        const runner = createTauBenchRunner(retail, llm ? { user: llm.user } : {});
        const { resolveAgent } = await import('../agents.js');
        const agent = await resolveAgent({ agent: opts.agent, baseUrl: opts.baseUrl, model: opts.model }, process.env);
        const recorder = createStoreRecorder(store);
        // Episode ids must be new in the store: number the evaluations (no clock needed).
        const evals = Number((await store.getMeta(`${TAU_BENCH_META}.evals`)) ?? 0) + 1;
        await store.setMeta(`${TAU_BENCH_META}.evals`, evals);
        const runId = `tau-bench-${evals}-${opts.set}-${agent.name}`;
        const bar = progress(ctx.io, 'episodes', !globals.json);
        const result = await evaluateTauBench({ runner, tasks, agent, k: opts.k, recorder, runId, onProgress: (d, t) => bar.update(d, t) }).finally(() => llm?.close());
        bar.stop();
        await recorder.close();
        const rows = (list: typeof result.rows) => list.map((r) => ({ slice: r.slice, tasks: r.tasks, trials: r.trials, ...Object.fromEntries(r.passK.map((v, i) => [`pass^${i + 1}`, v.toFixed(3)])) }));
        if (globals.json) return printJson(ctx.io, { runId, template, agent: agent.name, user: opts.user, k: opts.k, passK: result.passK, rows: result.rows, runtimeRows: result.runtimeRows, disagreements: result.disagreements });
        ctx.io.out(`${colors.bold(template)}  agent ${agent.name}  user ${opts.user}  k ${opts.k}  episodes ${result.episodes.length} (ids ${runId}:<task>:<trial>)`);
        ctx.io.out(colors.bold("tau-bench's reward"));
        ctx.io.out(table(rows(result.rows)));
        ctx.io.out(colors.bold("EnvHarness's outcome"));
        ctx.io.out(table(rows(result.runtimeRows)));
        if (result.disagreements.length > 0) ctx.io.err(colors.yellow(`${result.disagreements.length} episodes where the two gradings differ: ${result.disagreements.slice(0, 5).join(', ')}`));
      });
    });
}

function findOrAdd(program: Command, name: string, description: string): Command {
  return program.commands.find((c) => c.name() === name) ?? program.command(name).description(description);
}

async function withStore<T>(location: string, fn: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(location);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** The retail domain with the tau-bench world the store's imports came from (or `--data`). */
async function retailFor(store: Store, data: string | undefined): Promise<RetailDomain> {
  const builtin = builtinDomains().find((d) => d.name === 'retail') as RetailDomain | undefined;
  const retail = builtin?.addWorld !== undefined ? builtin : createRetailDomain();
  const meta = (await store.getMeta(TAU_BENCH_META)) as TauBenchMeta | undefined;
  const dir = data ?? meta?.dir;
  if (dir !== undefined) {
    const world = loadTauBenchWorld(dir);
    if (meta?.world !== undefined && data === undefined && world.digest !== meta.world) {
      throw new EnvHarnessError('IMPORT_INVALID', `the tau-bench data in ${dir} changed since it was imported (world ${world.digest.slice(0, 12)}, imported ${meta.world.slice(0, 12)}); pass --data with the original folder`);
    }
    retail.addWorld(world);
  }
  return createTauBenchDomain(retail);
}

/** EnvHarness's export of a non-retail episode: its recorded actions replayed in a fresh episode. */
function replayedExport(task: StoredTask, transitions: Awaited<ReturnType<Store['listTransitions']>>, seed: number): string {
  const domain = builtinDomains().find((d) => d.name === task.domain);
  if (domain === undefined) throw new EnvHarnessError('DOMAIN_NOT_FOUND', `task ${task.id} needs domain ${task.domain}, which this CLI does not have`);
  const episode = createEpisode(domain, task, {});
  episode.reset({ seed });
  for (const t of transitions) if (episode.status === 'running') episode.step(sentInput(t.action));
  const recorded = transitions.at(-1)?.info.stateHash;
  if (recorded !== undefined && episode.stateHash() !== recorded) {
    throw new EnvHarnessError('INTERNAL', `replaying episode ${transitions[0]!.episodeId} gives state ${episode.stateHash()}, not the recorded ${recorded}; it was run with other dynamics options`);
  }
  return JSON.stringify(episode.exportState(), null, 2) + '\n';
}
