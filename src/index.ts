/**
 * EnvHarness public API: contracts, generation, runtime, curriculum, the harness facade and the generic
 * agents. The rest are subpath exports: `envharness/sqlite`, `envharness/server`, `envharness/mcp`,
 * `envharness/openai`, `envharness/report`, `envharness/builtins`, `envharness/domains/<name>`. Importing
 * this entry loads no native module, no HTTP framework and no LLM SDK (test/architecture/root-import.test.ts).
 */
export * from './core/index.js';
export * from './generation/index.js';
export * from './runtime/index.js';
export * from './curriculum/index.js';
export * from './agents/index.js';
export { createHarness, openStore, Harness, type HarnessOptions, type GenerateOptions, type PoolStats } from './harness/harness.js';
export type { Clock } from './harness/clock.js';
export { replayingStore } from './harness/replaying-store.js';
export type { Lockfile, LockCheck } from './harness/lockfile.js';
export type { SnapshotDiff } from './harness/snapshots.js';
export type { TrainOptions, TrainProgress, TrainSummary, SliceSummary } from './harness/train.js';
export type { ResumeTrainOptions } from './harness/train-resume.js';
export { runStaticVsAdaptive, type ExperimentOptions, type ExperimentResult, type ArmCurve } from './harness/experiment.js';
export { passHatK, passKTable, binomial, type PassKRow, type Trial } from './report/metrics.js';
