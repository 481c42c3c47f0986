/** CLI: envharness report, doctor, export. */
import type { Command } from 'commander';
import type { CliContext } from '../main.js';

export function registerReportCommands(_program: Command, _ctx: CliContext): void {}
