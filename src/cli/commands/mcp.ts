/** CLI: envharness mcp (MCP server). */
import type { Command } from 'commander';
import type { CliContext } from '../main.js';

export function registerMcpCommands(_program: Command, _ctx: CliContext): void {}
