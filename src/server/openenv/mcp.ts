/**
 * OpenEnv's MCP JSON-RPC (meta-pytorch/OpenEnv 0.2.3, http_server.py `mcp_handler`): `tools/list`, `tools/call`
 * and the session methods `openenv/session/create` / `openenv/session/close`, answered over HTTP `POST /mcp`,
 * the `/mcp` WebSocket and the `/ws` session's `mcp` message. A tool call is a step of the session's episode
 * (recorded, budgeted, fed to the curriculum); results are MCP `CallToolResult`s whose text is what src/mcp shows.
 */
import { EnvHarnessError, type Observation } from '../../index.js';
import { renderObservation } from '../../mcp/session.js';
import type { Problem } from '../errors.js';
import { OpenEnvValidationError, parseReset, type OpenEnvResult } from './messages.js';
import type { OpenEnvSession } from './session.js';

/** OpenEnv's `JsonRpcErrorCode`. */
export const JSON_RPC = { PARSE_ERROR: -32700, INVALID_REQUEST: -32600, METHOD_NOT_FOUND: -32601, INVALID_PARAMS: -32602, INTERNAL_ERROR: -32603, SERVER_ERROR: -32000 } as const;

type Id = string | number | null;
export interface JsonRpcResponse {
  jsonrpc: '2.0';
  id: Id;
  result?: unknown;
  error?: { code: number; message: string; data: unknown };
}

/** Where a request's session comes from: the connection's own (WebSocket), or the `session_id` it names (HTTP). */
export interface McpSessions {
  /** The WebSocket's session, which `openenv/session/close` may not close. */
  own?: { id: string; session: OpenEnvSession };
  get(id: string): OpenEnvSession | undefined;
  /** A new session with a running episode (reset with `params`), or a problem (capacity, no task). */
  create(params: Record<string, unknown>): Promise<{ id: string } | { error: JsonRpcResponse['error'] }>;
  close(id: string): Promise<boolean>;
}

/** Control tools beside the domain's (names as src/mcp's `CONTROL_TOOLS`; `status` is OpenEnv's `state`). */
const CONTROL = [
  { name: 'reset', description: 'Start a new episode (ending the current one); arguments are OpenEnv reset keys: seed, task_id, domain, task_type, level, split, group_id, group_size, ...', inputSchema: { type: 'object', additionalProperties: true } },
  { name: 'message', description: 'Say something to the user (one episode step); the result is the user\'s reply.', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false } },
  { name: 'finish', description: 'End the episode (one step), with the final answer for question/answer tasks; the result carries the reward.', inputSchema: { type: 'object', properties: { answer: { type: 'string' } }, additionalProperties: false } },
] as const;
const CONTROL_NAMES = new Set<string>(CONTROL.map((t) => t.name));

const REQUEST_KEYS = new Set(['jsonrpc', 'method', 'params', 'id']);

function failure(id: Id, code: number, message: string, data: unknown = null): JsonRpcResponse {
  return { jsonrpc: '2.0', id, error: { code, message, data } };
}

/** A text message (a WebSocket frame or an HTTP body) as a JSON-RPC response. */
export async function answerMcpText(text: string, sessions: McpSessions): Promise<JsonRpcResponse> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return failure(null, JSON_RPC.PARSE_ERROR, `Parse error: ${(e as Error).message}`);
  }
  return answerMcp(value, sessions);
}

/** One JSON-RPC request (already parsed) as its response. */
export async function answerMcp(value: unknown, sessions: McpSessions): Promise<JsonRpcResponse> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return failure(null, JSON_RPC.INVALID_REQUEST, 'Invalid request: a JSON-RPC request is an object { jsonrpc: "2.0", method, params?, id? }');
  const r = value as Record<string, unknown>;
  const rawId = r['id'];
  const id: Id = typeof rawId === 'string' || (typeof rawId === 'number' && Number.isInteger(rawId)) ? rawId : null;
  const extra = Object.keys(r).find((k) => !REQUEST_KEYS.has(k));
  if (extra !== undefined) return failure(id, JSON_RPC.INVALID_REQUEST, `Invalid request: unknown field "${extra}"`);
  if (r['jsonrpc'] !== '2.0') return failure(id, JSON_RPC.INVALID_REQUEST, 'Invalid request: "jsonrpc" must be "2.0"');
  if (rawId !== undefined && rawId !== null && id === null) return failure(null, JSON_RPC.INVALID_REQUEST, 'Invalid request: "id" must be a string or an integer');
  const method = r['method'];
  if (typeof method !== 'string') return failure(id, JSON_RPC.INVALID_REQUEST, 'Invalid request: "method" must be a string');
  const params = r['params'] ?? {};
  if (params === null || typeof params !== 'object' || Array.isArray(params)) return failure(id, JSON_RPC.INVALID_PARAMS, 'Params must be an object');
  const p = params as Record<string, unknown>;
  const ok = (result: unknown): JsonRpcResponse => ({ jsonrpc: '2.0', id, result });

  switch (method) {
    case 'openenv/session/create': {
      if (sessions.own !== undefined) return ok({ session_id: sessions.own.id });
      const created = await sessions.create(p);
      return 'error' in created ? { jsonrpc: '2.0', id, error: created.error } : ok({ session_id: created.id });
    }
    case 'openenv/session/close': {
      const target = p['session_id'];
      if (typeof target !== 'string' || target === '') return failure(id, JSON_RPC.INVALID_PARAMS, "Invalid params - 'session_id' is required");
      if (sessions.own?.id === target) return failure(id, JSON_RPC.INVALID_REQUEST, 'Cannot close active WebSocket-managed session via MCP method');
      return (await sessions.close(target)) ? ok({ session_id: target, closed: true }) : failure(id, JSON_RPC.INVALID_PARAMS, `Unknown session_id: ${target.slice(0, 80)}`);
    }
    case 'tools/list':
    case 'tools/call': {
      const session = sessionOf(p, sessions);
      if (typeof session === 'string') return failure(id, JSON_RPC.INVALID_PARAMS, session);
      if (method === 'tools/list') return ok({ tools: [...session.toolSpecs().map((t) => ({ name: t.name, description: t.description, inputSchema: t.parameters })), ...CONTROL] });
      const name = p['name'];
      if (typeof name !== 'string' || name === '') return failure(id, JSON_RPC.INVALID_PARAMS, "Missing 'name' in params");
      const args = p['arguments'] ?? {};
      if (args === null || typeof args !== 'object' || Array.isArray(args)) return failure(id, JSON_RPC.INVALID_PARAMS, "'arguments' must be an object");
      try {
        return ok(toolResult(name, await callTool(session, name, args as Record<string, unknown>)));
      } catch (error) {
        return ok(errorResult(error));
      }
    }
    default:
      return failure(id, JSON_RPC.METHOD_NOT_FOUND, `Method not found: ${method.slice(0, 80)}`);
  }
}

function sessionOf(p: Record<string, unknown>, sessions: McpSessions): OpenEnvSession | string {
  const requested = p['session_id'];
  if (requested === undefined || requested === null) {
    if (sessions.own !== undefined) return sessions.own.session;
    // OpenEnv would build a throwaway environment; an EnvHarness tool acts on an episode, which lives in a session.
    return "send 'session_id' (from openenv/session/create): EnvHarness tools act on a session's episode";
  }
  if (typeof requested !== 'string') return "'session_id' must be a string";
  const s = sessions.own?.id === requested ? sessions.own.session : sessions.get(requested);
  return s ?? `Unknown session_id: ${requested.slice(0, 80)}`;
}

function callTool(session: OpenEnvSession, name: string, args: Record<string, unknown>): Promise<OpenEnvResult> {
  if (!CONTROL_NAMES.has(name)) return session.step({ type: 'tool', tool: name, args });
  if (name === 'reset') return session.reset(parseReset(args));
  return session.step({ ...args, type: name });
}

/**
 * An MCP `CallToolResult`: the text src/mcp renders, `structuredContent` the OpenEnv step result (observation
 * with its metadata, reward, done), and `data` the tool's output or the user's reply, which is what OpenEnv's
 * `MCPToolClient.call_tool` returns (it reads FastMCP's `data`).
 */
function toolResult(name: string, result: OpenEnvResult): Record<string, unknown> {
  const observation = result.observation as unknown as Observation;
  const out: Record<string, unknown> = {
    content: [{ type: 'text', text: renderObservation(observation) }],
    structuredContent: result,
    isError: observation.error !== undefined,
  };
  if (!CONTROL_NAMES.has(name) || name === 'message') out['data'] = (name === 'message' ? observation.text : observation.output) ?? null;
  return out;
}

/** A refusal (no episode, validation) as a tool error result: the agent reads it, as src/mcp answers. */
function errorResult(error: unknown): Record<string, unknown> {
  const problem = problemOf(error);
  return { content: [{ type: 'text', text: `${problem.code}: ${problem.message}` }], structuredContent: { error: problem }, isError: true };
}

function problemOf(error: unknown): { code: string; message: string } {
  if (error instanceof OpenEnvValidationError) return { code: 'PARAMS_INVALID', message: error.message };
  if (error instanceof EnvHarnessError) return { code: error.code, message: error.message };
  const p = (error as { problem?: Problem }).problem;
  if (p !== undefined) return { code: p.code, message: p.detail };
  return { code: 'INTERNAL', message: String(error) };
}
