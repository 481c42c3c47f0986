/**
 * Export of a run's tasks, episodes, transitions and chat-format trajectories as JSONL or Parquet.
 * One column schema per kind (documented in docs/export.md): JSON columns are JSON values in JSONL and
 * JSON text in Parquet; everything else is a plain string, integer, double or boolean.
 */
import { parquetWriteBuffer } from 'hyparquet-writer';
import type { ColumnSource } from 'hyparquet-writer';
import {
  EnvHarnessError,
  SPLITS,
  type EpisodeRecord,
  type JsonValue,
  type Observation,
  type RunRecord,
  type Split,
  type Store,
  type StoredTask,
  type Transition,
} from '../core/index.js';
import { toChatTrajectory } from './chat.js';
import { resolveRun } from './run-timeline.js';

export const EXPORT_KINDS = ['tasks', 'episodes', 'transitions', 'chat'] as const;
export type ExportKind = (typeof EXPORT_KINDS)[number];
export const EXPORT_FORMATS = ['jsonl', 'parquet'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export type ColumnType = 'string' | 'int32' | 'int64' | 'double' | 'boolean' | 'json';

/** One column of an export: its name, type, whether it may be null, and what it holds. */
export interface ColumnSpec {
  name: string;
  type: ColumnType;
  nullable: boolean;
  doc: string;
}

/** A row of an export: JSON columns hold JSON values, int64 columns hold numbers (safe integers). */
export type ExportRow = Record<string, JsonValue>;

const col = (name: string, type: ColumnType, doc: string, nullable = false): ColumnSpec => ({ name, type, nullable, doc });

/** The column schema of every export kind, in column order. */
export const EXPORT_COLUMNS: Record<ExportKind, readonly ColumnSpec[]> = {
  tasks: [
    col('id', 'string', 'task id: sha256 of the canonical JSON of the task content'),
    col('template', 'string', 'template id, domain/name@version'),
    col('domain', 'string', 'domain name'),
    col('task_type', 'string', 'task type (with the domain, the curriculum slice)'),
    col('level', 'int32', 'difficulty level (1 = easiest)'),
    col('split', 'string', 'regression | dynamic | heldout'),
    col('status', 'string', 'active | pending_review | rejected'),
    col('batch_id', 'string', 'id of the batch that generated the task'),
    col('seq', 'int64', 'insertion order in the store'),
    col('seed', 'int64', 'generation seed (origin.seed)'),
    col('origin_index', 'int32', 'candidate index in its batch (origin.index)'),
    col('template_digest', 'string', 'source digest of the template version (origin.templateDigest)'),
    col('instructions', 'string', 'the task instructions (spec.instructions, repeated for convenience)'),
    col('params', 'json', 'template parameters'),
    col('spec', 'json', 'the full task spec: instructions, initialState, budget, constraints, faults, acceptance, solution, user, tags'),
  ],
  episodes: [
    col('episode_id', 'string', 'episode id'),
    col('run_id', 'string', 'run the episode belongs to', true),
    col('task_id', 'string', 'task id (join with tasks.id)'),
    col('slice', 'string', 'domain/task_type of the task', true),
    col('level', 'int32', 'level of the task', true),
    col('phase', 'string', 'train (drawn by the curriculum) | eval (regression set or evaluation run)'),
    col('seed', 'int64', 'episode seed'),
    col('status', 'string', 'running | terminated | truncated | closed'),
    col('steps', 'int32', 'steps taken'),
    col('reward', 'double', 'total reward (outcome plus shaping)'),
    col('outcome', 'double', 'task outcome in [0, 1]'),
    col('end_reason', 'string', 'finished | user_done | too_many_errors | unrecoverable_fault | budget | simulator_error', true),
    col('excluded', 'boolean', 'lost to an unrecoverable injected fault or a simulator error (left out of statistics)'),
    col('agent', 'string', 'agent name', true),
    col('created_at', 'string', 'ISO 8601 time the episode started'),
    col('updated_at', 'string', 'ISO 8601 time of its last step'),
  ],
  transitions: [
    col('episode_id', 'string', 'episode id (join with episodes.episode_id)'),
    col('step', 'int32', 'step number within the episode'),
    col('action_type', 'string', 'tool | message | finish | invalid'),
    col('tool', 'string', 'tool name for tool actions', true),
    col('action', 'json', 'the action as sent ({type, tool, args} / {type, text} / {type, answer}; {type: invalid, input} for malformed input)'),
    col('observation', 'json', 'what the agent observed after the step'),
    col('reward', 'double', 'reward of this step'),
    col('terminated', 'boolean', 'the task reached an end state'),
    col('truncated', 'boolean', 'a budget ran out'),
    col('truncation', 'string', 'which budget ran out', true),
    col('feedback_codes', 'string', 'feedback codes of the step, comma-separated (empty when none)'),
    col('feedback', 'json', 'feedback events: [{code, message, severity?, pointer?, ref?, details?}]'),
    col('outcome', 'double', 'outcome part of the reward so far (info.outcome)'),
    col('shaping', 'double', 'shaping part of the reward (info.shaping)'),
    col('state_hash', 'string', 'digest of the world state after the step'),
    col('info', 'json', 'the full step info'),
    col('faults', 'json', 'faults injected during the step', true),
  ],
  chat: [
    col('episode_id', 'string', 'episode id'),
    col('run_id', 'string', 'run id', true),
    col('task_id', 'string', 'task id'),
    col('slice', 'string', 'domain/task_type'),
    col('level', 'int32', 'level of the task'),
    col('phase', 'string', 'train | eval'),
    col('seed', 'int64', 'episode seed'),
    col('reward', 'double', 'total reward'),
    col('outcome', 'double', 'task outcome in [0, 1]'),
    col('success', 'boolean', 'outcome >= 1 (filter on it for rejection-sampling fine-tuning)'),
    col('steps', 'int32', 'steps taken'),
    col('messages', 'json', 'OpenAI-style chat messages: system (policy), user, assistant (content or tool_calls), tool (tool_call_id, content)'),
    col('tools', 'json', 'OpenAI-style tool definitions: [{type: function, function: {name, description, parameters}}]'),
  ],
};

export interface ExportOptions {
  /** Run id or unique prefix (default: the latest run). Ignored for tasks when `split` is given. */
  runId?: string;
  what: ExportKind;
  /** For `tasks`: every task of this split instead of the run's tasks. */
  split?: Split;
  /** The observation an episode started with (from the domain's `reset`); for `chat`. Without it, the task instructions. */
  resetObservation?: (task: StoredTask, episode: EpisodeRecord) => Observation | undefined;
}

export interface ExportTable {
  what: ExportKind;
  runId: string | null;
  columns: readonly ColumnSpec[];
  rows: ExportRow[];
}

/**
 * The rows of an export, read from the store.
 * @example
 * const table = await exportRows(store, { runId, what: 'transitions' });
 * writeFileSync('transitions.parquet', toParquet(table));
 */
export async function exportRows(store: Store, options: ExportOptions): Promise<ExportTable> {
  if (!(EXPORT_KINDS as readonly string[]).includes(options.what)) {
    throw new EnvHarnessError('PARAMS_INVALID', `--what must be one of ${EXPORT_KINDS.join(', ')}, got "${options.what}"`, { details: { pointer: '/what' } });
  }
  const columns = EXPORT_COLUMNS[options.what];
  if (options.what === 'tasks' && options.split !== undefined) {
    if (!SPLITS.includes(options.split)) throw new EnvHarnessError('PARAMS_INVALID', `--split must be one of ${SPLITS.join(', ')}, got "${options.split}"`, { details: { pointer: '/split' } });
    return { what: 'tasks', runId: null, columns, rows: (await store.listTasks({ split: options.split })).map(taskRow) };
  }
  const run = await resolveRun(store, options.runId);
  const episodes = await store.listEpisodes({ runId: run.id });
  const tasks = await tasksOf(store, episodes);
  let rows: ExportRow[];
  if (options.what === 'tasks') {
    rows = [...tasks.values()].sort((a, b) => a.seq - b.seq).map(taskRow);
  } else if (options.what === 'episodes') {
    const phase = await phases(store, run);
    rows = episodes.map((e) => episodeRow(e, tasks.get(e.taskId), phase(e.id)));
  } else if (options.what === 'transitions') {
    rows = [];
    for (const e of episodes) for (const t of await store.listTransitions(e.id)) rows.push(transitionRow(t));
  } else {
    const phase = await phases(store, run);
    rows = [];
    for (const e of episodes) {
      const task = tasks.get(e.taskId);
      if (task === undefined) continue;
      const reset = options.resetObservation?.(task, e);
      const chat = toChatTrajectory(task, reset, await store.listTransitions(e.id));
      rows.push({
        episode_id: e.id,
        run_id: e.runId ?? null,
        task_id: e.taskId,
        slice: `${task.domain}/${task.taskType}`,
        level: task.level,
        phase: phase(e.id),
        seed: e.seed,
        reward: e.reward,
        outcome: e.outcome,
        success: e.outcome >= 1,
        steps: e.steps,
        messages: chat.messages as unknown as JsonValue,
        tools: chat.tools as unknown as JsonValue,
      });
    }
  }
  return { what: options.what, runId: run.id, columns, rows };
}

async function tasksOf(store: Store, episodes: readonly EpisodeRecord[]): Promise<Map<string, StoredTask>> {
  const tasks = new Map<string, StoredTask>();
  for (const id of new Set(episodes.map((e) => e.taskId))) {
    const task = await store.getTask(id);
    if (task) tasks.set(id, task);
  }
  return tasks;
}

/** Training episodes are the ones the run's `episode` events name; the rest (regression evaluations) are eval. */
async function phases(store: Store, run: RunRecord): Promise<(episodeId: string) => 'train' | 'eval'> {
  if (run.kind !== 'train') return () => 'eval';
  const train = new Set<string>();
  for (const e of await store.listRunEvents(run.id, 'episode')) {
    const id = (e.data as { episodeId?: unknown } | null)?.episodeId;
    if (typeof id === 'string') train.add(id);
  }
  return (id) => (train.has(id) ? 'train' : 'eval');
}

export function taskRow(t: StoredTask): ExportRow {
  return {
    id: t.id,
    template: t.template,
    domain: t.domain,
    task_type: t.taskType,
    level: t.level,
    split: t.split,
    status: t.status,
    batch_id: t.batchId,
    seq: t.seq,
    seed: t.origin.seed,
    origin_index: t.origin.index,
    template_digest: t.origin.templateDigest,
    instructions: t.spec.instructions,
    params: t.params,
    spec: t.spec as unknown as JsonValue,
  };
}

export function episodeRow(e: EpisodeRecord, task: StoredTask | undefined, phase: 'train' | 'eval'): ExportRow {
  return {
    episode_id: e.id,
    run_id: e.runId ?? null,
    task_id: e.taskId,
    slice: task ? `${task.domain}/${task.taskType}` : null,
    level: task ? task.level : null,
    phase,
    seed: e.seed,
    status: e.status,
    steps: e.steps,
    reward: e.reward,
    outcome: e.outcome,
    end_reason: e.endReason ?? null,
    excluded: e.excludeFromStats,
    agent: e.agent ?? null,
    created_at: e.createdAt,
    updated_at: e.updatedAt,
  };
}

export function transitionRow(t: Transition): ExportRow {
  return {
    episode_id: t.episodeId,
    step: t.step,
    action_type: t.action.type,
    tool: t.action.type === 'tool' ? t.action.tool : null,
    action: t.action as unknown as JsonValue,
    observation: t.observation as unknown as JsonValue,
    reward: t.reward,
    terminated: t.terminated,
    truncated: t.truncated,
    truncation: t.truncation ?? null,
    feedback_codes: t.feedback.map((f) => f.code).join(','),
    feedback: t.feedback as unknown as JsonValue,
    outcome: t.info.outcome,
    shaping: t.info.shaping,
    state_hash: t.info.stateHash,
    info: t.info as unknown as JsonValue,
    faults: (t.faults ?? null) as unknown as JsonValue,
  };
}

// ---- reading rows back into store records (the round trip) ------------------------------------

/** A task from an export row (JSONL, or Parquet read back). */
export function taskFromRow(row: Record<string, unknown>): StoredTask {
  return {
    id: String(row.id),
    template: String(row.template),
    domain: String(row.domain),
    taskType: String(row.task_type),
    level: Number(row.level),
    params: json(row.params),
    spec: json(row.spec) as unknown as StoredTask['spec'],
    origin: { seed: Number(row.seed), index: Number(row.origin_index), templateDigest: String(row.template_digest) },
    split: String(row.split) as Split,
    status: String(row.status) as StoredTask['status'],
    batchId: String(row.batch_id),
    seq: Number(row.seq),
  };
}

export function episodeFromRow(row: Record<string, unknown>): EpisodeRecord {
  const e: EpisodeRecord = {
    id: String(row.episode_id),
    taskId: String(row.task_id),
    seed: Number(row.seed),
    status: String(row.status) as EpisodeRecord['status'],
    steps: Number(row.steps),
    reward: Number(row.reward),
    outcome: Number(row.outcome),
    excludeFromStats: row.excluded === true,
    createdAt: String(row.created_at),
    updatedAt: String(row.updated_at),
  };
  if (row.end_reason !== null && row.end_reason !== undefined) e.endReason = String(row.end_reason) as EpisodeRecord['endReason'];
  if (row.run_id !== null && row.run_id !== undefined) e.runId = String(row.run_id);
  if (row.agent !== null && row.agent !== undefined) e.agent = String(row.agent);
  return e;
}

export function transitionFromRow(row: Record<string, unknown>): Transition {
  const t: Transition = {
    episodeId: String(row.episode_id),
    step: Number(row.step),
    action: json(row.action) as unknown as Transition['action'],
    observation: json(row.observation) as unknown as Observation,
    reward: Number(row.reward),
    terminated: row.terminated === true,
    truncated: row.truncated === true,
    feedback: json(row.feedback) as unknown as Transition['feedback'],
    info: json(row.info) as unknown as Transition['info'],
  };
  if (row.truncation !== null && row.truncation !== undefined) t.truncation = String(row.truncation) as Transition['truncation'];
  const faults = json(row.faults ?? null);
  if (faults !== null) t.faults = faults as unknown as Transition['faults'];
  return t;
}

/** JSON columns are values in JSONL and text in Parquet. */
function json(value: unknown): JsonValue {
  return typeof value === 'string' ? (JSON.parse(value) as JsonValue) : (value as JsonValue);
}

// ---- encoders -----------------------------------------------------------------------------------

/** One JSON object per line, columns in schema order; ends with a newline (empty for no rows). */
export function toJsonl(table: ExportTable): string {
  return table.rows.map((row) => JSON.stringify(Object.fromEntries(table.columns.map((c) => [c.name, row[c.name] ?? null])))).join('\n') + (table.rows.length ? '\n' : '');
}

const PARQUET_TYPES: Record<ColumnType, ColumnSource['type']> = {
  string: 'STRING',
  json: 'STRING',
  int32: 'INT32',
  int64: 'INT64',
  double: 'DOUBLE',
  boolean: 'BOOLEAN',
};

/** The table as a Parquet file (plain types only: UTF-8 strings, INT32, INT64, DOUBLE, BOOLEAN; JSON as text). */
export function toParquet(table: ExportTable): Uint8Array {
  const columnData: ColumnSource[] = table.columns.map((c) => ({
    name: c.name,
    type: PARQUET_TYPES[c.type],
    nullable: c.nullable,
    data: table.rows.map((row) => encodeCell(c, row[c.name] ?? null)),
  }));
  const buffer = parquetWriteBuffer({
    columnData,
    kvMetadata: [
      { key: 'envharness.export', value: JSON.stringify({ format: 'envharness.export/1', what: table.what, runId: table.runId }) },
      { key: 'envharness.columns', value: JSON.stringify(table.columns.map((c) => ({ name: c.name, type: c.type, nullable: c.nullable }))) },
    ],
    createdBy: 'envharness export',
  });
  return new Uint8Array(buffer);
}

function encodeCell(c: ColumnSpec, value: JsonValue): unknown {
  if (value === null) {
    if (c.nullable) return null;
    // A JSON column whose value is JSON null (e.g. a template without parameters).
    if (c.type === 'json') return 'null';
    throw new EnvHarnessError('INTERNAL', `export column ${c.name} is not nullable but a row has no value`);
  }
  switch (c.type) {
    case 'json':
      return JSON.stringify(value);
    case 'int64':
      return BigInt(value as number);
    case 'string':
      return String(value);
    default:
      return value;
  }
}

/** The file content of an export in a format. */
export function encodeExport(table: ExportTable, format: ExportFormat): Uint8Array {
  if (format === 'jsonl') return new TextEncoder().encode(toJsonl(table));
  if (format === 'parquet') return toParquet(table);
  throw new EnvHarnessError('PARAMS_INVALID', `--format must be jsonl or parquet, got "${String(format)}"`, { details: { pointer: '/format' } });
}
