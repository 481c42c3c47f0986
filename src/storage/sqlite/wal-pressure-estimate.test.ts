/**
 * WalPressure's own bookkeeping, on a file whose size the test sets: which writes look at the `-wal` file, and that
 * no report of the checkpointer's lets writes go unseen past the bound.
 */
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WalPressure } from './wal-pressure.js';

const dir = mkdtempSync(join(tmpdir(), 'envharness-wal-estimate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const LIMIT = 4 * 1024 * 1024;
/** What one write adds to the WAL in the integration test's batches at 16 KiB pages: 20 frames of 16,408 bytes. */
const WRITE = 20 * 16_408;
const sleep = (ms: number) => new Promise<boolean>((resolve) => setTimeout(() => resolve(true), ms));

/**
 * A writer as the store runs one: before each write, `due()` and, when it says so, `admit()`; then the write grows
 * the file. `beforeAdmit` runs between the two, where the event loop delivers the checkpointer's reports. Stops at
 * the first write that `admit` holds back (parked at the hard mark) and returns the largest size the file reached.
 */
async function write(name: string, writes: number, start: number, beforeAdmit: (p: WalPressure, size: number, i: number) => void = () => {}) {
  const file = join(dir, name);
  writeFileSync(file, '');
  truncateSync(file, start);
  const pressure = new WalPressure(file, LIMIT);
  let size = start;
  let parked = false;
  for (let i = 0; i < writes && !parked; i++) {
    if (pressure.due()) {
      beforeAdmit(pressure, size, i);
      const admitted = pressure.admit().then(() => false);
      parked = await Promise.race([admitted, sleep(200)]);
      if (parked) {
        truncateSync(file, 0); // the reader let go and the checkpointer truncated: the parked write goes on
        await admitted;
        break;
      }
    }
    size += WRITE;
    truncateSync(file, size);
  }
  return { max: size, parked };
}

describe('WalPressure', () => {
  it('looks before every write whose growth could carry the file past the bound, and parks at the hard mark', async () => {
    const run = await write('steady', 40, 0);
    expect(run.parked).toBe(true);
    expect(run.max).toBeGreaterThanOrEqual((LIMIT * 3) / 4);
    expect(run.max).toBeLessThanOrEqual(LIMIT);
  });

  it('does not take a report read in the middle of a commit for what a write adds', async () => {
    // The checkpointer read the file one frame into a commit, and its report arrives as the first write past the
    // soft mark looks (the only report heard: a writer hears them when it yields). Taken as that write's growth
    // (one frame), it let the next 8 writes (2.6 MB) go unseen from 1.64 MB: past the bound, as in CI (4.33 MB).
    let heard = false;
    const run = await write('mid-commit report', 40, 0, (p, size) => {
      if (heard || size < (LIMIT * 3) / 8) return;
      heard = true;
      p.update(size - WRITE + 16_408);
    });
    expect(heard).toBe(true);
    expect(run.parked).toBe(true);
    expect(run.max).toBeLessThanOrEqual(LIMIT);
  });

  it('keeps most of what writes added across a look that saw only part of it (the WAL restarted between)', async () => {
    // 64 MiB bound: 8 MiB may go unseen between two looks, four writes of 2 MiB.
    const limit = 64 * 1024 * 1024;
    const big = 2 * 1024 * 1024;
    const file = join(dir, 'restart');
    writeFileSync(file, '');
    const pressure = new WalPressure(file, limit);
    let size = 0;
    let unseen = 0;
    let most = 0;
    const step = async (adds: number) => {
      if (pressure.due()) {
        most = Math.max(most, unseen);
        unseen = 0;
        await pressure.admit();
      }
      unseen += big;
      size += adds;
      truncateSync(file, size);
    };
    for (let i = 0; i < 6; i++) await step(big);
    // The WAL restarts from its start: writes overwrite its frames, the file keeps its size, and the first to pass
    // its end grows it by a frame. A look then sees one frame for several writes.
    for (let i = 0; i < 4; i++) await step(0);
    await step(16_408);
    most = 0;
    for (let i = 0; i < 10; i++) await step(big);
    // Before: the interval went to 8 (16 MiB unseen, twice what the looks allow). Now a partial look lowers the
    // estimate by a tenth at most: 4 writes, as before it.
    expect(most).toBeLessThanOrEqual(limit / 8);
  });
});
