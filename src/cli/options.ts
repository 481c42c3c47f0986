/** CLI option parsing and the context every command gets (kept out of main.ts so commands do not import it back). */
import { InvalidArgumentError } from 'commander';
import type { Io } from './output.js';

/** Options every command may read (global flags and ENVHARNESS_* variables, parsed once here). */
export interface GlobalOptions {
  store: string;
  templates: string[];
  /** `--record-as`: checked by `createHarness` (CONFIG_INVALID names the accepted values). */
  recordAs?: string;
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
