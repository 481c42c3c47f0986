/**
 * Issue 14 §3: after a process dies mid-work, opening the store repairs what it left (the episode
 * record brought in line with its transitions, the training run marked `interrupted` with its last
 * event), and `doctor` reports both. The child process is really SIGKILLed, with the real recorder.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { math } from '../../src/domains/math/index.js';
import { createHarness } from '../../src/harness/harness.js';
import { diagnose } from '../../src/report/index.js';
import { createInventoryDomain } from '../../src/runtime/testing/index.js';
import { createSqliteStore } from '../../src/storage/sqlite/index.js';
import { systemClock } from '../../src/cli/clock.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const dir = mkdtempSync(join(tmpdir(), 'envharness-recovery-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function runChild(file: string): Promise<{ signal: NodeJS.Signals | null; out: string; err: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'crash-harness-child.ts'), file], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    child.on('error', fail);
    child.on('close', (_code, signal) => done({ signal, out, err }));
  });
}

describe('crash recovery on open', () => {
  it('repairs the episode record and the orphaned run, and doctor reports both', { timeout: 60_000 }, async () => {
    const file = join(dir, 'crashed.db');
    const child = await runChild(file);
    expect(child.signal, child.err).toBe('SIGKILL');
    expect(child.out).toContain('killing');

    // What the crash left, read without repairing: the record says 0 steps, the run says running.
    const raw = createSqliteStore(file, { now: systemClock });
    expect((await raw.getEpisode('crash-ep'))?.steps).toBe(0);
    expect(await raw.listTransitions('crash-ep')).toHaveLength(5);
    const [run] = (await raw.listRuns()).filter((r) => r.kind === 'train');
    expect(run?.status).toBe('running');
    const events = await raw.listRunEvents(run!.id);
    await raw.close();

    const h = await createHarness({ clock: systemClock, store: file, domains: [createInventoryDomain(), math] });
    expect(h.recovery.episodes).toEqual([{ id: 'crash-ep', steps: { from: 0, to: 5 }, status: { from: 'running', to: 'running' } }]);
    expect(h.recovery.runs).toEqual([{ id: run!.id, lastEventSeq: events.at(-1)!.seq, lastEventKind: events.at(-1)!.kind }]);
    expect((await h.store.getEpisode('crash-ep'))?.steps).toBe(5);
    expect(await h.store.getRun(run!.id)).toMatchObject({ status: 'interrupted', interrupted: { lastEventSeq: events.at(-1)!.seq } });

    const report = await diagnose(h.store, { runId: run!.id });
    const step = report.steps.find((s) => s.step === 'store-recovery')!;
    expect(step.findings.map((f) => [f.check, f.severity])).toEqual([
      ['run-interrupted', 'error'],
      ['episodes-repaired', 'warning'],
    ]);
    expect(report.hasErrors).toBe(true);
    await h.close();

    // A second open finds nothing left to repair.
    const again = await createHarness({ clock: systemClock, store: file, domains: [createInventoryDomain(), math] });
    expect(again.recovery).toEqual({ episodes: [], runs: [] });
    await again.close();
  });

  it('leaves a run whose process is alive alone', async () => {
    const file = join(dir, 'live.db');
    const h = await createHarness({ clock: systemClock, store: file, domains: [math] });
    await h.store.saveRun({
      id: 'live-run', kind: 'train', agent: { name: 'a', version: '1', configDigest: 'x' }, strategy: 's', seed: 0, config: {},
      snapshotStart: 'x', status: 'running', owner: { host: (await import('node:os')).hostname(), pid: process.pid }, createdAt: 'x', updatedAt: 'x',
    });
    await h.close();
    const again = await createHarness({ clock: systemClock, store: file, domains: [math] });
    expect(again.recovery.runs).toEqual([]);
    expect((await again.store.getRun('live-run'))?.status).toBe('running');
    await again.close();
  });
});
