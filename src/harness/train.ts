/** The training loop: sample -> run -> record -> update, with a regression guard and run records. */
import {
  digest,
  EnvHarnessError,
  type Agent,
  type Domain,
  type JsonValue,
  type Rng,
  type RunEvent,
  type RunRecord,
  type Snapshot,
  type Store,
  type StoredTask,
  type StoreWrite,
} from '../core/index.js';
import {
  createCurriculum,
  createGroupTracker,
  createRegressionGuard,
  groupStats,
  type Curriculum,
  type CurriculumConfigInput,
  type EpisodeResult,
  type Slice,
  type StrategyName,
} from '../curriculum/index.js';
import { createStoreRecorder, type DynamicsOptions } from '../runtime/index.js';
import { runEpisode, type EpisodeOutcome } from '../runtime/rollout.js';
import { passKTable, type PassKRow } from '../report/metrics.js';
import { checkpointKey, DEFAULT_CHECKPOINT_EVERY, type CountedEpisode, type RecordedTrainOptions, type TrainCheckpoint } from './train-checkpoint.js';

export interface TrainOptions {
  agent: Agent;
  episodes: number;
  strategy?: StrategyName;
  curriculum?: CurriculumConfigInput;
  seed?: number;
  /** Episodes in flight per round (agents that await, e.g. LLMs, overlap). Results update the curriculum in draw order. */
  concurrency?: number;
  /** Run the frozen regression set every N episodes (0: never). */
  evalEvery?: number;
  /** At most this many regression tasks per evaluation (taken in seq order). */
  evalTasks?: number;
  guard?: { delta?: number; rollback?: boolean };
  /** GRPO-style groups: each draw runs `size` episodes of one task with one shared seed. */
  group?: { size: number; skipZeroVariance?: boolean };
  /** Only these domains (default: every domain with dynamic tasks). */
  domains?: string[];
  dynamics?: DynamicsOptions;
  /** Record transitions to the store (default true). */
  record?: boolean;
  label?: string;
  /**
   * Write a checkpoint (what `train --resume` continues from) at the end of the round that crosses each
   * multiple of this many episodes (default 100). A checkpoint holds the agent's state, so it costs about
   * one `agent.getState()` serialisation.
   */
  checkpointEvery?: number;
  onProgress?: (progress: TrainProgress) => void;
}

/** A run to continue from its checkpoint (see `planResume`), instead of starting a new one. */
export interface TrainResume {
  /** The run record as it continues (status `running`, this process as owner). */
  run: RunRecord;
  checkpoint: TrainCheckpoint;
  /** The episodes finished before the checkpoint. */
  counted: CountedEpisode[];
  /** Writes that discard what the interrupted process wrote after the checkpoint (one transaction with the run record). */
  rewind: StoreWrite[];
}

export interface TrainProgress {
  episodes: number;
  total: number;
  levels: Record<string, number>;
  weights: Record<string, number>;
  recentSuccess: number;
  lastEval?: number;
}

export interface SliceSummary {
  slice: string;
  level: number;
  weight: number;
  episodes: number;
  success: number;
  windowSuccess: number | null;
  low: number;
  high: number;
  excluded: number;
}

export interface TrainSummary {
  runId: string;
  agent: { name: string; version: string; configDigest: string };
  strategy: StrategyName;
  seed: number;
  episodes: number;
  success: number;
  slices: SliceSummary[];
  evals: Array<{ episode: number; score: number }>;
  guardEvents: JsonValue[];
  zeroVarianceGroups?: Record<string, number>;
  skippedGroups?: number;
  passK?: PassKRow[];
  snapshotStart: string;
  snapshotEnd: string;
}

/** What the loop needs from the harness. */
export interface TrainDeps {
  store: Store;
  domains: ReadonlyMap<string, Domain<any>>;
  /** How the run's episodes (all of stored tasks) are recorded (`HarnessOptions.recordAs`). Default: transitions. */
  recordAs?: 'inputs' | 'transitions';
  slices: Slice[];
  clock: () => string;
  /** Draws a task id of `slice` at (or nearest to) `level` from the dynamic pool. */
  drawTask(rng: Rng, slice: string, level: number): string;
  regressionTasks(): Promise<StoredTask[]>;
  snapshot(curriculum: Curriculum, label: string): Promise<{ id: string }>;
  /** The snapshot now, not saved: the run's end snapshot is saved with its finished record, in one transaction. */
  buildSnapshot?(curriculum: Curriculum, label: string): Promise<Snapshot>;
  /** The process running the loop, recorded on the run (so a crash can be told from a live run). */
  owner?: { host: string; pid: number };
  newRunId(seed: number, agent: string): Promise<string>;
  /** The sampler the loop draws with (the harness's, so a restored snapshot continues the sequence). */
  rng: Rng;
  /** A curriculum to continue (the harness's active one), instead of starting a new one. */
  curriculum?: Curriculum;
  /** Continue this run from its checkpoint (`rng` must then be at the checkpoint's state). */
  resume?: TrainResume;
}

export const DEFAULT_TRAIN_STRATEGY: StrategyName = 'learnability';

/** Trains `agent` for `episodes` episodes under a curriculum; returns the run summary. */
export async function trainLoop(deps: TrainDeps, options: TrainOptions): Promise<TrainSummary> {
  const seed = options.seed ?? 0;
  const strategy = options.strategy ?? deps.curriculum?.strategy ?? DEFAULT_TRAIN_STRATEGY;
  const concurrency = Math.max(1, options.concurrency ?? 8);
  const groupSize = Math.max(1, options.group?.size ?? 1);
  if (!(Number.isInteger(options.episodes) && options.episodes >= 1)) {
    throw new EnvHarnessError('PARAMS_INVALID', `episodes must be an integer >= 1, got ${options.episodes}`, { details: { pointer: '/episodes' } });
  }
  const slices = deps.slices.filter((s) => !options.domains || options.domains.includes(s.domain));
  if (slices.length === 0) {
    throw new EnvHarnessError('POOL_EMPTY', 'no dynamic tasks to train on; run `envharness pool fill` first');
  }
  const resume = deps.resume;
  const checkpointEvery = options.checkpointEvery ?? DEFAULT_CHECKPOINT_EVERY;
  if (!(Number.isInteger(checkpointEvery) && checkpointEvery >= 1)) {
    throw new EnvHarnessError('PARAMS_INVALID', `checkpointEvery must be an integer >= 1, got ${checkpointEvery}`, { details: { pointer: '/checkpointEvery' } });
  }
  let curriculum = resume
    ? createCurriculum({ strategy, slices, state: resume.checkpoint.curriculum })
    : deps.curriculum && deps.curriculum.strategy === strategy && !options.curriculum
      ? deps.curriculum
      : createCurriculum({ strategy, slices, ...(options.curriculum ? { config: options.curriculum } : {}) });
  const guard = createRegressionGuard({
    every: options.evalEvery || 1,
    delta: options.guard?.delta ?? 0.1,
    rollback: options.guard?.rollback ?? false,
    ...(resume ? { state: resume.checkpoint.guard } : {}),
  });
  const groups = createGroupTracker(resume?.checkpoint.groups);
  const rng = deps.rng;
  let run: RunRecord;
  if (resume) {
    run = resume.run;
  } else {
    const agentConfig = options.agent.config();
    const agentInfo = { name: options.agent.name, version: options.agent.version, configDigest: digest(agentConfig) };
    const start = await deps.snapshot(curriculum, 'train start');
    const runId = await deps.newRunId(seed, agentInfo.name);
    const createdAt = deps.clock();
    const recorded: RecordedTrainOptions = {
      episodes: options.episodes,
      concurrency,
      evalEvery: options.evalEvery ?? 0,
      evalTasks: options.evalTasks ?? null,
      group: options.group ?? null,
      domains: options.domains ? [...options.domains] : null,
      guard: { delta: options.guard?.delta ?? 0.1, rollback: options.guard?.rollback ?? false },
      checkpointEvery,
      record: options.record !== false,
      dynamics: dynamicsData(options.dynamics),
    };
    run = {
      id: runId,
      kind: 'train',
      agent: agentInfo,
      strategy,
      seed,
      config: {
        episodes: options.episodes,
        concurrency,
        evalEvery: options.evalEvery ?? 0,
        group: options.group ?? null,
        curriculum: curriculum.config as unknown as JsonValue,
        agentConfig,
        // What the agent started from (null: no state): runs compare warns when two runs' differ.
        agentStart: options.agent.getState ? digest(options.agent.getState()) : null,
        ...(options.label ? { label: options.label } : {}),
        // What `train --resume` continues the run with.
        resume: recorded as unknown as JsonValue,
      },
      snapshotStart: start.id,
      status: 'running',
      ...(deps.owner ? { owner: deps.owner } : {}),
      createdAt,
      updatedAt: createdAt,
    };
  }
  const runId = run.id;
  const agentInfo = run.agent;
  const start = { id: run.snapshotStart };
  const recorder = options.record === false ? undefined : createStoreRecorder(deps.store, { maxBatch: 1024, maxDelayMs: 50 });
  let seq = resume ? resume.checkpoint.eventSeq : 0;
  const events: RunEvent[] = [];
  const emit = (kind: string, data: JsonValue) => events.push({ runId, seq: seq++, kind, data });
  const flushEvents = async () => {
    if (events.length > 0) await deps.store.appendRunEvents(events.splice(0));
  };

  const all: CountedEpisode[] = resume ? [...resume.counted] : [];
  const evals: Array<{ episode: number; score: number }> = resume ? [...resume.checkpoint.evals] : [];
  let skippedGroups = resume ? resume.checkpoint.skippedGroups : 0;
  let nextEval = resume
    ? (resume.checkpoint.nextEval ?? Infinity)
    : options.evalEvery && options.evalEvery > 0 ? options.evalEvery : Infinity;
  let lastCheckpoint = all.length;
  // The durable point: everything the next round depends on, written with the round's events.
  const checkpoint = (): StoreWrite => ({
    op: 'setMeta',
    key: checkpointKey(runId),
    value: {
      format: 'envharness.train-checkpoint/1',
      episodes: all.length,
      eventSeq: seq,
      nextEval: nextEval === Infinity ? null : nextEval,
      rng: [...rng.getState()],
      curriculum: curriculum.getState(),
      guard: guard.getState(),
      groups: groups.getState() as unknown as JsonValue,
      evals: evals.map((e) => ({ ...e })),
      skippedGroups,
      agent: options.agent.getState?.() ?? null,
      agentConfig: digest(options.agent.config()),
    } satisfies TrainCheckpoint as unknown as JsonValue,
  });
  if (resume) {
    // Back to the checkpoint, in one transaction: what the interrupted process wrote after it goes.
    await deps.store.applyWrites([...resume.rewind, { op: 'saveRun', run }]);
  } else {
    emit('curriculum', { episode: 0, levels: curriculum.levels(), weights: curriculum.weights() });
    await deps.store.applyWrites([{ op: 'saveRun', run }, { op: 'appendRunEvents', events: events.splice(0) }, checkpoint()]);
  }

  options.agent.setTraining?.(true);

  try {
    while (all.length < options.episodes) {
      const remaining = options.episodes - all.length;
      const draws = Math.max(1, Math.min(concurrency, Math.ceil(remaining / groupSize)));
      const plan: Array<{ task: StoredTask; seed: number; draw: ReturnType<Curriculum['draw']> }> = [];
      for (let i = 0; i < draws; i++) {
        const draw = curriculum.draw(rng);
        const taskId = draw.replay && draw.taskId ? draw.taskId : deps.drawTask(rng, draw.slice, draw.level);
        const task = await deps.store.getTask(taskId);
        if (!task) throw new EnvHarnessError('TASK_NOT_FOUND', `pool task ${taskId} is missing from the store`);
        const episodeSeed = rng.nextUint32();
        for (let g = 0; g < groupSize && plan.length < remaining; g++) plan.push({ task, seed: episodeSeed, draw });
      }
      const outcomes = await Promise.all(
        plan.map(({ task, seed: s }, i) => {
          const domain = deps.domains.get(task.domain);
          if (!domain) throw new EnvHarnessError('DOMAIN_NOT_FOUND', `task ${task.id} needs domain ${task.domain}, which is not registered`);
          return runEpisode(domain, task, options.agent, { ...options.dynamics, seed: s, recorder, recordAs: deps.recordAs, runId, episodeId: `${runId}:${all.length + i}`, flush: false }).then((o) => ({ o, i }));
        }),
      );
      // The round's episodes in one commit (or the recorder's groups), durable before anything of the round is written.
      await recorder?.flush();
      outcomes.sort((a, b) => a.i - b.i);
      const results: EpisodeResult[] = [];
      for (let start = 0; start < outcomes.length; start += groupSize) {
        const members = outcomes.slice(start, start + groupSize).map((x) => x.o);
        const first = members[0]!;
        let skip = false;
        if (groupSize > 1) {
          const stats = groupStats(members.map((m) => m.outcome));
          skip = Boolean(options.group?.skipZeroVariance && stats.zeroVariance);
          groups.record(first.slice, stats, skip);
          if (skip) {
            skippedGroups++;
            emit('group-skipped', { taskId: first.taskId, slice: first.slice, level: first.level, mean: stats.mean });
          }
        }
        for (const m of members) {
          all.push(m);
          emit('episode', {
            n: all.length,
            episodeId: m.episodeId,
            taskId: m.taskId,
            slice: m.slice,
            level: m.level,
            outcome: m.outcome,
            reward: m.reward,
            steps: m.steps,
            excluded: m.excluded,
            feedback: m.feedback as JsonValue,
            ...(skip ? { skipped: true } : {}),
          });
          if (!skip) results.push({ slice: m.slice, level: m.level, success: m.outcome, taskId: m.taskId, excluded: m.excluded });
        }
      }
      const update = curriculum.update(results);
      emit('curriculum', {
        episode: all.length,
        levels: curriculum.levels(),
        weights: curriculum.weights(),
        moves: update.moves as unknown as JsonValue,
        blocked: update.blocked,
      });

      if (all.length >= nextEval) {
        nextEval += options.evalEvery!;
        const score = await evaluateRegression(deps, options, recorder, runId, all.length);
        if (score !== undefined) {
          evals.push({ episode: all.length, score });
          const verdict = guard.observe(all.length, score, curriculum.getState());
          if (verdict.rollbackTo !== undefined) {
            curriculum = createCurriculum({ strategy, slices, state: verdict.rollbackTo });
          }
          curriculum.holdLevels(verdict.holdLevels);
          const recent = all.slice(-Math.max(50, options.evalEvery!));
          emit('eval', { episode: all.length, score, dynamicSuccess: mean(recent.filter((o) => !o.excluded).map((o) => o.outcome)) });
          if (verdict.event) emit('guard', verdict.event as unknown as JsonValue);
        }
      }
      if (Math.floor(all.length / checkpointEvery) > Math.floor(lastCheckpoint / checkpointEvery) && all.length < options.episodes) {
        // Every episode of the round is durable by now (the round's flush above).
        await deps.store.applyWrites([{ op: 'appendRunEvents', events: events.splice(0) }, checkpoint()]);
        lastCheckpoint = all.length;
      } else await flushEvents();
      options.onProgress?.({
        episodes: all.length,
        total: options.episodes,
        levels: curriculum.levels(),
        weights: curriculum.weights(),
        recentSuccess: mean(all.slice(-100).map((o) => o.outcome)),
        ...(evals.length ? { lastEval: evals[evals.length - 1]!.score } : {}),
      });
    }
  } catch (error) {
    await recorder?.close().catch(() => {});
    await deps.store.saveRun({ ...run, status: 'failed', updatedAt: deps.clock(), summary: { error: String(error) } });
    throw error;
  }
  await recorder?.close();
  const endSnapshot = deps.buildSnapshot ? await deps.buildSnapshot(curriculum, 'train end') : undefined;
  const end = endSnapshot ?? (await deps.snapshot(curriculum, 'train end'));
  const stats = curriculum.stats();
  const counted = all.filter((o) => !o.excluded);
  const summary: TrainSummary = {
    runId,
    agent: agentInfo,
    strategy,
    seed,
    episodes: all.length,
    success: mean(counted.map((o) => o.outcome)),
    slices: Object.keys(stats).sort().map((slice) => {
      const s = stats[slice]!;
      const mine = counted.filter((o) => o.slice === slice);
      return {
        slice,
        level: s.level,
        weight: s.weight,
        episodes: all.filter((o) => o.slice === slice).length,
        success: mean(mine.map((o) => o.outcome)),
        windowSuccess: s.window.successRate,
        low: s.window.low,
        high: s.window.high,
        excluded: s.excluded,
      };
    }),
    evals,
    guardEvents: guard.events() as unknown as JsonValue[],
    ...(groupSize > 1 ? { zeroVarianceGroups: groups.shares() as unknown as Record<string, number>, skippedGroups } : {}),
    passK: passKTable(counted.map((o) => ({ taskId: o.taskId, slice: o.slice, success: o.outcome >= 1 })), 1),
    snapshotStart: start.id,
    snapshotEnd: end.id,
  };
  // The end snapshot and the finished record commit together: a finished run always names a stored end.
  const finished: RunRecord = { ...run, status: 'finished', snapshotEnd: end.id, summary: summary as unknown as JsonValue, updatedAt: deps.clock() };
  const saveEnd = endSnapshot !== undefined && (await deps.store.getSnapshot(endSnapshot.id)) === undefined;
  await deps.store.applyWrites([
    ...(saveEnd ? [{ op: 'saveSnapshot' as const, snapshot: endSnapshot }] : []),
    { op: 'saveRun', run: finished },
    // A finished run is never resumed: its checkpoint (the agent's state, possibly large) goes.
    { op: 'setMeta', key: checkpointKey(runId), value: null },
  ]);
  return summary;
}

async function evaluateRegression(
  deps: TrainDeps,
  options: TrainOptions,
  recorder: ReturnType<typeof createStoreRecorder> | undefined,
  runId: string,
  at: number,
): Promise<number | undefined> {
  let tasks = await deps.regressionTasks();
  if (options.domains) tasks = tasks.filter((t) => options.domains!.includes(t.domain));
  if (options.evalTasks) tasks = tasks.slice(0, options.evalTasks);
  if (tasks.length === 0) return undefined;
  options.agent.setTraining?.(false);
  try {
    const outcomes: number[] = [];
    for (const [i, task] of tasks.entries()) {
      const domain = deps.domains.get(task.domain);
      if (!domain) continue;
      // A fixed seed per task: the regression score moves only when the agent does.
      const o = await runEpisode(domain, task, options.agent, { ...options.dynamics, seed: 0, recorder, recordAs: deps.recordAs, runId, episodeId: `${runId}:eval${at}:${i}`, flush: false });
      if (!o.excluded) outcomes.push(o.outcome);
    }
    await recorder?.flush();
    return mean(outcomes);
  } finally {
    options.agent.setTraining?.(true);
  }
}

/** The plain-data part of the dynamics (what a run record can keep; feedback producers are code). */
function dynamicsData(dynamics: DynamicsOptions | undefined): JsonValue {
  if (dynamics === undefined) return null;
  const { feedback: _code, ...data } = dynamics;
  return JSON.parse(JSON.stringify(data)) as JsonValue;
}

function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
}
