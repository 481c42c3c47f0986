/**
 * Runtime defaults. They belong in `core/defaults.ts` (STYLE §8); they live here until that contract
 * change is accepted (see docs/runtime.md, "Proposed core changes").
 */

/** Steps without reaching a subgoal (or changing the state, when a task has no subgoals) before NO_PROGRESS. */
export const DEFAULT_NO_PROGRESS_STEPS = 6;
/** Share of a budget at which BUDGET_WARNING fires once. */
export const DEFAULT_BUDGET_WARNING_RATIO = 0.8;
/** Further calls of a tool hit by a persistent fault before the episode is given up as unrecoverable. */
export const DEFAULT_FAULT_RETRIES = 3;
/** Distinct initial states kept built per domain (LRU). */
export const DEFAULT_STATE_CACHE_SIZE = 32;
/** Prepared tasks (reference state, solution keys, tool specs) kept per domain (LRU). */
export const DEFAULT_TASK_CACHE_SIZE = 1024;
/** Store recorder: transitions buffered before a group commit starts. */
export const DEFAULT_RECORDER_MAX_BATCH = 512;
/** Store recorder: longest time a recorded transition waits before a group commit starts. */
export const DEFAULT_RECORDER_MAX_DELAY_MS = 50;
/** Deepest nesting accepted inside `args` (deeper input is an INVALID_ACTION, never a stack overflow). */
export const MAX_ARGS_DEPTH = 32;
/** Most JSON nodes accepted inside `args`. */
export const MAX_ARGS_NODES = 10_000;
