/** Batches, their manifests, gates and the generation log. */
import type { JsonValue } from './json.js';
import type { LevelSpec, Split, Task } from './template.js';

export const GATE_NAMES = ['schema', 'exact_duplicate', 'near_duplicate', 'oracle', 'non_trivial', 'leakage'] as const;
export type GateName = (typeof GATE_NAMES)[number];

/** A gate's verdict on one task. */
export type GateVerdict = { ok: true } | { ok: false; reason: string; details?: JsonValue };

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
  reason?: string;
  details?: JsonValue;
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
}
