/** `train --resume RUN`: checks that a run can continue and rebuilds what the loop needs from its checkpoint. */
import {
  digest,
  EnvHarnessError,
  type Agent,
  type JsonValue,
  type RngState,
  type RunRecord,
  type Split,
  type Store,
} from '../core/index.js';
import type { DynamicsOptions } from '../runtime/index.js';
import { poolMembership } from './snapshots.js';
import {
  checkpointKey,
  checkResumable,
  checkResumeOptions,
  countedFromEvents,
  parseCheckpoint,
  recordedOptions,
  rewindWrites,
} from './train-checkpoint.js';
import type { TrainOptions, TrainProgress, TrainResume } from './train.js';

/** How to continue a run. Everything else comes from the run's record and checkpoint. */
export interface ResumeTrainOptions {
  /**
   * Builds the agent from its checkpointed state (null: it had none), e.g.
   * `(state) => createAgent('learner', { seed, state })`. The agent must be the run's (name, version) and
   * its `config()` must equal the checkpoint's, or the resume is refused (PARAMS_INVALID, `/agent`).
   */
  agent: (state: JsonValue) => Agent | Promise<Agent>;
  /**
   * Options the caller set explicitly (e.g. on the command line): each must equal the run's, or the resume
   * is refused naming it (a resume never changes a run midway). Keys: episodes, strategy, seed, concurrency,
   * evalEvery, evalTasks, group, domains, guard, checkpointEvery, agent.
   */
  given?: Record<string, JsonValue | undefined>;
  /** How the caller names a field in messages (the CLI: `--eval-every`). */
  flag?: (field: string) => string;
  /** Feedback producers of the run's dynamics (code, so not in its record). */
  feedback?: DynamicsOptions['feedback'];
  onProgress?: (progress: TrainProgress) => void;
}

/** What `planResume` found: the loop's options and resume point, and the sampler state to continue with. */
export interface ResumePlan {
  options: TrainOptions;
  resume: TrainResume;
  rng: RngState;
}

/**
 * Checks that run `runId` can continue and rebuilds its loop state. RUN_NOT_FOUND (no such run),
 * RUN_NOT_RESUMABLE (finished, live, not training, no checkpoint), PARAMS_INVALID (a given option or the
 * agent differs), SNAPSHOT_MISMATCH (the pool or the templates changed since the run started). Writes nothing.
 */
export async function planResume(
  store: Store,
  runId: string,
  options: ResumeTrainOptions,
  context: { isLive: (run: RunRecord) => boolean; templates: ReadonlyArray<{ id: string; sourceDigest: string }>; now: string; owner?: { host: string; pid: number } },
): Promise<ResumePlan> {
  const run = await store.getRun(runId);
  if (run === undefined) {
    throw new EnvHarnessError('RUN_NOT_FOUND', `no run ${runId}; \`envharness runs list\` shows the runs of this store`, { details: { runId, pointer: '/resume' } });
  }
  checkResumable(run, context.isLive(run));
  const recorded = recordedOptions(run);
  const label = (run.config as { label?: string }).label;
  checkResumeOptions(
    run,
    { ...(recorded as unknown as Record<string, JsonValue>), strategy: run.strategy, seed: run.seed, agent: run.agent.name },
    options.given ?? {},
    options.flag,
  );
  const checkpoint = parseCheckpoint(await store.getMeta(checkpointKey(run.id)), run.id);
  if (checkpoint === undefined) {
    throw new EnvHarnessError('RUN_NOT_RESUMABLE', `run ${run.id} cannot be resumed: it has no checkpoint; start a new run`, { details: { runId: run.id, status: run.status } });
  }
  await checkSameWorld(store, run, context.templates);

  const agent = await options.agent(checkpoint.agent);
  if (agent.name !== run.agent.name || agent.version !== run.agent.version) {
    throw new EnvHarnessError(
      'PARAMS_INVALID',
      `run ${run.id} was trained by agent ${run.agent.name}@${run.agent.version}, not ${agent.name}@${agent.version}; resume it with that agent`,
      { details: { pointer: '/agent', runId: run.id } },
    );
  }
  if (digest(agent.config()) !== checkpoint.agentConfig) {
    throw new EnvHarnessError(
      'PARAMS_INVALID',
      `the ${agent.name} agent given to resume run ${run.id} is not configured as at its checkpoint (its config() digest differs): build it with the run's seed and settings from the checkpointed state`,
      { details: { pointer: '/agent', runId: run.id } },
    );
  }

  const episodes = (await store.listEpisodes({ runId: run.id })).map((e) => e.id);
  const events = (await store.listRunEvents(run.id)).filter((e) => e.seq < checkpoint.eventSeq);
  const { interrupted: _gone, ...rest } = run;
  const continued: RunRecord = {
    ...rest,
    status: 'running',
    ...(context.owner ? { owner: context.owner } : {}),
    resumed: [...(run.resumed ?? []), { at: context.now, fromEpisode: checkpoint.episodes, from: run.status }],
    updatedAt: context.now,
  };
  const dynamics = (recorded.dynamics ?? {}) as DynamicsOptions;
  return {
    rng: checkpoint.rng,
    resume: { run: continued, checkpoint, counted: countedFromEvents(events), rewind: rewindWrites(run, checkpoint, episodes) },
    options: {
      agent,
      episodes: recorded.episodes,
      strategy: run.strategy as TrainOptions['strategy'],
      seed: run.seed,
      concurrency: recorded.concurrency,
      evalEvery: recorded.evalEvery,
      ...(recorded.evalTasks === null ? {} : { evalTasks: recorded.evalTasks }),
      guard: recorded.guard,
      ...(recorded.group === null ? {} : { group: recorded.group }),
      ...(recorded.domains === null ? {} : { domains: recorded.domains }),
      ...(recorded.dynamics === null && options.feedback === undefined ? {} : { dynamics: { ...dynamics, ...(options.feedback ? { feedback: options.feedback } : {}) } }),
      record: recorded.record,
      checkpointEvery: recorded.checkpointEvery,
      ...(label === undefined ? {} : { label }),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    },
  };
}

/** SNAPSHOT_MISMATCH unless the pool and the templates are those the run started with (draws depend on both). */
async function checkSameWorld(store: Store, run: RunRecord, templates: ReadonlyArray<{ id: string; sourceDigest: string }>): Promise<void> {
  const start = await store.getSnapshot(run.snapshotStart);
  if (start === undefined) {
    throw new EnvHarnessError('SNAPSHOT_MISMATCH', `run ${run.id}'s start snapshot ${run.snapshotStart.slice(0, 12)} is not in this store; resume it in the store it ran in`, {
      details: { runId: run.id },
    });
  }
  const { pool } = await poolMembership(store);
  const differing = (Object.keys(start.pool) as Split[]).filter((split) => start.pool[split].digest !== pool[split].digest);
  if (differing.length > 0) {
    throw new EnvHarnessError(
      'SNAPSHOT_MISMATCH',
      `the pool has changed since run ${run.id} started (splits: ${differing.join(', ')}), so it would not draw the same tasks; resume it in a store with its start snapshot (import its export), or start a new run`,
      { details: { runId: run.id, splits: differing } },
    );
  }
  const known = new Map(templates.map((t) => [t.id, t.sourceDigest]));
  const missing = start.templates.filter((t) => known.get(t.id) !== t.sourceDigest).map((t) => t.id);
  if (missing.length > 0) {
    throw new EnvHarnessError('SNAPSHOT_MISMATCH', `run ${run.id} started with template versions this harness does not have: ${missing.join(', ')}; resume it with the version it ran with`, {
      details: { runId: run.id, templates: missing },
    });
  }
}
