/** Terminal output: tables, JSON, colours, and progress bars on stderr. */
import cliProgress from 'cli-progress';
import pc from 'picocolors';

export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
  isTTY: boolean;
}

export const processIo: Io = {
  out: (text) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
  err: (text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
  isTTY: Boolean(process.stderr.isTTY),
};

export function printJson(io: Io, value: unknown): void {
  io.out(JSON.stringify(value, null, 2));
}

/** A plain aligned table. */
export function table(rows: Array<Record<string, unknown>>, columns?: string[]): string {
  if (rows.length === 0) return '(none)';
  const cols = columns ?? [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const cells = rows.map((r) => cols.map((c) => (r[c] === undefined || r[c] === null ? '' : String(r[c]))));
  const widths = cols.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)));
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i]!)).join('  ').trimEnd();
  return [pc.bold(line(cols)), ...cells.map(line)].join('\n');
}

export interface Progress {
  update(done: number, total: number): void;
  /** Prints a line above the bar; the only safe way to write to the terminal while the bar runs. */
  log(text: string): void;
  stop(): void;
}

/** A progress bar on stderr: redraws in a TTY, prints occasional lines elsewhere (CI logs). */
export function progress(io: Io, label: string, enabled = true): Progress {
  if (!enabled) return { update() {}, log: (text) => io.err(text), stop() {} };
  const bar = new cliProgress.SingleBar(
    {
      format: `${label} [{bar}] {percentage}% | {value}/{total} | {eta_formatted} left`,
      stream: process.stderr,
      noTTYOutput: !io.isTTY,
      notTTYSchedule: 2000,
      hideCursor: io.isTTY,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update(done, total) {
      if (!started) {
        bar.start(total, 0);
        started = true;
      }
      bar.setTotal(total);
      bar.update(done);
    },
    log(text) {
      if (!started || !io.isTTY) return io.err(text);
      // cli-progress saves the cursor when the bar starts and restores it on stop(): a line written below
      // the bar would make stop() jump back up, and the summary printed next would land on top of these
      // lines, leaving their tails visible. So clear the bar's line, write the text, and save the cursor
      // again at the line the bar now occupies (it redraws there on its next tick).
      process.stderr.write(`\r\x1b[2K${text.endsWith('\n') ? text : `${text}\n`}\x1b7`);
    },
    stop() {
      if (started) bar.stop();
    },
  };
}

export const colors = pc;
