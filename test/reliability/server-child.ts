/**
 * Child of T1: the real HTTP server and recorder over an SQLite file, `node --import tsx server-child.ts
 * <dbfile>`. Prints one JSON line { url, token, taskId } once it listens, then serves until killed.
 */
import { writeSync } from 'node:fs';
import { createHarness } from '../../src/harness/harness.js';
import { createInventoryDomain, makeInventoryTask } from '../../src/runtime/testing/index.js';
import { createServer } from '../../src/server/index.js';
import { systemClock } from '../../src/cli/clock.js';

const [file] = process.argv.slice(2);
const harness = await createHarness({ clock: systemClock, store: file!, domains: [createInventoryDomain()] });
await harness.initialize({ seed: 1 });
const task = { ...makeInventoryTask({ budget: { steps: 1_000_000 } }), split: 'heldout' as const, status: 'active' as const, batchId: 't1', seq: 1 };
if ((await harness.store.getTask(task.id)) === undefined) await harness.store.putTasks([task]);
const server = createServer({ harness, port: 0 });
const { url } = await server.listen();
writeSync(1, `${JSON.stringify({ url, token: server.token, taskId: task.id })}\n`);
