/** The world after an episode, rebuilt from its recorded actions and exported in tau-bench's shape. */
import {
  canonicalize,
  EnvHarnessError,
  type Action,
  type JsonValue,
  type RejectedAction,
  type Store,
  type Task,
  type TraceEntry,
  type Transition,
} from '../../../core/index.js';
import { digestRetailExport, exportRetailState, type RetailState } from '../state.js';
import { NO_CONTEXT } from './actions.js';
import { type RetailData } from '../schema.js';
import { type RetailDomain } from '../domain.js';

/** One recorded action and whether it ran successfully. */
export interface RecordedCall {
  action: Action | RejectedAction;
  ok: boolean;
}

/** The calls of recorded transitions: a call succeeded when its observation carries no error. */
export function callsOfTransitions(transitions: readonly Transition[]): RecordedCall[] {
  return transitions.map((t) => ({ action: t.action, ok: t.observation.error === undefined }));
}

/** The calls of a running or ended episode's trace (`episode.trace`). */
export function callsOfTrace(trace: readonly TraceEntry[]): RecordedCall[] {
  return trace.map((entry) => ({ action: entry.action, ok: entry.ok !== false }));
}

/**
 * Rebuilds the world an episode ended in: the task's initial world with the episode's successful
 * write calls run again in order (a refused or failed call changed nothing; read tools change
 * nothing). With `expectHash` (the last recorded `info.stateHash`) the result is checked against
 * the recording and a mismatch is an error.
 */
export function rebuildRetailState(domain: RetailDomain, task: Task, calls: readonly RecordedCall[], expectHash?: string): RetailState {
  const state = domain.fork(domain.createState(task.spec.initialState));
  const tools = new Map(domain.tools.map((t) => [t.name, t]));
  calls.forEach((call, i) => {
    const action = call.action;
    if (!call.ok || action.type !== 'tool') return;
    const tool = tools.get(action.tool);
    if (tool === undefined || tool.effect !== 'write') return;
    const parsed = tool.args.safeParse(action.args);
    if (!parsed.success) return;
    const outcome = tool.run(state, parsed.data, NO_CONTEXT);
    if (!outcome.ok) {
      throw new EnvHarnessError('INTERNAL', `recorded step ${i + 1} (${action.tool}) succeeded in the episode but fails when run again: ${outcome.error.message}`, {
        details: { taskId: task.id, step: i + 1 },
      });
    }
  });
  if (expectHash !== undefined && domain.hashState(state) !== expectHash) {
    throw new EnvHarnessError(
      'INTERNAL',
      `the rebuilt world of task ${task.id} hashes to ${domain.hashState(state)}, but the episode recorded ${expectHash}`,
      { details: { taskId: task.id } },
    );
  }
  return state;
}

/** The world in tau-bench's shape, `{ users, orders, products }`, with its field names and values. */
export function exportTauBenchState(state: RetailState): RetailData {
  const { orders, products, users } = exportRetailState(state);
  return { users, orders, products };
}

/** An episode's final world, as `envharness episode state` writes it. */
export interface EpisodeStateExport {
  episodeId: string;
  taskId: string;
  /** The runtime's state hash after the last step (as recorded). */
  stateHash: string;
  /** sha256 of the RFC 8785 canonical JSON of the tau-bench-shaped world. */
  sha256: string;
  state: RetailState;
}

/**
 * Loads an episode from a store and rebuilds its final world by running its recorded successful
 * write calls again (checked against the recorded state hash).
 * @example
 * const { sha256 } = await loadEpisodeState(store, retail, episodeId);
 */
export async function loadEpisodeState(store: Store, domain: RetailDomain, episodeId: string): Promise<EpisodeStateExport> {
  const record = await store.getEpisode(episodeId);
  if (record === undefined) {
    throw new EnvHarnessError('EPISODE_NOT_FOUND', `no episode ${episodeId} in ${store.location}; check the id (\`tau-bench eval\` prints the pattern of the ids it records)`, { details: { episodeId } });
  }
  const task = await store.getTask(record.taskId);
  if (task === undefined) throw new EnvHarnessError('TASK_NOT_FOUND', `episode ${episodeId} ran task ${record.taskId}, which is not in the store`, { details: { taskId: record.taskId } });
  if (task.domain !== domain.name) {
    throw new EnvHarnessError('DOMAIN_NOT_FOUND', `episode ${episodeId} ran a ${task.domain} task; only retail worlds can be exported in tau-bench's shape`, { details: { taskId: task.id } });
  }
  const transitions = await store.listTransitions(episodeId);
  const last = transitions.at(-1);
  const state = rebuildRetailState(domain, task, callsOfTransitions(transitions), last?.info.stateHash);
  return { episodeId, taskId: task.id, stateHash: domain.hashState(state), sha256: digestRetailExport(state), state };
}

/**
 * The text `envharness episode state` writes: `tau-bench` is the RFC 8785 canonical JSON of
 * `{ users, orders, products }` (its sha256 is the digest tau-bench's tools give); `json` is
 * EnvHarness's export (`domain.exportState`), indented.
 */
export function formatEpisodeState(domain: RetailDomain, state: RetailState, format: 'tau-bench' | 'json'): string {
  if (format === 'tau-bench') return canonicalize(exportTauBenchState(state));
  return JSON.stringify(domain.exportState(state) as JsonValue, null, 2) + '\n';
}
