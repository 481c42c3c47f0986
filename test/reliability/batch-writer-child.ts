/**
 * Child of T3: `node --import tsx batch-writer-child.ts <dbfile> <seed>` saves small batches to the file as
 * fast as it can (another process generating), printing `started` after the first, until killed.
 */
import { writeSync } from 'node:fs';
import { createSqliteStore } from '../../src/storage/sqlite/index.js';
import { makeBatch, makeTask } from '../conformance/store-fixtures.js';
import { systemClock } from '../../src/cli/clock.js';

const [file, seedText] = process.argv.slice(2);
const seed = Number(seedText);
const store = createSqliteStore(file!, { now: systemClock });
for (let i = 0; ; i++) {
  const tasks = Array.from({ length: 5 }, (_, k) => makeTask(seed * 1_000_000 + i * 5 + k));
  await store.saveBatch(makeBatch(tasks, { seed: seed * 1_000_000 + i, split: 'dynamic' }), { review: i % 3 === 0 ? [tasks[0]!.id] : [] });
  if (i === 0) writeSync(1, 'started\n');
  // Yield the write lock now and then, as a real generator does between batches.
  await new Promise((r) => setTimeout(r, 2));
}
