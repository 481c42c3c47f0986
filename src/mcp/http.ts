/** Streamable HTTP (stateless) for the MCP server: a fetch-style handler to mount under the HTTP API. */
import { WebStandardStreamableHTTPServerTransport, type WebStandardStreamableHTTPServerTransportOptions } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { EnvHarnessError, type Tool } from '../core/index.js';
import type { ExtraRoutes } from '../server/index.js';
import { createMcpServer, type LooseObject, type McpServerOptions } from './server.js';
import { createEpisodeSession, errorPayload, type EpisodeSession } from './session.js';

export interface McpHttpHandlerOptions extends Omit<McpServerOptions, 'schemaCache' | 'start'> {
  /** Transport options (e.g. `allowedHosts`, `enableDnsRebindingProtection`, `maxRequestBodySize`). */
  transport?: Omit<WebStandardStreamableHTTPServerTransportOptions, 'sessionIdGenerator' | 'enableJsonResponse'>;
}

/** A fetch-style handler: `(request) => Promise<Response>`, plus the episode session it drives. */
export interface McpHttpHandler {
  (request: Request): Promise<Response>;
  readonly session: EpisodeSession;
  /** Closes the session (when the handler created it): the running episode ends as `closed`. */
  close(): Promise<void>;
}

/**
 * Serves one episode session over stateless Streamable HTTP: each POST gets a fresh MCP server and
 * transport bound to the shared session (so requests never share JSON-RPC state, while the episode
 * persists). GET and DELETE answer 405: there is no server-initiated stream in stateless mode.
 * Authentication is the mounting server's job.
 * @example
 * const mcp = createMcpHttpHandler({ harness, defaults: { taskType: 'restock' } });
 * app.all('/v1/mcp', (c) => mcp(c.req.raw));
 */
export function createMcpHttpHandler(options: McpHttpHandlerOptions): McpHttpHandler {
  const { transport: transportOptions, session: given, ...serverOptions } = options;
  let session: EpisodeSession;
  if (given !== undefined) session = given;
  else if (serverOptions.harness !== undefined) {
    const { harness, name: _name, ...rest } = serverOptions;
    session = createEpisodeSession({ ...rest, harness });
  } else {
    throw new EnvHarnessError('CONFIG_INVALID', 'createMcpHttpHandler needs a harness or a session');
  }
  const schemaCache = new WeakMap<Tool<any, any>, LooseObject>();
  const handler = async (request: Request): Promise<Response> => {
    if (request.method !== 'POST') return jsonRpcError(405, 'this MCP endpoint is stateless: send JSON-RPC requests with POST', { Allow: 'POST' });
    try {
      await session.ensureStarted();
    } catch {
      // No episode can start yet (e.g. an empty pool on a fresh store). Still serve the protocol:
      // `initialize` and `tools/list` (the control tools) work, and `reset`, `status` or a step answer
      // with the error that says why, as a tool error result.
    }
    let mcp;
    try {
      mcp = await createMcpServer({ session, schemaCache, start: false, ...(serverOptions.name ? { name: serverOptions.name } : {}) });
    } catch (error) {
      const { code, message } = errorPayload(error);
      return jsonRpcError(503, `cannot serve MCP: ${code}: ${message}`);
    }
    const transport = new WebStandardStreamableHTTPServerTransport({ ...transportOptions, sessionIdGenerator: undefined, enableJsonResponse: true });
    try {
      await mcp.connect(transport);
      return await transport.handleRequest(request);
    } finally {
      await mcp.close();
    }
  };
  return Object.assign(handler, {
    session,
    close: async () => {
      if (given === undefined) await session.close();
    },
  });
}

function jsonRpcError(status: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

/**
 * Mounts an MCP handler in the HTTP API (`createServer({ extraRoutes })`): `POST <path>` (default
 * `/v1/mcp`) behind the server's Host/Origin, bearer and body-size guards, for the server token only
 * (the MCP episode is one shared session, not an episode capability).
 * @example
 * const mcp = createMcpHttpHandler({ harness });
 * const server = createServer({ harness, extraRoutes: mcpRoutes(mcp) });
 * // ... later: await server.close(); await mcp.close();
 */
export function mcpRoutes(handler: McpHttpHandler, options: { path?: string } = {}): ExtraRoutes {
  const path = options.path ?? '/v1/mcp';
  return (app, ctx) => {
    app.all(path, (c) => {
      ctx.requireAdmin(c);
      return handler(c.req.raw);
    });
  };
}
