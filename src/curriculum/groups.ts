/** Groups for GRPO-style trainers: k episodes of one task, and the share of groups that teach nothing. */
import type { JsonValue } from '../core/index.js';
import { asNumber, asObject } from './state-io.js';
import type { EpisodeResult } from './types.js';

export interface GroupStats {
  /** Episodes in the group. */
  size: number;
  /** Episodes that count (not excluded). */
  counted: number;
  /** Mean success of the counted episodes (0 when none count). */
  mean: number;
  /** Population variance of the counted successes. */
  variance: number;
  /** All counted episodes scored the same (or fewer than 2 count): a zero advantage for every episode. */
  zeroVariance: boolean;
  allPass: boolean;
  allFail: boolean;
}

/** Mean and variance of one task's k episodes; excluded episodes do not count (DAPO dynamic sampling). */
export function groupStats(results: readonly (EpisodeResult | number)[]): GroupStats {
  let counted = 0;
  let sum = 0;
  let min = Infinity;
  let max = -Infinity;
  for (const r of results) {
    if (typeof r !== 'number' && r.excluded === true) continue;
    const x = typeof r === 'number' ? r : r.success;
    counted++;
    sum += x;
    if (x < min) min = x;
    if (x > max) max = x;
  }
  const mean = counted > 0 ? sum / counted : 0;
  let squares = 0;
  for (const r of results) {
    if (typeof r !== 'number' && r.excluded === true) continue;
    const x = typeof r === 'number' ? r : r.success;
    squares += (x - mean) ** 2;
  }
  return {
    size: results.length,
    counted,
    mean,
    variance: counted > 0 ? squares / counted : 0,
    zeroVariance: counted < 2 || max - min <= 1e-12,
    allPass: counted > 0 && min >= 1,
    allFail: counted > 0 && max <= 0,
  };
}

/** Per slice: groups seen, how many had zero variance (all pass / all fail), how many the caller skipped. */
export interface GroupShare {
  groups: number;
  zeroVariance: number;
  allPass: number;
  allFail: number;
  skipped: number;
  /** zeroVariance / groups (0 before any group). */
  share: number;
}

export interface GroupTracker {
  /** Records one group of a slice; `skipped` when the trainer dropped it (DAPO dynamic sampling). */
  record(slice: string, group: GroupStats, skipped?: boolean): void;
  shares(): Record<string, GroupShare>;
  getState(): JsonValue;
}

/** Counts zero-variance groups per slice (DAPO, arXiv 2503.14476; ART's `num_groups_trainable`). */
export function createGroupTracker(state?: JsonValue): GroupTracker {
  const counts = new Map<string, Omit<GroupShare, 'share'>>();
  if (state !== undefined) {
    const o = asObject(state, '');
    for (const [slice, value] of Object.entries(o)) {
      const v = asObject(value, `/${slice}`);
      counts.set(slice, {
        groups: asNumber(v.groups, `/${slice}/groups`),
        zeroVariance: asNumber(v.zeroVariance, `/${slice}/zeroVariance`),
        allPass: asNumber(v.allPass, `/${slice}/allPass`),
        allFail: asNumber(v.allFail, `/${slice}/allFail`),
        skipped: asNumber(v.skipped, `/${slice}/skipped`),
      });
    }
  }
  const snapshot = (): Record<string, Omit<GroupShare, 'share'>> => Object.fromEntries([...counts].map(([k, v]) => [k, { ...v }]));
  return {
    record(slice, group, skipped = false) {
      let c = counts.get(slice);
      if (c === undefined) counts.set(slice, (c = { groups: 0, zeroVariance: 0, allPass: 0, allFail: 0, skipped: 0 }));
      c.groups++;
      if (group.zeroVariance) c.zeroVariance++;
      if (group.allPass) c.allPass++;
      if (group.allFail) c.allFail++;
      if (skipped) c.skipped++;
    },
    shares() {
      const out: Record<string, GroupShare> = {};
      for (const [slice, c] of counts) out[slice] = { ...c, share: c.groups > 0 ? c.zeroVariance / c.groups : 0 };
      return out;
    },
    getState: snapshot,
  };
}
