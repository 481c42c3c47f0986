/** The in-memory task pool: ids grouped by slice and level, O(1) draws, and asynchronous background refill. */
import { EnvHarnessError } from '../core/index.js';
import type { Rng, Split, TaskIndexEntry } from '../core/index.js';

/** One draw from the pool (`pool.get(id)` gives the index entry). */
export interface PoolDraw {
  id: string;
  /** The level drawn from; differs from `requestedLevel` when that level was empty. */
  level: number;
  requestedLevel: number;
  /** The requested level was empty and the nearest non-empty level of the slice was used. */
  fellBack: boolean;
}

/**
 * Task ids in memory, grouped by slice (`domain/taskType`) and level, optionally per split. Draws are
 * with replacement: a drawn task stays until removed.
 */
export interface TaskPool {
  /** Adds entries, held by reference (ids already present are skipped); returns how many were added. */
  add(entries: readonly TaskIndexEntry[]): number;
  /** Removes a task; returns whether it was there. */
  remove(id: string): boolean;
  has(id: string): boolean;
  get(id: string): TaskIndexEntry | undefined;
  /**
   * A uniformly random task of the slice at `level`, in O(1). An empty level falls back to the nearest
   * non-empty level of the slice (the lower one on a tie); an empty slice throws `POOL_EMPTY`.
   */
  draw(rng: Rng, slice: string, level: number, split?: Split): PoolDraw;
  size(slice?: string, level?: number, split?: Split): number;
  /** Non-empty slices, sorted. */
  slices(split?: Split): string[];
  /** Non-empty levels of a slice, ascending. */
  levels(slice: string, split?: Split): number[];
  clear(): void;
}

/** The slice key of a task or index entry. */
export function sliceOf(entry: { domain: string; taskType: string }): string {
  return `${entry.domain}/${entry.taskType}`;
}

interface Bucket {
  /** 0: the all-splits table, 1: the per-split table. */
  kind: 0 | 1;
  level: number;
  // Ids only: a draw reads one array slot and no object, which keeps it flat at a million tasks.
  items: string[];
  owner: SliceTable;
}

interface SliceTable {
  size: number;
  levels: Map<number, Bucket>;
}

interface Slot {
  entry: TaskIndexEntry;
  buckets: [Bucket, Bucket];
  positions: [number, number];
}

type Table = Map<string, SliceTable>;

/**
 * Creates an empty pool.
 * @example
 * const pool = createTaskPool();
 * pool.add(await store.listTaskIndex({ status: 'active' }));
 * const { id } = pool.draw(rng, 'retail/refund', 2, 'dynamic');
 */
export function createTaskPool(): TaskPool {
  let all: Table = new Map();
  let bySplit = new Map<Split, Table>();
  let slots = new Map<string, Slot>();

  function bucketFor(table: Table, kind: 0 | 1, slice: string, level: number): Bucket {
    let sliceTable = table.get(slice);
    if (sliceTable === undefined) {
      sliceTable = { size: 0, levels: new Map() };
      table.set(slice, sliceTable);
    }
    let bucket = sliceTable.levels.get(level);
    if (bucket === undefined) {
      bucket = { kind, level, items: [], owner: sliceTable };
      sliceTable.levels.set(level, bucket);
    }
    return bucket;
  }

  function put(bucket: Bucket, slot: Slot): void {
    slot.positions[bucket.kind] = bucket.items.length;
    bucket.items.push(slot.entry.id);
    bucket.owner.size++;
  }

  function take(table: Table, slice: string, bucket: Bucket, slot: Slot): void {
    const position = slot.positions[bucket.kind];
    const last = bucket.items.pop()!;
    if (last !== slot.entry.id) {
      bucket.items[position] = last;
      slots.get(last)!.positions[bucket.kind] = position;
    }
    bucket.owner.size--;
    if (bucket.items.length === 0) bucket.owner.levels.delete(bucket.level);
    if (bucket.owner.size === 0) table.delete(slice);
  }

  function tableOf(split: Split | undefined): Table | undefined {
    return split === undefined ? all : bySplit.get(split);
  }

  return {
    add(entries) {
      let added = 0;
      for (const entry of entries) {
        if (slots.has(entry.id)) continue;
        if (!Number.isInteger(entry.level) || typeof entry.id !== 'string') {
          throw new EnvHarnessError('PARAMS_INVALID', `pool entry ${String(entry.id)} needs a string id and an integer level`);
        }
        const slice = sliceOf(entry);
        let splitTable = bySplit.get(entry.split);
        if (splitTable === undefined) {
          splitTable = new Map();
          bySplit.set(entry.split, splitTable);
        }
        const slot: Slot = {
          entry,
          buckets: [bucketFor(all, 0, slice, entry.level), bucketFor(splitTable, 1, slice, entry.level)],
          positions: [0, 0],
        };
        put(slot.buckets[0], slot);
        put(slot.buckets[1], slot);
        slots.set(entry.id, slot);
        added++;
      }
      return added;
    },

    remove(id) {
      const slot = slots.get(id);
      if (slot === undefined) return false;
      const slice = sliceOf(slot.entry);
      take(all, slice, slot.buckets[0], slot);
      take(bySplit.get(slot.entry.split)!, slice, slot.buckets[1], slot);
      slots.delete(id);
      return true;
    },

    has: (id) => slots.has(id),

    get: (id) => slots.get(id)?.entry,

    draw(rng, slice, level, split) {
      const sliceTable = tableOf(split)?.get(slice);
      if (sliceTable === undefined) {
        throw new EnvHarnessError(
          'POOL_EMPTY',
          `no tasks of slice ${slice}${split === undefined ? '' : ` in the ${split} split`} in the pool; generate a batch for it first`,
          { details: { slice, level, split } },
        );
      }
      let bucket = sliceTable.levels.get(level);
      if (bucket === undefined) {
        let best = Infinity;
        for (const candidate of sliceTable.levels.values()) {
          const distance = Math.abs(candidate.level - level);
          if (distance < best || (distance === best && candidate.level < bucket!.level)) {
            best = distance;
            bucket = candidate;
          }
        }
      }
      const { items, level: drawn } = bucket!;
      const id = items[items.length === 1 ? 0 : rng.int(0, items.length - 1)]!;
      return { id, level: drawn, requestedLevel: level, fellBack: drawn !== level };
    },

    size(slice, level, split) {
      const table = tableOf(split);
      if (table === undefined) return 0;
      if (slice === undefined) {
        if (split === undefined) return slots.size;
        let total = 0;
        for (const sliceTable of table.values()) total += sliceTable.size;
        return total;
      }
      const sliceTable = table.get(slice);
      if (sliceTable === undefined) return 0;
      if (level === undefined) return sliceTable.size;
      return sliceTable.levels.get(level)?.items.length ?? 0;
    },

    slices: (split) => [...(tableOf(split)?.keys() ?? [])].sort(),

    levels: (slice, split) => [...(tableOf(split)?.get(slice)?.levels.keys() ?? [])].sort((a, b) => a - b),

    clear() {
      all = new Map();
      bySplit = new Map();
      slots = new Map();
    },
  };
}

/** Options of a pool that refills itself in the background. */
export interface RefillingPoolOptions {
  /** A (slice, level) with fewer tasks than this is refilled. */
  lowWater: number;
  /** How many tasks to ask for per refill. */
  batchSize: number;
  /** Produces new tasks for a (slice, level), typically by generating and storing a batch. */
  refill: (slice: string, level: number, count: number) => Promise<readonly TaskIndexEntry[]>;
  /** Called when a refill fails; refills of that (slice, level) then pause until tasks are added. */
  onRefillError?: (error: unknown, slice: string, level: number) => void;
  /** The pool to wrap (default: a new empty pool). */
  pool?: TaskPool;
}

/** A pool whose draws never wait: low (slice, level)s are refilled asynchronously. */
export interface RefillingPool extends TaskPool {
  /** Resolves when no refill is running. */
  idle(): Promise<void>;
  /** The (slice, level)s being refilled now. */
  refilling(): Array<{ slice: string; level: number }>;
  /** Allows refills again for keys paused after an empty or failed refill. */
  resume(): void;
}

/**
 * Wraps a pool so that a draw or removal leaving a (slice, level) below `lowWater` starts a refill in
 * the background. A draw never waits for it: it draws from what is there (falling back to the nearest
 * level), or throws `POOL_EMPTY` for an empty slice after starting its refill.
 * @example
 * const pool = createRefillingPool({ lowWater: 100, batchSize: 1000,
 *   refill: (slice, level, n) => generateInto(slice, level, n) });
 */
export function createRefillingPool(options: RefillingPoolOptions): RefillingPool {
  const pool = options.pool ?? createTaskPool();
  const running = new Map<string, { slice: string; level: number; done: Promise<void> }>();
  // Keys whose last refill added nothing or failed: not retried until tasks are added (no refill storms).
  const paused = new Set<string>();

  function check(slice: string, level: number, split?: Split): void {
    if (pool.size(slice, level, split) >= options.lowWater) return;
    const key = `${slice}\u0000${level}`;
    if (running.has(key) || paused.has(key)) return;
    const done = Promise.resolve()
      .then(() => options.refill(slice, level, options.batchSize))
      .then(
        (entries) => {
          if (pool.add(entries) === 0) paused.add(key);
        },
        (error: unknown) => {
          paused.add(key);
          options.onRefillError?.(error, slice, level);
        },
      )
      .finally(() => running.delete(key));
    running.set(key, { slice, level, done });
  }

  return {
    ...pool,
    add(entries) {
      paused.clear();
      return pool.add(entries);
    },
    remove(id) {
      const entry = pool.get(id);
      const removed = pool.remove(id);
      if (entry !== undefined) check(sliceOf(entry), entry.level, undefined);
      return removed;
    },
    draw(rng, slice, level, split) {
      let result: PoolDraw;
      try {
        result = pool.draw(rng, slice, level, split);
      } catch (error) {
        check(slice, level, split);
        throw error;
      }
      check(slice, level, split);
      return result;
    },
    async idle() {
      while (running.size > 0) await Promise.all([...running.values()].map((r) => r.done));
    },
    refilling: () => [...running.values()].map(({ slice, level }) => ({ slice, level })),
    resume: () => paused.clear(),
  };
}
