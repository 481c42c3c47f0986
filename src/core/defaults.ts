/** Every default value of EnvHarness, in one place. */
import type { Budget } from './episode.js';

export const GENERATOR_VERSION = 'envharness-generator/1';

export const DEFAULT_STORE_FILE = '.envharness/envharness.db';
export const DEFAULT_LOCKFILE = 'envharness.lock.json';
/** Store meta key: true while the regression split is frozen (every writer to the split checks it). */
export const REGRESSION_FROZEN_META = 'split.regression.frozen';

export const DEFAULT_BUDGET: Required<Pick<Budget, 'steps' | 'consecutiveErrors'>> = {
  steps: 30,
  consecutiveErrors: 10,
};

export const DEFAULT_GATES = {
  schema: true,
  exact_duplicate: true,
  near_duplicate: true,
  oracle: true,
  non_trivial: true,
  leakage: true,
} as const;

/** Jaccard similarity over MinHash signatures at or above which two tasks are near duplicates. */
export const DEFAULT_NEAR_DUPLICATE_THRESHOLD = 0.9;
export const MINHASH_PERMUTATIONS = 64;
export const SHINGLE_SIZE = 3;

/** Share of each batch sent to human review. */
export const DEFAULT_REVIEW_SHARE = 0;

/** Batches at or above this size are generated in worker threads. */
export const WORKER_THRESHOLD = 5_000;

/** How long a SQLite writer waits for the write lock before failing. */
export const DEFAULT_SQLITE_BUSY_TIMEOUT_MS = 5_000;

/**
 * V8's semi-space, in MiB, that EnvHarness's processes and threads run with (V8's default is 16). An
 * episode makes many objects that live for a few steps (pages, records, transitions); with the default,
 * most of them outlive two scavenges and are copied into the old generation, whose collection then costs
 * more than the steps. bin/envharness.js starts node with {@link NODE_HEAP_FLAGS}; worker threads that
 * play episodes get {@link WORKER_HEAP_LIMITS}. docs/deploy.md, "V8 young generation", has the measurements.
 */
export const SEMI_SPACE_MB = 64;
/** The node flags of {@link SEMI_SPACE_MB}; bin/envharness.js's first line repeats them (a test keeps the two equal). */
export const NODE_HEAP_FLAGS: readonly string[] = [`--max-semi-space-size=${SEMI_SPACE_MB}`];
/** A worker thread's `resourceLimits` for {@link SEMI_SPACE_MB}: V8's young generation is three semi-spaces. */
export const WORKER_HEAP_LIMITS = { maxYoungGenerationSizeMb: 3 * SEMI_SPACE_MB } as const;
