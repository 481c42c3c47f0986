/** The draw pool of a harness, derived from the store's active tasks and brought up to date before each draw. */
import type { Store, TaskIndexEntry } from '../core/index.js';
import { createTaskPool, type TaskPool } from '../generation/index.js';

/**
 * The store's active tasks as an in-memory `TaskPool`, in seq order: what loading
 * `store.listTaskIndex({ status: 'active' })` from scratch gives. `sync()` reads only what was stored
 * since the last call; a review decision (the audit trail grew) or a task stored out of seq order (the
 * count disagrees once something new arrived) reloads it whole. So a draw sees every batch stored before
 * it, by this harness or another one, whatever the order of the calls.
 */
export class StorePool {
  private current: TaskPool = createTaskPool();
  private lastSeq: number | undefined;
  /** Tasks of any status read so far (the store never deletes one). */
  private seen = 0;
  private decisions = 0;

  constructor(private readonly store: Store) {}

  /** The pool as of the last `sync()` (sync methods such as a training loop's draws read this). */
  get pool(): TaskPool {
    return this.current;
  }

  /** Replaces the pool by a wrapper of it that keeps its contents (e.g. a refilling pool). */
  wrap(wrap: (pool: TaskPool) => TaskPool): void {
    this.current = wrap(this.current);
  }

  /** Brings the pool up to date with the store: O(tasks stored since the last call) when nothing was reviewed. */
  async sync(): Promise<void> {
    const decisions = (await this.store.listReviewAudit()).length;
    if (this.lastSeq === undefined || decisions !== this.decisions) return this.reload();
    const fresh = await this.store.listTaskIndex({ afterSeq: this.lastSeq });
    if (fresh.length === 0) return;
    this.take(fresh);
    // Counted only when something arrived, so a draw with nothing new stays O(1): a task committed below
    // lastSeq with nothing after it is taken in with the next task stored.
    if (this.seen !== (await this.store.countTasks())) await this.reload();
  }

  /** Reloads the pool whole from the store. */
  async reload(): Promise<void> {
    const decisions = (await this.store.listReviewAudit()).length;
    const all = await this.store.listTaskIndex();
    this.current.clear();
    this.seen = 0;
    this.lastSeq = -1;
    this.take(all);
    this.decisions = decisions;
  }

  /** Adds a stored batch's active tasks (a batch another process generated); returns how many were new. */
  async addBatch(batchId: string): Promise<number> {
    return this.current.add(await this.store.listTaskIndex({ batchId, status: 'active' }));
  }

  private take(entries: readonly TaskIndexEntry[]): void {
    this.current.add(entries.filter((e) => e.status === 'active'));
    this.seen += entries.length;
    if (entries.length > 0) this.lastSeq = entries[entries.length - 1]!.seq;
  }
}
