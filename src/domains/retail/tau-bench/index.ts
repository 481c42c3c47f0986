/**
 * tau-bench retail inside EnvHarness: import its world and tasks, grade exactly as it does, export states in its shape.
 * Its LLM user lives in `./llm-user.ts` (subpath `envharness/domains/retail/llm-user`) so that this entry loads no LLM SDK.
 */
export { createTauBenchDomain, isTauBenchTask, tauBenchUserGoal, TAU_BENCH_TEMPLATE_PREFIX, type TauBenchDomainOptions, type TauBenchUserGoal } from './domain.js';
export {
  gradeJson,
  gradeTauBench,
  gradeTauBenchDetailed,
  tauBenchGoldDigest,
  tauBenchGoldState,
  tauBenchOutputSaid,
  tauBenchParams,
  type TauBenchGrade,
  type TauBenchParams,
} from './grade.js';
export {
  DEFAULT_TAU_BENCH_TASK_FILES,
  defaultSplitFor,
  importTauBench,
  TAU_BENCH_IMPORTER_VERSION,
  TAU_BENCH_MAX_STEPS,
  TAU_BENCH_TEMPLATE_VERSION,
  tauBenchSetName,
  type ImportedTauBenchSet,
  type ImportTauBenchOptions,
  type TauBenchImport,
  type TauBenchTaskFile,
} from './import.js';
export { inferTauBenchLabels, TAU_BENCH_MAX_LEVEL, TAU_BENCH_TERMINATE_TOOLS, TAU_BENCH_WRITE_TYPES, type TauBenchLabels } from './labels.js';
export {
  callsOfTrace,
  callsOfTransitions,
  exportTauBenchState,
  formatEpisodeState,
  loadEpisodeState,
  rebuildRetailState,
  type EpisodeStateExport,
  type RecordedCall,
} from './state.js';
export {
  createTauBenchRunner,
  type AwaitableUser,
  type TauBenchEpisodeOptions,
  type TauBenchEpisodeResult,
  type TauBenchRunner,
  type TauBenchRunnerOptions,
  type TauBenchUserFactory,
} from './episode.js';
export { evaluateTauBench, type EvaluateTauBenchOptions, type TauBenchEvaluation } from './evaluate.js';
export { parseTaskFileOption, restoreTauBenchWorld, tauBenchCommands, tauBenchEpisodeState, TAU_BENCH_META } from './cli.js';
