/**
 * Child process of the crash test: `node --import tsx crash-child.ts <dbfile> <seed>`. Writes the seeded
 * burst as fast as it can and prints `ack <i>` after write i returned, until the parent SIGKILLs it.
 */
import { writeSync } from 'node:fs';
import { crashWorkload } from './crash-workload.js';
import { systemClock } from '../../cli/clock.js';
import { createSqliteStore } from './index.js';

const MAX_OPS = 50_000;

const [file, seedText] = process.argv.slice(2);
if (file === undefined || seedText === undefined) {
  writeSync(2, 'usage: crash-child.ts <dbfile> <seed>\n');
  process.exit(2);
}
// Even seeds checkpoint from a worker thread, continuously, so that some kills land in a checkpoint.
const store = createSqliteStore(file, Number(seedText) % 2 === 0 ? { now: systemClock, checkpoints: { afterWrites: 4, intervalMs: 1 } } : { now: systemClock });
// Seeds divisible by 3 append transitions through the writer thread: an ack there means its commit returned too.
const transitions = Number(seedText) % 3 === 0 ? store.openTransitionWriter() : store;
// fs.writeSync to the pipe: the line is in the parent's pipe before the next write starts.
writeSync(1, 'ready\n');
let i = 0;
for (const op of crashWorkload(Number(seedText))) {
  if (i === MAX_OPS) break;
  if (op.kind === 'batch') await store.saveBatch(op.batch, { review: op.review });
  else await transitions.appendTransitions(op.transitions, { episodes: [op.episode] });
  writeSync(1, `ack ${i}\n`);
  i += 1;
}
await store.close();
writeSync(1, 'done\n');
