/** The near-duplicate index of each split, kept up to date from the store incrementally (a batch costs O(batch)). */
import type { Split, Store } from '../core/index.js';
import { MinHashIndex } from '../generation/index.js';
import { storedSeqs } from './stored-seqs.js';

interface Indexed {
  index: MinHashIndex;
  /** The highest seq indexed (-1 when the split was empty); undefined before the first read. */
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
    // Read, even when empty: every seq is past an empty split's -1.
    indexed.lastSeq = fresh.length > 0 ? fresh[fresh.length - 1]!.seq : (indexed.lastSeq ?? -1);
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

  /**
   * Takes in a batch this process has just stored, from the signatures its near-duplicate gate computed, instead
   * of reading its tasks back and hashing them again on the next `of` (reading back and hashing 20,000-task batches of
   * math/chain-sum was about 30% of the CPU of generating them into one store). Only when the split's index is up to date and the
   * batch's rows are the only ones stored since: the split counts exactly the batch more, and its first and last
   * tasks have consecutive seqs past the index's (a batch is inserted in order in one transaction, so every row in
   * between is the batch's, in order), and `signatures` holds exactly the batch's ids in that order. Otherwise nothing is taken and the next `of`
   * reads the store as before; either way the index is what indexing the split from scratch gives.
   */
  async addSaved(split: Split, batchId: string, ids: readonly string[], signatures: MinHashIndex): Promise<void> {
    const indexed = this.splits.get(split);
    if (indexed === undefined || indexed.lastSeq === undefined || ids.length === 0) return;
    if (signatures.size !== ids.length || ids.some((id, k) => signatures.idAt(k) !== id)) return;
    if ((await this.store.countTasks({ split })) !== indexed.index.size + ids.length) return;
    const range = await storedSeqs(this.store, batchId, ids, indexed.lastSeq);
    if (range === undefined) return;
    indexed.index.addAll(signatures);
    indexed.lastSeq = range.last;
  }
}
