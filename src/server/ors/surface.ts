/**
 * The Open Reward Standard (ORS) HTTP API on `envharness serve`, under a path prefix (default `/ors`): discovery
 * (`/list_environments`, `/{env}/tools`, `/splits`, `/tasks`, `/num_tasks`, `/task`, `/task_range`), sessions
 * (`/create_session`, `/create`, `/delete`, `/delete_session`, `/ping`) and the episode (`/{env}/prompt`,
 * `/{env}/task_tools`, `/{env}/call` answered as Server-Sent Events). An ORS environment is an EnvHarness domain;
 * an ORS session is one EnvHarness episode, run by the same session core as the OpenEnv surface (recorded,
 * committed before the answer unless the server runs --durability relaxed). Shapes follow the ORS Python SDK
 * (docs/trainers.md, "Open Reward Standard").
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { EnvHarnessError, toolSpec, type Harness, type StoredTask, type ToolSpec } from '../../index.js';
import { admit, generateId, isJsonContentType, tokenMatches, type HostPolicy } from '../auth.js';
import { parseJsonBody } from '../body.js';
import { HttpProblem, problemOf, type Reply } from '../errors.js';
import { decodeSegment, readBody, refuse, send } from '../raw-http.js';
import type { EpisodeRegistry } from '../episodes.js';
import type { GroupRegistry } from '../groups.js';
import { OpenEnvSession } from '../openenv/session.js';
import { OpenEnvValidationError, type OpenEnvResult, type ResetRequest } from '../openenv/messages.js';

/** Where the surface lives. */
export interface OrsOptions {
  /** Path prefix (default `/ors`): ORS clients take `http://host:port/ors` as their base URL. */
  prefix?: string;
}

export const ORS_DEFAULTS = { prefix: '/ors' } as const;

/** The ORS Python SDK whose server this surface follows (docs/trainers.md). */
export const ORS_VERSION = { package: 'ors-sdk 0.1.0', repository: 'openrewardstandard/python-sdk', commit: 'a399408' } as const;

export interface OrsSurfaceDeps {
  harness: Harness;
  episodes: EpisodeRegistry;
  groups: GroupRegistry;
  hosts: HostPolicy;
  adminTokenHash: Buffer;
  bodyLimit: number;
  now: () => number;
}

export interface OrsSurface {
  /** Answers a request under the prefix; false when it is not one (the server routes it on). */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  close(): Promise<void>;
}

/** Open ORS sessions at most (each holds one episode; the idle reaper closes forgotten ones). */
const MAX_SESSIONS = 65_536;
/** ORS splits have a type; EnvHarness splits map onto them. */
const SPLIT_TYPES: Record<string, 'train' | 'validation' | 'test'> = { dynamic: 'train', regression: 'validation', heldout: 'test' };
/**
 * Keys of `task_spec`: a task of the pool (`task_id`; a task object as `/tasks` lists it, whose other keys
 * describe it and are not read), or a draw by the curriculum (`task_type`, `level`, `split`); `seed` for both.
 */
const TASK_SPEC_KEYS = ['task_id', 'template', 'task_type', 'level', 'split', 'seed'];
/** The actions that are not domain tools, offered to ORS agents as tools (ORS: actions are tools). */
const ACTION_TOOLS: ToolSpec[] = [
  { name: 'message', description: 'Send a message to the user (EnvHarness message action); the answer is the user\'s reply.', effect: 'read', parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false } },
  { name: 'finish', description: 'End the episode (EnvHarness finish action), with an optional final answer; the episode is graded.', effect: 'write', parameters: { type: 'object', properties: { answer: { type: 'string' } }, additionalProperties: false } },
];
/** The ORS paths outside `/{env}/…`. */
const ROOT_PATHS = new Set(['/health', '/list_environments', '/create_session', '/create', '/delete', '/delete_session', '/ping']);
/** SSE results longer than this are sent as `chunk` events before the `end` event (as the ORS SDK does). */
const CHUNK_SIZE = 4096;

interface OrsSession {
  env: string;
  session: OpenEnvSession;
  /** `GET /{env}/prompt`: the reset observation as blocks. */
  prompt: unknown;
  /** The last tool call's task id and result, for a client that reconnects with `task_id`. */
  last?: { taskId: string; text: string };
}

/** Creates the surface. Requests carry the server token as `X-API-Key` (the ORS SDK's header), a bearer header, or in the path: `<prefix>/key/<token>/…`. */
export function createOrsSurface(deps: OrsSurfaceDeps, options: OrsOptions = {}): OrsSurface {
  // `/` (the empty prefix) serves ORS at the root, as the SDK's client expects; the surface then claims only ORS paths.
  const prefix = (options.prefix ?? ORS_DEFAULTS.prefix).replace(/\/+$/, '');
  if ((prefix !== '' && !/^\/[A-Za-z0-9._~/-]*$/.test(prefix)) || prefix.startsWith('/v1') || prefix === '/openenv') {
    throw new EnvHarnessError('CONFIG_INVALID', `ors prefix must be / or a path like /ors outside /v1 and /openenv, got ${JSON.stringify(options.prefix)}`, { details: { pointer: '/ors/prefix' } });
  }
  const sessionDeps = { episodes: deps.episodes, groups: deps.groups };
  const sessions = new Map<string, OrsSession>();
  /** Server episode id -> the session holding it, so that a closed (or reaped) episode drops its session. */
  const byEpisode = new Map<string, string>();
  deps.episodes.listen((ep, event) => {
    if (event.kind !== 'close') return;
    const sid = byEpisode.get(ep.id);
    if (sid === undefined) return;
    byEpisode.delete(ep.id);
    if (sessions.get(sid)?.session.ep === ep) sessions.delete(sid);
  });
  const tools = new Map<string, ToolSpec[]>();
  const domainTools = (env: string): ToolSpec[] => {
    let specs = tools.get(env);
    if (specs === undefined) {
      specs = deps.harness.domains.get(env)!.tools.map((t) => toolSpec(t));
      tools.set(env, specs);
    }
    return specs;
  };

  const locate = (url: string | undefined): { rest: string; token?: string } | undefined => {
    if (url === undefined || !url.startsWith(prefix)) return undefined;
    const q = url.indexOf('?');
    const rest = (q < 0 ? url : url.slice(0, q)).slice(prefix.length);
    if (rest !== '' && !rest.startsWith('/')) return undefined;
    const key = /^\/key\/([^/]+)(\/.*)?$/.exec(rest);
    if (key !== null) return { rest: key[2] ?? '/', token: decodeSegment(key[1]!) };
    return { rest: rest === '' ? '/' : rest };
  };

  const guard = (req: IncomingMessage, pathToken: string | undefined): Failure | undefined => {
    const apiKey = req.headers['x-api-key'];
    const authorization = req.headers.authorization ?? (typeof apiKey === 'string' ? `Bearer ${apiKey}` : pathToken !== undefined ? `Bearer ${pathToken}` : undefined);
    const admission = admit(deps.hosts, req.headers.host, req.headers.origin, authorization);
    if (admission.problem !== undefined) return failureOf(new EnvHarnessError(admission.problem.code, admission.problem.detail));
    if (!tokenMatches(admission.token, deps.adminTokenHash)) return failureOf(new EnvHarnessError('UNAUTHORIZED', 'the ORS surface needs the server token: X-API-Key, a bearer header, or the base URL <server>/ors/key/<token>'));
    return undefined;
  };

  const handle = (req: IncomingMessage, res: ServerResponse): boolean => {
    const at = locate(req.url);
    if (at === undefined || (prefix === '' && !isOrsPath(at.rest))) return false;
    void answer(req, res, at).catch((error: unknown) => send(res, detailReply(failureOf(error))));
    return true;
  };

  const answer = async (req: IncomingMessage, res: ServerResponse, at: NonNullable<ReturnType<typeof locate>>): Promise<void> => {
    const refused = guard(req, at.token);
    if (refused !== undefined) return refuse(req, res, detailReply(refused));
    const method = req.method ?? 'GET';
    let body: unknown;
    if (method === 'POST') {
      const type = req.headers['content-type'];
      const raw = await readBody(req, res, deps.bodyLimit, at.rest);
      if (raw === undefined) return;
      // The SDK posts some bodies without a content type (create_session, ping, delete): no body is {}.
      if (raw.trim() !== '' && !isJsonContentType(type)) return send(res, fail(415, `send JSON with Content-Type: application/json, got ${JSON.stringify(type ?? '')}`));
      try {
        body = parseJsonBody(raw, {});
      } catch (error) {
        return send(res, detailReply(failureOf(error)));
      }
    }
    try {
      send(res, await route(method, at.rest, body, req));
    } catch (error) {
      send(res, detailReply(failureOf(error)));
    }
  };

  const route = async (method: string, rest: string, body: unknown, req: IncomingMessage): Promise<Reply> => {
    const sid = (): string => {
      const header = req.headers['x-session-id'];
      const value = typeof header === 'string' ? header.trim() : '';
      if (value === '' || value.length > 256) throw new HttpFailure(400, 'X-Session-ID header is required (1..256 characters; POST /create_session gives one)');
      return value;
    };
    switch (`${method} ${rest}`) {
      case 'GET /health':
        return ok({ status: 'ok' });
      case 'GET /list_environments':
        return ok([...deps.harness.domains.keys()]);
      case 'POST /create_session':
        return sse([['task_id', generateId('ors')], ['end', '']]);
      case 'POST /create':
        return ok(await create(sid(), body));
      case 'POST /delete':
      case 'POST /delete_session': {
        // The SDK's client ends a session with delete_session only: both close the session's episode.
        const id = sid();
        const s = sessions.get(id);
        if (s !== undefined) {
          sessions.delete(id);
          if (s.session.ep !== undefined) byEpisode.delete(s.session.ep.id);
          await s.session.release();
        }
        return ok({ sid: id });
      }
      case 'POST /ping':
        current(sid());
        return ok({ status: 'ok' });
    }
    const m = /^\/([^/]+)\/([a-z_]+)$/.exec(rest);
    if (m === null) throw new HttpFailure(404, `no ORS route ${method} ${rest}; see docs/trainers.md`);
    const env = decodeSegment(m[1]!).toLowerCase();
    if (!deps.harness.domains.has(env)) throw new HttpFailure(404, `unknown environment '${env}'; GET /list_environments lists them`);
    switch (`${method} ${m[2]}`) {
      case 'GET tools':
        return ok({ tools: [...domainTools(env), ...ACTION_TOOLS].map(orsTool) });
      case 'GET splits':
        return ok(Object.entries(SPLIT_TYPES).map(([name, type]) => ({ name, type })));
      case 'POST tasks':
        return ok({ tasks: (await tasksOf(env, splitOf(body, ['split']))).map(orsTask), env_name: env });
      case 'POST num_tasks':
        return ok({ num_tasks: (await tasksOf(env, splitOf(body, ['split']))).length });
      case 'POST task': {
        const split = splitOf(body, ['split', 'index']);
        return ok({ task: orsTask(at(await tasksOf(env, split), indexOf(body, 'index'))) });
      }
      case 'POST task_range': {
        const split = splitOf(body, ['split', 'start', 'stop']);
        const all = await tasksOf(env, split);
        const b = body as Record<string, unknown>;
        const start = b['start'] === undefined || b['start'] === null ? undefined : indexOf(body, 'start');
        const stop = b['stop'] === undefined || b['stop'] === null ? undefined : indexOf(body, 'stop');
        return ok({ tasks: all.slice(start, stop).map(orsTask) });
      }
      case 'GET task_tools':
        return ok({ tools: [...current(sid()).session.toolSpecs(), ...ACTION_TOOLS].map(orsTool) });
      case 'GET prompt':
        return ok(current(sid()).prompt);
      case 'POST call':
        return call(current(sid()), body);
      default:
        throw new HttpFailure(404, `no ORS route ${method} /${env}/${m[2]}; see docs/trainers.md`);
    }
  };

  /** At the root: the session and discovery paths, and `/{env}/…` of a served domain. */
  const isOrsPath = (rest: string): boolean => {
    if (ROOT_PATHS.has(rest)) return true;
    const m = /^\/([^/]+)\/[a-z_]+$/.exec(rest);
    return m !== null && deps.harness.domains.has(decodeSegment(m[1]!).toLowerCase());
  };

  const tasksOf = async (env: string, split: string): Promise<Array<{ id: string; template: string; taskType: string; level: number; split: string }>> =>
    (await deps.harness.store.listTaskIndex({ split: split as StoredTask['split'], status: 'active' })).filter((t) => t.domain === env);

  /** `/create`: one episode for the session, on a task of the pool (`task_spec.task_id`, or `split` + `index`) or drawn by the curriculum. */
  const create = async (id: string, body: unknown): Promise<{ sid: string }> => {
    const b = objectBody(body, ['env_name', 'task_spec', 'split', 'index', 'secrets']);
    if (sessions.has(id)) throw new HttpFailure(400, 'Session already exists');
    if (sessions.size >= MAX_SESSIONS) throw new HttpFailure(429, `${MAX_SESSIONS} ORS sessions are open; delete some with POST /delete_session`);
    const envName = b['env_name'] ?? [...deps.harness.domains.keys()][0];
    if (typeof envName !== 'string') throw new OpenEnvValidationError('env_name must be a string', ['env_name']);
    const env = envName.toLowerCase();
    if (!deps.harness.domains.has(env)) throw new HttpFailure(404, `unknown environment '${env}'; GET /list_environments lists them`);
    const spec = b['task_spec'];
    const bySplit = b['split'] !== undefined && b['split'] !== null;
    if ((spec === undefined || spec === null) === !bySplit || (bySplit !== (b['index'] !== undefined && b['index'] !== null))) {
      throw new OpenEnvValidationError('provide either task_spec or both split and index, not both/neither', [bySplit ? 'task_spec' : 'split']);
    }
    const request: ResetRequest = { create: {} };
    if (bySplit) {
      const split = splitOf(b, ['split', 'index', 'env_name', 'secrets', 'task_spec']);
      request.create.taskId = at(await tasksOf(env, split), indexOf(b, 'index')).id;
    } else {
      const s = objectBody(spec, TASK_SPEC_KEYS, 'task_spec');
      const str = (key: string) => {
        const v = s[key];
        if (v !== undefined && (typeof v !== 'string' || v.length === 0 || v.length > 256)) throw new OpenEnvValidationError(`task_spec.${key} must be a string of 1..256 characters`, ['task_spec', key]);
        return v as string | undefined;
      };
      const int = (key: string, min: number) => {
        const v = s[key];
        if (v !== undefined && !(typeof v === 'number' && Number.isSafeInteger(v) && v >= min)) throw new OpenEnvValidationError(`task_spec.${key} must be an integer >= ${min}`, ['task_spec', key]);
        return v as number | undefined;
      };
      const taskId = str('task_id');
      const taskType = str('task_type');
      const level = int('level', 1);
      const split = str('split');
      const seed = int('seed', 0);
      if (seed !== undefined) request.seed = seed;
      if (taskId !== undefined) {
        request.create.taskId = taskId;
      } else {
        if (s['template'] !== undefined) throw new OpenEnvValidationError('task_spec.template describes a listed task: send its task_id too', ['task_spec', 'template']);
        request.create.domain = env;
        if (taskType !== undefined) request.create.taskType = taskType;
        if (level !== undefined) request.create.level = level;
        if (split !== undefined) request.create.split = split;
      }
    }
    const session = new OpenEnvSession(sessionDeps, deps.now());
    const first = await session.reset(request);
    const meta = first.observation['metadata'] as { episode_id: string; task: { slice: string } };
    if (!meta.task.slice.startsWith(`${env}/`)) {
      await session.release();
      throw new HttpFailure(400, `task ${String(request.create.taskId).slice(0, 16)} belongs to environment '${meta.task.slice.split('/')[0]}', not '${env}'`);
    }
    sessions.set(id, { env, session, prompt: promptOf(first) });
    byEpisode.set(session.ep!.id, id);
    return { sid: id };
  };

  const current = (id: string): OrsSession => {
    const s = sessions.get(id);
    if (s === undefined || s.session.ep === undefined) throw new HttpFailure(404, 'Active environment not found: POST /create first (or the session was deleted, or idle too long)');
    return s;
  };

  /** `/{env}/call`: one EnvHarness step, answered as SSE (`task_id`, then `chunk`s and `end` with the RunToolOutput). */
  const call = async (s: OrsSession, body: unknown): Promise<Reply> => {
    const b = objectBody(body, ['name', 'input', 'task_id']);
    const taskId = b['task_id'];
    if (taskId !== undefined && taskId !== null) {
      // A reconnecting client: the call with this id already ran (one at a time per session): its result again.
      if (typeof taskId !== 'string' || s.last?.taskId !== taskId) return sse([['error', 'unknown task_id']]);
      return sse([['task_id', taskId], ...chunks(s.last.text)]);
    }
    const name = b['name'];
    if (typeof name !== 'string' || name.length === 0) throw new OpenEnvValidationError('name must be the tool to call', ['name']);
    const input = b['input'] ?? {};
    if (input === null || typeof input !== 'object' || Array.isArray(input)) throw new OpenEnvValidationError('input must be an object of the tool\'s arguments', ['input']);
    const args = input as Record<string, unknown>;
    const isDomainTool = s.session.toolSpecs().some((t) => t.name === name);
    const action = isDomainTool || (name !== 'message' && name !== 'finish')
      ? { type: 'tool', tool: name, args }
      : name === 'message' ? { type: 'message', ...args } : { type: 'finish', ...args };
    const id = generateId('call');
    let text: string;
    try {
      text = JSON.stringify({ ok: true, output: toolOutput(await s.session.step(action)) });
    } catch (error) {
      // The step did not run (episode closed, store failing): ORS's error event; nothing was recorded.
      return sse([['task_id', id], ['error', failureOf(error).detail]]);
    }
    s.last = { taskId: id, text };
    return sse([['task_id', id], ...chunks(text)]);
  };

  return {
    handle,
    async close() {
      for (const s of sessions.values()) await s.session.release();
      sessions.clear();
      byEpisode.clear();
    },
  };
}

/** An EnvHarness tool spec as ORS's ToolSpec. */
function orsTool(t: ToolSpec): { name: string; description: string; input_schema: unknown } {
  return { name: t.name, description: t.description, input_schema: t.parameters };
}

function orsTask(t: { id: string; template: string; taskType: string; level: number; split: string }): Record<string, unknown> {
  return { task_id: t.id, template: t.template, task_type: t.taskType, level: t.level, split: t.split };
}

/** The reset observation as ORS prompt blocks: the task text, then the policy if the domain has one; `detail` carries the OpenEnv-style metadata. */
function promptOf(first: OpenEnvResult): Array<{ text: string; detail: unknown; type: 'text' }> {
  const o = first.observation as { text?: string; policy?: string; metadata?: unknown };
  const blocks: Array<{ text: string; detail: unknown; type: 'text' }> = [{ text: o.text ?? '', detail: o.metadata ?? null, type: 'text' }];
  if (typeof o.policy === 'string' && o.policy !== '') blocks.push({ text: o.policy, detail: { kind: 'policy' }, type: 'text' });
  return blocks;
}

/** A step as ORS's ToolOutput: one text block (the tool's output as JSON, the user's reply, or the error), EnvHarness metadata, reward, finished. */
function toolOutput(result: OpenEnvResult): { blocks: unknown[]; metadata: unknown; reward: number | null; finished: boolean } {
  const { metadata, ...observation } = result.observation as Record<string, unknown>;
  const error = observation['error'];
  const text = error !== undefined ? JSON.stringify(error) : typeof observation['text'] === 'string' ? (observation['text'] as string) : JSON.stringify(observation['output'] ?? null);
  return { blocks: [{ text, detail: null, type: 'text' }], metadata: { ...(metadata as Record<string, unknown>), kind: observation['kind'], ...(error !== undefined ? { error } : {}) }, reward: result.reward, finished: result.done };
}

/** `text` as SSE data events of at most CHUNK_SIZE characters: `chunk`s, then `end`. */
function chunks(text: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i < text.length; i += CHUNK_SIZE) out.push([i + CHUNK_SIZE >= text.length ? 'end' : 'chunk', text.slice(i, i + CHUNK_SIZE)]);
  return out.length === 0 ? [['end', '']] : out;
}

/** A complete SSE response (results are ready when it is written). */
function sse(events: Array<[string, string]>): Reply {
  return { status: 200, body: events.map(([event, data]) => `event: ${event}\r\ndata: ${data}\r\n\r\n`).join(''), headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' } };
}

function ok(value: unknown): Reply {
  return { status: 200, body: JSON.stringify(value), headers: { 'content-type': 'application/json' } };
}

/** ORS errors are FastAPI's `{ detail }`; the EnvHarness code rides along. */
function fail(status: number, detail: string, code?: string): Reply {
  return { status, body: JSON.stringify(code === undefined ? { detail } : { detail, code }), headers: { 'content-type': 'application/json' } };
}

function detailReply(f: Failure): Reply {
  return fail(f.status, f.detail, f.code);
}

/** What an ORS error answer says: the HTTP status, the message (`detail`) and the EnvHarness code. */
interface Failure {
  status: number;
  detail: string;
  code?: string;
}

/** A failure with ORS's own status and message (the SDK server's HTTPException). */
class HttpFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function failureOf(error: unknown): Failure {
  if (error instanceof HttpFailure) return { status: error.status, detail: error.message };
  // Validation failures are 422, as FastAPI answers them.
  if (error instanceof OpenEnvValidationError) return { status: 422, detail: error.message, code: 'PARAMS_INVALID' };
  const p = error instanceof HttpProblem ? error.problem : problemOf(error);
  return { status: p.status, detail: p.detail, code: p.code };
}

function objectBody(body: unknown, keys: readonly string[], where = 'the body'): Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new OpenEnvValidationError(`${where} must be an object with ${keys.join(', ')}`, []);
  const b = body as Record<string, unknown>;
  for (const key of Object.keys(b)) if (!keys.includes(key)) throw new OpenEnvValidationError(`unknown field "${key}" in ${where}; it takes ${keys.join(', ')}`, where === 'the body' ? [key] : [where, key]);
  return b;
}

function splitOf(body: unknown, keys: readonly string[]): string {
  const split = objectBody(body, keys)['split'];
  if (typeof split !== 'string' || SPLIT_TYPES[split] === undefined) throw new HttpFailure(400, `Invalid split ${JSON.stringify(split)}; the splits are ${Object.keys(SPLIT_TYPES).join(', ')}`);
  return split;
}

function indexOf(body: unknown, key: string): number {
  const v = (body as Record<string, unknown>)[key];
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new OpenEnvValidationError(`${key} must be an integer`, [key]);
  return v;
}

function at<T>(list: readonly T[], index: number): T {
  const item = index >= 0 ? list[index] : undefined;
  if (item === undefined) throw new HttpFailure(400, `Invalid index ${index}: the split has ${list.length} tasks`);
  return item;
}
