/** The `envharness` command line: argv -> harness, errors -> exit codes (src/cli/exit-codes.ts). */
import { Command, CommanderError } from 'commander';
// Only what every invocation needs is imported here; each command's modules load when it runs.
import { EnvHarnessError, toEnvHarnessError } from '../core/errors.js';
import { EXIT_CODES } from './exit-codes.js';
import { collect, type CliContext } from './options.js';
import { colors, processIo, type Io } from './output.js';

export { collect, parseFloatOption, parseIntOption, type CliContext, type GlobalOptions } from './options.js';

type Register = (program: Command, ctx: CliContext) => void;

/**
 * The top-level commands, by the module that registers them, with the one-line description `--help`
 * lists (checked against the modules' own in src/cli/main.test.ts). Only the module of the command that
 * runs is imported, so `envharness --help` loads no harness, server or SDK.
 */
export const COMMAND_MODULES: ReadonlyArray<{ commands: Readonly<Record<string, string>>; load: () => Promise<Register> }> = [
  {
    commands: {
      templates: 'list and inspect registered templates',
      generate: 'generate a batch of tasks through the quality gates and store it',
      batches: 'generated batches and their manifests',
      pool: 'the task pool',
      review: 'human review queue: one task at a time, approve or reject with a note',
      split: 'the frozen regression split and its lockfile',
    },
    load: async () => (await import('./commands/generation.js')).registerGenerationCommands,
  },
  {
    commands: { snapshot: 'complete environment versions: create, export, import, restore, diff' },
    load: async () => (await import('./commands/snapshots.js')).registerSnapshotCommands,
  },
  {
    commands: {
      train: 'the main job: train an agent under an adaptive curriculum, guarded by the frozen regression set',
      eval: 'evaluate an agent on a split with the curriculum frozen: pass^1..pass^k per slice',
      experiment: 'measured claims',
      runs: 'experiment records',
    },
    load: async () => (await import('./commands/training.js')).registerTrainingCommands,
  },
  {
    commands: {
      report: 'write a self-contained HTML report of a run: difficulty curves, slice weights, success by type × level, regression vs dynamic, generation log, feedback, pass^k',
      doctor: 'walk the troubleshooting chain for a run: generation log → sampling weights → difficulty curve → fixed regression set (exit 8 on errors)',
      export: "export a run's tasks, episodes, transitions or chat-format trajectories as JSONL or Parquet (schema: docs/export.md)",
    },
    load: async () => (await import('./commands/report.js')).registerReportCommands,
  },
  {
    // The commands the built-in domains contribute (Domain.commands), and `episode state`.
    commands: {
      episode: 'recorded episodes',
      import: 'import task sets from other benchmarks',
      'tau-bench': 'run agents on imported tau-bench tasks',
      web: 'open a task of a domain that draws pages in a real browser',
    },
    load: async () => (await import('./commands/domains.js')).registerDomainCommands,
  },
  {
    commands: { serve: 'serve the HTTP API v1 (OpenAPI document at /v1/openapi.json); binds 127.0.0.1 unless told otherwise' },
    load: async () => (await import('./commands/serve.js')).registerServeCommands,
  },
  {
    commands: { mcp: "serve one episode over MCP on stdio: the task's tools plus reset, status, message and finish" },
    load: async () => (await import('./commands/mcp.js')).registerMcpCommands,
  },
  {
    commands: { worker: 'generate pool refills queued by serve replicas (needs --store postgres://…); runs until SIGINT/SIGTERM' },
    load: async () => (await import('./commands/worker.js')).registerWorkerCommands,
  },
];

/** Global options that take a value (skipped when looking for the command name in argv). */
const VALUE_OPTIONS = new Set(['--store', '--templates', '--record-as']);

/** The command argv names (`help train` names train), or undefined for none. */
export function commandName(argv: readonly string[]): string | undefined {
  const words: string[] = [];
  for (let i = 2; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') break;
    if (VALUE_OPTIONS.has(arg)) i++;
    else if (!arg.startsWith('-')) words.push(arg);
    if (words.length === 2 || (words.length === 1 && words[0] !== 'help')) break;
  }
  return words[0] === 'help' ? words[1] : words[0];
}

/**
 * The program with every command registered (all modules loaded); `main` registers only the one that
 * runs. For tests and tools that inspect the whole command tree.
 */
export async function buildProgram(io: Io, env: NodeJS.ProcessEnv = process.env, setExitCode: (code: number) => void = () => {}): Promise<Command> {
  return buildProgramFor(undefined, io, env, setExitCode, true);
}

async function buildProgramFor(name: string | undefined, io: Io, env: NodeJS.ProcessEnv, setExitCode: (code: number) => void, all = false): Promise<Command> {
  const program = new Command('envharness')
    .description('Programmable, versioned, adaptive environments for training and evaluating AI agents.')
    .option('--store <location>', 'store: sqlite:<path>, a file path, :memory:, or postgres://user@host:port/db[?schema=name] (env ENVHARNESS_STORE)', env.ENVHARNESS_STORE ?? 'sqlite:.envharness/envharness.db')
    .option('--templates <file>', 'declarative template file (YAML/JSON); repeatable (env ENVHARNESS_TEMPLATES, comma-separated)', collect, [])
    .option(
      '--record-as <how>',
      'how train and eval record episodes: inputs (actions and final state hash; transitions rebuilt by replay when read) or transitions (every step written) (env ENVHARNESS_RECORD_AS)',
      env.ENVHARNESS_RECORD_AS ?? 'inputs',
    )
    .option('--json', 'print machine-readable JSON', false)
    .showHelpAfterError()
    .configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s) })
    .exitOverride();

  const ctx: CliContext = {
    io,
    setExitCode,
    globals() {
      const opts = program.opts<{ store: string; templates: string[]; recordAs: string; json: boolean }>();
      const fromEnv = (env.ENVHARNESS_TEMPLATES ?? '').split(',').map((s) => s.trim()).filter(Boolean);
      return { store: opts.store, templates: [...fromEnv, ...opts.templates], recordAs: opts.recordAs, json: opts.json };
    },
  };
  for (const module of COMMAND_MODULES) {
    if (all || (name !== undefined && name in module.commands)) (await module.load())(program, ctx);
    else for (const [command, description] of Object.entries(module.commands)) program.command(command).description(description);
  }
  for (const command of program.commands) command.exitOverride().configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s) });
  return program;
}

/** Runs the CLI; returns the exit code instead of exiting, so tests can call it in-process. */
export async function main(argv: string[], io: Io = processIo, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let exitCode = 0;
  try {
    const program = await buildProgramFor(commandName(argv), io, env, (code) => {
      exitCode = code;
    });
    await program.parseAsync(argv);
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') return 0;
      return 2;
    }
    const e = toEnvHarnessError(error);
    const json = argv.includes('--json');
    if (json) io.out(JSON.stringify({ error: e.toJSON() }, null, 2));
    else {
      io.err(`${colors.red('error')} ${colors.bold(e.code)}: ${e.message}`);
      if (e.details?.pointer) io.err(`  at ${e.details.pointer}`);
      if (e.code === 'INTERNAL' && e.cause instanceof Error && e.cause.stack) io.err(colors.dim(e.cause.stack));
    }
    return EXIT_CODES[e.code];
  }
}

export { EnvHarnessError };
