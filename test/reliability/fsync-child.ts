/**
 * Child of T2's fsync part, run under strace with fsync failing: writes transitions with the checkpointer
 * on a worker thread, printing `fault <operation> <code>` when the store reports a fault, `refused` for
 * the first write refused because of it, `clear` when it clears, and `acked <n>` at the end.
 */
import { writeSync } from 'node:fs';
import { isEnvHarnessError } from '../../src/core/index.js';
import { createSqliteStore } from '../../src/storage/sqlite/index.js';
import { makeEpisode, makeTransition } from '../conformance/store-fixtures.js';
import { systemClock } from '../../src/cli/clock.js';

const [file] = process.argv.slice(2);
const store = createSqliteStore(file!, { now: systemClock, checkpoints: { afterWrites: 2, intervalMs: 5 } });
let step = 0;
let state: 'ok' | 'fault' | 'refused' = 'ok';
const deadline = Date.now() + 20_000;
while (Date.now() < deadline) {
  const fault = store.fault();
  if (fault !== undefined && state === 'ok') {
    writeSync(1, `fault ${fault.operation} ${fault.code}\n`);
    state = 'fault';
  }
  if (fault === undefined && state !== 'ok') {
    writeSync(1, 'clear\n');
    break;
  }
  try {
    await store.appendTransitions([makeTransition('eio-episode', step)], { episodes: [makeEpisode('eio-episode', 'task', { steps: step + 1 })] });
    step += 1;
  } catch (error) {
    if (!isEnvHarnessError(error, 'STORE_FAILED')) throw error;
    if (state === 'fault') {
      writeSync(1, 'refused\n');
      state = 'refused';
    }
  }
  await new Promise((r) => setTimeout(r, 2));
}
writeSync(1, `acked ${step}\n`);
await store.close();
