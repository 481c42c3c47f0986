/** The summary after a progress bar, as a terminal shows it (issue 13 item 7): run the CLI under a real pseudo-terminal. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const bin = fileURLToPath(new URL('../../bin/envharness.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'envharness-terminal-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Python's pty module gives the CLI a real terminal on stdout and stderr (isTTY true, so cli-progress
// redraws in place); the bytes the terminal receives come back on our stdout.
const PTY_RUNNER = `
import os, pty, sys, fcntl, termios, struct
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', 60, 300, 0, 0))
out = bytearray()
while True:
    try:
        chunk = os.read(fd, 65536)
    except OSError:
        break
    if not chunk:
        break
    out.extend(chunk)
_, status = os.waitpid(pid, 0)
sys.stdout.buffer.write(bytes(out))
sys.exit(os.waitstatus_to_exitcode(status))
`;

/**
 * The final screen for a byte stream: a small terminal that applies what cli-progress and the CLI emit
 * (\r, \n, ESC[nG column, ESC[nA up, ESC[K / ESC[0K / ESC[2K clears, ESC 7 / ESC 8 cursor save and restore;
 * colours and mode switches ignored). No height limit, so a saved position stays on its line.
 */
function screen(bytes: string): string[] {
  const rows: string[] = [''];
  let r = 0;
  let c = 0;
  let saved = { r: 0, c: 0 };
  const put = (ch: string) => {
    const row = rows[r]!.padEnd(c, ' ');
    rows[r] = row.slice(0, c) + ch + row.slice(c + 1);
    c++;
  };
  for (let i = 0; i < bytes.length; i++) {
    const ch = bytes[i]!;
    if (ch === '\r') c = 0;
    else if (ch === '\n') {
      r++;
      if (rows.length <= r) rows.push('');
    } else if (ch === '\x1b') {
      const next = bytes[i + 1];
      if (next === '7') { saved = { r, c }; i++; continue; }
      if (next === '8') { ({ r, c } = saved); i++; continue; }
      if (next !== '[') continue;
      const m = /^\[(\??)([\d;]*)([A-Za-z])/.exec(bytes.slice(i + 1, i + 20));
      if (!m) continue;
      i += m[0].length;
      const n = m[2] === '' ? undefined : Number(m[2]);
      if (m[1] === '?') continue;
      if (m[3] === 'G') c = (n ?? 1) - 1;
      else if (m[3] === 'A') r = Math.max(0, r - (n ?? 1));
      else if (m[3] === 'K') {
        if ((n ?? 0) === 0) rows[r] = rows[r]!.slice(0, c);
        else if (n === 2) rows[r] = '';
      }
    } else if (ch >= ' ') put(ch);
  }
  return rows.map((row) => row.trimEnd());
}

describe('summary after progress bars in a terminal', { timeout: 300_000 }, () => {
  it('train: the summary table is intact on the final screen, with no leftover bar or progress text', () => {
    const store = join(dir, 'train.db');
    const bytes = execFileSync('python3', ['-c', PTY_RUNNER, process.execPath, bin, '--store', store, 'train', '--episodes', '60', '--no-report', '--agent-state', join(dir, 'learner.json')], {
      encoding: 'latin1',
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' },
    });
    // The run printed mid-run progress lines (@N ...) between the bar and the summary: the case that broke.
    expect(bytes).toMatch(/@\d+\S* success /);
    const rows = screen(bytes);
    const start = rows.findIndex((row) => /^run train-\d+: 60 episodes, success [\d.]+, strategy /.test(row));
    expect(start, rows.join('\n')).toBeGreaterThanOrEqual(0);
    expect(rows[start + 1]).toMatch(/^slice +level +weight +episodes +success +window \(95% CI\)$/);
    const slices = rows.slice(start + 2, start + 12);
    expect(slices).toHaveLength(10);
    for (const row of slices) expect(row).toMatch(/^retail\/[a-z_]+ +\d+ +[\d.]+ +\d+ +[\d.]+ +[\d.]+ \[[\d.]+, [\d.]+\]$/);
    const after = rows.slice(start + 12).filter((row) => row !== '');
    expect(after.some((row) => /^environment: snapshot [0-9a-f]{12} -> [0-9a-f]{12}$/.test(row))).toBe(true);
    // Nothing of the bar or of the progress lines is left anywhere after the summary begins.
    for (const row of rows.slice(start)) {
      expect(row).not.toMatch(/training learner|generating tasks|@\d+|\d+% \|/);
    }
    // The progress lines themselves survive above the summary, each on its own line.
    expect(rows.slice(0, start).filter((row) => /^ {2}@\d+ success /.test(row)).length).toBeGreaterThanOrEqual(4);
  });
});

describe('a reader that goes away', () => {
  it('ends the command quietly on EPIPE (`envharness templates list | head`), not with a stack trace', async () => {
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, [bin, '--store', `sqlite:${join(dir, 'epipe.db')}`, 'templates', 'list'], { stdio: ['ignore', 'pipe', 'pipe'] });
    // Closing our end before the CLI writes makes its first write fail with EPIPE.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
    expect(stderr).not.toMatch(/EPIPE|Error/);
    expect(code).toBe(0);
  }, 60_000);
});
