/** Server ids (auth.ts): `generateOrderedId` sorts by creation time as text, and stays unique within a millisecond. */
import { describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './testing/fixture.js';
import { generateId, generateOrderedId } from './auth.js';

describe('generateOrderedId', () => {
  it('sorts as text in the order of its times, across digit carries, and is as long as generateId', () => {
    const times = [0, 1, 15, 16, 255, 256, 2 ** 40, 1_765_000_000_000, 1_765_000_000_001, 2 ** 48 - 1];
    const ids = times.map((t) => generateOrderedId('ep', t));
    expect([...ids].sort()).toEqual(ids);
    for (const id of ids) expect(id).toMatch(/^ep_[0-9a-f]{32}$/);
    expect(ids[0]!.length).toBe(generateId('ep').length);
    expect(ids[7]!.slice(3, 15)).toBe((1_765_000_000_000).toString(16).padStart(12, '0'));
  });

  it('is unique within one millisecond (80 random bits), and a time it cannot write as 12 hex digits counts as 0', () => {
    const same = new Set(Array.from({ length: 10_000 }, () => generateOrderedId('ep', 1_765_000_000_000)));
    expect(same.size).toBe(10_000);
    for (const bad of [Number.NaN, -5, Number.POSITIVE_INFINITY]) expect(generateOrderedId('ep', bad).slice(3, 15)).toBe('000000000000');
  });
});

describe('server episode ids', () => {
  it('grow with the server clock: an episode created later has an id that sorts after', async () => {
    let now = 1_765_000_000_000;
    const t: TestServer = await startTestServer({ listen: false, server: { now: () => (now += 7) } });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const { ep } = await t.server.episodes.create({ taskId: t.tasks.endless, seed: i } as Parameters<TestServer['server']['episodes']['create']>[0]);
        ids.push(ep.id);
      }
      expect([...ids].sort()).toEqual(ids);
      expect(new Set(ids.map((id) => id.slice(0, 15))).size).toBe(3);
    } finally {
      await t.close();
    }
  });
});
