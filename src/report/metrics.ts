/** Reliability metrics: pass^k exactly as tau-bench computes it, with Wilson intervals. */
import { wilsonInterval } from '../curriculum/index.js';

/** C(n, k) as a float (exact for the small n used here). */
export function binomial(n: number, k: number): number {
  if (k < 0 || k > n) return 0;
  let r = 1;
  for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
  return r;
}

export interface Trial {
  taskId: string;
  success: boolean;
}

/**
 * pass^k (tau-bench `run.py`): for each task with c successes in n trials, C(c, k) / C(n, k); averaged
 * over tasks. Tasks with fewer than k trials are left out (tau-bench runs every task n >= k times).
 */
export function passHatK(trials: readonly Trial[], k: number): { value: number; tasks: number } {
  const byTask = new Map<string, { n: number; c: number }>();
  for (const t of trials) {
    const row = byTask.get(t.taskId) ?? { n: 0, c: 0 };
    row.n++;
    if (t.success) row.c++;
    byTask.set(t.taskId, row);
  }
  let sum = 0;
  let tasks = 0;
  for (const { n, c } of byTask.values()) {
    if (n < k) continue;
    sum += binomial(c, k) / binomial(n, k);
    tasks++;
  }
  return { value: tasks === 0 ? 0 : sum / tasks, tasks };
}

export interface PassKRow {
  slice: string;
  tasks: number;
  trials: number;
  /** pass^1 .. pass^k */
  passK: number[];
  /** Wilson 95% interval of the per-trial success rate (pass^1). */
  low: number;
  high: number;
}

/** pass^1..pass^k per slice and overall ('*'). */
export function passKTable(trials: ReadonlyArray<Trial & { slice: string }>, k: number): PassKRow[] {
  const slices = new Map<string, Array<Trial & { slice: string }>>();
  for (const t of trials) {
    const list = slices.get(t.slice) ?? [];
    list.push(t);
    slices.set(t.slice, list);
  }
  const row = (slice: string, list: ReadonlyArray<Trial>): PassKRow => {
    const successes = list.filter((t) => t.success).length;
    const interval = wilsonInterval(successes, list.length);
    return {
      slice,
      tasks: new Set(list.map((t) => t.taskId)).size,
      trials: list.length,
      passK: Array.from({ length: k }, (_, i) => passHatK(list, i + 1).value),
      low: interval.low,
      high: interval.high,
    };
  };
  const rows = [...slices.keys()].sort().map((s) => row(s, slices.get(s)!));
  rows.push(row('*', trials));
  return rows;
}
