/**
 * `envharness train --resume RUN` end to end: the real CLI process SIGKILLed once its run has passed a
 * seeded checkpoint (read from the SQLite file while it trains), then resumed by a second CLI process,
 * prints the same summary and saves the same learner state as an uninterrupted `train`. Refusals exit
 * with their codes and name the fix.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRng } from '../../src/core/index.js';
import { EXIT_CODES } from '../../src/cli/exit-codes.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const bin = join(root, 'bin/envharness.js');
const dir = mkdtempSync(join(tmpdir(), 'envharness-resume-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const base = join(dir, 'base.db');
// Long enough that the 20 ms poll below sees the kill point (16-64 episodes) well before the run ends: math
// episodes take ~0.2 ms each, so 96 episodes could end between two polls on a quiet machine.
const TRAIN = ['train', '--domain', 'math', '--episodes', '2400', '--seed', '4', '--eval-every', '800', '--checkpoint-every', '16', '--no-report', '--json'];

interface Run { code: number | null; signal: NodeJS.Signals | null; out: string; err: string }

/** Runs the CLI; with `killAt`, SIGKILLs it once the run's checkpoint in `store` has passed that many episodes. */
function cli(store: string, args: string[], killAt?: number): Promise<Run> {
  return new Promise((done, fail) => {
    const p = spawn(process.execPath, [bin, '--store', store, ...args], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    p.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    let poll: ReturnType<typeof setInterval> | undefined;
    if (killAt !== undefined) {
      poll = setInterval(() => {
        let db: BetterSqlite3.Database | undefined;
        try {
          db = new BetterSqlite3(store, { readonly: true, fileMustExist: true });
          const row = db.prepare("SELECT value FROM meta WHERE key = 'train.checkpoint:train-1'").get() as { value: string } | undefined;
          const episodes = row ? (JSON.parse(row.value) as { episodes?: number } | null)?.episodes : undefined;
          if (episodes !== undefined && episodes >= killAt) p.kill('SIGKILL');
        } catch {
          // Not there yet (the CLI is still opening the store).
        } finally {
          db?.close();
        }
      }, 20);
    }
    p.on('error', fail);
    p.on('close', (code, signal) => {
      if (poll) clearInterval(poll);
      done({ code, signal, out, err });
    });
  });
}

/** The JSON summary a `--json` train prints, without the paths that differ between the two stores. */
function summaryOf(run: Run): unknown {
  const { agentState: _path, ...summary } = JSON.parse(run.out) as Record<string, unknown>;
  return summary;
}

beforeAll(async () => {
  const fill = await cli(base, ['pool', 'fill', '--template', 'math/chain-sum@1', '--template', 'math/count-letters@1', '--per-level', '12']);
  expect(fill.code, fill.err).toBe(0);
}, 240_000);

describe('envharness train --resume', () => {
  it('a CLI run killed after a seeded checkpoint, resumed by another CLI process, ends as the uninterrupted run', { timeout: 300_000 }, async () => {
    const reference = join(dir, 'reference.db');
    const killed = join(dir, 'killed.db');
    copyFileSync(base, reference);
    copyFileSync(base, killed);
    const straight = await cli(reference, [...TRAIN, '--agent-state', join(dir, 'reference.json')]);
    expect(straight.code, straight.err).toBe(0);

    const at = createRng(['t-resume-cli', 4]).int(16, 64);
    const first = await cli(killed, [...TRAIN, '--agent-state', join(dir, 'killed.json')], at);
    expect(first.signal, first.err).toBe('SIGKILL');
    // A different option is refused before anything changes, naming the flag.
    const mismatch = await cli(killed, ['train', '--resume', 'train-1', '--episodes', '50', '--no-report']);
    expect(mismatch.code).toBe(EXIT_CODES.PARAMS_INVALID);
    expect(mismatch.err).toContain('--episodes 50 differs from run train-1');
    const resumed = await cli(killed, ['train', '--resume', 'train-1', '--no-report', '--json', '--agent-state', join(dir, 'killed.json')]);
    expect(resumed.code, resumed.err).toBe(0);
    expect(summaryOf(resumed)).toEqual(summaryOf(straight));
    expect(readFileSync(join(dir, 'killed.json'), 'utf8')).toBe(readFileSync(join(dir, 'reference.json'), 'utf8'));

    // A finished run and an unknown one are refused with their codes.
    const again = await cli(killed, ['train', '--resume', 'train-1', '--no-report']);
    expect(again.code).toBe(EXIT_CODES.RUN_NOT_RESUMABLE);
    expect(again.err).toContain('it has finished');
    const unknown = await cli(killed, ['train', '--resume', 'train-7', '--no-report']);
    expect(unknown.code).toBe(EXIT_CODES.RUN_NOT_FOUND);
  });
});
