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
  stop(): void;
}

/** A progress bar on stderr: redraws in a TTY, prints occasional lines elsewhere (CI logs). */
export function progress(io: Io, label: string, enabled = true): Progress {
  if (!enabled) return { update() {}, stop() {} };
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
    stop() {
      if (started) bar.stop();
    },
  };
}

export const colors = pc;
