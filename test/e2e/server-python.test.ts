/** The Python client's own test suite (clients/python/tests, unittest) against a real `envharness serve`, run with the machine's python3. */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const python = process.env.ENVHARNESS_PYTHON ?? 'python3';
const version = spawnSync(python, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { encoding: 'utf8' });
const hasPython = version.status === 0;

describe.skipIf(!hasPython)('Python client', () => {
  it(`passes its unittest suite (python ${version.stdout?.trim()})`, () => {
    const run = spawnSync(python, ['-W', 'error::ResourceWarning', '-m', 'unittest', 'discover', '-s', 'tests', '-t', '.', '-v'], {
      cwd: 'clients/python',
      encoding: 'utf8',
      timeout: 240_000,
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
    });
    const output = `${run.stdout}${run.stderr}`;
    const ran = /Ran (\d+) tests?/.exec(output);
    console.log(`python unittest: ${ran ? ran[1] : '?'} tests, exit ${run.status}`);
    expect(run.status, output).toBe(0);
    expect(Number(ran?.[1] ?? 0)).toBeGreaterThanOrEqual(12);
  }, 300_000);
});
