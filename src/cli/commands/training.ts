/** CLI: envharness train, eval, runs, experiment. */
import type { Command } from 'commander';
import type { CliContext } from '../main.js';

export function registerTrainingCommands(_program: Command, _ctx: CliContext): void {}
