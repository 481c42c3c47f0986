/** CLI: the commands domains contribute (`Domain.commands`), and `envharness episode state`. */
import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import {
  createEpisode,
  EnvHarnessError,
  openStore,
  replayRecorded,
  replayingStore,
  sentInput,
  type CommandContext,
  type Domain,
  type DomainCommand,
  type Episode,
  type Store,
  type StoredTask,
} from '../../index.js';
import { builtinDomains } from '../../builtins.js';
import { resolveAgent } from '../agents.js';
import { collect, parseIntOption, type CliContext } from '../options.js';
import { colors, printJson, progress, table } from '../output.js';
import { systemClock } from '../clock.js';

/** Registers every built-in domain's `commands` and the generic `episode state`. */
export function registerDomainCommands(program: Command, ctx: CliContext): void {
  for (const domain of builtinDomains()) for (const command of domain.commands ?? []) registerDomainCommand(program, ctx, command);
  registerEpisodeState(program, ctx);
}

function registerDomainCommand(program: Command, ctx: CliContext, spec: DomainCommand): void {
  let parent = program;
  for (const name of spec.path.slice(0, -1)) parent = findOrAdd(parent, name, spec.parents?.[name] ?? '');
  const command = parent.command(spec.path.at(-1)!).description(spec.description);
  for (const option of spec.options) {
    const parse = option.parse === 'repeatable' ? collect : option.parse?.int ? parseIntOption(option.flags.split(/[ ,]/)[0]!, option.parse.int.min) : undefined;
    const fallback = option.parse === 'repeatable' ? [] : option.default;
    if (option.required) command.requiredOption(option.flags, option.description);
    else if (parse !== undefined) command.option(option.flags, option.description, parse as (value: string, previous: unknown) => unknown, fallback);
    else command.option(option.flags, option.description, fallback as string | boolean | undefined);
  }
  command.action(async (opts: Record<string, unknown>) => spec.run(opts, commandContext(ctx)));
}

/** What a domain command sees of the CLI. */
function commandContext(ctx: CliContext): CommandContext {
  const globals = ctx.globals();
  return {
    store: globals.store,
    json: globals.json,
    env: process.env,
    openStore: async () => replayingStore(await openStore(globals.store, { clock: systemClock }), domainsByName(), { restore: true }),
    agent: (flags) => resolveAgent({ agent: flags.agent, baseUrl: flags.baseUrl, model: flags.model }, process.env),
    out: (text) => ctx.io.out(text),
    err: (text) => ctx.io.err(text),
    printJson: (value) => printJson(ctx.io, value),
    table: (rows) => table(rows as Array<Record<string, unknown>>),
    style: { bold: colors.bold, yellow: colors.yellow },
    progress: (label) => progress(ctx.io, label, !globals.json),
  };
}

function registerEpisodeState(program: Command, ctx: CliContext): void {
  const formats = [...new Set(builtinDomains().flatMap((d) => d.episodeState?.formats ?? []).concat('json'))];
  findOrAdd(program, 'episode', 'recorded episodes')
    .command('state')
    .description(`the world after a recorded episode, rebuilt from its transitions, in a format its domain declares (${formats.join(', ')}); json is EnvHarness's export`)
    .requiredOption('--episode <id>', 'episode id')
    .option('--format <format>', `${formats.join(' or ')} (default: the first its domain declares, else json)`)
    .option('--out <file>', 'write to this file instead of stdout')
    .option('--data <dir>', "the data folder of the domain's imported world (default: the one recorded at import)")
    .action(async (opts: { episode: string; format?: string; out?: string; data?: string }) => {
      const globals = ctx.globals();
      if (opts.format !== undefined && !formats.includes(opts.format)) {
        throw new EnvHarnessError('PARAMS_INVALID', `--format must be ${formats.join(' or ')}, got "${opts.format}"`, { details: { pointer: '/format' } });
      }
      const store = replayingStore(await openStore(globals.store, { clock: systemClock }), domainsByName(), { restore: true });
      try {
        const record = await store.getEpisode(opts.episode);
        if (record === undefined) throw new EnvHarnessError('EPISODE_NOT_FOUND', `no episode ${opts.episode} in ${store.location}`, { details: { episodeId: opts.episode } });
        const task = await store.getTask(record.taskId);
        if (task === undefined) throw new EnvHarnessError('TASK_NOT_FOUND', `episode ${opts.episode} ran task ${record.taskId}, which is not in the store`);
        const domain = builtinDomains().find((d) => d.name === task.domain);
        if (domain === undefined) throw new EnvHarnessError('DOMAIN_NOT_FOUND', `task ${task.id} needs domain ${task.domain}, which this CLI does not have`);
        const format = opts.format ?? domain.episodeState?.formats[0] ?? 'json';
        let text: string;
        let summary: Record<string, string>;
        if (domain.episodeState !== undefined && domain.episodeState.formats.includes(format)) {
          ({ text, summary } = await domain.episodeState.export({ store, episodeId: opts.episode, format, ...(opts.data !== undefined ? { data: opts.data } : {}) }));
        } else if (format === 'json') {
          text = record.inputs !== undefined ? exportOf(replayRecorded(domain, task, record).episode) : replayedExport(domain, task, await store.listTransitions(opts.episode), record.seed);
          summary = { episode: opts.episode, task: task.id };
        } else {
          throw new EnvHarnessError('PARAMS_INVALID', `episode ${opts.episode} ran a ${task.domain} task; --format ${format} is not a format of that domain, use --format json`, { details: { pointer: '/format' } });
        }
        if (opts.out === undefined) {
          ctx.io.out(text);
          return;
        }
        writeFileSync(opts.out, text);
        if (globals.json) printJson(ctx.io, { ...summary, format, out: opts.out });
        else ctx.io.err(`episode ${summary.episode}: ${format} state${summary.sha256 ? ` (sha256 ${summary.sha256})` : ''} written to ${opts.out}`);
      } finally {
        await store.close();
      }
    });
}

/** The built-in domains by name: what the store views above replay episodes recorded as their inputs with. */
function domainsByName(): Map<string, Domain<any>> {
  return new Map(builtinDomains().map((d) => [d.name, d]));
}

function findOrAdd(program: Command, name: string, description: string): Command {
  return program.commands.find((c) => c.name() === name) ?? program.command(name).description(description);
}

/**
 * EnvHarness's export of an episode of a domain without `episodeState` recorded as transitions: its recorded actions
 * replayed in a fresh episode (one recorded as its inputs replays with its own dynamics: `replayRecorded`).
 */
function replayedExport(domain: Domain<any>, task: StoredTask, transitions: Awaited<ReturnType<Store['listTransitions']>>, seed: number): string {
  const episode = createEpisode(domain, task, {});
  episode.reset({ seed });
  for (const t of transitions) if (episode.status === 'running') episode.step(sentInput(t.action));
  const recorded = transitions.at(-1)?.info.stateHash;
  if (recorded !== undefined && episode.stateHash() !== recorded) {
    throw new EnvHarnessError('INTERNAL', `replaying episode ${transitions[0]!.episodeId} gives state ${episode.stateHash()}, not the recorded ${recorded}; it was run with other dynamics options`);
  }
  return exportOf(episode);
}

/** The `json` format: EnvHarness's export of the episode's state, indented. */
function exportOf(episode: Episode): string {
  return JSON.stringify(episode.exportState(), null, 2) + '\n';
}
