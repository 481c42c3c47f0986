/** The `envharness` command line: argv -> harness, errors -> exit codes (src/cli/exit-codes.ts). */
import { Command, CommanderError } from 'commander';
import { EnvHarnessError, toEnvHarnessError } from '../index.js';
import { EXIT_CODES } from './exit-codes.js';
import { collect, type CliContext } from './options.js';
import { colors, processIo, type Io } from './output.js';
import { registerGenerationCommands } from './commands/generation.js';
import { registerSnapshotCommands } from './commands/snapshots.js';
import { registerTrainingCommands } from './commands/training.js';
import { registerReportCommands } from './commands/report.js';
import { registerDomainCommands } from './commands/domains.js';
import { registerServeCommands } from './commands/serve.js';
import { registerMcpCommands } from './commands/mcp.js';
import { registerWorkerCommands } from './commands/worker.js';

export { collect, parseFloatOption, parseIntOption, type CliContext, type GlobalOptions } from './options.js';

export function buildProgram(io: Io, env: NodeJS.ProcessEnv = process.env, setExitCode: (code: number) => void = () => {}): Command {
  const program = new Command('envharness')
    .description('Programmable, versioned, adaptive environments for training and evaluating AI agents.')
    .option('--store <location>', 'store: sqlite:<path>, a file path, :memory:, or postgres://user@host:port/db[?schema=name] (env ENVHARNESS_STORE)', env.ENVHARNESS_STORE ?? 'sqlite:.envharness/envharness.db')
    .option('--templates <file>', 'declarative template file (YAML/JSON); repeatable (env ENVHARNESS_TEMPLATES, comma-separated)', collect, [])
    .option('--json', 'print machine-readable JSON', false)
    .showHelpAfterError()
    .configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s) })
    .exitOverride();

  const ctx: CliContext = {
    io,
    setExitCode,
    globals() {
      const opts = program.opts<{ store: string; templates: string[]; json: boolean }>();
      const fromEnv = (env.ENVHARNESS_TEMPLATES ?? '').split(',').map((s) => s.trim()).filter(Boolean);
      return { store: opts.store, templates: [...fromEnv, ...opts.templates], json: opts.json };
    },
  };
  registerGenerationCommands(program, ctx);
  registerSnapshotCommands(program, ctx);
  registerTrainingCommands(program, ctx);
  registerReportCommands(program, ctx);
  registerDomainCommands(program, ctx);
  registerServeCommands(program, ctx);
  registerMcpCommands(program, ctx);
  registerWorkerCommands(program, ctx);
  for (const command of program.commands) command.exitOverride().configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s) });
  return program;
}

/** Runs the CLI; returns the exit code instead of exiting, so tests can call it in-process. */
export async function main(argv: string[], io: Io = processIo, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let exitCode = 0;
  const program = buildProgram(io, env, (code) => {
    exitCode = code;
  });
  try {
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
