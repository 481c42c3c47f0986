/** CLI: envharness import tau-bench, envharness episode state. */
import type { Command } from 'commander';
import type { CliContext } from '../main.js';

export function registerInteropCommands(_program: Command, _ctx: CliContext): void {}
