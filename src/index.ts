/** EnvHarness public API: contracts, generation, runtime, curriculum, the harness, built-in domains. */
export * from './core/index.js';
export * from './generation/index.js';
export * from './runtime/index.js';
export * from './curriculum/index.js';
export * from './agents/index.js';
export * from './interop/index.js';
export { createHarness, openStore, Harness, type HarnessOptions, type GenerateOptions, type PoolStats } from './harness/harness.js';
export type { Lockfile, LockCheck } from './harness/lockfile.js';
export type { SnapshotDiff } from './harness/snapshots.js';
export type { TrainOptions, TrainProgress, TrainSummary, SliceSummary } from './harness/train.js';
export type { EpisodeOutcome, EpisodeRunOptions } from './harness/episodes.js';
export { runStaticVsAdaptive, type ExperimentOptions, type ExperimentResult, type ArmCurve } from './harness/experiment.js';
export { passHatK, passKTable, binomial, type PassKRow, type Trial } from './harness/metrics.js';
export { createSqliteStore } from './storage/sqlite/index.js';
export * from './report/index.js';
export { builtinDomains } from './builtins.js';
export { math, createStatelessDomain } from './domains/math/index.js';
export { retail, retailTemplates, createRetailDomain, generateRetailWorld, loadTauBenchWorld, type RetailDomain } from './domains/retail/index.js';
