/**
 * Child of the recovery test: `node --import tsx crash-harness-child.ts <dbfile>`. Leaves an interactive
 * episode mid-way (its transitions durable, its record still at step 0, as the real recorder leaves it)
 * and SIGKILLs itself in the middle of a training run.
 */
import { writeSync } from 'node:fs';
import { math } from '../../src/domains/math/index.js';
import { createHarness } from '../../src/harness/harness.js';
import { createAgent } from '../../src/index.js';
import { createInventoryDomain, makeInventoryTask } from '../../src/runtime/testing/index.js';
import { systemClock } from '../../src/cli/clock.js';

const [file] = process.argv.slice(2);
if (file === undefined) process.exit(2);
const h = await createHarness({ clock: systemClock, store: file, domains: [createInventoryDomain(), math] });
await h.initialize({ seed: 1 });
const task = { ...makeInventoryTask({ budget: { steps: 100 } }), split: 'heldout' as const, status: 'active' as const, batchId: 'crash-test', seq: 1 };
await h.store.putTasks([task]);
const { episode } = await h.openEpisode({ taskId: task.id, episodeId: 'crash-ep' });
episode.reset({ seed: 0 });
for (let i = 0; i < 5; i++) episode.step({ type: 'tool', tool: 'list_items', args: {} });
await episode.flush();
await h.generate({ templates: [{ id: 'math/chain-sum@1' }], levels: [1, 2], count: 40, seed: 3, split: 'dynamic' });
await h.train({
  agent: createAgent('rule-based', { seed: 0 }),
  episodes: 10_000,
  concurrency: 2,
  seed: 5,
  onProgress: (p) => {
    if (p.episodes >= 4) {
      writeSync(1, 'killing\n');
      process.kill(process.pid, 'SIGKILL');
    }
  },
});
writeSync(1, 'not killed\n');
