/**
 * Sequences of CLI verbs on one store: whatever an accepted command leaves behind, every later verb
 * still works or refuses with its own error (issue 13: `generate --split regression` once bricked it).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliRunner } from '../../src/cli/testing.js';
import { EXIT_CODES, EXIT_FINDINGS } from '../../src/cli/exit-codes.js';

const dir = mkdtempSync(join(tmpdir(), 'envharness-cli-sequence-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A verb and the exit codes it may end with: 0, or a refusal that is its own (never another verb's leftovers). */
interface Verb { name: string; args: (ctx: { dir: string; snapshot?: string }) => string[]; allowed: number[] }

const probes: Verb[] = [
  { name: 'pool stats', args: () => ['pool', 'stats'], allowed: [0] },
  { name: 'runs list', args: () => ['runs', 'list'], allowed: [0] },
  { name: 'snapshot list', args: () => ['snapshot', 'list'], allowed: [0] },
  { name: 'snapshot create', args: () => ['--json', 'snapshot', 'create'], allowed: [0] },
  { name: 'snapshot restore', args: (c) => ['snapshot', 'restore', c.snapshot!], allowed: [0] },
  { name: 'eval', args: (c) => ['eval', '--agent', 'oracle', '--limit', '2', '--agent-state', join(c.dir, 'learner.json')], allowed: [0] },
  { name: 'doctor', args: () => ['doctor'], allowed: [0, EXIT_FINDINGS] },
  { name: 'report', args: (c) => ['report', '--out', join(c.dir, 'report.html')], allowed: [0] },
  // The lockfile is the user's: after a deliberate change of the split it may disagree (its own finding).
  { name: 'split verify', args: (c) => ['split', 'verify', '--lockfile', join(c.dir, 'lock.json')], allowed: [0, EXIT_CODES.LOCKFILE_MISMATCH, EXIT_CODES.CONFIG_INVALID] },
];

const mutators: Verb[] = [
  // The command: on a store whose shipped regression set is frozen it is refused, changing nothing.
  { name: 'generate regression', args: () => ['generate', '--template', 'retail/cancel', '--count', '5', '--split', 'regression'], allowed: [0, EXIT_CODES.SPLIT_FROZEN] },
  { name: 'split unfreeze', args: () => ['split', 'unfreeze'], allowed: [0] },
  { name: 'split freeze', args: (c) => ['split', 'freeze', '--lockfile', join(c.dir, 'lock.json')], allowed: [0] },
  { name: 'generate dynamic', args: () => ['generate', '--template', 'retail/return-refund', '--count', '4', '--seed', '3'], allowed: [0] },
  { name: 'train', args: (c) => ['train', '--episodes', '20', '--per-level', '2', '--eval-every', '10', '--no-report', '--agent-state', join(c.dir, 'learner.json')], allowed: [0] },
];

/** A fixed permutation per seed (no Math.random: the sequences are the same on every run). */
function permute<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let x = seed + 1;
  for (let i = out.length - 1; i > 0; i--) {
    x = (x * 1103515245 + 12345) % 2147483648;
    const j = x % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

describe('CLI verb sequences on one store', { timeout: 600_000 }, () => {
  it('the shipped regression set is frozen when installed: generating into it is SPLIT_FROZEN and changes nothing', async () => {
    const run = cliRunner(join(dir, 'frozen.db'));
    const before = await run('--json', 'pool', 'stats');
    expect(before.code).toBe(0);
    const refused = await run('generate', '--template', 'retail/cancel', '--count', '5', '--split', 'regression');
    expect(refused.code).toBe(EXIT_CODES.SPLIT_FROZEN);
    expect(refused.err).toContain('SPLIT_FROZEN');
    const after = await run('--json', 'pool', 'stats');
    expect(JSON.parse(after.out).bySplit).toEqual(JSON.parse(before.out).bySplit);
    // Unfrozen deliberately, the same command is accepted, and the store stays usable.
    expect((await run('split', 'unfreeze')).code).toBe(0);
    expect((await run('generate', '--template', 'retail/cancel', '--count', '5', '--split', 'regression')).code).toBe(0);
    for (const args of [['pool', 'stats'], ['runs', 'list'], ['snapshot', 'list'], ['split', 'unfreeze'], ['doctor']]) {
      const r = await run(...args);
      expect(r.err).not.toContain('LOCKFILE_MISMATCH');
      expect([0, EXIT_FINDINGS, EXIT_CODES.RUN_NOT_FOUND], `${args.join(' ')}: ${r.err}`).toContain(r.code);
    }
  });

  for (const seed of [0, 1]) {
    it(`sequence ${seed}: after each accepted command, every probe still works or refuses with its own error`, async () => {
      const store = join(dir, `sequence-${seed}.db`);
      const run = cliRunner(store);
      const ctx: { dir: string; snapshot?: string } = { dir };
      const log: string[] = [];
      const check = async (verb: Verb) => {
        if (verb.name === 'snapshot restore' && ctx.snapshot === undefined) return;
        const r = await run(...verb.args(ctx));
        log.push(`${verb.name} -> ${r.code}`);
        expect(verb.allowed, `${log.join(', ')}\n${r.err}`).toContain(r.code);
        if (verb.name === 'snapshot create') ctx.snapshot = (JSON.parse(r.out) as { id: string }).id;
      };
      for (const verb of probes) await check(verb);
      for (const mutator of permute([...mutators, ...mutators], seed)) {
        await check(mutator);
        for (const verb of probes) await check(verb);
      }
    });
  }
});
