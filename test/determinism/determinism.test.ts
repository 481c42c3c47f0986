import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('./generate-batch.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface Setting {
  workers: number;
  tz: string;
  lang: string;
  randomSeed: number;
  reverse: boolean;
}

interface Report {
  manifestId: string;
  exportSha256: string;
  reverseUnorderedSelects: boolean;
  batchSha256: string;
  accepted: number;
  environment: { workers: number; timeZone: string; locale: string; v8Flags: string[] };
}

const BASE: Setting = { workers: 1, tz: 'UTC', lang: 'C', randomSeed: 1, reverse: false };
// Each factor flipped alone, then all flipped together.
const SETTINGS: Setting[] = [
  BASE,
  { ...BASE, workers: 2 },
  { ...BASE, tz: 'Asia/Kolkata' },
  { ...BASE, lang: 'de_DE.UTF-8' },
  { ...BASE, randomSeed: 2 },
  { ...BASE, reverse: true },
  { workers: 2, tz: 'Asia/Kolkata', lang: 'de_DE.UTF-8', randomSeed: 2, reverse: true },
];

function generate(setting: Setting): Promise<Report> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [`--random-seed=${setting.randomSeed}`, '--import', 'tsx', SCRIPT, String(setting.workers), setting.reverse ? 'reverse' : 'forward'], {
      cwd: ROOT,
      env: { ...process.env, TZ: setting.tz, LANG: setting.lang, LC_ALL: setting.lang },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', reject);
    child.on('close', (status) => {
      if (status !== 0) reject(new Error(`child ${JSON.stringify(setting)} exited with ${status}: ${err}`));
      else resolve(JSON.parse(out.trim().split('\n').at(-1)!) as Report);
    });
  });
}

/** Runs at most `width` children at once, the slow ones (worker threads) first; results in input order. */
async function runAll(settings: readonly Setting[], width: number): Promise<Report[]> {
  const order = settings.map((_, i) => i).sort((a, b) => settings[b]!.workers - settings[a]!.workers);
  const reports: Report[] = new Array(settings.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < order.length) {
      const i = order[next++]!;
      reports[i] = await generate(settings[i]!);
    }
  };
  await Promise.all(Array.from({ length: width }, lane));
  return reports;
}

describe('determinism must-show', () => {
  it('gives one manifest digest, byte-identical batches and one export sha256 across worker counts, timezones, locales, V8 random seeds and SQLite row order', async () => {
    const reports = await runAll(SETTINGS, 3);
    // The settings really took effect in the children.
    // (ICU may report Asia/Kolkata under its older name Asia/Calcutta.)
    expect(reports.map((r) => r.environment.timeZone === 'UTC')).toEqual(SETTINGS.map((s) => s.tz === 'UTC'));
    expect(reports.map((r) => r.environment.workers)).toEqual(SETTINGS.map((s) => s.workers));
    expect(reports.map((r) => r.environment.v8Flags)).toEqual(SETTINGS.map((s) => [`--random-seed=${s.randomSeed}`]));
    expect(new Set(reports.map((r) => r.environment.locale)).size).toBe(2);

    expect(new Set(reports.map((r) => r.manifestId)).size).toBe(1);
    expect(new Set(reports.map((r) => r.batchSha256)).size).toBe(1);
    // T13: 7/7 snapshot exports (baseline, each of the 5 factors alone, all 5 together) share one sha256.
    expect(reports.map((r) => r.reverseUnorderedSelects)).toEqual(SETTINGS.map((s) => s.reverse));
    expect(reports).toHaveLength(7);
    expect(new Set(reports.map((r) => r.exportSha256)).size).toBe(1);
    expect(reports[0]!.accepted).toBeGreaterThan(1_000);
  }, 120_000);
});
