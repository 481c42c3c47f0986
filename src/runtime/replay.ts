/** Replay: an episode is a pure function of (task, seed, actions); replaying recorded actions reproduces every step. */
import { canonicalize, EnvHarnessError } from '../core/index.js';
import type { Action, Domain, EpisodeRecord, StepResult, Task, Transition } from '../core/index.js';
import { createEpisode, sentInput } from './episode.js';
import type { DynamicsOptions, Episode, EpisodeOptions } from './episode.js';
import { createMemoryRecorder } from './recorder.js';

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
  return stepAll(episode, actions, ignoreAfterEnd === true);
}

/** Steps recorded actions (a rejected input as the input it wraps) into a reset episode; after its end, stops when `ignoreAfterEnd`, else EPISODE_FINISHED. */
function stepAll(episode: Episode, actions: readonly unknown[], ignoreAfterEnd: boolean): StepResult[] {
  const results: StepResult[] = [];
  for (const action of actions) {
    if (ignoreAfterEnd && episode.status !== 'running') break;
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

/**
 * The transitions of an episode recorded as its inputs (`recordAs: 'inputs'`), rebuilt by replaying its actions on
 * `task` with its seed and dynamics: the transitions a `transitions` recording would have stored, byte for byte.
 * Throws REPLAY_DIVERGED when the replay does not end where the recording did (another step count, status, reward or
 * final state hash: the domain or the task's code changed since), TASK_INVALID when `task` is not the episode's.
 * @example
 * const record = await store.getEpisode(id);
 * const transitions = rebuildTransitions(domain, await store.getTask(record.taskId), record);
 */
export function rebuildTransitions(domain: Domain<any>, task: Task, record: EpisodeRecord, options: { cache?: EpisodeOptions['cache'] } = {}): Transition[] {
  return replayRecorded(domain, task, record, options).transitions;
}

/**
 * `rebuildTransitions`, with the replayed episode as the recording left it (ended, or running where it was closed):
 * what reads its final state (`exportState`) replays once.
 */
export function replayRecorded(domain: Domain<any>, task: Task, record: EpisodeRecord, options: { cache?: EpisodeOptions['cache'] } = {}): { episode: Episode; transitions: Transition[] } {
  const inputs = record.inputs;
  if (inputs === undefined) {
    throw new EnvHarnessError('EPISODE_NOT_FOUND', `episode ${record.id} was recorded as transitions, not as its inputs: read them from the store`, { details: { episodeId: record.id } });
  }
  if (task.id !== record.taskId) {
    throw new EnvHarnessError('TASK_INVALID', `episode ${record.id} is of task ${record.taskId}, not ${task.id}`, { details: { episodeId: record.id, taskId: task.id } });
  }
  const recorder = createMemoryRecorder();
  const episode = createEpisode(domain, task, {
    ...(inputs.dynamics as DynamicsOptions | undefined),
    recorder,
    episodeId: () => record.id,
    ...(record.runId !== undefined ? { runId: record.runId } : {}),
    ...(record.agent !== undefined ? { agent: record.agent } : {}),
    ...(options.cache !== undefined ? { cache: options.cache } : {}),
  });
  episode.reset({ seed: record.seed });
  stepAll(episode, inputs.actions, true);
  const transitions = recorder.transitions(record.id);
  for (const kept of inputs.kept ?? []) if (kept.step >= 1 && kept.step <= transitions.length) transitions[kept.step - 1] = kept;
  const status = episode.status === 'running' ? 'closed' : episode.status;
  const reward = transitions.reduce((sum, t) => sum + t.reward, 0);
  const hash = episode.stateHash();
  const differs =
    transitions.length !== inputs.actions.length || transitions.length !== record.steps
      ? `${transitions.length} of its ${record.steps} recorded steps replayed`
      : status !== record.status
        ? `the replay ended ${status}, the recording ${record.status}`
        : reward !== record.reward
          ? `the replay's reward is ${reward}, the recording's ${record.reward}`
          : hash !== inputs.stateHash
            ? `the replay's final state hash is ${hash.slice(0, 12)}, the recording's ${inputs.stateHash.slice(0, 12)}`
            : undefined;
  if (differs !== undefined) {
    throw new EnvHarnessError(
      'REPLAY_DIVERGED',
      `episode ${record.id} (task ${record.taskId}, seed ${record.seed}) does not replay as recorded: ${differs}. It was recorded as its inputs, so its transitions exist only as a replay; replay it with the domain version it ran with (${domain.name} is at version ${domain.version} here).`,
      { details: { episodeId: record.id, taskId: record.taskId } },
    );
  }
  return { episode, transitions };
}
