/**
 * Connection limits EnvHarness enforces itself (Node 20's own headersTimeout/requestTimeout do not hold
 * under a slow-body request: measured 12.6–25 s for a never-finished header and >90 s for slow sockets).
 * Per socket: the request head must arrive within `headersTimeoutMs` of the connection (or of the
 * previous response), its body within `bodyTimeoutMs` of the head; and at most `maxConnections` sockets
 * are open at once (the next gets 429 with Retry-After and is closed).
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { problem } from './errors.js';

export interface ConnectionLimits {
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  maxConnections: number;
}

/**
 * The deadlines of one socket, for requests answered outside node:http (the hand-written front of the hot
 * routes, http-front.ts): the same timers the server's 'request' and 'finish' events drive.
 */
export interface SocketDeadlines {
  /** A request head arrived; its body is still due (`complete` false) or has arrived too. */
  headArrived(socket: Socket, complete: boolean): void;
  /** The body of the current request arrived. */
  bodyArrived(socket: Socket): void;
  /** The answer is written: the next request head is due. */
  answered(socket: Socket): void;
}

/** Installs the limits on a node:http server (before it listens); returns the per-socket deadlines for the front. */
export function enforceConnectionLimits(server: Server, limits: ConnectionLimits): SocketDeadlines {
  let open = 0;
  // One timer per socket, re-armed with refresh() (cheaper than a new Timeout on every request of a
  // kept-alive socket); it reads which deadline it guards when it fires.
  const waiting = new WeakMap<Socket, { timer: NodeJS.Timeout; ms: number; what: string; armed: boolean }>();
  const arm = (socket: Socket, ms: number, code: 'REQUEST_TIMEOUT', what: string) => {
    const state = waiting.get(socket);
    if (state !== undefined && state.ms === ms) {
      state.what = what;
      state.armed = true;
      state.timer.refresh();
      return;
    }
    disarm(socket);
    const next = { timer: undefined as unknown as NodeJS.Timeout, ms, what, armed: true };
    next.timer = setTimeout(() => {
      if (next.armed) answerAndClose(socket, problem(code, `${next.what} did not arrive within ${ms} ms; the connection is closed`));
    }, ms);
    next.timer.unref();
    waiting.set(socket, next);
  };
  const disarm = (socket: Socket) => {
    const state = waiting.get(socket);
    if (state === undefined) return;
    // Kept (not cleared) so the next arm can refresh it; a disarmed timer that fires does nothing.
    state.armed = false;
  };
  const forget = (socket: Socket) => {
    const state = waiting.get(socket);
    if (state !== undefined) clearTimeout(state.timer);
    waiting.delete(socket);
  };

  server.on('connection', (socket: Socket) => {
    open += 1;
    socket.once('close', () => {
      open -= 1;
      forget(socket);
    });
    if (open > limits.maxConnections) {
      answerAndClose(socket, problem('TOO_MANY_REQUESTS', `more than ${limits.maxConnections} open connections; retry shortly`), { 'Retry-After': '1' });
      return;
    }
    arm(socket, limits.headersTimeoutMs, 'REQUEST_TIMEOUT', 'the request head');
  });
  // An upgrade (the OpenEnv WebSocket) was the socket's last HTTP request: no next head is due on it.
  server.on('upgrade', (req: IncomingMessage) => forget(req.socket));
  const deadlines: SocketDeadlines = {
    headArrived(socket, complete) {
      if (complete) disarm(socket);
      else arm(socket, limits.bodyTimeoutMs, 'REQUEST_TIMEOUT', 'the request body');
    },
    bodyArrived: disarm,
    answered(socket) {
      // The next request on a kept-alive socket has its own head deadline.
      if (!socket.destroyed) arm(socket, limits.headersTimeoutMs, 'REQUEST_TIMEOUT', 'the next request head');
    },
  };
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    // A request the front lent node:http on an in-memory connection (front-lent.ts): the front keeps its deadlines.
    if (!(socket instanceof Socket)) return;
    deadlines.headArrived(socket, req.complete);
    if (!req.complete) req.once('end', () => disarm(socket));
    res.once('finish', () => deadlines.answered(socket));
  });
  return deadlines;
}

/** Writes a complete problem+json response straight to the socket (when no response object exists, or it is stuck) and closes it. */
function answerAndClose(socket: Socket, p: ReturnType<typeof problem>, headers: Record<string, string> = {}): void {
  if (socket.destroyed) return;
  const body = JSON.stringify(p);
  const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  try {
    socket.end(`HTTP/1.1 ${p.status} ${p.title}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}Connection: close\r\n\r\n${body}`);
  } catch {
    // Already closing.
  }
  // Never wait on a peer that does not read.
  setTimeout(() => socket.destroy(), 1000).unref();
}
