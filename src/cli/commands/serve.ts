/** CLI: envharness serve (HTTP API). */
import type { Command } from 'commander';
import type { CliContext } from '../main.js';

export function registerServeCommands(_program: Command, _ctx: CliContext): void {}
