/** Runs: experiment records that say which environment version produced which results. */
import type { JsonValue } from './json.js';

export interface AgentInfo {
  name: string;
  version: string;
  /** Digest of the agent's configuration (and, for learners, of their saved state). */
  configDigest: string;
}

/** `interrupted`: the process running it died (found by `Store.recover`); `train --resume` continues it. */
export type RunStatus = 'running' | 'finished' | 'failed' | 'interrupted';

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
  /** The process running it (so a later open can tell a live run from one whose process died). */
  owner?: { host: string; pid: number };
  /** Set when found `interrupted`: the last event it recorded (seq -1: none). */
  interrupted?: { lastEventSeq: number; lastEventKind?: string; at: string };
  /** Each `train --resume` of this run: when, the checkpoint's episode count, and the status it continued from. */
  resumed?: Array<{ at: string; fromEpisode: number; from: RunStatus }>;
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
