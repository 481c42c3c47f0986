/** CLI: envharness mcp (one episode's tools as an MCP server on stdio). */
import { randomUUID } from 'node:crypto';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { EnvHarnessError, SPLITS, type Split } from '../../index.js';
import { createMcpServer, type EpisodeSelector } from '../../mcp/index.js';
import { openHarness } from '../open.js';
import { parseIntOption, type CliContext } from '../options.js';

interface McpFlags {
  task?: string;
  taskType?: string;
  level?: number;
  split?: string;
  seed: number;
  record: boolean;
}

export function registerMcpCommands(program: Command, ctx: CliContext): void {
  program
    .command('mcp')
    .description('serve one episode over MCP on stdio: the task\'s tools plus reset, status, message and finish')
    .option('--task <id>', 'task id to start with (default: drawn from the dynamic pool)')
    .option('--task-type <type>', 'draw tasks of this type')
    .option('--level <n>', 'draw tasks at this level (1-based)', parseIntOption('--level', 1))
    .option('--split <split>', 'pool split to draw from: regression | dynamic | heldout', splitOption)
    .option('--seed <n>', 'episode seed', parseIntOption('--seed'), 0)
    .option('--no-record', 'do not record transitions to the store')
    .addHelpText(
      'after',
      '\nstdout carries the MCP protocol; messages go to stderr. Point an MCP client at\n  {"command": "envharness", "args": ["mcp", "--task-type", "arithmetic", "--level", "1"]}',
    )
    .action(async (flags: McpFlags) => {
      if (flags.task !== undefined && (flags.taskType !== undefined || flags.level !== undefined)) {
        throw new EnvHarnessError('PARAMS_INVALID', 'give either --task or --task-type/--level, not both', { details: { pointer: '/task' } });
      }
      const defaults: EpisodeSelector = { seed: flags.seed };
      if (flags.task !== undefined) defaults.taskId = flags.task;
      if (flags.taskType !== undefined) defaults.taskType = flags.taskType;
      if (flags.level !== undefined) defaults.level = flags.level;
      if (flags.split !== undefined) defaults.split = flags.split as Split;

      const harness = await openHarness(ctx.globals());
      try {
        const mcp = await createMcpServer({
          harness,
          defaults,
          record: flags.record,
          // Several servers may share one store: a random suffix keeps their episode ids apart.
          episodeId: ({ taskId, seed }) => `mcp:${taskId.slice(0, 16)}:${seed}:${randomUUID().slice(0, 8)}`,
        });
        const transport = new StdioServerTransport();
        const stopped = new Promise<string>((resolve) => {
          mcp.server.server.onclose = () => resolve('closed');
          process.stdin.once('end', () => resolve('stdin ended'));
          process.once('SIGINT', () => resolve('SIGINT'));
          process.once('SIGTERM', () => resolve('SIGTERM'));
        });
        await mcp.connect(transport);
        const status = await mcp.session.status();
        ctx.io.err(`envharness mcp: episode ${status.episodeId} of task ${status.task.id.slice(0, 12)} (${status.task.template}, level ${status.task.level}); tools: ${status.tools.join(', ') || '(none)'}; serving on stdio`);
        const why = await stopped;
        await mcp.close();
        ctx.io.err(`envharness mcp: stopped (${why})`);
      } finally {
        await harness.close();
      }
    });
}

function splitOption(value: string): string {
  if (!(SPLITS as readonly string[]).includes(value)) throw new InvalidArgumentError(`--split must be one of ${SPLITS.join(', ')}, got "${value}"`);
  return value;
}
