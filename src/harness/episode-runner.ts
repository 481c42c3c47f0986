/** Episodes of a harness: opened for interactive use or run with an agent, recorded to the store by one shared recorder. */
import { EnvHarnessError, type Agent, type Domain, type Split, type Store, type StoredTask, type Task } from '../core/index.js';
import { createEpisode, createStoreRecorder, type DynamicsOptions, type Episode, type Recorder, type StoreRecorder } from '../runtime/index.js';
import { runEpisode, type EpisodeOutcome } from '../runtime/rollout.js';
import type { Clock } from './clock.js';

/** How `Harness.openEpisode` opens an episode (the task: `taskId`, or a draw of `taskType`/`level`/`split`). */
export interface OpenEpisodeOptions {
  taskId?: string;
  taskType?: string;
  level?: number;
  split?: Split;
  episodeId?: string;
  runId?: string;
  agent?: string;
  record?: boolean;
  recorder?: Recorder;
  dynamics?: DynamicsOptions;
}

/** How `Harness.runEpisode` runs one. */
export interface RunEpisodeOptions {
  seed: number;
  episodeId?: string;
  runId?: string;
  record?: boolean;
  /** Wait until the episode is durable before returning (default true); false: it is committed with the harness's next flush or group commit. */
  flush?: boolean;
  dynamics?: DynamicsOptions;
}

/**
 * Whether `task` is a task as a store returns it: an episode of it may be recorded as its inputs, which a replay on
 * the stored task turns back into transitions. Any other task's episodes are recorded as transitions.
 */
function isStored(task: StoredTask | Task): task is StoredTask {
  return 'batchId' in task && 'seq' in task;
}

/** Opens and runs episodes of stored tasks with their domains, recording to the store. */
export class EpisodeRunner {
  private recorder: StoreRecorder | undefined;

  constructor(
    private readonly store: Store,
    private readonly domains: ReadonlyMap<string, Domain<any>>,
    private readonly clock: Clock,
    /** How `run` records an episode of a stored task (`HarnessOptions.recordAs`). */
    private readonly recordAs: 'inputs' | 'transitions' = 'transitions',
  ) {}

  /** An episode of `task`, recorded to the store unless `record: false` or the caller's own `recorder`. */
  open(task: StoredTask, options: OpenEpisodeOptions): Episode {
    const clock = this.clock;
    return createEpisode(this.domainOf(task), task, {
      ...options.dynamics,
      // Interactive episodes (HTTP, MCP) live in wall time: the harness clock drives their time budget
      // and stamps their records. (Training and evaluation episodes run without one, so they replay exactly.)
      clock: () => Date.parse(clock()),
      // `recorder`: a recorder of the caller's own (serve replicas give each episode one).
      ...(options.recorder !== undefined ? { recorder: options.recorder } : options.record === false ? {} : { recorder: this.storeRecorder() }),
      ...(options.episodeId ? { episodeId: () => options.episodeId! } : {}),
      ...(options.runId ? { runId: options.runId } : {}),
      ...(options.agent ? { agent: options.agent } : {}),
    });
  }

  /** Runs one episode of a task with an agent. */
  async run(task: StoredTask | Task, agent: Agent, options: RunEpisodeOptions): Promise<EpisodeOutcome> {
    return runEpisode(this.domainOf(task), task, agent, {
      ...options.dynamics,
      seed: options.seed,
      ...(options.record === false ? {} : { recorder: this.storeRecorder(), recordAs: isStored(task) ? this.recordAs : 'transitions' }),
      ...(options.episodeId ? { episodeId: options.episodeId } : {}),
      ...(options.runId ? { runId: options.runId } : {}),
      ...(options.flush === false ? { flush: false } : {}),
    });
  }

  async flush(): Promise<void> {
    await this.recorder?.flush();
  }

  async close(): Promise<void> {
    await this.recorder?.close();
  }

  private domainOf(task: StoredTask | Task): Domain<any> {
    const domain = this.domains.get(task.domain);
    if (!domain) throw new EnvHarnessError('DOMAIN_NOT_FOUND', `task ${task.id} needs domain ${task.domain}, which is not registered`);
    return domain;
  }

  private storeRecorder(): StoreRecorder {
    // A failed recorder stays failed for the episodes it recorded (their steps may be missing); episodes
    // opened after the store recovered get a fresh one.
    if (this.recorder?.failure !== undefined && this.store.fault?.() === undefined) this.recorder = undefined;
    this.recorder ??= createStoreRecorder(this.store, { maxBatch: 1024, maxDelayMs: 20 });
    return this.recorder;
  }
}
