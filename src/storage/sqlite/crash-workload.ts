/**
 * The write burst of the crash test: a deterministic sequence of store writes derived from a seed, so the
 * parent can rebuild exactly what the killed child wrote (test support, not part of the public API).
 */
import { createRng, type Batch, type EpisodeRecord, type Transition } from '../../core/index.js';
import { makeBatch, makeEpisode, makeTask, makeTransition } from '../../../test/conformance/store-fixtures.js';

export type CrashOp =
  | { kind: 'batch'; batch: Batch; review: string[] }
  | { kind: 'steps'; transitions: Transition[]; episode: EpisodeRecord };

const SLOTS = 4;
const EPISODE_LENGTH = 40;

/** The i-th write of the burst for `seed`, for every i, in order. Ids are unique per seed. */
export function* crashWorkload(seed: number): Generator<CrashOp> {
  const rng = createRng(['crash-workload', seed]);
  const slots = Array.from({ length: SLOTS }, (_, k) => ({ generation: 0, episode: newEpisode(seed, k, 0) }));
  let taskCounter = 0;
  for (;;) {
    if (rng.chance(0.1)) {
      const tasks = Array.from({ length: rng.int(1, 5) }, () => makeTask(seed * 1_000_000 + taskCounter++));
      const review = rng.chance(0.3) ? [tasks[0]!.id] : [];
      yield { kind: 'batch', batch: makeBatch(tasks, { seed }), review };
      continue;
    }
    const k = rng.int(0, SLOTS - 1);
    const slot = slots[k]!;
    const from = slot.episode.steps;
    const count = Math.min(rng.int(1, 20), EPISODE_LENGTH - from);
    const transitions = Array.from({ length: count }, (_, i) => makeTransition(slot.episode.id, from + i));
    const steps = from + count;
    const done = steps === EPISODE_LENGTH;
    slot.episode = {
      ...slot.episode,
      steps,
      status: done ? 'terminated' : 'running',
      reward: done ? 1 : 0,
      updatedAt: `2026-01-02T00:00:${String(steps).padStart(2, '0')}.000Z`,
    };
    yield { kind: 'steps', transitions, episode: slot.episode };
    if (done) {
      slot.generation += 1;
      slot.episode = newEpisode(seed, k, slot.generation);
    }
  }
}

function newEpisode(seed: number, slot: number, generation: number): EpisodeRecord {
  return makeEpisode(`crash-${seed}-slot${slot}-gen${generation}`, `task-${seed}`, { runId: `crash-${seed}` });
}
