/** Test support: runs the CLI in-process against one store and captures what it prints. */
import { main } from './main.js';
import type { Io } from './output.js';

/** What one in-process CLI call returned and printed. */
export interface CliOutcome {
  code: number;
  out: string;
  err: string;
}

/** A function that runs `envharness --store <store> ...args` in this process, with output captured. */
export function cliRunner(store: string): (...args: string[]) => Promise<CliOutcome> {
  return async (...args) => {
    const out: string[] = [];
    const err: string[] = [];
    const io: Io = { out: (s) => out.push(s), err: (s) => err.push(s), isTTY: false };
    const code = await main(['node', 'envharness', '--store', store, ...args], io, {});
    return { code, out: out.join('\n'), err: err.join('\n') };
  };
}
