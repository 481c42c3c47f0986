import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

// .ci/run's closing line: a real vitest run over a file that crashes at import, and its JSON report.
// Inside the repository, so that the fixture files resolve `vitest` from its node_modules.
const dir = mkdtempSync(path.resolve('test/ci/.tmp-summary-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function summary(report: string | undefined, status: number) {
  const args = ['.ci/summary.mjs', ...(report === undefined ? [path.join(dir, 'absent.json')] : [report]), String(status)];
  const run = spawnSync(process.execPath, args, { encoding: 'utf8' });
  return { line: run.stdout.trim(), status: run.status };
}

describe('.ci/summary.mjs', () => {
  it('counts a file that crashed before its tests as failed, so "0 failed" never comes with exit 1', () => {
    writeFileSync(path.join(dir, 'ok.test.mjs'), "import { it, expect } from 'vitest';\nit('passes', () => expect(1).toBe(1));\n");
    writeFileSync(path.join(dir, 'crash.test.mjs'), "throw new Error('crash at import');\n");
    writeFileSync(path.join(dir, 'vitest.config.mjs'), "export default { test: { include: ['*.test.mjs'] } };\n");
    const report = path.join(dir, 'report.json');
    const vitest = spawnSync(process.execPath, [path.resolve('node_modules/vitest/vitest.mjs'), 'run', '--root', dir, '--config', path.join(dir, 'vitest.config.mjs'), '--reporter=json', `--outputFile=${report}`], { encoding: 'utf8', cwd: dir });
    expect(vitest.status).not.toBe(0);
    expect(summary(report, vitest.status!)).toEqual({ line: '1 passed, 1 failed', status: vitest.status });
  }, 60_000);

  it('reports a failing status with no failure counted as one failure, and a missing report as failed', () => {
    const report = path.join(dir, 'clean.json');
    writeFileSync(report, JSON.stringify({ numPassedTests: 3, numFailedTests: 0, testResults: [{ status: 'passed', assertionResults: [] }] }));
    expect(summary(report, 1)).toEqual({ line: '3 passed, 1 failed', status: 1 });
    expect(summary(report, 0)).toEqual({ line: '3 passed, 0 failed', status: 0 });
    expect(summary(undefined, 0)).toEqual({ line: '0 passed, 1 failed', status: 1 });
  });
});
