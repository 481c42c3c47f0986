/** Where a batch this process just stored sits in the store's seq order, found from two rows rather than by reading it back. */
import type { Store } from '../core/index.js';

/**
 * The seqs of the first and last of `ids` (a batch's tasks in order, just stored by `saveBatch`) when they are
 * the batch's own rows, past `after`, with exactly `ids.length - 1` seqs between them: a batch is inserted in
 * order in one transaction, so every row in between is the batch's, in order. Undefined otherwise (rows of
 * another batch, a task that was already stored); the caller then reads the store instead. Callers check that
 * nothing else was stored since (a watermark, a count) themselves.
 */
export async function storedSeqs(store: Pick<Store, 'getTask'>, batchId: string, ids: readonly string[], after: number): Promise<{ first: number; last: number } | undefined> {
  if (ids.length === 0) return undefined;
  const first = await store.getTask(ids[0]!);
  const last = ids.length === 1 ? first : await store.getTask(ids[ids.length - 1]!);
  if (first === undefined || last === undefined || first.batchId !== batchId || last.batchId !== batchId) return undefined;
  if (first.seq <= after || last.seq - first.seq !== ids.length - 1) return undefined;
  return { first: first.seq, last: last.seq };
}
