/** What retail contributes to the CLI: `envharness import tau-bench`, `envharness tau-bench eval`, and tau-bench's episode-state format. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import {
  EnvHarnessError,
  REGRESSION_FROZEN_META,
  SPLITS,
  type CommandContext,
  type Domain,
  type DomainCommand,
  type EpisodeStateRequest,
  type Split,
  type Store,
  type StoredTask,
} from '../../../core/index.js';
import { createStoreRecorder } from '../../../runtime/index.js';
import { createRetailDomain, type RetailDomain } from '../domain.js';
import { loadTauBenchWorld } from '../load.js';
import { createTauBenchDomain } from './domain.js';
import { createTauBenchRunner } from './episode.js';
import { evaluateTauBench } from './evaluate.js';
import { defaultSplitFor, importTauBench, TAU_BENCH_TEMPLATE_VERSION, type TauBenchTaskFile } from './import.js';
import { formatEpisodeState, loadEpisodeState } from './state.js';

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

/** Registers the tau-bench world recorded by `import tau-bench` with `retail` (when its folder still exists). */
export async function restoreTauBenchWorld(retail: RetailDomain, store: Pick<Store, 'getMeta'>): Promise<void> {
  const meta = (await store.getMeta(TAU_BENCH_META)) as { dir?: string } | undefined;
  if (meta?.dir && existsSync(meta.dir)) retail.addWorld(loadTauBenchWorld(meta.dir));
}

/** The retail domain with the tau-bench world the store's imports came from (or `data`), as tau-bench grades. */
async function retailFor(base: RetailDomain | undefined, store: Store, data: string | undefined): Promise<RetailDomain> {
  const retail = base ?? createRetailDomain();
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

async function withStore<T>(cli: CommandContext, fn: (store: Store) => Promise<T>): Promise<T> {
  const store = await cli.openStore();
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** The `episodeState` declaration: tau-bench's `{ users, orders, products }` or EnvHarness's export, rebuilt from transitions. */
export function tauBenchEpisodeState(base: RetailDomain): NonNullable<Domain['episodeState']> {
  return {
    formats: ['tau-bench', 'json'],
    async export(request: EpisodeStateRequest) {
      const retail = await retailFor(base, request.store, request.data);
      const exported = await loadEpisodeState(request.store, retail, request.episodeId);
      return {
        text: formatEpisodeState(retail, exported.state, request.format as 'tau-bench' | 'json'),
        summary: { episode: exported.episodeId, task: exported.taskId, sha256: exported.sha256, stateHash: exported.stateHash },
      };
    },
  };
}

/** `import tau-bench` and `tau-bench eval`, on `base` (the retail domain the CLI runs). */
export function tauBenchCommands(base: RetailDomain): DomainCommand[] {
  const importCommand: DomainCommand = {
    path: ['import', 'tau-bench'],
    parents: { import: 'import task sets from other benchmarks' },
    description: "tau-bench's retail database as a world and its task files as batches (train → dynamic, dev → regression)",
    options: [
      { flags: '--data <dir>', description: "tau-bench's retail data folder (users.json, orders.json, products.json, tasks_*.json)", required: true },
      { flags: '--tasks <file[:split]>', description: 'a task file, relative to --data, with an optional split; repeatable (default: tasks_train.json:dynamic, tasks_dev.json:regression)', parse: 'repeatable' },
    ],
    async run(options, cli) {
      const opts = options as { data: string; tasks: string[] };
      const dir = path.resolve(opts.data);
      const files = opts.tasks.length > 0 ? opts.tasks.map(parseTaskFileOption) : undefined;
      await withStore(cli, async (store) => {
        let imported = importTauBench({ dir, ...(files ? { tasks: files } : {}) });
        const saved = new Set<string>();
        for (const set of imported.sets) if ((await store.getBatch(set.batch.manifest.id)) !== undefined) saved.add(set.batch.manifest.id);
        const fresh = imported.sets.filter((s) => !saved.has(s.batch.manifest.id));
        const stored = await store.findExistingTaskIds(fresh.flatMap((s) => s.batch.tasks.map((t) => t.id)));
        // A set whose every task is already stored (imported before, e.g. by an earlier importer version,
        // whose batch id differs) adds nothing: it counts as imported, by template.
        const unchanged = new Set(fresh.filter((s) => s.batch.tasks.length > 0 && s.batch.tasks.every((t) => stored.has(t.id))).map((s) => s.template));
        const isSaved = (s: { template: string; batch: { manifest: { id: string } } }) => saved.has(s.batch.manifest.id) || unchanged.has(s.template);
        if (stored.size > 0) {
          // Tasks another batch already holds are exact duplicates, recorded in this batch's log.
          imported = importTauBench({ dir, existingIds: stored, ...(files ? { tasks: files } : {}) });
        }
        // A set bound for a frozen regression split is refused before anything is written.
        const intoRegression = imported.sets.filter((s) => s.batch.manifest.split === 'regression' && !isSaved(s));
        if (intoRegression.length > 0 && (await store.getMeta(REGRESSION_FROZEN_META)) === true) {
          throw new EnvHarnessError(
            'SPLIT_FROZEN',
            `the regression split of ${store.location} is frozen, so ${intoRegression.map((s) => s.set).join(', ')} cannot be imported into it; import into heldout (\`--tasks tasks_dev.json:heldout\`), or \`envharness split unfreeze\` first and \`envharness split freeze\` after`,
            { details: { pointer: '/tasks' } },
          );
        }
        const rows: Array<Record<string, string | number>> = [];
        for (const set of imported.sets) {
          const m = set.batch.manifest;
          const already = isSaved(set) || (await store.getBatch(m.id)) !== undefined;
          if (!already) await store.saveBatch(set.batch);
          rows.push({ set: set.set, split: m.split, template: set.template, accepted: m.accepted, rejected: m.rejected, batch: m.id.slice(0, 12), status: already ? 'already imported' : 'imported' });
        }
        const meta: TauBenchMeta = { dir, world: imported.world.digest };
        await store.setMeta(TAU_BENCH_META, { ...meta });
        if (cli.json) {
          return cli.printJson({ world: imported.world.digest, worldFiles: imported.worldFiles, batches: imported.sets.map((s) => ({ ...s.batch.manifest, status: rows.find((r) => r.template === s.template)!.status })) });
        }
        cli.out(`world ${cli.style.bold(imported.world.digest.slice(0, 12))} (tau-bench retail, ${dir})`);
        cli.out(cli.table(rows));
      });
    },
  };

  const evalCommand: DomainCommand = {
    path: ['tau-bench', 'eval'],
    parents: { 'tau-bench': 'run agents on imported tau-bench tasks' },
    description: "pass^k on an imported tau-bench task set, as tau-bench computes it, beside EnvHarness's own outcome",
    options: [
      { flags: '--set <name>', description: 'the imported task set (train, dev, ...)', default: 'dev' },
      { flags: '--agent <name>', description: 'agent: oracle, random, rule-based, learner, openai', default: 'oracle' },
      { flags: '-k, --k <n>', description: 'trials per task', parse: { int: { min: 1 } }, default: 1 },
      { flags: '--limit <n>', description: 'only the first n tasks of the set', parse: { int: { min: 1 } } },
      { flags: '--user <kind>', description: 'simulated user of the tasks: none, or llm (an OpenAI-compatible chat-completions endpoint)', default: 'none' },
      { flags: '--base-url <url>', description: 'OpenAI-compatible endpoint for --user llm and --agent openai (env OPENAI_BASE_URL)' },
      { flags: '--model <name>', description: 'model for --user llm and --agent openai (env ENVHARNESS_MODEL)' },
      { flags: '--data <dir>', description: "tau-bench's data folder (default: the one recorded by `import tau-bench`)" },
    ],
    async run(options, cli) {
      const opts = options as { set: string; agent: string; k: number; limit?: number; user: string; baseUrl?: string; model?: string; data?: string };
      if (opts.user !== 'none' && opts.user !== 'llm') throw new EnvHarnessError('PARAMS_INVALID', `--user must be none or llm, got "${opts.user}"`, { details: { pointer: '/user' } });
      await withStore(cli, async (store) => {
        const template = `retail/tau-bench-${opts.set}@${TAU_BENCH_TEMPLATE_VERSION}`;
        let tasks: StoredTask[] = await store.listTasks({ template, status: 'active' });
        if (opts.limit !== undefined) tasks = tasks.slice(0, opts.limit);
        if (tasks.length === 0) throw new EnvHarnessError('POOL_EMPTY', `no imported tasks of ${template}; run \`envharness import tau-bench --data DIR\` first`);
        const retail = await retailFor(base, store, opts.data);
        // Loaded on demand: the LLM client is only needed for --user llm.
        const llm = opts.user === 'llm' ? (await import('./llm-user.js')).createTauBenchLlmUser({ baseUrl: opts.baseUrl, model: opts.model, env: cli.env }) : undefined;
        const runner = createTauBenchRunner(retail, llm ? { user: llm.user } : {});
        const agent = await cli.agent({ agent: opts.agent, baseUrl: opts.baseUrl, model: opts.model });
        const recorder = createStoreRecorder(store);
        // Episode ids must be new in the store: number the evaluations (no clock needed).
        const evals = Number((await store.getMeta(`${TAU_BENCH_META}.evals`)) ?? 0) + 1;
        await store.setMeta(`${TAU_BENCH_META}.evals`, evals);
        const runId = `tau-bench-${evals}-${opts.set}-${agent.name}`;
        const bar = cli.progress('episodes');
        const result = await evaluateTauBench({ runner, tasks, agent, k: opts.k, recorder, runId, onProgress: (d, t) => bar.update(d, t) }).finally(() => llm?.close());
        bar.stop();
        await recorder.close();
        const rows = (list: typeof result.rows) => list.map((r) => ({ slice: r.slice, tasks: r.tasks, trials: r.trials, ...Object.fromEntries(r.passK.map((v, i) => [`pass^${i + 1}`, v.toFixed(3)])) }));
        if (cli.json) return cli.printJson({ runId, template, agent: agent.name, user: opts.user, k: opts.k, passK: result.passK, rows: result.rows, runtimeRows: result.runtimeRows, disagreements: result.disagreements });
        cli.out(`${cli.style.bold(template)}  agent ${agent.name}  user ${opts.user}  k ${opts.k}  episodes ${result.episodes.length} (ids ${runId}:<task>:<trial>)`);
        cli.out(cli.style.bold("tau-bench's reward"));
        cli.out(cli.table(rows(result.rows)));
        cli.out(cli.style.bold("EnvHarness's outcome"));
        cli.out(cli.table(rows(result.runtimeRows)));
        if (result.disagreements.length > 0) cli.err(cli.style.yellow(`${result.disagreements.length} episodes where the two gradings differ: ${result.disagreements.slice(0, 5).join(', ')}`));
      });
    },
  };
  return [importCommand, evalCommand];
}
