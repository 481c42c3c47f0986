/** The episode runtime: Gymnasium-style reset/step with process feedback, constraints, seeded faults, recording and exact replay. */
export { createEpisode, normalizeOutput, sentInput } from './episode.js';
export type { DynamicsOptions, Episode, EpisodeOptions } from './episode.js';
export { actionSchema, validateAction } from './action.js';
export type { ActionIssue } from './action.js';
export { createMemoryRecorder, createStoreRecorder } from './recorder.js';
export type { MemoryRecorder, Recorder, RecordingTarget, StagedCall, StoreRecorder, StoreRecorderOptions } from './recorder.js';
export { rebuildTransitions, replayEpisode, replayRecorded, verifyReplay } from './replay.js';
export type { ReplayMismatch, ReplayOptions } from './replay.js';
export { createDomainGateHooks, createNonTrivialGate, createOracleGate } from './gates.js';
export type { NonTrivialGateOptions, OracleGateOptions } from './gates.js';
export { createRuntimeCache, runtimeCacheFor } from './runtime-cache.js';
export type { PreparedTask, RuntimeCache, RuntimeCacheOptions } from './runtime-cache.js';
export { toolSpec } from './tool-specs.js';
export { episodeRunner, playEpisode, runEpisode } from './rollout.js';
export type { EpisodeOutcome, EpisodeRunOptions, PlayHooks, PlayResult } from './rollout.js';
