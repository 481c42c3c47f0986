/** harness.openEpisode: interactive episodes live in the harness clock's time. */
import { afterEach, describe, expect, it } from 'vitest';
import { createInventoryDomain, makeInventoryTask } from '../runtime/testing/index.js';
import { createHarness, type Harness } from './harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** A clock that moves `stepMs` on every reading, from 2026-01-01. */
function ticking(stepMs: number): () => string {
  let t = Date.UTC(2026, 0, 1);
  return () => new Date((t += stepMs)).toISOString();
}

async function open(stepMs: number, timeMs: number) {
  harness = await createHarness({ store: ':memory:', domains: [createInventoryDomain()], clock: ticking(stepMs) });
  await harness.initialize({ seed: 1 });
  const task = { ...makeInventoryTask({ budget: { steps: 100, timeMs } }), split: 'heldout' as const, status: 'active' as const, batchId: 'test', seq: 1 };
  await harness.store.putTasks([task]);
  return harness.openEpisode({ taskId: task.id, episodeId: 'open-1' });
}

describe('harness.openEpisode', () => {
  it('truncates on the time budget by the harness clock', async () => {
    const { episode } = await open(400, 1_000);
    episode.reset({ seed: 0 });
    const results = [];
    while (episode.status === 'running') results.push(episode.step({ type: 'tool', tool: 'list_items', args: {} }));
    const last = results.at(-1)!;
    expect(last.truncated).toBe(true);
    expect(last.truncation).toBe('time');
    expect(results.length).toBeLessThan(5);
  });

  it('stamps its records with the harness clock, not the epoch', async () => {
    const { episode } = await open(1, 3_600_000);
    episode.reset({ seed: 0 });
    episode.step({ type: 'finish' });
    await episode.flush();
    const record = await harness!.store.getEpisode('open-1');
    expect(record?.updatedAt.startsWith('2026-01-01')).toBe(true);
  });
});

describe('harness.close after a failed recording', () => {
  it('still closes the store, then rejects with the recorder failure', async () => {
    const h = await createHarness({ store: ':memory:', domains: [createInventoryDomain()], clock: ticking(1) });
    await h.initialize({ seed: 1 });
    const task = { ...makeInventoryTask({ budget: { steps: 100, timeMs: 3_600_000 } }), split: 'heldout' as const, status: 'active' as const, batchId: 'test', seq: 1 };
    await h.store.putTasks([task]);
    const store = h.store;
    let closed = 0;
    const close = store.close.bind(store);
    store.close = async () => {
      closed++;
      await close();
    };
    store.appendTransitions = async () => {
      throw new Error('disk gone');
    };
    const { episode } = await h.openEpisode({ taskId: task.id, episodeId: 'doomed' });
    episode.reset({ seed: 0 });
    episode.step({ type: 'tool', tool: 'list_items', args: {} });
    await expect(h.close()).rejects.toMatchObject({ code: 'STORE_FAILED' });
    expect(closed).toBe(1);
  });
});
