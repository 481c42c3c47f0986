/**
 * OpenEnv's environment server on `envharness serve`: HTTP `reset`/`step`/`state`/`health`/`schema`/`metadata`,
 * the `/ws` session, and MCP JSON-RPC (`POST /mcp`, the `/mcp` WebSocket), under a path prefix (default
 * `/openenv`), so OpenEnv's own clients connect unchanged.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { EnvHarnessError } from '../../index.js';
import { admit, generateId, isJsonContentType, tokenMatches, type HostPolicy } from '../auth.js';
import { parseJsonBody } from '../body.js';
import { HttpProblem, problem, problemOf, problemReply, unsupportedMediaType, type Problem, type Reply } from '../errors.js';
import { decodeSegment, readBody, refuse, send } from '../raw-http.js';
import type { EpisodeRegistry } from '../episodes.js';
import type { GroupRegistry } from '../groups.js';
import { OpenEnvValidationError, parseReset, SCHEMAS, wsError, type WsErrorCode } from './messages.js';
import { answerMcp, answerMcpText, JSON_RPC, type McpSessions } from './mcp.js';
import { OpenEnvSession } from './session.js';

/** OpenEnv's `ConcurrencyConfig` and where the surface lives. */
export interface OpenEnvOptions {
  /** Path prefix (default `/openenv`): OpenEnv clients take `http://host:port/openenv` as their base URL. */
  prefix?: string;
  /** OpenEnv's `max_concurrent_envs`: open WebSocket sessions; one more is refused with CAPACITY_REACHED. */
  maxConcurrentEnvs?: number;
  /** OpenEnv's `session_timeout` in seconds: a WebSocket session without a message for this long is closed (default: none; the episode idle reaper still applies). */
  sessionTimeoutS?: number;
}

export const OPENENV_DEFAULTS = { prefix: '/openenv', maxConcurrentEnvs: 4096 } as const;

/** The commit of meta-pytorch/OpenEnv whose server this surface follows (docs/trainers.md, compatibility table). */
export const OPENENV_VERSION = { package: 'openenv-core 0.2.3', commit: '685de411e5f77286b0fd94798d42c4467cf8a1bc' } as const;

export interface OpenEnvSurfaceDeps {
  episodes: EpisodeRegistry;
  groups: GroupRegistry;
  hosts: HostPolicy;
  adminTokenHash: Buffer;
  bodyLimit: number;
  version: string;
  now: () => number;
}

/** The surface: an HTTP handler (false when the request is not for it), an upgrade handler, and close. */
export interface OpenEnvSurface {
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** Open WebSocket sessions. */
  readonly sessions: number;
  close(): Promise<void>;
}

const MAX_HTTP_SESSIONS = 65_536;
/** The keys each OpenEnv WebSocket message may have (OpenEnv's message models forbid extras). */
const MESSAGE_KEYS: Record<string, readonly string[]> = { reset: ['type', 'data'], step: ['type', 'data'], state: ['type'], close: ['type'], mcp: ['type', 'data'] };
/** Messages of one WebSocket session waiting for their answer (OpenEnv's client sends one and waits). */
const MAX_QUEUED_MESSAGES = 256;

/** Creates the surface. Requests carry the server token as a bearer header or in the path: `<prefix>/key/<token>/…`. */
export function createOpenEnvSurface(deps: OpenEnvSurfaceDeps, options: OpenEnvOptions = {}): OpenEnvSurface {
  const prefix = (options.prefix ?? OPENENV_DEFAULTS.prefix).replace(/\/+$/, '');
  if (!/^\/[A-Za-z0-9._~/-]*$/.test(prefix) || prefix.startsWith('/v1')) {
    throw new EnvHarnessError('CONFIG_INVALID', `openenv prefix must be a path like /openenv outside /v1, got ${JSON.stringify(prefix)}`, { details: { pointer: '/openenv/prefix' } });
  }
  const max = options.maxConcurrentEnvs ?? OPENENV_DEFAULTS.maxConcurrentEnvs;
  if (!Number.isSafeInteger(max) || max < 1) throw new EnvHarnessError('CONFIG_INVALID', `max_concurrent_envs must be an integer >= 1, got ${max}`, { details: { pointer: '/openenv/maxConcurrentEnvs' } });
  const timeoutMs = options.sessionTimeoutS === undefined ? undefined : options.sessionTimeoutS * 1000;
  if (timeoutMs !== undefined && !(timeoutMs > 0 && Number.isFinite(timeoutMs))) throw new EnvHarnessError('CONFIG_INVALID', 'session_timeout must be a positive number of seconds', { details: { pointer: '/openenv/sessionTimeoutS' } });

  const sessionDeps = { episodes: deps.episodes, groups: deps.groups };
  const wss = new WebSocketServer({ noServer: true, maxPayload: deps.bodyLimit, perMessageDeflate: false });
  const live = new Set<WebSocket>();
  /** HTTP sessions by `episode_id` (OpenEnv's HTTP is stateless; EnvHarness keys a session by the id reset returned). */
  const httpSessions = new Map<string, OpenEnvSession>();
  /** Server episode id -> its HTTP session's key, so a closed (or reaped) episode drops its session in O(1). */
  const httpKeys = new Map<string, string>();
  /** HTTP MCP sessions (`openenv/session/create`), by session id; at the cap, those whose episode ended are dropped. */
  const mcpSessions = new Map<string, OpenEnvSession>();
  const httpMcp: McpSessions = {
    get: (id) => mcpSessions.get(id),
    async create(params) {
      if (mcpSessions.size >= MAX_HTTP_SESSIONS) for (const [id, s] of mcpSessions) if (s.ep === undefined || s.ep.closed) mcpSessions.delete(id);
      if (mcpSessions.size >= MAX_HTTP_SESSIONS) return { error: { code: JSON_RPC.SERVER_ERROR, message: `${MAX_HTTP_SESSIONS} MCP sessions are open; close some with openenv/session/close`, data: { active_sessions: mcpSessions.size, max_sessions: MAX_HTTP_SESSIONS } } };
      const session = new OpenEnvSession(sessionDeps, deps.now());
      try {
        // EnvHarness extension: create's params are reset keys, so that tools/list has the task's tools at once.
        await session.reset(parseReset(params));
      } catch (error) {
        const p = problemFrom(error);
        return { error: { code: JSON_RPC.SERVER_ERROR, message: p.detail, data: { problem: p } } };
      }
      const id = generateId('mcp');
      mcpSessions.set(id, session);
      return { id };
    },
    async close(id) {
      const session = mcpSessions.get(id);
      if (session === undefined) return false;
      mcpSessions.delete(id);
      await session.release();
      return true;
    },
  };
  deps.episodes.listen((ep, event) => {
    if (event.kind !== 'close') return;
    const key = httpKeys.get(ep.id);
    if (key === undefined) return;
    httpKeys.delete(ep.id);
    if (httpSessions.get(key)?.ep === ep) httpSessions.delete(key);
  });

  /** `{ rest, token? }` for a URL under the prefix, or undefined. */
  const locate = (url: string | undefined): { rest: string; token?: string; query: URLSearchParams } | undefined => {
    if (url === undefined || !url.startsWith(prefix)) return undefined;
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const query = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
    let rest = path.slice(prefix.length);
    if (rest !== '' && !rest.startsWith('/')) return undefined;
    const key = /^\/key\/([^/]+)(\/.*)?$/.exec(rest);
    if (key !== null) return { rest: key[2] ?? '/', token: decodeSegment(key[1]!), query };
    rest = rest === '' ? '/' : rest;
    return { rest, query };
  };

  /** The guard: Host/Origin, then the server token (header, or the path key). */
  const guard = (req: IncomingMessage, pathToken: string | undefined, instance: string): Problem | undefined => {
    const authorization = req.headers.authorization ?? (pathToken !== undefined ? `Bearer ${pathToken}` : undefined);
    const admission = admit(deps.hosts, req.headers.host, req.headers.origin, authorization);
    if (admission.problem !== undefined) return problem(admission.problem.code, admission.problem.detail, { instance });
    if (!tokenMatches(admission.token, deps.adminTokenHash)) return problem('UNAUTHORIZED', 'the OpenEnv surface needs the server token: a bearer header, or the base URL <server>/openenv/key/<token>', { instance });
    return undefined;
  };

  const handle = (req: IncomingMessage, res: ServerResponse): boolean => {
    const at = locate(req.url);
    if (at === undefined) return false;
    const instance = req.url!.split('?')[0]!.replace(/\/key\/[^/]+/, '/key/…');
    void answer(req, res, at, instance).catch((error: unknown) => send(res, problemReply(problemOf(error, instance))));
    return true;
  };

  const answer = async (req: IncomingMessage, res: ServerResponse, at: NonNullable<ReturnType<typeof locate>>, instance: string): Promise<void> => {
    const refused = guard(req, at.token, instance);
    if (refused !== undefined) return refuse(req, res, problemReply(refused));
    const route = `${req.method} ${at.rest}`;
    switch (route) {
      case 'GET /health':
        return send(res, ok({ status: 'healthy' }));
      case 'GET /metadata':
        return send(res, ok({ name: 'envharness', description: 'EnvHarness adaptive training environments (tool calls, messages, finish) behind OpenEnv\'s protocol; see docs/trainers.md', readme_content: null, version: deps.version, author: null, documentation_url: null }));
      case 'GET /schema':
        return send(res, ok(SCHEMAS));
      case 'GET /state': {
        const id = at.query.get('episode_id');
        const s = id === null ? undefined : httpSessions.get(id);
        return send(res, ok(s === undefined ? { episode_id: null, step_count: 0 } : s.state()));
      }
      case 'POST /reset':
      case 'POST /step':
      case 'POST /mcp': {
        const type = req.headers['content-type'];
        if (!isJsonContentType(type)) return refuse(req, res, problemReply({ ...unsupportedMediaType(type!), instance }));
        const raw = await readBody(req, res, deps.bodyLimit, instance);
        if (raw === undefined) return;
        // OpenEnv answers JSON-RPC with 200 and the error in the body, parse errors included.
        if (at.rest === '/mcp') return send(res, ok(await answerMcpText(raw, httpMcp)));
        try {
          const body = parseJsonBody(raw, {});
          send(res, at.rest === '/reset' ? ok(await httpReset(body)) : okText(await httpStep(body)));
        } catch (error) {
          send(res, problemReply(problemFrom(error, instance)));
        }
        return;
      }
      default:
        return refuse(req, res, problemReply(problem('ROUTE_NOT_FOUND', `no OpenEnv route ${req.method} ${at.rest}; see docs/trainers.md`, { instance })));
    }
  };

  const httpReset = async (body: unknown) => {
    const request = parseReset(body);
    let s = request.episodeId !== undefined ? httpSessions.get(request.episodeId) : undefined;
    if (s === undefined) {
      if (httpSessions.size >= MAX_HTTP_SESSIONS) throw new EnvHarnessError('EPISODE_BUSY', `${MAX_HTTP_SESSIONS} HTTP sessions are open; close some (or use /ws, whose sessions end with the connection)`);
      s = new OpenEnvSession(sessionDeps, deps.now(), request.episodeId);
    }
    const result = await s.reset(request);
    const key = (result.observation['metadata'] as { episode_id: string }).episode_id;
    httpSessions.set(key, s);
    httpKeys.set(s.ep!.id, key);
    return result;
  };

  const httpStep = async (body: unknown) => {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new OpenEnvValidationError('the body is { action, episode_id, timeout_s?, request_id? }', []);
    const b = body as Record<string, unknown>;
    for (const key of Object.keys(b)) if (!['action', 'episode_id', 'timeout_s', 'request_id'].includes(key)) throw new OpenEnvValidationError(`unknown field "${key}"; the body is { action, episode_id, timeout_s?, request_id? }`, [key]);
    if (!('action' in b)) throw new OpenEnvValidationError('missing "action"', ['action']);
    const id = b['episode_id'];
    if (typeof id !== 'string') throw new OpenEnvValidationError('send "episode_id" (observation.metadata.episode_id of the reset): OpenEnv\'s HTTP is stateless, EnvHarness keys HTTP sessions by it; or use /ws', ['episode_id']);
    const requestId = b['request_id'];
    if (requestId !== undefined && typeof requestId !== 'string') throw new OpenEnvValidationError('request_id must be a string', ['request_id']);
    const s = httpSessions.get(id);
    if (s === undefined) throw new EnvHarnessError('EPISODE_NOT_FOUND', `no OpenEnv session ${id.slice(0, 80)}; reset first (sessions idle for --idle seconds are closed)`);
    return s.stepText(b['action'], requestId);
  };

  // ---- WebSocket -------------------------------------------------------------------------------

  const upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): boolean => {
    const at = locate(req.url);
    if (at === undefined || (at.rest !== '/ws' && at.rest !== '/mcp')) return false;
    const refused = guard(req, at.token, `${prefix}${at.rest}`);
    if (refused !== undefined) {
      const body = JSON.stringify(refused);
      socket.end(`HTTP/1.1 ${refused.status} ${refused.title}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
      return true;
    }
    wss.handleUpgrade(req, socket, head, (ws) => connect(ws, at.rest === '/mcp'));
    return true;
  };

  /** A session on `/ws` (OpenEnv's messages) or on `/mcp` (JSON-RPC only, one session per connection). */
  const connect = (ws: WebSocket, mcpOnly: boolean): void => {
    const sendText = (text: string) => {
      if (ws.readyState === ws.OPEN) ws.send(text);
    };
    const sendJson = (value: unknown) => sendText(JSON.stringify(value));
    const error = (code: WsErrorCode, message: string, extra: Record<string, unknown> = {}) => sendJson({ type: 'error', data: { message, code, ...extra } });
    if (live.size >= max) {
      // OpenEnv: the error message, then the close.
      error('CAPACITY_REACHED', `Server at capacity: ${live.size}/${max} sessions active. Cannot accept new connections.`, { active_sessions: live.size, max_sessions: max });
      ws.close(1000);
      return;
    }
    live.add(ws);
    const session = new OpenEnvSession(sessionDeps, deps.now());
    const mcp: McpSessions = { ...httpMcp, own: { id: generateId('mcp'), session } };
    let queue: Promise<void> = Promise.resolve();
    let queued = 0;
    const settled = () => {
      queued--;
    };
    let timer: ReturnType<typeof setTimeout> | undefined;
    const touch = () => {
      if (timeoutMs === undefined) return;
      // One timer per session, re-armed (refresh) on every message rather than replaced.
      if (timer !== undefined) timer.refresh();
      else {
        timer = setTimeout(() => ws.close(1001, 'session timeout'), timeoutMs);
        timer.unref();
      }
    };
    touch();
    let ended = false;
    const onMessage = async (data: RawData, isBinary: boolean): Promise<void> => {
      if (ended) return; // queued behind a close: nobody reads the answer
      touch();
      if (mcpOnly) return sendJson(await answerMcpText(isBinary ? Buffer.from(data as Buffer).toString('utf8') : data.toString(), mcp));
      let message: unknown;
      try {
        message = JSON.parse(isBinary ? Buffer.from(data as Buffer).toString('utf8') : data.toString());
      } catch (e) {
        return error('INVALID_JSON', `Invalid JSON: ${(e as Error).message}`);
      }
      if (message === null || typeof message !== 'object' || Array.isArray(message)) return error('VALIDATION_ERROR', 'Invalid message', { errors: [{ type: 'model_type', loc: [], msg: 'a message is an object { type, data? }' }] });
      const m = message as Record<string, unknown>;
      const type = m['type'];
      const allowed = MESSAGE_KEYS;
      if (typeof type !== 'string' || allowed[type] === undefined) return error('UNKNOWN_TYPE', `Unknown message type: ${typeof type === 'string' ? type : ''}`);
      const extra = Object.keys(m).find((k) => !allowed[type]!.includes(k));
      if (extra !== undefined) return error('VALIDATION_ERROR', 'Invalid message', { errors: [{ type: 'extra_forbidden', loc: [extra], msg: 'Extra inputs are not permitted' }] });
      try {
        switch (type) {
          case 'reset':
            return sendJson({ type: 'observation', data: await session.reset(parseReset(m['data'] ?? {})) });
          case 'step':
            if (!('data' in m)) return error('VALIDATION_ERROR', 'Invalid message', { errors: [{ type: 'missing', loc: ['data'], msg: 'Field required' }] });
            return sendText(await session.stepMessage(m['data']));
          case 'state':
            return sendJson({ type: 'state', data: session.state() });
          case 'mcp':
            if (!('data' in m)) return error('VALIDATION_ERROR', 'Invalid message', { errors: [{ type: 'missing', loc: ['data'], msg: 'Field required' }] });
            return sendJson({ type: 'mcp', data: await answerMcp(m['data'], mcp) });
          case 'close':
            ws.close(1000);
            return;
        }
      } catch (e) {
        return sendJson({ type: 'error', data: wsError(problemFrom(e)) });
      }
    };
    ws.on('message', (data, isBinary) => {
      // Messages are answered in order, one at a time; a client that sends without reading is cut off.
      if (++queued > MAX_QUEUED_MESSAGES) {
        error('SESSION_ERROR', `more than ${MAX_QUEUED_MESSAGES} messages waiting for an answer; send the next message after the previous answer`);
        ws.close(1008, 'too many queued messages');
        return;
      }
      // Nothing in flight (a client that waits for each answer): start now, without a link in the chain.
      queue = (queued === 1 ? onMessage(data, isBinary) : queue.then(() => onMessage(data, isBinary))).then(settled, settled);
    });
    ws.on('error', () => ws.terminate());
    ws.on('close', () => {
      ended = true;
      if (timer !== undefined) clearTimeout(timer);
      live.delete(ws);
      queue = queue.then(() => session.release()).catch(() => undefined);
    });
  };

  return {
    handle,
    upgrade,
    get sessions() {
      return live.size;
    },
    async close() {
      for (const ws of live) ws.close(1001, 'server stopping'); // the close frame is queued now, before any socket ends
      for (const s of httpSessions.values()) await s.release();
      httpSessions.clear();
      for (const s of mcpSessions.values()) await s.release();
      mcpSessions.clear();
      wss.close();
    },
  };
}

function ok(value: unknown): Reply {
  return okText(JSON.stringify(value));
}

function okText(body: string): Reply {
  return { status: 200, body, headers: { 'content-type': 'application/json' } };
}

/** The problem of any throwable: validation failures are PARAMS_INVALID with the field's pointer; a registry reply's problem is kept. */
function problemFrom(error: unknown, instance?: string): Problem {
  if (error instanceof HttpProblem) return instance === undefined ? error.problem : { ...error.problem, instance };
  if (error instanceof OpenEnvValidationError) {
    return problemOf(new EnvHarnessError('PARAMS_INVALID', error.message, { details: { pointer: error.loc.length === 0 ? '' : `/${error.loc.join('/')}` } }), instance);
  }
  return problemOf(error, instance);
}
