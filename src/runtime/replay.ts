/** Replay: an episode is a pure function of (task, seed, actions); replaying recorded actions reproduces every step. */
import { canonicalize } from '../core/index.js';
import type { Action, Domain, StepResult, Task, Transition } from '../core/index.js';
import { createEpisode, sentInput } from './episode.js';
import type { DynamicsOptions, EpisodeOptions } from './episode.js';

/** The dynamics options of the recording, plus the clock and cache to replay with. */
export interface ReplayOptions extends DynamicsOptions {
  /** Same as EpisodeOptions.clock: only needed to reproduce a wall-time truncation. */
  clock?: () => number;
  cache?: EpisodeOptions['cache'];
}

/**
 * Replays `actions` from a fresh reset with `seed` and returns each step's result. Recorded rejected
 * inputs (`{ type: 'invalid', input }`) are replayed as the input they wrap. Stops after the step
 * that ends the episode; actions after it are ignored only if `ignoreAfterEnd` is set, otherwise they
 * are an EPISODE_FINISHED error (a recorded episode never has them).
 * @example
 * const steps = replayEpisode(domain, task, 7, recorder.transitions(id).map((t) => t.action));
 */
export function replayEpisode(
  domain: Domain<any>,
  task: Task,
  seed: number,
  actions: readonly unknown[],
  options: ReplayOptions & { ignoreAfterEnd?: boolean } = {},
): StepResult[] {
  const { ignoreAfterEnd, ...episodeOptions } = options;
  const episode = createEpisode(domain, task, episodeOptions);
  episode.reset({ seed });
  const results: StepResult[] = [];
  for (const action of actions) {
    if (ignoreAfterEnd === true && episode.status !== 'running') break;
    results.push(episode.step(sentInput(action as Action)));
  }
  return results;
}

/** A step where a replay differs from its recording. */
export interface ReplayMismatch {
  step: number;
  field: 'observation' | 'reward' | 'terminated' | 'truncated' | 'truncation' | 'feedback' | 'info' | 'faults' | 'missing';
  recorded: string;
  replayed: string;
}

/**
 * Replays recorded transitions (from a recorder or a store) and compares every step's canonical
 * observation, reward, terminated, truncated, truncation, feedback and info (which holds the state hash).
 * Returns the mismatches: empty means the episode replays exactly.
 */
export function verifyReplay(
  domain: Domain<any>,
  task: Task,
  seed: number,
  transitions: readonly Transition[],
  options: ReplayOptions = {},
): ReplayMismatch[] {
  const results = replayEpisode(domain, task, seed, transitions.map((t) => t.action), options);
  const mismatches: ReplayMismatch[] = [];
  transitions.forEach((t, i) => {
    const r = results[i];
    if (r === undefined) {
      mismatches.push({ step: t.step, field: 'missing', recorded: 'a step', replayed: 'nothing' });
      return;
    }
    const pairs: Array<[ReplayMismatch['field'], unknown, unknown]> = [
      ['observation', t.observation, r.observation],
      ['reward', t.reward, r.reward],
      ['terminated', t.terminated, r.terminated],
      ['truncated', t.truncated, r.truncated],
      ['truncation', t.truncation ?? null, r.truncation ?? null],
      ['feedback', t.feedback, r.feedback],
      ['info', t.info, r.info],
    ];
    for (const [field, recorded, replayed] of pairs) {
      const a = canonicalize(recorded);
      const b = canonicalize(replayed);
      if (a !== b) mismatches.push({ step: t.step, field, recorded: a, replayed: b });
    }
  });
  return mismatches;
}
