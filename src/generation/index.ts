/** Generation: templates → tasks (pure, seeded), declarative templates, quality gates, batches with manifests, and the task pool. */
export { createTemplateRegistry } from './registry.js';
export type { TemplateRegistry } from './registry.js';
export { instantiateTask } from './instantiate.js';
export type { InstantiateOptions } from './instantiate.js';
export {
  compileDeclarativeTemplate,
  DEFAULT_QUESTION_ANSWER_BUDGET,
  loadDeclarativeTemplates,
} from './declarative.js';
export type {
  DeclarativeDefinition,
  DeclarativeIssue,
  DeclarativeTemplate,
  ParamDeclaration,
  QuestionAnswerDefinition,
  ToolCallsDefinition,
} from './declarative.js';
export { compileText, renderText, renderValue } from './expression.js';
export type { CompiledText, ParamType, TextProblem } from './expression.js';
export { checkTaskGates, checkTaskSchema, createGateRunner, GATE_ORDER, runGateHook } from './gates.js';
export type { GateCandidate, GateHook, GateHooks, GateOutcome, GateRunner, GateRunnerOptions, TaskGates, TaskVerdicts } from './gates.js';
export { estimateSimilarity, MinHashIndex, minhashTask, minhashText, normalizeWords } from './minhash.js';
export type { MinHashIndexData, MinHashMatch, MinHashSignature } from './minhash.js';
export { taskSchema, taskSpecSchema } from './task-schema.js';
export { generateBatch, isSelectedForReview } from './batch.js';
export { createGenerationWorkers } from './workers.js';
export type { GenerationWorkers } from './workers.js';
export type { GenerateBatchDeps, GeneratedBatch } from './batch.js';
export { createRefillingPool, createTaskPool, sliceOf } from './pool.js';
export type { PoolDraw, RefillingPool, RefillingPoolOptions, TaskPool } from './pool.js';
