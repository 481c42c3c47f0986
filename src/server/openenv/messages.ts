/**
 * OpenEnv wire shapes (meta-pytorch/OpenEnv 0.2.3, commit 685de41, src/openenv/core/env_server/types.py) and
 * the mapping between them and EnvHarness actions, step results and problems. Pure: no I/O.
 */
import type { Feedback, Observation, StepResult, ToolSpec } from '../../index.js';
import type { Problem } from '../errors.js';
import { observationText } from '../step-text.js';
import type { ResetInfo } from '../episodes.js';
import type { GroupView } from '../groups.js';

/** OpenEnv's `WSErrorCode`. */
export const WS_ERROR_CODES = ['INVALID_JSON', 'UNKNOWN_TYPE', 'VALIDATION_ERROR', 'EXECUTION_ERROR', 'CAPACITY_REACHED', 'FACTORY_ERROR', 'SESSION_ERROR'] as const;
export type WsErrorCode = (typeof WS_ERROR_CODES)[number];

/** OpenEnv's `StepResponse` / `ResetResponse` (and the `data` of a WebSocket `observation` message). */
export interface OpenEnvResult {
  observation: Record<string, unknown>;
  reward: number | null;
  done: boolean;
}

/** Where EnvHarness puts what OpenEnv has no field for: `observation.metadata` (OpenEnv's `Observation.metadata`). */
export interface OpenEnvMetadata {
  /** The id to send back as `episode_id` (HTTP `/step`, `/state`), and the EnvHarness episode id. */
  episode_id: string;
  step: number;
  terminated: boolean;
  truncated: boolean;
  truncation?: string;
  /** Process feedback of this step (INVALID_ACTION, ORDER_VIOLATION, SUBGOAL_REACHED, BUDGET_WARNING, ...). */
  feedback: Feedback[];
  /** The step's info: outcome (task success) and shaping parts of the reward, stateHash, endReason, acceptance. */
  info: Record<string, unknown>;
  /** The task's budget (from reset) and what this attempt has used of it. */
  budget: { limit: Record<string, unknown>; used: { steps: number } };
  /** Curriculum metadata: the task, its slice and level, the seed and attempt (and the GRPO group). */
  task: { id: string; template: string; slice: string; level: number; seed: number; attempt: number };
  /** The GRPO group; once its last member ended, with `done`, `stats` (mean, variance, zeroVariance, …) and `skipped`. */
  group?: { id: string; size: number; members: number; done?: boolean; stats?: GroupView['stats']; skipped?: boolean };
}

/** Reset keys EnvHarness reads from OpenEnv's `ResetRequest` (which allows extra fields) / the WebSocket `reset` data. */
export const RESET_KEYS = ['seed', 'episode_id', 'task_id', 'domain', 'task_type', 'level', 'split', 'run_id', 'agent', 'dynamics', 'group_id', 'group_size', 'skip_zero_variance'] as const;

/** A parsed reset request. */
export interface ResetRequest {
  seed?: number;
  episodeId?: string;
  create: { taskId?: string; domain?: string; taskType?: string; level?: number; split?: string; runId?: string; agent?: string; dynamics?: unknown };
  group?: { id: string; size: number; skipZeroVariance?: boolean };
}

/** A validation failure, reported as OpenEnv does (`VALIDATION_ERROR` with pydantic-style `errors`, or HTTP 422). */
export class OpenEnvValidationError extends Error {
  constructor(
    message: string,
    readonly loc: readonly string[],
  ) {
    super(message);
  }
}

/** Parses reset parameters; unknown keys are refused (OpenEnv silently drops kwargs an env does not take, which hides typos). */
export function parseReset(data: unknown): ResetRequest {
  if (data === undefined || data === null) return { create: {} };
  if (typeof data !== 'object' || Array.isArray(data)) throw new OpenEnvValidationError('reset data must be an object', ['data']);
  const d = data as Record<string, unknown>;
  for (const key of Object.keys(d)) {
    if (!(RESET_KEYS as readonly string[]).includes(key)) throw new OpenEnvValidationError(`unknown reset parameter "${key}"; EnvHarness takes ${RESET_KEYS.join(', ')}`, [key]);
  }
  const str = (key: string): string | undefined => {
    const v = d[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string' || v.length === 0 || v.length > 256) throw new OpenEnvValidationError(`${key} must be a string of 1..256 characters`, [key]);
    return v;
  };
  const int = (key: string, min: number): number | undefined => {
    const v = d[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) throw new OpenEnvValidationError(`${key} must be an integer >= ${min}`, [key]);
    return v;
  };
  const out: ResetRequest = { create: {} };
  const seed = int('seed', 0);
  if (seed !== undefined) out.seed = seed;
  const episodeId = str('episode_id');
  if (episodeId !== undefined) out.episodeId = episodeId;
  const c = out.create;
  const taskId = str('task_id');
  if (taskId !== undefined) c.taskId = taskId;
  const domain = str('domain');
  if (domain !== undefined) c.domain = domain;
  const taskType = str('task_type');
  if (taskType !== undefined) c.taskType = taskType;
  const level = int('level', 1);
  if (level !== undefined) c.level = level;
  const split = str('split');
  if (split !== undefined) c.split = split;
  const runId = str('run_id');
  if (runId !== undefined) c.runId = runId;
  const agent = str('agent');
  if (agent !== undefined) c.agent = agent;
  if (d['dynamics'] !== undefined && d['dynamics'] !== null) c.dynamics = d['dynamics'];
  const groupId = str('group_id');
  const groupSize = int('group_size', 1);
  if ((groupId === undefined) !== (groupSize === undefined)) throw new OpenEnvValidationError('group_id and group_size come together', [groupId === undefined ? 'group_id' : 'group_size']);
  if (groupId !== undefined) {
    const skip = d['skip_zero_variance'];
    if (skip !== undefined && typeof skip !== 'boolean') throw new OpenEnvValidationError('skip_zero_variance must be a boolean', ['skip_zero_variance']);
    out.group = { id: groupId, size: groupSize!, ...(skip !== undefined ? { skipZeroVariance: skip } : {}) };
  } else if (d['skip_zero_variance'] !== undefined) {
    throw new OpenEnvValidationError('skip_zero_variance needs group_id and group_size', ['skip_zero_variance']);
  }
  return out;
}

/**
 * An OpenEnv action as an EnvHarness action. EnvHarness actions pass through (OpenEnv's `Action.metadata` is
 * dropped); OpenEnv's MCP `call_tool` becomes a tool call. Anything else goes to the runtime as it is, which
 * answers with an INVALID_ACTION observation (an agent mistake, recorded like any step).
 */
export function toAction(data: unknown): { kind: 'step'; action: unknown; callTool?: string } | { kind: 'list_tools' } {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return { kind: 'step', action: data };
  const { metadata: _metadata, ...rest } = data as Record<string, unknown>;
  if (rest['type'] === 'list_tools' && Object.keys(rest).length === 1) return { kind: 'list_tools' };
  if (rest['type'] === 'call_tool') {
    const { type: _type, tool_name, arguments: args, ...more } = rest;
    const action = { kind: 'step' as const, action: { type: 'tool', tool: tool_name, args: args ?? {}, ...more } };
    return typeof tool_name === 'string' ? { ...action, callTool: tool_name } : action;
  }
  return { kind: 'step', action: rest };
}

/** Per-session context the observations carry. */
export interface SessionContext {
  episodeId: string;
  info: ResetInfo;
  template: string;
  budget: Record<string, unknown>;
  group?: GroupView;
  /** `metadata.task`, built once per episode (the same every step). */
  task?: OpenEnvMetadata['task'];
  /** The JSON text of the metadata parts that stay the same for the episode (`stepMessage`). */
  text?: { head: string; limit: string; task: string };
}

function metadata(ctx: SessionContext, step: number, result: StepResult | undefined): OpenEnvMetadata {
  const info = ctx.info;
  const meta: OpenEnvMetadata = {
    episode_id: ctx.episodeId,
    step,
    terminated: result?.terminated ?? false,
    truncated: result?.truncated ?? false,
    feedback: result?.feedback ?? [],
    info: result === undefined ? {} : (result.info as unknown as Record<string, unknown>),
    budget: { limit: ctx.budget, used: { steps: step } },
    task: (ctx.task ??= { id: info.taskId, template: info.template, slice: info.slice, level: info.level, seed: info.seed, attempt: info.attempt }),
  };
  if (result?.truncation !== undefined) meta.truncation = result.truncation;
  if (ctx.group !== undefined) {
    const g = ctx.group;
    meta.group = { id: g.id, size: g.size, members: g.members };
    if (g.done) Object.assign(meta.group, { done: true, stats: g.stats, skipped: g.skipped ?? false });
  }
  return meta;
}

/** The reset observation in OpenEnv's shape: `reward` null and `done` false, as OpenEnv's reset answers. */
export function resetResult(observation: Observation, ctx: SessionContext): OpenEnvResult {
  return { observation: { ...observation, metadata: metadata(ctx, 0, undefined) }, reward: null, done: false };
}

/**
 * A step result in OpenEnv's shape: `done` is terminated or truncated (both are in `observation.metadata`). The
 * answer to OpenEnv's `call_tool` also carries its `CallToolObservation` fields, `tool_name` and `result`
 * (`{ data: output }`, which `MCPToolClient.call_tool` returns); a tool's error stays the EnvHarness `error`
 * in `result.error`, since OpenEnv's own `error` field is for transport failures.
 */
export function stepResult(result: StepResult, ctx: SessionContext, callTool?: string): OpenEnvResult {
  const meta = metadata(ctx, result.info.step, result);
  if (callTool === undefined) return { observation: { ...result.observation, metadata: meta }, reward: result.reward, done: result.terminated || result.truncated };
  const { error, ...observation } = result.observation;
  const outcome = { data: result.observation.output ?? null, is_error: error !== undefined, ...(error !== undefined ? { error } : {}) };
  return { observation: { ...observation, tool_name: callTool, result: outcome, metadata: meta }, reward: result.reward, done: result.terminated || result.truncated };
}

/**
 * The WebSocket `observation` message of a step as JSON text, the same value as
 * `JSON.stringify({ type: 'observation', data: stepResult(result, ctx, callTool) })` (see `stepResultText`).
 */
export function stepMessage(result: StepResult, ctx: SessionContext, callTool?: string): string {
  return `{"type":"observation","data":${stepResultText(result, ctx, callTool)}}`;
}

/**
 * A step result in OpenEnv's shape as JSON text (the HTTP `/step` answer), the same value as
 * `JSON.stringify(stepResult(result, ctx, callTool))`: the observation and the step's parts are serialised, the
 * parts that stay the same for the episode (its id, budget, task) once. The observation is the canonical text its
 * transition was written with when that is still at hand (step-text.ts; its keys then in RFC 8785 order), else
 * JSON.stringify's.
 */
export function stepResultText(result: StepResult, ctx: SessionContext, callTool?: string): string {
  const observation = result.observation;
  if (callTool !== undefined || 'metadata' in observation) return JSON.stringify(stepResult(result, ctx, callTool));
  const fixed = (ctx.text ??= {
    head: `{"episode_id":${JSON.stringify(ctx.episodeId)},"step":`,
    limit: JSON.stringify(ctx.budget),
    task: JSON.stringify(metadata(ctx, 0, undefined).task),
  });
  const step = result.info.step;
  let meta = `${fixed.head}${step},"terminated":${result.terminated ?? false},"truncated":${result.truncated ?? false},"feedback":${JSON.stringify(result.feedback ?? [])},"info":${JSON.stringify(result.info)},"budget":{"limit":${fixed.limit},"used":{"steps":${step}}},"task":${fixed.task}`;
  if (result.truncation !== undefined) meta += `,"truncation":${JSON.stringify(result.truncation)}`;
  if (ctx.group !== undefined) meta += `,"group":${JSON.stringify(metadata(ctx, step, result).group)}`;
  const obs = observationText(observation);
  return `{"observation":${obs.length > 2 ? `${obs.slice(0, -1)},` : '{'}"metadata":${meta}}},"reward":${JSON.stringify(result.reward)},"done":${result.terminated || result.truncated}}`;
}

/** `list_tools` (OpenEnv's MCP action) answered without a step: the current task's tools, with MCP's `inputSchema`. */
export function toolsResult(tools: readonly ToolSpec[], ctx: SessionContext | undefined, step: number): OpenEnvResult {
  const listed = tools.map((t) => ({ ...t, inputSchema: t.parameters }));
  return { observation: { kind: 'tools', tools: listed, ...(ctx !== undefined ? { metadata: metadata(ctx, step, undefined) } : {}) }, reward: null, done: false };
}

/** An EnvHarness problem as OpenEnv's WebSocket error `data`: validation problems carry pydantic-style `errors`. */
export function wsError(p: Problem): { message: string; code: WsErrorCode; errors?: unknown[]; problem: Problem } {
  const validation = p.status === 422 || p.status === 400;
  const out: { message: string; code: WsErrorCode; errors?: unknown[]; problem: Problem } = { message: p.detail, code: validation ? 'VALIDATION_ERROR' : 'EXECUTION_ERROR', problem: p };
  if (validation) out.errors = [{ type: p.code, loc: p.pointer ? p.pointer.split('/').slice(1) : [], msg: p.detail }];
  return out;
}

/** JSON schemas of `/schema` (OpenEnv's `SchemaResponse`): EnvHarness actions, observations and state. */
export const SCHEMAS = {
  action: {
    title: 'EnvHarnessAction',
    description: 'A tool call, a message to the simulated user, or finish; OpenEnv\'s MCP call_tool is accepted as a tool call.',
    oneOf: [
      { type: 'object', properties: { type: { const: 'tool' }, tool: { type: 'string' }, args: { type: 'object' }, usage: { type: 'object' }, metadata: { type: 'object' } }, required: ['type', 'tool', 'args'] },
      { type: 'object', properties: { type: { const: 'message' }, text: { type: 'string' }, usage: { type: 'object' }, metadata: { type: 'object' } }, required: ['type', 'text'] },
      { type: 'object', properties: { type: { const: 'finish' }, answer: { type: 'string' }, usage: { type: 'object' }, metadata: { type: 'object' } }, required: ['type'] },
      { type: 'object', properties: { type: { const: 'call_tool' }, tool_name: { type: 'string' }, arguments: { type: 'object' }, metadata: { type: 'object' } }, required: ['type', 'tool_name'] },
      { type: 'object', properties: { type: { const: 'list_tools' } }, required: ['type'] },
    ],
  },
  observation: {
    title: 'EnvHarnessObservation',
    type: 'object',
    properties: {
      kind: { enum: ['reset', 'tool', 'message', 'finish', 'tools'] },
      text: { type: 'string' },
      output: {},
      error: { type: 'object', properties: { code: { type: 'string' }, message: { type: 'string' }, pointer: { type: 'string' } } },
      tools: { type: 'array' },
      policy: { type: 'string' },
      budget: { type: 'object' },
      metadata: {
        type: 'object',
        description: 'episode_id, step, terminated, truncated, truncation, feedback, info (outcome, shaping, stateHash, endReason), budget, task (id, slice, level, seed, attempt), group',
      },
    },
    required: ['kind'],
  },
  state: {
    title: 'EnvHarnessState',
    type: 'object',
    properties: {
      episode_id: { type: ['string', 'null'] },
      step_count: { type: 'integer', minimum: 0 },
      status: { type: 'string' },
      task: { type: 'object' },
    },
    required: ['step_count'],
  },
} as const;
