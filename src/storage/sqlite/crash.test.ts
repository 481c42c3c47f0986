/**
 * Crash must-show (reliability plan T1, process-crash part): a child writes a burst of batches and
 * transitions and is SIGKILLed at a seeded point; after reopening, every acknowledged write is present
 * and whole, at most the one write in flight is also present (whole), the file passes integrity_check,
 * and no episode's step counter disagrees with its transitions. RUNS=200 for the long variant. Children of
 * even seeds checkpoint from a worker thread (continuously), so kills also land in the middle of a checkpoint;
 * children of seeds divisible by 3 append transitions through the writer thread (`openTransitionWriter`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childCommand, expectExactly, firstOps, isPresent, runChild } from '../../../test/conformance/crash.js';
import { createRng } from '../../core/index.js';
import { createSqliteStore } from './index.js';
import { systemClock } from '../../cli/clock.js';

const RUNS = Number(process.env.RUNS ?? 50);
const BASE_SEED = 1000;
/** Kill delays, in ms after the child reports it has opened the store. */
const MAX_KILL_DELAY_MS = 100;

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../../..');
const dir = mkdtempSync(join(tmpdir(), 'envharness-crash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let childArgs: string[] = [];
beforeAll(async () => {
  childArgs = await childCommand(join(here, 'crash-child.ts'), dir, /^better-sqlite3$/);
});

describe('sqlite store: SIGKILL during a write burst', () => {
  it(`loses no acknowledged write and leaves a sound file (${RUNS} runs)`, { timeout: 60_000 + RUNS * 2_000 }, async () => {
    const file = join(dir, 'crash.db');
    let totalAcked = 0;
    let inFlightPresent = 0;
    for (let run = 0; run < RUNS; run++) {
      const seed = BASE_SEED + run;
      const delayMs = createRng(['crash-kill-delay', run]).int(0, MAX_KILL_DELAY_MS);
      const result = await runChild(childArgs, [file, String(seed)], root, delayMs);
      expect(result.signal, `run ${run}: child did not die by SIGKILL (code ${result.code}): ${result.stderr}`).toBe('SIGKILL');
      totalAcked += result.acked;

      const store = createSqliteStore(file, { now: systemClock });
      try {
        const ops = firstOps(seed, result.acked + 2);
        // The write after the last ack may have committed before the kill (its ack line was not printed).
        const present = (await isPresent(store, ops[result.acked]!)) ? result.acked + 1 : result.acked;
        if (present > result.acked) inFlightPresent += 1;
        await expectExactly(store, seed, ops.slice(0, present));
        expect(await isPresent(store, ops[present]!), `run ${run}: a write after the one in flight is present`).toBe(false);
        expect(await store.checkIntegrity(), `run ${run}`).toEqual([]);
        for (const episode of await store.listEpisodes()) {
          expect((await store.listTransitions(episode.id)).length, `run ${run}: episode ${episode.id}`).toBe(episode.steps);
        }
      } finally {
        await store.close();
      }
    }
    // The burst really ran: the kills landed among acknowledged writes, not before the first one.
    expect(totalAcked).toBeGreaterThan(RUNS);
    const mode = childArgs[0] === '--import' ? 'tsx' : 'bundled';
    console.info(
      `crash test (${mode} child): ${RUNS} runs, ${totalAcked} acknowledged writes, ` +
        `in-flight write committed in ${inFlightPresent} runs`,
    );
  });
});
