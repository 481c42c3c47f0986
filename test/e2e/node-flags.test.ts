/**
 * The node flags the `envharness` command runs with (core's NODE_HEAP_FLAGS: a 64 MiB semi-space): given by
 * bin/envharness.js's first line, which npm's bin link executes, and by the test/bench fixtures that start
 * `serve` as that command does.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE_HEAP_FLAGS, SEMI_SPACE_MB, WORKER_HEAP_LIMITS } from '../../src/index.js';

const BIN = 'bin/envharness.js';

describe('node flags of the envharness command', () => {
  it("bin/envharness.js's first line starts node with exactly NODE_HEAP_FLAGS", () => {
    const first = readFileSync(BIN, 'utf8').split('\n')[0]!;
    expect(first).toMatch(/^#!\/usr\/bin\/env -S node( |$)/);
    expect(first.replace(/^#!\/usr\/bin\/env -S node ?/, '').split(' ').filter(Boolean)).toEqual(NODE_HEAP_FLAGS);
    expect(NODE_HEAP_FLAGS).toEqual([`--max-semi-space-size=${SEMI_SPACE_MB}`]);
    // V8's young generation is three semi-spaces: a worker given this limit has the same semi-space.
    expect(WORKER_HEAP_LIMITS.maxYoungGenerationSizeMb).toBe(3 * SEMI_SPACE_MB);
  });

  it.runIf(process.platform === 'linux')('a server started as an executable (as npm links it) runs node with the flags', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'envharness-flags-'));
    // Executed directly: the kernel reads the first line, env finds node on PATH and passes the flags.
    const child = spawn(BIN, ['--store', `sqlite:${join(dir, 's.db')}`, 'serve', '--port', '0', '--no-mcp'], {
      env: { ...process.env, ENVHARNESS_TOKEN: 'node-flags-test-token-0123456789', NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let err = '';
      child.stderr!.on('data', (d) => (err += d));
      await new Promise<void>((resolve, reject) => {
        let out = '';
        child.stdout!.on('data', (d) => {
          out += d;
          if (/listening on http:\/\/127\.0\.0\.1:\d+/.test(out)) resolve();
        });
        child.on('exit', (code) => reject(new Error(`serve exited with ${code}: ${err}`)));
      });
      // env replaces itself with node (same pid): the server's own command line holds the flags.
      const argv = readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0');
      expect(argv[0]).toMatch(/node$/);
      expect(argv.slice(1, 1 + NODE_HEAP_FLAGS.length)).toEqual(NODE_HEAP_FLAGS);
      expect(argv[1 + NODE_HEAP_FLAGS.length]).toMatch(/bin\/envharness\.js$/);
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once('exit', resolve)));
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
