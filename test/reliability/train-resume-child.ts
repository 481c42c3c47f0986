/**
 * Child of the resume test: `node --import tsx train-resume-child.ts train <db> <seed>` trains the learner
 * on math (printing `progress N` after every round, for the parent to SIGKILL it at a seeded point);
 * `... resume <db> <run>` continues an interrupted run. Both end with `result <json>`: the summary and
 * the digest of the learner's final state. A fourth argument N makes it wait, after reporting N or more
 * episodes done, for the parent's SIGKILL.
 */
import { writeSync } from 'node:fs';
import { digest, type Agent } from '../../src/core/index.js';
import { math } from '../../src/domains/math/index.js';
import { createHarness } from '../../src/harness/harness.js';
import { createAgent } from '../../src/index.js';
import { systemClock } from '../../src/cli/clock.js';

/** The run both the interrupted and the uninterrupted process train: small, with evaluations and several checkpoints. */
const RUN = { episodes: 160, concurrency: 8, evalEvery: 40, evalTasks: 10, checkpointEvery: 20 } as const;

const [mode, file, arg, stopAt] = process.argv.slice(2);
if (mode === undefined || file === undefined || arg === undefined) process.exit(2);
const h = await createHarness({ clock: systemClock, store: file, domains: [math] });
await h.initialize();
const onProgress = (p: { episodes: number }) => {
  writeSync(1, `progress ${p.episodes}\n`);
  // The parent SIGKILLs this process once it reads this line: it waits here for the kill, so that the run
  // cannot go on (or finish) while a loaded parent is still reading.
  if (stopAt !== undefined && p.episodes >= Number(stopAt)) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
};
let agent: Agent | undefined;
const summary =
  mode === 'train'
    ? await h.train({ agent: (agent = createAgent('learner', { seed: Number(arg) })), ...RUN, seed: Number(arg), onProgress })
    : await h.resumeTrain(arg, {
        agent: async (state) => (agent = createAgent('learner', { seed: (await h.store.getRun(arg))!.seed, ...(state === null ? {} : { state }) })),
        onProgress,
      });
writeSync(1, `result ${JSON.stringify({ summary, agent: digest(agent!.getState!()) })}\n`);
await h.close();
