/** EnvHarness public API: contracts, generation, runtime, curriculum, the harness, built-in domains. */
export * from './core/index.js';
export * from './generation/index.js';
export * from './runtime/index.js';
export { createHarness, openStore, Harness, type HarnessOptions, type GenerateOptions, type PoolStats } from './harness/harness.js';
export type { Lockfile, LockCheck } from './harness/lockfile.js';
export type { SnapshotDiff } from './harness/snapshots.js';
export { createSqliteStore } from './storage/sqlite/index.js';
export { builtinDomains } from './builtins.js';
export { math, createStatelessDomain } from './domains/math/index.js';
