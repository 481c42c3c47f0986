/** The near-duplicate index of each split, kept up to date from the store incrementally (a batch costs O(batch)). */
import type { Split, Store } from '../core/index.js';
import { MinHashIndex } from '../generation/index.js';

interface Indexed {
  index: MinHashIndex;
  /** The highest seq indexed; undefined before the first read. */
  lastSeq: number | undefined;
}

/**
 * Per split, every stored task (any status) in a MinHash index, in seq order: exactly what indexing
 * `store.listTasks({ split })` from scratch gives, but each call reads only the tasks stored since the
 * last one. Owned by one harness; it reads the store on every call, so writes of other harnesses and
 * processes are seen, and a task that arrived out of seq order (a late PostgreSQL commit, an import)
 * makes the count disagree and the split is re-read whole, in seq order.
 */
export class SplitIndex {
  private readonly splits = new Map<Split, Indexed>();

  constructor(private readonly store: Store) {}

  /** The split's index, up to date with the store. Callers must not add to it. */
  async of(split: Split): Promise<MinHashIndex> {
    let indexed = this.splits.get(split);
    if (indexed === undefined) {
      indexed = { index: new MinHashIndex(), lastSeq: undefined };
      this.splits.set(split, indexed);
    }
    const fresh = await this.store.listTasks(indexed.lastSeq === undefined ? { split } : { split, afterSeq: indexed.lastSeq });
    for (const task of fresh) indexed.index.add(task);
    if (fresh.length > 0) indexed.lastSeq = fresh[fresh.length - 1]!.seq;
    if (indexed.index.size !== (await this.store.countTasks({ split }))) {
      // Missed a task stored below lastSeq: rebuild in seq order, as a full read would.
      this.splits.delete(split);
      const rebuilt: Indexed = { index: new MinHashIndex(), lastSeq: undefined };
      const all = await this.store.listTasks({ split });
      for (const task of all) rebuilt.index.add(task);
      if (all.length > 0) rebuilt.lastSeq = all[all.length - 1]!.seq;
      this.splits.set(split, rebuilt);
      return rebuilt.index;
    }
    return indexed.index;
  }
}
