/** Retail as `envharness` runs it: the tau-bench view plus what retail declares for tau-bench imports. */
import type { RetailDomain } from './domain.js';
import { tauBenchCommands, tauBenchEpisodeState, restoreTauBenchWorld } from './tau-bench/cli.js';
import { createTauBenchDomain } from './tau-bench/domain.js';

/**
 * Wraps `retail` so imported tau-bench tasks grade as tau-bench does (every other task behaves exactly
 * as plain retail) and declares `restore` (re-register the imported world), `commands` (`import
 * tau-bench`, `tau-bench eval`) and `episodeState` (tau-bench's export format).
 * @example
 * const domains = [createBuiltinRetail(retail), math];
 */
export function createBuiltinRetail(retail: RetailDomain): RetailDomain {
  const view = createTauBenchDomain(retail);
  return Object.assign(view, {
    restore: (store: Parameters<typeof restoreTauBenchWorld>[1]) => restoreTauBenchWorld(view, store),
    commands: tauBenchCommands(view),
    episodeState: tauBenchEpisodeState(view),
  });
}
