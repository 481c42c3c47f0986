/** What a first user hits on the CLI (issue 13 items 5 and 7): each case refuses with a typed error or works. */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { Io } from '../../src/cli/output.js';
import { describeFill } from '../../src/cli/fill.js';

const dir = mkdtempSync(join(tmpdir(), 'envharness-first-user-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const store = join(dir, 'store.db');

async function run(...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const io: Io = { out: (s) => out.push(s), err: (s) => err.push(s), isTTY: false };
  const code = await main(['node', 'envharness', ...(args[0] === '--store' ? [] : ['--store', store]), ...args], io, {});
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('first-user CLI cases', { timeout: 300_000 }, () => {
  it('refuses an unknown store scheme instead of creating a file named after it', async () => {
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      const r = await run('--store', 'mysql://user:secret@db.example/envharness', 'pool', 'stats');
      expect(r.code).toBe(2);
      expect(r.err).toContain('CONFIG_INVALID');
      expect(r.err).toContain('mysql:');
      expect(r.err).not.toContain('secret');
      expect(existsSync(join(dir, 'mysql:'))).toBe(false);
    } finally {
      process.chdir(cwd);
    }
  });

  it('eval --split foo names the valid splits; --level 3-1 is refused; -k is --k', async () => {
    const split = await run('eval', '--split', 'foo');
    expect(split.code).toBe(2);
    expect(split.err).toMatch(/PARAMS_INVALID.*regression, dynamic, heldout/);
    const level = await run('generate', '--template', 'math/chain-sum', '--level', '3-1', '--count', '2');
    expect(level.code).toBe(2);
    expect(level.err).toMatch(/PARAMS_INVALID.*3-1.*1-3/);
    const k = await run('--json', 'eval', '--agent', 'oracle', '-k', '2', '--limit', '1', '--agent-state', join(dir, 'none.json'));
    expect(k.code, k.err).toBe(0);
    expect(JSON.parse(k.out).rows[0].passK).toHaveLength(2);
  });

  it('report --out to an unwritable path is a typed error naming the path, without a stack trace', async () => {
    // Under a regular file: no directory can be made there (ENOTDIR).
    writeFileSync(join(dir, 'a-file'), '');
    const target = join(dir, 'a-file', 'report.html');
    const r = await run('report', '--out', target);
    expect(r.code).toBe(2);
    expect(r.err).toContain('CONFIG_INVALID');
    expect(r.err).toContain(target);
    expect(r.err).not.toMatch(/\n\s+at .+:\d+:\d+/);
  });

  it('train starts a fresh learner unless --resume-agent, and runs compare warns when starting states differ', async () => {
    const state = join(dir, 'learner.json');
    const train = async (...extra: string[]) => {
      const r = await run('--json', 'train', '--domain', 'math', '--episodes', '40', '--eval-every', '0', '--per-level', '3', '--no-report', '--agent-state', state, ...extra);
      expect(r.code, r.err).toBe(0);
      return JSON.parse(r.out).runId as string;
    };
    const a = await train();
    const b = await train('--strategy', 'learnability');
    const c = await train('--resume-agent');
    const same = await run('runs', 'compare', a, b);
    expect(same.code).toBe(0);
    expect(same.err).not.toContain('started from different states');
    const differ = await run('runs', 'compare', a, c);
    expect(differ.code).toBe(0);
    expect(differ.err).toContain('started from different states');
    // Ids by unambiguous prefix, as other verbs take them; an ambiguous prefix says so.
    const shown = await run('runs', 'show', a.slice(0, -1) + a.slice(-1));
    expect(JSON.parse(shown.out).id).toBe(a);
    const ambiguous = await run('runs', 'show', 'train-');
    expect(ambiguous.code).toBe(3);
    expect(ambiguous.err).toContain('ambiguous');
  });

  it('review --approve takes an unambiguous task-id prefix', async () => {
    const generated = await run('--json', 'generate', '--template', 'math/chain-sum', '--level', '1', '--count', '4', '--seed', '9', '--review-share', '1');
    expect(generated.code, generated.err).toBe(0);
    const pending = JSON.parse((await run('--json', 'review', '--list')).out) as Array<{ taskId: string }>;
    expect(pending.length).toBeGreaterThan(0);
    const r = await run('--json', 'review', '--approve', pending[0]!.taskId.slice(0, 10), '--reviewer', 'test');
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ taskId: pending[0]!.taskId, status: 'approved' });
  });

  it('declarative templates (no code) train and evaluate from the CLI under their own domain', async () => {
    const templates = ['--templates', 'examples/templates/arithmetic.yaml'];
    const trained = await run(...templates, '--json', 'train', '--domain', 'arith', '--episodes', '20', '--eval-every', '0', '--per-level', '3', '--no-report', '--agent-state', join(dir, 'arith.json'));
    expect(trained.code, trained.err).toBe(0);
    expect(JSON.parse(trained.out).episodes).toBe(20);
    const evaluated = await run(...templates, '--json', 'eval', '--domain', 'arith', '--split', 'dynamic', '--agent', 'oracle', '--limit', '3', '--agent-state', join(dir, 'none.json'));
    expect(evaluated.code, evaluated.err).toBe(0);
    const rows = JSON.parse(evaluated.out).rows as Array<{ slice: string; passK: number[] }>;
    const slices = rows.filter((r) => r.slice !== '*'); // '*' is the total row
    expect(slices.length).toBeGreaterThan(0);
    expect(slices.every((r) => r.slice.startsWith('arith/') && r.passK[0] === 1), JSON.stringify(rows)).toBe(true);
  });

  it("train's fill message counts held-out tasks apart from the dynamic pool", () => {
    expect(describeFill({ dynamic: 3000, heldout: 500 })).toBe('generated 3000 tasks into the dynamic pool and 500 held-out tasks (never trained on)');
    expect(describeFill({ dynamic: 0, heldout: 0 })).toBeUndefined();
  });
});
