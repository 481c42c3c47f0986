/**
 * Child process of the PostgreSQL crash test: `node --import tsx crash-child.ts <url> <seed>`. Writes the
 * seeded burst (the SQLite crash test's) as fast as it can and prints `ack <i>` after write i returned,
 * until the parent SIGKILLs it. Odd seeds keep several writes in flight, so kills land inside group commits.
 */
import { writeSync } from 'node:fs';
import { crashWorkload, type CrashOp } from '../sqlite/crash-workload.js';
import { createPostgresStore } from './index.js';

const MAX_OPS = 50_000;
const IN_FLIGHT = 4;

const [url, seedText] = process.argv.slice(2);
if (url === undefined || seedText === undefined) {
  writeSync(2, 'usage: crash-child.ts <url> <seed>\n');
  process.exit(2);
}
const seed = Number(seedText);
const store = await createPostgresStore(url);
writeSync(1, 'ready\n');

const write = (op: CrashOp) => (op.kind === 'batch' ? store.saveBatch(op.batch, { review: op.review }) : store.appendTransitions(op.transitions, { episodes: [op.episode] }));
let i = 0;
if (seed % 2 === 0) {
  for (const op of crashWorkload(seed)) {
    if (i === MAX_OPS) break;
    await write(op);
    writeSync(1, `ack ${i}\n`);
    i += 1;
  }
} else {
  // Writes of different episodes in flight together (as the server's recorder issues them), acknowledged in
  // order: an ack line means that write and every earlier one returned. Writes to one episode stay in order.
  let acked = 0;
  const inFlight: Array<{ op: CrashOp; done: Promise<void> }> = [];
  const episodeOf = (o: CrashOp) => (o.kind === 'steps' ? o.episode.id : undefined);
  const drain = async () => {
    while (inFlight.length > 0) {
      await inFlight.shift()!.done;
      writeSync(1, `ack ${acked}\n`);
      acked += 1;
    }
  };
  for (const op of crashWorkload(seed)) {
    if (i === MAX_OPS) break;
    const clashes = episodeOf(op) !== undefined && inFlight.some((f) => episodeOf(f.op) === episodeOf(op));
    if (inFlight.length >= IN_FLIGHT || clashes) await drain();
    inFlight.push({ op, done: write(op) });
    i += 1;
  }
  await drain();
}
await store.close();
writeSync(1, 'done\n');
