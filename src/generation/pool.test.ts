import { describe, expect, it } from 'vitest';
import { createRng, EnvHarnessError } from '../core/index.js';
import type { Split, TaskIndexEntry } from '../core/index.js';
import { createRefillingPool, createTaskPool } from './pool.js';

let seq = 0;
function entry(domain: string, taskType: string, level: number, split: Split = 'dynamic', id = `t${++seq}`): TaskIndexEntry {
  return { id, seq, template: `${domain}/x@1`, domain, taskType, level, split, status: 'active' };
}

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    return (error as EnvHarnessError).code;
  }
  return 'none';
}

describe('createTaskPool', () => {
  it('groups ids by slice and level, and counts them', () => {
    const pool = createTaskPool();
    expect(pool.add([entry('retail', 'refund', 1), entry('retail', 'refund', 1), entry('retail', 'refund', 3), entry('math', 'add', 2, 'regression')])).toBe(4);
    expect(pool.size()).toBe(4);
    expect(pool.size('retail/refund')).toBe(3);
    expect(pool.size('retail/refund', 1)).toBe(2);
    expect(pool.size('retail/refund', 2)).toBe(0);
    expect(pool.size(undefined, undefined, 'regression')).toBe(1);
    expect(pool.slices()).toEqual(['math/add', 'retail/refund']);
    expect(pool.slices('dynamic')).toEqual(['retail/refund']);
    expect(pool.levels('retail/refund')).toEqual([1, 3]);
  });

  it('skips ids it already holds', () => {
    const pool = createTaskPool();
    const e = entry('retail', 'refund', 1);
    pool.add([e]);
    expect(pool.add([e, { ...e }])).toBe(0);
    expect(pool.size()).toBe(1);
  });

  it('draws uniformly with replacement, reproducibly from the rng', () => {
    const pool = createTaskPool();
    pool.add(Array.from({ length: 4 }, () => entry('retail', 'refund', 2)));
    const counts = new Map<string, number>();
    const rng = createRng([1, 'draw']);
    for (let i = 0; i < 4000; i++) {
      const draw = pool.draw(rng, 'retail/refund', 2);
      expect(draw).toMatchObject({ level: 2, requestedLevel: 2, fellBack: false });
      counts.set(draw.id, (counts.get(draw.id) ?? 0) + 1);
    }
    expect(counts.size).toBe(4);
    for (const n of counts.values()) expect(n).toBeGreaterThan(850);
    expect(pool.size()).toBe(4);
    const again = (seed: number): string[] => {
      const r = createRng([seed, 'draw']);
      return Array.from({ length: 10 }, () => pool.draw(r, 'retail/refund', 2).id);
    };
    expect(again(1)).toEqual(again(1));
  });

  it('falls back to the nearest non-empty level (the lower on a tie) and says so', () => {
    const pool = createTaskPool();
    pool.add([entry('retail', 'refund', 1, 'dynamic', 'one'), entry('retail', 'refund', 3, 'dynamic', 'three'), entry('retail', 'refund', 6, 'dynamic', 'six')]);
    const rng = createRng([2]);
    expect(pool.draw(rng, 'retail/refund', 2)).toMatchObject({ id: 'one', level: 1, requestedLevel: 2, fellBack: true });
    expect(pool.draw(rng, 'retail/refund', 5)).toMatchObject({ id: 'six', fellBack: true });
    expect(pool.draw(rng, 'retail/refund', 9)).toMatchObject({ id: 'six', fellBack: true });
    expect(pool.draw(rng, 'retail/refund', 3)).toMatchObject({ id: 'three', fellBack: false });
  });

  it('throws POOL_EMPTY for an empty slice, or a slice empty in the requested split', () => {
    const pool = createTaskPool();
    pool.add([entry('retail', 'refund', 1, 'regression')]);
    const rng = createRng([3]);
    expect(code(() => pool.draw(rng, 'retail/cancel', 1))).toBe('POOL_EMPTY');
    expect(code(() => pool.draw(rng, 'retail/refund', 1, 'dynamic'))).toBe('POOL_EMPTY');
    expect(pool.draw(rng, 'retail/refund', 1, 'regression').fellBack).toBe(false);
  });

  it('removes tasks in O(1) and keeps every index consistent', () => {
    const pool = createTaskPool();
    const entries = Array.from({ length: 50 }, (_, i) => entry('retail', i % 2 ? 'refund' : 'cancel', 1 + (i % 3), i % 5 ? 'dynamic' : 'heldout'));
    pool.add(entries);
    const rng = createRng([4]);
    for (const e of entries.filter((_, i) => i % 3 === 0)) expect(pool.remove(e.id)).toBe(true);
    expect(pool.remove('missing')).toBe(false);
    const left = entries.filter((_, i) => i % 3 !== 0);
    expect(pool.size()).toBe(left.length);
    for (const e of left) expect(pool.has(e.id)).toBe(true);
    for (let i = 0; i < 500; i++) {
      const draw = pool.draw(rng, 'retail/refund', 2);
      expect(left.some((e) => e.id === draw.id)).toBe(true);
    }
    for (const e of left) pool.remove(e.id);
    expect(pool.size()).toBe(0);
    expect(pool.slices()).toEqual([]);
    pool.add([entry('math', 'add', 1)]);
    pool.clear();
    expect(pool.size()).toBe(0);
  });
});

describe('createRefillingPool', () => {
  function fakeRefill() {
    const calls: Array<[string, number, number]> = [];
    let release: Array<() => void> = [];
    return {
      calls,
      releaseAll: () => {
        const r = release;
        release = [];
        for (const f of r) f();
      },
      refill: (slice: string, level: number, n: number): Promise<TaskIndexEntry[]> => {
        calls.push([slice, level, n]);
        const [domain, taskType] = slice.split('/') as [string, string];
        return new Promise((resolve) => release.push(() => resolve(Array.from({ length: n }, () => entry(domain, taskType, level)))));
      },
    };
  }

  it('refills a (slice, level) below low water in the background, once at a time, without making draws wait', async () => {
    const fake = fakeRefill();
    const pool = createRefillingPool({ lowWater: 3, batchSize: 5, refill: fake.refill });
    pool.add([entry('retail', 'refund', 1), entry('retail', 'refund', 1)]);
    const rng = createRng([5]);
    const first = pool.draw(rng, 'retail/refund', 1);
    expect(first.fellBack).toBe(false);
    pool.draw(rng, 'retail/refund', 1);
    await Promise.resolve();
    expect(fake.calls).toEqual([['retail/refund', 1, 5]]);
    expect(pool.refilling()).toEqual([{ slice: 'retail/refund', level: 1 }]);
    expect(pool.size('retail/refund', 1)).toBe(2);
    fake.releaseAll();
    await pool.idle();
    expect(pool.size('retail/refund', 1)).toBe(7);
    pool.draw(rng, 'retail/refund', 1);
    await pool.idle();
    expect(fake.calls).toHaveLength(1);
  });

  it('draws from the nearest level while the requested one refills, and refills empty slices after POOL_EMPTY', async () => {
    const fake = fakeRefill();
    const pool = createRefillingPool({ lowWater: 1, batchSize: 2, refill: fake.refill });
    pool.add([entry('retail', 'refund', 1)]);
    const rng = createRng([6]);
    expect(pool.draw(rng, 'retail/refund', 2)).toMatchObject({ level: 1, fellBack: true });
    expect(code(() => pool.draw(rng, 'retail/cancel', 1))).toBe('POOL_EMPTY');
    await Promise.resolve();
    expect(fake.calls).toEqual([['retail/refund', 2, 2], ['retail/cancel', 1, 2]]);
    fake.releaseAll();
    await pool.idle();
    expect(pool.draw(rng, 'retail/refund', 2)).toMatchObject({ level: 2, fellBack: false });
    expect(pool.draw(rng, 'retail/cancel', 1).fellBack).toBe(false);
  });

  it('pauses a (slice, level) whose refill failed or added nothing, until tasks are added', async () => {
    const errors: unknown[] = [];
    let calls = 0;
    const pool = createRefillingPool({
      lowWater: 5,
      batchSize: 5,
      refill: async () => {
        calls++;
        throw new Error('store is down');
      },
      onRefillError: (error) => errors.push(error),
    });
    pool.add([entry('retail', 'refund', 1)]);
    const rng = createRng([7]);
    pool.draw(rng, 'retail/refund', 1);
    await pool.idle();
    pool.draw(rng, 'retail/refund', 1);
    await pool.idle();
    expect(calls).toBe(1);
    expect(errors).toHaveLength(1);
    pool.add([entry('retail', 'refund', 1)]);
    pool.draw(rng, 'retail/refund', 1);
    await pool.idle();
    expect(calls).toBe(2);
  });

  it('refills after removals take a level below low water', async () => {
    const fake = fakeRefill();
    const pool = createRefillingPool({ lowWater: 2, batchSize: 1, refill: fake.refill });
    const entries = [entry('retail', 'refund', 1), entry('retail', 'refund', 1)];
    pool.add(entries);
    pool.remove(entries[0]!.id);
    await Promise.resolve();
    expect(fake.calls).toEqual([['retail/refund', 1, 1]]);
    fake.releaseAll();
    await pool.idle();
    expect(pool.size('retail/refund', 1)).toBe(2);
  });
});
