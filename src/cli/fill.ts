/** Filling a fresh store's pools from the CLI: harness.fillPools with a progress bar and a one-line summary. */
import type { Harness } from '../index.js';
import { progress, type Io } from './output.js';

/** Fills the pools the run needs (harness.fillPools) with a progress bar; returns what was added per split. */
export async function ensurePool(h: Harness, io: Io, domains: string[], perLevel: number, seed: number, show: boolean): Promise<{ dynamic: number; heldout: number }> {
  const bar = progress(io, 'generating tasks', show);
  try {
    return await h.fillPools({ domains, perLevel, seed, onProgress: (d, t) => bar.update(d, t) });
  } finally {
    bar.stop();
  }
}

/** "generated N tasks into the dynamic pool (and M held-out tasks)", or undefined when nothing was added. */
export function describeFill(added: { dynamic: number; heldout: number }): string | undefined {
  if (added.dynamic === 0 && added.heldout === 0) return undefined;
  return `generated ${added.dynamic} tasks into the dynamic pool${added.heldout > 0 ? ` and ${added.heldout} held-out tasks (never trained on)` : ''}`;
}
