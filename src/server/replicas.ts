/**
 * Serve replicas sharing one store (docs/design/021-replicas.md): the contract a store offers for shared
 * server episodes, and rebuilding an episode on the replica that takes it over by replaying its transitions.
 */
import { createStoreRecorder, EnvHarnessError, sentInput, type Action, type Episode, type EpisodeRecord, type JsonObject, type JsonValue, type Recorder, type Store, type Transition } from '../index.js';

import type { SharedEpisodeRow, SharedEpisodes } from '../core/index.js';

// The replica store contract lives in core (storage implements it); re-exported for the server's users.
export type { CurriculumLog, CurriculumLogEntry, ReplicaStore, SharedEpisodeRow, SharedEpisodes, SharedStepKey } from '../core/index.js';
export { isReplicaStore } from '../core/index.js';

/**
 * A recorder of one episode, muted while it is rebuilt: replayed steps are already stored. Each episode
 * has its own (the harness's shared recorder stays failed after one conflict, and a lost takeover race is
 * a conflict of one episode, not of the replica); the store's writer still commits them in groups.
 */
export interface EpisodeRecorder extends Recorder {
  muted: boolean;
}

export function createEpisodeRecorder(store: Store): EpisodeRecorder {
  const inner = createStoreRecorder(store, { maxBatch: 1024, maxDelayMs: 20 });
  const recorder: EpisodeRecorder = {
    muted: false,
    begin: (episode: EpisodeRecord) => {
      if (!recorder.muted) inner.begin(episode);
    },
    record: (transition: Transition) => {
      if (!recorder.muted) inner.record(transition);
    },
    end: (episode: EpisodeRecord) => {
      if (!recorder.muted) inner.end(episode);
    },
    flush: () => inner.flush(),
  };
  return recorder;
}

/**
 * Brings a freshly reset-able episode to where its recorded transitions left it: reset with the recorded
 * seed, then each recorded action, checking every step's state hash and reward against the recording (the
 * runtime is deterministic, so a difference means different code or data: refused rather than served).
 */
export function replayInto(episode: Episode, recorder: EpisodeRecorder, seed: number, transitions: readonly Transition[]): void {
  recorder.muted = true;
  try {
    episode.reset({ seed });
    for (const t of transitions) {
      const result = episode.step(sentInput(t.action as Action));
      if (result.info.stateHash !== t.info.stateHash || result.reward !== t.reward || result.info.step !== t.info.step) {
        throw new EnvHarnessError(
          'STORE_CONFLICT',
          `episode ${t.episodeId}: replaying step ${t.step} gives state ${result.info.stateHash.slice(0, 12)}, reward ${result.reward}; ` +
            `the recording has ${t.info.stateHash.slice(0, 12)}, ${t.reward}. Every replica must run the same EnvHarness version and templates`,
          { details: { episodeId: t.episodeId, step: t.step } },
        );
      }
    }
  } finally {
    recorder.muted = false;
  }
}
