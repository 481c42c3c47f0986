/**
 * Crash must-show for PostgreSQL (reliability plan T1, process-crash part, as for SQLite): a child writes a
 * burst of batches and transitions and is SIGKILLed at a seeded point; afterwards every acknowledged write
 * is present and whole, the writes in flight are each whole or absent, nothing later is present, and no
 * episode's step counter disagrees with its transitions. Odd seeds keep 4 writes in flight (group commits).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childCommand, expectExactly, expectStepCounters, firstOps, isPresent, runChild } from '../../../test/conformance/crash.js';
import { createTestDatabase, PG_SKIP_MESSAGE, PG_TEST_URL, type TestDatabase } from '../../../test/support/postgres.js';
import { createRng } from '../../core/index.js';
import { createPostgresStore } from './index.js';

const RUNS = Number(process.env.RUNS ?? 30);
const BASE_SEED = 5000;
const MAX_KILL_DELAY_MS = 400;
/** Writes the child may have in flight beyond its last ack (see crash-child.ts). */
const windowOf = (seed: number) => (seed % 2 === 0 ? 1 : 4);

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../../..');
const childScript = join(here, 'crash-child.ts');

if (PG_TEST_URL === undefined) {
  describe('postgres store: SIGKILL during a write burst', () => {
    it.skip(PG_SKIP_MESSAGE, () => undefined);
  });
} else {
  const dir = mkdtempSync(join(tmpdir(), 'envharness-pgcrash-'));
  let db: TestDatabase;
  let childArgs: string[] = [];
  beforeAll(async () => {
    db = await createTestDatabase('envh_crash');
    childArgs = await childCommand(childScript, dir, /^pg$/);
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await db?.drop();
  });

  describe('postgres store: SIGKILL during a write burst', () => {
    it(`loses no acknowledged write and leaves whole writes only (${RUNS} runs)`, { timeout: 60_000 + RUNS * 3_000 }, async () => {
      const url = db.schemaUrl();
      (await createPostgresStore(url)).close(); // migrate before the first child, so kills land among writes
      let totalAcked = 0;
      let inFlightPresent = 0;
      for (let run = 0; run < RUNS; run++) {
        const seed = BASE_SEED + run;
        const delayMs = createRng(['pg-crash-kill-delay', run]).int(0, MAX_KILL_DELAY_MS);
        const result = await runChild(childArgs, [url, String(seed)], root, delayMs);
        expect(result.signal, `run ${run}: child did not die by SIGKILL (code ${result.code}): ${result.stderr}`).toBe('SIGKILL');
        totalAcked += result.acked;
        const store = await createPostgresStore(url);
        try {
          const window = windowOf(seed);
          const ops = firstOps(seed, result.acked + window + 1);
          const present = ops.slice(0, result.acked);
          for (const op of ops.slice(result.acked, result.acked + window)) {
            if (await isPresent(store, op)) {
              present.push(op);
              inFlightPresent += 1;
            }
          }
          await expectExactly(store, seed, present);
          expect(await isPresent(store, ops[result.acked + window]!), `run ${run}: a write after the in-flight window is present`).toBe(false);
          await expectStepCounters(store, seed, `run ${run}`);
        } finally {
          await store.close();
        }
      }
      expect(totalAcked).toBeGreaterThan(RUNS);
      console.info(`postgres crash test: ${RUNS} runs, ${totalAcked} acknowledged writes, ${inFlightPresent} in-flight writes committed`);
    });
  });
}
