/** Runs: experiment records that say which environment version produced which results. */
import type { JsonValue } from './json.js';

export interface AgentInfo {
  name: string;
  version: string;
  /** Digest of the agent's configuration (and, for learners, of their saved state). */
  configDigest: string;
}

export type RunStatus = 'running' | 'finished' | 'failed';

export interface RunRecord {
  id: string;
  kind: 'train' | 'eval' | 'experiment';
  agent: AgentInfo;
  strategy: string;
  seed: number;
  config: JsonValue;
  snapshotStart: string;
  snapshotEnd?: string;
  status: RunStatus;
  summary?: JsonValue;
  createdAt: string;
  updatedAt: string;
}

/** Something that happened during a run, in order: metrics, curriculum updates, guard triggers. */
export interface RunEvent {
  runId: string;
  seq: number;
  kind: string;
  data: JsonValue;
}
