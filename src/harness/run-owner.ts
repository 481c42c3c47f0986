/** Who owns a run (this process, and whether a recorded owner may still be running), and the crash repair that uses it. */
import { hostname } from 'node:os';
import type { RecoveryReport, RunRecord, Store } from '../core/index.js';

/** The last non-empty crash repair (`Store.recover`), for `doctor`. */
export const META_RECOVERY = 'store.recovery';

/** This process, as the owner recorded on the runs it starts. */
export function runOwner(): { host: string; pid: number } {
  return { host: hostname(), pid: process.pid };
}

/**
 * Whether the process that owns a running run may still be running it: a run without an owner, or
 * owned by a process of this host that no longer exists, is not live. (Runs of other hosts are left
 * alone: their process cannot be checked from here.)
 */
export function isRunLive(run: RunRecord): boolean {
  if (run.owner === undefined) return false;
  if (run.owner.host !== hostname()) return true;
  if (run.owner.pid === process.pid) return true;
  try {
    process.kill(run.owner.pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Repairs what a crash left (lagging episode records, runs whose process died) and keeps a non-empty
 * report in the store's meta (`store.recovery`) for `doctor`.
 */
export async function recoverStore(store: Store, at: string): Promise<RecoveryReport> {
  const report = await store.recover({ isLive: isRunLive, now: at });
  if (report.episodes.length > 0 || report.runs.length > 0) {
    const episodeIds = report.episodes.slice(0, 20).map((e) => e.id);
    await store.setMeta(META_RECOVERY, { at, episodes: report.episodes.length, episodeIds, runs: report.runs.map((r) => r.id) });
  }
  return report;
}
