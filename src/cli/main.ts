/** The `envharness` command line: argv -> harness, errors -> exit codes (src/cli/exit-codes.ts). */
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { EnvHarnessError, toEnvHarnessError } from '../index.js';
import { EXIT_CODES } from './exit-codes.js';
import { colors, processIo, type Io } from './output.js';
import { registerGenerationCommands } from './commands/generation.js';
import { registerSnapshotCommands } from './commands/snapshots.js';
import { registerTrainingCommands } from './commands/training.js';
import { registerReportCommands } from './commands/report.js';
import { registerInteropCommands } from './commands/interop.js';
import { registerServeCommands } from './commands/serve.js';
import { registerMcpCommands } from './commands/mcp.js';

/** Options every command may read (global flags and ENVHARNESS_* variables, parsed once here). */
export interface GlobalOptions {
  store: string;
  templates: string[];
  json: boolean;
}

export interface CliContext {
  io: Io;
  globals(): GlobalOptions;
  /** Sets the process exit code for a command that ran but found problems. */
  setExitCode(code: number): void;
}

export function parseIntOption(name: string, min = Number.MIN_SAFE_INTEGER) {
  return (value: string): number => {
    if (!/^-?\d+$/.test(value.trim())) throw new InvalidArgumentError(`${name} must be an integer, got "${value}"`);
    const n = Number(value);
    if (n < min) throw new InvalidArgumentError(`${name} must be >= ${min}, got ${n}`);
    return n;
  };
}

export function parseFloatOption(name: string, min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isFinite(n) || n < min || n > max) throw new InvalidArgumentError(`${name} must be a number in [${min}, ${max}], got "${value}"`);
    return n;
  };
}

export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

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
  registerInteropCommands(program, ctx);
  registerServeCommands(program, ctx);
  registerMcpCommands(program, ctx);
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
