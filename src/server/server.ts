/** createServer(): the harness behind HTTP API v1 on a Node server, with its limits, token and idle reaper. */
import { randomBytes } from 'node:crypto';
import { createServer as createHttpServer, type Server } from 'node:http';
import { hostname } from 'node:os';
import type { AddressInfo, Socket } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { EnvHarnessError, type Agent, type Harness } from '../index.js';
import { buildApp, type ExtraRoutes, type ServerEnv } from './app.js';
import { checkTokenShape, generateToken, hashToken, HostPolicy, isLoopback } from './auth.js';
import { EpisodeRegistry, type Durability } from './episodes.js';
import { createFastPath } from './fast-path.js';
import { installFront, type FrontStats } from './http-front.js';
import { problem } from './errors.js';
import { enforceConnectionLimits } from './limits.js';
import { GroupRegistry } from './groups.js';
import { createOpenEnvSurface, type OpenEnvOptions, type OpenEnvSurface } from './openenv/index.js';
import { createOrsSurface, type OrsOptions, type OrsSurface } from './ors/index.js';
import { mountTrainerRoutes } from './trainer-routes.js';
import { CurriculumSync } from './curriculum-sync.js';
import { isReplicaStore } from './replicas.js';

/** Defaults of the HTTP server (docs/http.md, "Limits"). */
export const SERVER_DEFAULTS = {
  host: '127.0.0.1',
  port: 8787,
  /** Largest request body (bytes). */
  bodyLimit: 1024 * 1024,
  /** An episode without a request for this long is closed and forgotten. */
  idleMs: 15 * 60 * 1000,
  /** Largest number of items in one batched step. */
  maxBatch: 1024,
  /** Headers must arrive within this time (slowloris); enforced per socket by EnvHarness (limits.ts). */
  headersTimeoutMs: 10_000,
  /** The body must arrive within this time of the head; enforced per socket by EnvHarness. */
  bodyTimeoutMs: 10_000,
  /** Node's own backstop for the whole request. */
  requestTimeoutMs: 60_000,
  keepAliveTimeoutMs: 5_000,
  /** Open connections at most; the next is answered 429 with Retry-After and closed. */
  maxConnections: 1024,
  /** Open episodes at most (all are created with the server token); the next create is 429 with Retry-After. */
  maxOpenEpisodes: 4096,
} as const;

export interface ServerOptions {
  harness: Harness;
  /** The server (admin) token. Generated when absent, which is only allowed on a loopback address. */
  token?: string;
  /** Bind address (default 127.0.0.1). A non-loopback address needs an explicit `token`. */
  host?: string;
  /** Port (default 8787; 0 picks a free one). */
  port?: number;
  /** Largest request body in bytes (default 1 MiB); larger bodies get 413. */
  bodyLimit?: number;
  /** Idle episodes are closed after this many milliseconds (default 15 min). */
  idleMs?: number;
  /** Largest batched step (default 1024 items). */
  maxBatch?: number;
  /** Request head / body deadlines in ms (default 10 s each), open connections (1024), open episodes (4096). */
  limits?: { headersTimeoutMs?: number; bodyTimeoutMs?: number; maxConnections?: number; maxOpenEpisodes?: number };
  /** Host names accepted in Host/Origin besides loopback names and the bind address (e.g. a reverse proxy's). */
  allowedHosts?: readonly string[];
  /** Server-side agents, by name, for evaluation runs (POST /v1/runs { evaluate }). */
  agents?: Readonly<Record<string, () => Agent>>;
  /** More routes (e.g. an MCP endpoint), behind the same guards. */
  extraRoutes?: ExtraRoutes;
  /** Clock in milliseconds (default Date.now): idle reaping and timestamps. */
  now?: () => number;
  /** Reported by /v1/health and the OpenAPI document. */
  version?: string;
  /** OpenEnv's protocol under a path prefix (default `/openenv`, docs/trainers.md); false turns it off. */
  openenv?: OpenEnvOptions | false;
  /** The Open Reward Standard's HTTP API under a path prefix (default `/ors`, docs/trainers.md); false turns it off. */
  ors?: OrsOptions | false;
  /** When a step is answered: after its commit (`committed`, the default) or once applied (`relaxed`, docs/http.md). */
  durability?: Durability;
  /** `committed` on a SQLite file store: acknowledge from the step journal (default true; false commits to SQLite before every answer). */
  journal?: boolean;
}

/** A created server: the app (for in-process requests), its token, and listen/close. */
export interface EnvHarnessServer {
  readonly app: OpenAPIHono<ServerEnv>;
  readonly episodes: EpisodeRegistry;
  /** GRPO groups (`/v1/groups`, OpenEnv reset `group_id`). */
  readonly groups: GroupRegistry;
  /** The server token (admin bearer token). */
  readonly token: string;
  /** True when the token was generated (print it for the operator). */
  readonly tokenGenerated: boolean;
  readonly host: string;
  /** Handles a request in-process (no socket). */
  fetch(request: Request): Response | Promise<Response>;
  /** Binds and starts the idle reaper; resolves with the address (the real port when `port` was 0). */
  listen(): Promise<{ url: string; host: string; port: number }>;
  /** Closes every episode (recorded as closed), stops the reaper and the listener. Does not close the harness. */
  close(): Promise<void>;
  /** Runs the reaper once now (tests). */
  reap(): Promise<number>;
  /** What the hot routes' front did (http-front.ts): requests it answered, lent node:http, connections handed over. */
  readonly front: Readonly<FrontStats>;
}

/**
 * Creates the HTTP server of a harness. Refuses a non-loopback `host` without an explicit token.
 * @example
 * const server = createServer({ harness });
 * const { url } = await server.listen();
 * console.log(url, server.token);
 */
export function createServer(options: ServerOptions): EnvHarnessServer {
  const host = options.host ?? SERVER_DEFAULTS.host;
  const port = options.port ?? SERVER_DEFAULTS.port;
  if (options.token === undefined && !isLoopback(host)) {
    throw new EnvHarnessError(
      'CONFIG_INVALID',
      `refusing to listen on ${host} without a token: a non-loopback address is reachable from other machines; pass --token (or ENVHARNESS_TOKEN), or bind 127.0.0.1`,
      { details: { pointer: '/token' } },
    );
  }
  if (options.token !== undefined) checkTokenShape(options.token);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new EnvHarnessError('CONFIG_INVALID', `port must be an integer in 0..65535, got ${port}`, { details: { pointer: '/port' } });
  }
  const bodyLimit = positiveInt(options.bodyLimit ?? SERVER_DEFAULTS.bodyLimit, 'bodyLimit');
  const idleMs = positiveInt(options.idleMs ?? SERVER_DEFAULTS.idleMs, 'idleMs');
  const maxBatch = positiveInt(options.maxBatch ?? SERVER_DEFAULTS.maxBatch, 'maxBatch');
  const token = options.token ?? generateToken('ehs');
  const now = options.now ?? Date.now;
  const limits = {
    headersTimeoutMs: positiveInt(options.limits?.headersTimeoutMs ?? SERVER_DEFAULTS.headersTimeoutMs, 'limits.headersTimeoutMs'),
    bodyTimeoutMs: positiveInt(options.limits?.bodyTimeoutMs ?? SERVER_DEFAULTS.bodyTimeoutMs, 'limits.bodyTimeoutMs'),
    maxConnections: positiveInt(options.limits?.maxConnections ?? SERVER_DEFAULTS.maxConnections, 'limits.maxConnections'),
    maxOpenEpisodes: positiveInt(options.limits?.maxOpenEpisodes ?? SERVER_DEFAULTS.maxOpenEpisodes, 'limits.maxOpenEpisodes'),
  };
  // A store shared by replicas (PostgreSQL) holds the episodes too: any replica can serve any of them.
  const replicaStore = isReplicaStore(options.harness.store) ? options.harness.store : undefined;
  const replica = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const shared = replicaStore?.sharedEpisodes(replica);
  const curriculum = replicaStore === undefined ? undefined : new CurriculumSync(options.harness, replicaStore.curriculumLog(replica));
  const episodes = new EpisodeRegistry({ harness: options.harness, idleMs, now, maxBatch, maxOpenEpisodes: limits.maxOpenEpisodes, ...(shared !== undefined ? { shared } : {}), ...(options.durability !== undefined ? { durability: options.durability } : {}), ...(options.journal !== undefined ? { journal: options.journal } : {}) });
  const adminTokenHash = hashToken(token);
  const hosts = new HostPolicy(host, options.allowedHosts);
  const groups = new GroupRegistry(options.harness, episodes);
  const version = options.version ?? '0.1.0';
  // Trainer routes (groups, chat rollouts) sit behind the same guards as the rest of v1.
  const extraRoutes: ExtraRoutes = (app, ctx) => {
    mountTrainerRoutes(app, ctx, groups);
    options.extraRoutes?.(app, ctx);
  };
  const app = buildApp({
    ...(curriculum !== undefined ? { curriculum } : {}),
    harness: options.harness,
    episodes,
    adminTokenHash,
    hosts,
    bodyLimit,
    agents: options.agents ?? {},
    now,
    version,
    extraRoutes,
  });
  const openenv: OpenEnvSurface | undefined = options.openenv === false
    ? undefined
    : createOpenEnvSurface({ episodes, groups, hosts, adminTokenHash, bodyLimit, version, now }, options.openenv ?? {});
  const ors: OrsSurface | undefined = options.ors === false
    ? undefined
    : createOrsSurface({ harness: options.harness, episodes, groups, hosts, adminTokenHash, bodyLimit, now }, options.ors ?? {});

  let server: Server | undefined;
  let reaper: ReturnType<typeof setInterval> | undefined;
  let reaping = false;
  const sockets = new Set<Socket>();
  const front: FrontStats = { answered: 0, lent: 0, handedOver: 0, lending: 0 };
  const reap = async () => {
    if (reaping) return 0;
    reaping = true;
    try {
      return await episodes.reap();
    } finally {
      reaping = false;
    }
  };

  return {
    app,
    episodes,
    groups,
    token,
    tokenGenerated: options.token === undefined,
    host,
    fetch: (request) => app.fetch(request),
    reap,
    front,
    async listen() {
      if (server !== undefined) throw new EnvHarnessError('CONFIG_INVALID', 'the server is already listening');
      // Replicas: the shared curriculum log applied before the first request, then polled.
      await curriculum?.catchUp();
      curriculum?.start();
      const fast = createFastPath({ episodes, hosts, adminTokenHash, bodyLimit });
      const rest = getRequestListener(app.fetch);
      const s = createHttpServer((req, res) => {
        if (!fast(req, res) && !(openenv?.handle(req, res) ?? false) && !(ors?.handle(req, res) ?? false)) void rest(req, res);
      });
      s.on('upgrade', (req, socket, head) => {
        if (!(openenv?.upgrade(req, socket, head) ?? false)) socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      });
      s.headersTimeout = limits.headersTimeoutMs;
      const deadlines = enforceConnectionLimits(s, limits);
      installFront(s, { episodes, hosts, adminTokenHash, bodyLimit, deadlines, keepAliveTimeoutMs: SERVER_DEFAULTS.keepAliveTimeoutMs, stats: front });
      s.requestTimeout = SERVER_DEFAULTS.requestTimeoutMs;
      s.keepAliveTimeout = SERVER_DEFAULTS.keepAliveTimeoutMs;
      s.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => answerClientError(error, socket));
      s.on('connection', (socket: Socket) => {
        socket.setNoDelay(true);
        sockets.add(socket);
        socket.once('close', () => sockets.delete(socket));
      });
      server = s;
      await new Promise<void>((resolve, reject) => {
        s.once('error', reject);
        s.listen(port, host, () => {
          s.off('error', reject);
          resolve();
        });
      });
      const interval = Math.max(10, Math.min(60_000, Math.floor(idleMs / 2)));
      reaper = setInterval(() => void reap().catch(() => undefined), interval);
      reaper.unref();
      const address = s.address() as AddressInfo;
      const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      return { url: `http://${shown}:${address.port}`, host: address.address, port: address.port };
    },
    async close() {
      curriculum?.stop();
      if (reaper !== undefined) clearInterval(reaper);
      reaper = undefined;
      const s = server;
      server = undefined;
      if (s !== undefined) {
        const closed = new Promise<void>((resolve) => s.close(() => resolve()));
        // WebSocket sessions first: their close frame goes out before the sockets end.
        const sessions = openenv?.close();
        s.closeIdleConnections();
        for (const socket of sockets) if (!socket.destroyed) socket.end();
        await sessions;
        await ors?.close();
        await episodes.closeAll();
        // node:http's connections, and the hot routes' front's (which node:http does not track).
        const timer = setTimeout(() => {
          s.closeAllConnections();
          for (const socket of sockets) socket.destroy();
        }, 2000);
        await closed;
        clearTimeout(timer);
      } else {
        await openenv?.close();
        await ors?.close();
        await episodes.closeAll();
      }
    },
  };
}

/** Framing errors (bad headers, oversized headers, timeouts) get a JSON answer instead of a bare close. */
function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (!socket.writable || (error.code === 'ECONNRESET' || error.code === 'EPIPE')) {
    socket.destroy();
    return;
  }
  const code = error.code === 'HPE_HEADER_OVERFLOW' ? 'HEADERS_TOO_LARGE' : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'REQUEST_TIMEOUT' : 'MALFORMED_REQUEST';
  const p = problem(code, `malformed HTTP request (${error.code ?? 'parse error'})`);
  const body = JSON.stringify(p);
  socket.end(`HTTP/1.1 ${p.status} ${p.title}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

function positiveInt(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new EnvHarnessError('CONFIG_INVALID', `${name} must be a positive integer, got ${value}`, { details: { pointer: `/${name}` } });
  }
  return value;
}

