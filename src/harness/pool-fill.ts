/** Filling a store's pools with the built-in defaults, and the pool counts by split, slice and level. */
import type { BatchRequest, Domain, Split, Store } from '../core/index.js';
import type { GeneratedBatch, TemplateRegistry } from '../generation/index.js';
import type { GenerateOptions } from './task-generator.js';

/** Tasks per template and level that a default fill generates (`train --per-level`, `serve --fill-per-level`). */
export const DEFAULT_FILL_PER_LEVEL = 60;

export interface PoolStats {
  total: number;
  bySplit: Record<Split, number>;
  pendingReview: number;
  rejected: number;
  slices: Array<{ slice: string; split: Split; levels: Record<string, number> }>;
}

/** How `fillPools` fills (see `Harness.fillPools`). */
export interface FillOptions {
  domains?: readonly string[];
  perLevel?: number;
  seed?: number;
  onProgress?: (done: number, total: number) => void;
}

/**
 * The domains a default fill (and `train` without `--domain`) covers: those with templates that
 * declare `defaults.train`, else every domain with templates.
 */
export function defaultDomains(domains: ReadonlyMap<string, Domain<any>>, registry: TemplateRegistry): string[] {
  const withTemplates = [...domains.values()].filter((d) => registry.list().some((t) => t.domain === d.name));
  const preferred = withTemplates.filter((d) => d.defaults?.train === true);
  return (preferred.length > 0 ? preferred : withTemplates).map((d) => d.name);
}

/**
 * Generates `perLevel` tasks per level for every template of `domains` whose split lacks them: training
 * templates into `dynamic`, held-out templates into `heldout` (never trained on). Returns what was added.
 */
export async function fillPools(
  deps: { store: Store; registry: TemplateRegistry; generate: (request: BatchRequest, options: GenerateOptions) => Promise<GeneratedBatch> },
  options: FillOptions & { domains: readonly string[]; seed: number },
): Promise<{ dynamic: number; heldout: number }> {
  const perLevel = options.perLevel ?? DEFAULT_FILL_PER_LEVEL;
  const index = await deps.store.listTaskIndex({ status: 'active' });
  const have = new Set(index.filter((e) => e.split !== 'regression').map((e) => `${e.split} ${e.template}`));
  const missing = deps.registry.list().filter((t) => options.domains.includes(t.domain) && !have.has(`${t.heldout ? 'heldout' : 'dynamic'} ${t.id}`));
  const added = { dynamic: 0, heldout: 0 };
  const total = missing.reduce((sum, t) => sum + t.levels.length * perLevel, 0);
  let done = 0;
  for (const t of missing) {
    const levels = t.levels.map((_, i) => i + 1);
    const split = t.heldout ? 'heldout' : 'dynamic';
    const batch = await deps.generate(
      { templates: [{ id: t.id }], levels, count: levels.length * perLevel, seed: options.seed, split },
      { onProgress: (d) => options.onProgress?.(done + d, total) },
    );
    done += levels.length * perLevel;
    added[split] += batch.manifest.accepted;
  }
  return added;
}

/** Pool counts by split, slice and level. */
export async function poolStats(store: Store): Promise<PoolStats> {
  const all = await store.listTaskIndex();
  const bySplit: Record<Split, number> = { regression: 0, dynamic: 0, heldout: 0 };
  const slices = new Map<string, { slice: string; split: Split; levels: Record<string, number> }>();
  let pendingReview = 0;
  let rejected = 0;
  for (const e of all) {
    if (e.status === 'pending_review') pendingReview++;
    if (e.status === 'rejected') rejected++;
    if (e.status !== 'active') continue;
    bySplit[e.split]++;
    const key = `${e.split} ${e.domain}/${e.taskType}`;
    const row = slices.get(key) ?? { slice: `${e.domain}/${e.taskType}`, split: e.split, levels: {} };
    row.levels[e.level] = (row.levels[e.level] ?? 0) + 1;
    slices.set(key, row);
  }
  return {
    total: bySplit.regression + bySplit.dynamic + bySplit.heldout,
    bySplit,
    pendingReview,
    rejected,
    slices: [...slices.values()].sort((a, b) => (a.split + a.slice < b.split + b.slice ? -1 : 1)),
  };
}
