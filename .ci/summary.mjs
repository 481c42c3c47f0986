// CI's closing line: reads vitest's JSON report and prints "N passed, N failed" that agrees with the exit status.
// A file that crashed before its tests ran (an import error, a throw in beforeAll) counts as one failure, and
// a non-zero vitest status with no failure counted (an unhandled error) counts as one too, so the line never
// says "0 failed" for a failing run. Usage: node .ci/summary.mjs <report.json> <vitest status>; exits with the
// status CI should report.
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The counts and exit status for a vitest JSON report (undefined: no report was written) and vitest's status. */
export function summarize(report, status) {
  if (report === undefined) return { passed: 0, failed: 1, status: status === 0 ? 1 : status };
  let failed = report.numFailedTests ?? 0;
  for (const file of report.testResults ?? []) {
    const failedInFile = (file.assertionResults ?? []).filter((a) => a.status === 'failed').length;
    if (file.status === 'failed' && failedInFile === 0) failed += 1;
  }
  if (status !== 0 && failed === 0) failed = 1;
  return { passed: report.numPassedTests ?? 0, failed, status: failed > 0 ? (status === 0 ? 1 : status) : status };
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [file, statusText] = process.argv.slice(2);
  const report = file && existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
  const result = summarize(report, Number(statusText ?? 1));
  console.log(`${result.passed} passed, ${result.failed} failed`);
  process.exit(result.status);
}
