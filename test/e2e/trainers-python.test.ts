/**
 * The Python package as a trainer installs it: `pip install --no-index ./clients/python` into a fresh venv, the
 * package's tests run there against real `envharness serve` processes (the OpenEnv wire protocol over HTTP and
 * WebSocket, the asyncio client at 1,000 concurrent episodes, GRPO groups, and each trainer adapter's contract
 * and 32-episode run; clients/python/tests/trainers).
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const python = process.env.ENVHARNESS_PYTHON ?? 'python3';
const version = spawnSync(python, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { encoding: 'utf8' });
const hasPython = version.status === 0;
const repo = resolve('.');

describe.skipIf(!hasPython)(`Python package in a fresh venv (python ${version.stdout?.trim()})`, () => {
  let dir = '';
  let venvPython = '';

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'envharness-venv-'));
    const venv = join(dir, 'venv');
    const made = spawnSync(python, ['-m', 'venv', venv], { encoding: 'utf8', timeout: 120_000 });
    // Debian splits venv/ensurepip into python3-venv: .ci/run installs it.
    expect(made.status, `python3 -m venv failed (install python3-venv):\n${made.stdout}${made.stderr}`).toBe(0);
    venvPython = join(venv, 'bin', 'python');
  }, 150_000);

  afterAll(() => {
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  it('installs offline with pip --no-index (no build backend to download) and ships py.typed', () => {
    const install = spawnSync(venvPython, ['-m', 'pip', 'install', '--no-index', '--no-cache-dir', '--disable-pip-version-check', './clients/python'], {
      cwd: repo,
      encoding: 'utf8',
      timeout: 180_000,
    });
    expect(install.status, `${install.stdout}${install.stderr}`).toBe(0);
    const where = spawnSync(venvPython, ['-c', 'import envharness_client, os; d = os.path.dirname(envharness_client.__file__); print(d); print(os.path.exists(os.path.join(d, "py.typed"))); print(envharness_client.__version__)'], {
      cwd: dir,
      encoding: 'utf8',
    });
    expect(where.status, where.stderr).toBe(0);
    const [path, typed, v] = where.stdout.trim().split('\n');
    expect(path!.startsWith(join(dir, 'venv'))).toBe(true);
    expect(typed).toBe('True');
    expect(v).toMatch(/^\d+\.\d+\.\d+$/);
    // Nothing was written into the source tree by the build.
    expect(existsSync(join(repo, 'clients/python/build'))).toBe(false);
  }, 200_000);

  it('passes the package tests inside the venv (base suite and the trainer suite)', () => {
    // A copy of the tests outside the source tree, so that `import envharness_client` is the installed package.
    const work = join(dir, 'work');
    cpSync(join(repo, 'clients/python/tests'), join(work, 'tests'), { recursive: true });
    const env = { ...process.env, PYTHONDONTWRITEBYTECODE: '1', ENVHARNESS_REPO: repo };
    const runs = [
      ['-m', 'unittest', 'discover', '-s', 'tests', '-t', '.'],
      ['-m', 'unittest', 'discover', '-s', 'tests/trainers', '-t', 'tests/trainers'],
    ];
    let total = 0;
    for (const args of runs) {
      const run = spawnSync(venvPython, ['-W', 'error::ResourceWarning', ...args, '-v'], { cwd: work, encoding: 'utf8', timeout: 300_000, env });
      const output = `${run.stdout}${run.stderr}`;
      const ran = /Ran (\d+) tests?/.exec(output);
      console.log(`venv unittest ${args[4]}: ${ran ? ran[1] : '?'} tests, exit ${run.status}`);
      expect(run.status, output).toBe(0);
      expect(output).not.toMatch(/skipped=\d/);
      total += Number(ran?.[1] ?? 0);
      if (args[4] === 'tests/trainers') {
        for (const name of [
          'test_http_episodes_run_to_the_end',
          'test_session_messages',
          'test_capacity_reached_is_reported_then_closed',
          'test_thousand_concurrent_episodes_without_errors',
          'test_members_share_task_and_seed_and_the_curriculum_counts_the_group_once',
          'test_zero_variance_groups_are_reported_and_skipped_on_request',
          'test_shaping_rewards_per_step_and_chat_rollouts',
          'TrlEnvironmentFactory',
          'VerlAgentLoop',
          'VerlBaseTool',
          'SkyrlTextEnv',
        ]) {
          expect(output, name).toContain(name);
        }
      }
    }
    expect(total).toBeGreaterThanOrEqual(40);
  }, 600_000);
});
