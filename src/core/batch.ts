/** Batches, their manifests, gates and the generation log. */
import type { JsonValue } from './json.js';
import type { Problem } from './problem.js';
import type { LevelSpec, Split, Task } from './template.js';

export const GATE_NAMES = ['schema', 'exact_duplicate', 'near_duplicate', 'oracle', 'non_trivial', 'leakage'] as const;
export type GateName = (typeof GATE_NAMES)[number];

/**
 * Why a gate rejected a candidate (the `code` of its `Problem`; docs/generation.md lists them):
 * INSTANTIATE_FAILED, TASK_SCHEMA and TEMPLATE_CHECK (schema gate), DUPLICATE_IN_BATCH, ALREADY_STORED and
 * ALREADY_IN_POOL (exact_duplicate), NEAR_DUPLICATE, LEAKS_REGRESSION, ORACLE_FAILED, TRIVIAL, and
 * GATE_ERROR (an oracle or non-triviality hook threw).
 */
export const GATE_PROBLEM_CODES = [
  'INSTANTIATE_FAILED',
  'TASK_SCHEMA',
  'TEMPLATE_CHECK',
  'DUPLICATE_IN_BATCH',
  'ALREADY_STORED',
  'ALREADY_IN_POOL',
  'NEAR_DUPLICATE',
  'LEAKS_REGRESSION',
  'ORACLE_FAILED',
  'TRIVIAL',
  'GATE_ERROR',
] as const;
export type GateProblemCode = (typeof GATE_PROBLEM_CODES)[number];

/**
 * A gate's verdict on one task. A rejection's `reason` is its message; `problem` is the same rejection in
 * core's one `Problem` shape. A hook may leave `problem` out: the gate runner then fills in its gate's
 * code (ORACLE_FAILED, TRIVIAL) with `reason` as the message.
 */
export type GateVerdict = { ok: true } | { ok: false; reason: string; details?: JsonValue; problem?: Problem<GateProblemCode> };

/** A gate's totals over a batch. */
export interface GateResult {
  gate: GateName;
  enabled: boolean;
  checked: number;
  passed: number;
  rejected: number;
}

/** One line of the generation log: a candidate task and what the gates said. */
export interface GenerationLogEntry {
  batchId: string;
  index: number;
  taskId: string;
  template: string;
  level: number;
  accepted: boolean;
  gate?: GateName;
  /** A rejection's message (the same text as `problem.message`). */
  reason?: string;
  details?: JsonValue;
  /** A rejection as a `Problem` (absent on accepted entries, and on rejections stored without one by an import). */
  problem?: Problem<GateProblemCode>;
}

export interface BatchRequest {
  templates: Array<{ id: string; weight?: number }>;
  /** Level per template, or one level for all; a list draws uniformly among levels. */
  levels: number[];
  count: number;
  seed: number;
  split: Split;
  gates?: Partial<Record<GateName, boolean>>;
  nearDuplicateThreshold?: number;
  reviewShare?: number;
  labels?: Record<string, string>;
}

/** The immutable record of how a batch was made. Its id is the digest of everything but `id`. */
export interface BatchManifest {
  id: string;
  generatorVersion: string;
  templates: Array<{ id: string; version: number; sourceDigest: string; weight: number; taskType: string }>;
  seed: number;
  split: Split;
  levels: number[];
  /** Per template, per requested level: what the level's parameters are. */
  parameterRanges: Record<string, Record<string, LevelSpec>>;
  requested: number;
  accepted: number;
  rejected: number;
  gates: GateResult[];
  nearDuplicateThreshold: number;
  reviewShare: number;
  /** sha256 over the accepted task ids in generation order. */
  digest: string;
  labels: Record<string, string>;
  /** Counts of accepted tasks by type and by level. */
  counts: { byType: Record<string, number>; byLevel: Record<string, number> };
}

export interface Batch {
  manifest: BatchManifest;
  tasks: Task[];
  log: GenerationLogEntry[];
  /**
   * The stored body of each task (`canonicalize` of the task without split/status/batch), in `tasks`
   * order, when the generator already wrote it with the task's id: stores then write it as it is. Set by
   * `generateBatch` as a non-enumerable property (JSON, spreads and deep equality do not see it); a batch
   * whose tasks are changed afterwards must not carry it.
   */
  taskBodies?: readonly string[];
  /**
   * The columns and stored body of each task, in `tasks` order, for a batch whose `tasks` are parsed
   * from their bodies only when first read (`generateBatch` with worker threads): stores write these
   * instead of reading `tasks`. Non-enumerable, and dropped the moment `tasks` is read (so a batch whose
   * tasks were changed is stored from the tasks).
   */
  taskRows?: readonly BatchTaskRow[];
}

/** What a store writes for one task of a batch: its columns and its stored body. */
export interface BatchTaskRow {
  id: string;
  template: string;
  domain: string;
  taskType: string;
  level: number;
  body: string;
}
