/** The draw pool of a harness, derived from the store's active tasks and brought up to date (one watermark read) before each draw. */
import type { Batch, BatchTaskRow, Split, Store, Task, TaskIndexEntry } from '../core/index.js';
import { createTaskPool, type TaskPool } from '../generation/index.js';
import { storedSeqs } from './stored-seqs.js';

/** A batch this process stored, as `syncSaved` keeps it until the pool is read. */
interface SavedBatch {
  rows: ReadonlyArray<BatchTaskRow | Task>;
  /** The seq of its first task (the rest follow one by one). */
  firstSeq: number;
  split: Split;
  /** Ids held for review (not active). */
  held: ReadonlySet<string>;
}

/**
 * The store's active tasks as an in-memory `TaskPool`, in seq order: what loading
 * `store.listTaskIndex({ status: 'active' })` from scratch gives. `sync()` first reads the store's task
 * watermark (one row): when it equals what this pool has read, nothing was stored or changed since, by
 * this harness or another one, and the draw costs that one read. Otherwise it reads only what was stored
 * after the last seq; an update (a review decision) or a task stored out of seq order (the row count
 * disagrees) reloads it whole. So a draw sees every batch stored before it, whatever the order of the calls.
 * A store without a watermark is synced by re-reading what was stored since (and the review audit) per draw.
 */
export class StorePool {
  private current: TaskPool = createTaskPool();
  private lastSeq: number | undefined;
  /** Tasks of any status read so far (the store removes one only with an update the watermark counts). */
  private seen = 0;
  /** The watermark's `changes` (or, without one, the review audit's length) as of the last reload. */
  private changes = 0;
  /**
   * Batches `syncSaved` took in, in order, whose entries join the pool when it is next read: a process that
   * generates and exits (`envharness generate`) never builds them (3 µs and an object per task).
   */
  private saved: SavedBatch[] = [];

  constructor(private readonly store: Store) {}

  /** The pool as of the last `sync()` (sync methods such as a training loop's draws read this). */
  get pool(): TaskPool {
    this.addSaved();
    return this.current;
  }

  /** Replaces the pool by a wrapper of it that keeps its contents (e.g. a refilling pool). */
  wrap(wrap: (pool: TaskPool) => TaskPool): void {
    this.addSaved();
    this.current = wrap(this.current);
  }

  /** Brings the pool up to date with the store: one watermark read when nothing changed. */
  async sync(): Promise<void> {
    if (this.store.taskWatermark === undefined) return this.syncWithoutWatermark();
    const mark = await this.store.taskWatermark();
    if (this.lastSeq === undefined || mark.changes !== this.changes) return this.reload();
    // Every task read is still stored, so as many as the store holds means the same tasks.
    if (mark.rows === this.seen) return;
    this.take(await this.store.listTaskIndex({ afterSeq: this.lastSeq }));
    // Read again after: a task committed below lastSeq (a late commit, an import) is missing only if the
    // count disagrees now (what the read took is a subset of what is stored).
    const after = await this.store.taskWatermark();
    if (after.rows !== this.seen || after.changes !== this.changes) await this.reload();
  }

  /**
   * Brings the pool up to date after this process stored `batch` (with `review` its tasks held for review):
   * what `sync()` gives, without reading the batch's tasks back. When the watermark shows that the batch's
   * rows are the only ones stored since the last sync, and nothing changed, they take the seqs from its
   * first task's to its last task's (two rows read; a batch is inserted in order in one transaction, so
   * consecutive seqs at both ends mean every row in between is the batch's, in order). Anything else (a
   * batch stored before, other writers, a pool never loaded, no watermark) falls back to `sync()`.
   */
  async syncSaved(batch: Batch, review: readonly string[] = []): Promise<void> {
    const rows = batch.taskRows ?? batch.tasks;
    if (this.store.taskWatermark === undefined || this.lastSeq === undefined || rows.length === 0) return this.sync();
    const mark = await this.store.taskWatermark();
    if (mark.changes !== this.changes || mark.rows !== this.seen + rows.length) return this.sync();
    const range = await storedSeqs(this.store, batch.manifest.id, rows.map((row) => row.id), this.lastSeq);
    if (range === undefined) return this.sync();
    this.saved.push({ rows, firstSeq: range.first, split: batch.manifest.split, held: new Set(review) });
    this.seen += rows.length;
    this.lastSeq = range.last;
    // Tasks (rather than the batch's own rows) are the caller's to change: their entries are taken now.
    if (batch.taskRows === undefined) this.addSaved();
  }

  /** Reloads the pool whole from the store. */
  async reload(): Promise<void> {
    // Read before the tasks: a change meanwhile makes the next sync reload again, never miss it.
    const changes = this.store.taskWatermark ? (await this.store.taskWatermark()).changes : (await this.store.listReviewAudit()).length;
    const all = await this.store.listTaskIndex();
    this.saved = [];
    this.current.clear();
    this.seen = 0;
    this.lastSeq = -1;
    this.take(all);
    this.changes = changes;
  }

  /** Adds a stored batch's active tasks (a batch another process generated); returns how many were new. */
  async addBatch(batchId: string): Promise<number> {
    const entries = await this.store.listTaskIndex({ batchId, status: 'active' });
    this.addSaved();
    return this.current.add(entries);
  }

  /** Adds the entries of the batches `syncSaved` took in (what `take` of their index rows gives). */
  private addSaved(): void {
    if (this.saved.length === 0) return;
    const saved = this.saved;
    this.saved = [];
    for (const { rows, firstSeq, split, held } of saved) {
      const entries: TaskIndexEntry[] = [];
      for (let k = 0; k < rows.length; k++) {
        const { id, template, domain, taskType, level } = rows[k]!;
        // The key order of listTaskIndex's entries; held tasks are not active, so not in the pool.
        if (!held.has(id)) entries.push({ id, seq: firstSeq + k, template, domain, taskType, level, split, status: 'active' });
      }
      this.current.add(entries);
    }
  }

  /** A store without a watermark: the review audit's length and the task count stand in for it. */
  private async syncWithoutWatermark(): Promise<void> {
    const decisions = (await this.store.listReviewAudit()).length;
    if (this.lastSeq === undefined || decisions !== this.changes) return this.reload();
    const fresh = await this.store.listTaskIndex({ afterSeq: this.lastSeq });
    if (fresh.length === 0) return;
    this.take(fresh);
    // Counted only when something arrived: a task committed below lastSeq with nothing after it is
    // taken in with the next task stored.
    if (this.seen !== (await this.store.countTasks())) await this.reload();
  }

  private take(entries: readonly TaskIndexEntry[]): void {
    this.addSaved();
    this.current.add(entries.filter((e) => e.status === 'active'));
    this.seen += entries.length;
    if (entries.length > 0) this.lastSeq = entries[entries.length - 1]!.seq;
  }
}
