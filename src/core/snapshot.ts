/** Snapshots: the complete environment version at a point in time; the id is its digest. */
import type { JsonValue } from './json.js';
import type { RngState } from './rng.js';
import type { Split } from './template.js';

export interface SnapshotBody {
  format: 'envharness.snapshot/1';
  templates: Array<{ id: string; sourceDigest: string }>;
  /** Pool membership: per split, the digest over sorted task ids and the ids themselves. */
  pool: Record<Split, { digest: string; count: number }>;
  /** Curriculum controller state; null until a curriculum exists. */
  curriculum: JsonValue;
  rng: Record<string, RngState>;
  config: JsonValue;
}

export interface Snapshot extends SnapshotBody {
  id: string;
  label?: string;
  createdAt: string;
}
