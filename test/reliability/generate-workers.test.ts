/** Issue 14 §6: `envharness generate --workers 2` works from the CLI and gives the batch `--workers 1` gives. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const dir = mkdtempSync(join(tmpdir(), 'envharness-workers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function generate(workers: number): { digest: string; accepted: number } {
  const out = execFileSync(
    process.execPath,
    [join(root, 'bin/envharness.js'), '--store', join(dir, `w${workers}.db`), '--json', 'generate', '--template', 'math/chain-sum@1', '--level', '1', '--level', '2', '--count', '600', '--seed', '3', '--workers', String(workers)],
    { cwd: dir, encoding: 'utf8' },
  );
  return JSON.parse(out) as { digest: string; accepted: number };
}

describe('generate --workers from the CLI', () => {
  it('with 2 workers gives the same batch as with 1', { timeout: 120_000 }, () => {
    const one = generate(1);
    const two = generate(2);
    expect(two.accepted).toBeGreaterThan(0);
    expect(two.digest).toBe(one.digest);
  });
});
