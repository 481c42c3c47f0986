/**
 * The node flags the `envharness` command runs with (core's NODE_HEAP_FLAGS: a 64 MiB semi-space): given by
 * bin/envharness.js's first line, which npm's bin link executes, and by the test/bench fixtures that start
 * `serve` as that command does.
 */
import { spawn, spawnSync } from 'node:child_process';
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
  });

  it('WORKER_HEAP_LIMITS gives a worker thread of a process started without the flag a SEMI_SPACE_MB semi-space', () => {
    // A plain node process: a worker with the limits churns objects that survive a scavenge or two, and V8
    // grows its new space (two semi-spaces) step by step, as its heuristics decide: under load it may take
    // more rounds, so the worker churns until the space reaches the target, at most
    // 40 rounds, and reports the largest size it saw (a limit below the target can never reach it).
    const target = 2 * SEMI_SPACE_MB * 2 ** 20;
    const script = `
      const { Worker } = require('node:worker_threads');
      const code = "const v8 = require('node:v8'); const size = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;" +
        " let most = 0; for (let round = 0; round < 40 && most < ${target}; round++) { let keep = []; for (let i = 0; i < 4e6; i++) { keep.push({ i }); if (keep.length > 3e5) keep = []; } most = Math.max(most, size()); }" +
        " require('node:worker_threads').parentPort.postMessage(most);";
      new Worker(code, { eval: true, resourceLimits: ${JSON.stringify(WORKER_HEAP_LIMITS)} }).on('message', (size) => { console.log(size); process.exit(0); });`;
    const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 60_000 });
    expect(run.status, run.stderr).toBe(0);
    expect(Number(run.stdout.trim()) / 2 ** 20).toBe(2 * SEMI_SPACE_MB);
  }, 60_000);

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
