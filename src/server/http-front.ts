/**
 * A hand-written HTTP/1.1 front for the two hot routes, `POST /v1/episodes/{id}/step` and `POST /v1/steps`,
 * on the node:http server's own sockets. node:http builds a request and a response object (two streams) per
 * request; here a step's request is parsed from the socket's bytes and answered with one write.
 *
 * The front answers only what it fully understands and what passes every guard: a plain HTTP/1.1 POST to a
 * hot route with a Content-Length body within the limit, an allowed Host/Origin, a JSON content type and the
 * right token (the registry's own problem replies, e.g. 409 busy or 422, are answered here too). Another
 * plain request (another route, or a hot one a guard refuses) is lent to node:http: its bytes, and only
 * those, go to node:http through an in-memory connection (front-lent.ts) whose writes go to the socket, and
 * the front reads the next request once node:http's response is written, so answers stay in request order
 * and the connection stays the front's. A head the front does not fully understand, chunked bodies,
 * `Expect`, an upgrade, `Connection: close`, a repeated header it reads, or an oversized body hands the
 * connection to node:http for good, with every byte the front read, so it gets exactly the answer it got
 * before this front existed. The head and body deadlines are the same per-socket timers (limits.ts), and a
 * kept-alive connection is closed after the same idle time as node:http's. A head repeated byte for byte (the
 * connection's last one, or a step head authorised on any connection, kept server-wide: front-heads.ts) is not
 * parsed or checked again while the episode its token was authorised for is open. Every connection reads into
 * one buffer (net's `onread` mode, `readInto`); the bytes a connection keeps past a read are copied out of it.
 */
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { admit, isJsonContentType, tokenMatches, type HostPolicy } from './auth.js';
import { parseJsonBody } from './body.js';
import { problemOf, problemReply, type Reply } from './errors.js';
import type { EpisodeRegistry, ServerEpisode } from './episodes.js';
import { HotHeads } from './front-heads.js';
import { LentSocket } from './front-lent.js';
import type { SocketDeadlines } from './limits.js';
import { decodeSegment } from './raw-http.js';

export interface FrontOptions {
  episodes: EpisodeRegistry;
  hosts: HostPolicy;
  adminTokenHash: Buffer;
  bodyLimit: number;
  deadlines: SocketDeadlines;
  keepAliveTimeoutMs: number;
  /** Counted into when given (the server's diagnostics and tests). */
  stats?: FrontStats;
}

/** What the front did since the server started. */
export interface FrontStats {
  /** Hot requests the front answered itself. */
  answered: number;
  /** Requests lent to node:http on a connection the front kept. */
  lent: number;
  /** Connections handed to node:http for good (an upgrade, `Connection: close`, an unusual head, ...). */
  handedOver: number;
  /** Connections open now with an in-memory connection to node:http (0 once their clients are gone). */
  lending: number;
}

/** Authorised step heads kept server-wide: as many as the episodes the server holds open by default (`limits.maxOpenEpisodes`). */
const HOT_HEADS = 4096;
/** Bytes of a request head the front reads before it leaves the connection to node:http (whose limit is 16 KiB). */
const MAX_FRONT_HEAD = 8192;
/** Bytes buffered behind a request being answered at which the front stops reading (node:http pauses its sockets too). */
const PAUSE_AT = 65_536;
const HEAD_END = Buffer.from('\r\n\r\n');
/**
 * Bytes of each slab replies are encoded into (a reply larger than that gets a slab of its own size). Small:
 * a write the peer is slow to take keeps its whole slab alive.
 */
const SLAB_BYTES = 1 << 16;
const STEP = /^\/v1\/episodes\/([^/?#]+)\/step(?:\?.*)?$/;
const BATCH = /^\/v1\/steps(?:\?.*)?$/;
/** A request line the front reads: a method, a target of visible ASCII, HTTP/1.1 (anything else is node:http's). */
const REQUEST_LINE = /^([A-Z]+) ([\x21-\x7e]+) HTTP\/1\.1$/;
/** A header line node:http would read the same way: a token name, a colon, a value of visible ASCII, spaces and tabs. */
const HEADER_LINE = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+):[ \t]*([\x20-\x7e\t]*?)[ \t]*$/;
/** Headers the front reads; a request that repeats one is left to node:http (which has rules for repeats). */
const READ = new Set(['host', 'origin', 'authorization', 'content-type', 'content-length', 'idempotency-key', 'connection']);
/** Headers whose presence gives node:http the connection (they change how it is framed or what follows). */
const UNUSUAL = new Set(['transfer-encoding', 'expect', 'upgrade']);
const DECODER = new TextDecoder();
/** Bytes one read takes at most (node's own reads ask libuv for 64 KiB too). */
const READ_BYTES = 1 << 16;
/** An Idempotency-Key value a reused head may carry in another request: visible ASCII (what node:http reads the same). */
const KEY_VALUE = /^[\x21-\x7e]+$/;

interface Head {
  /** A hash of the request target (path and query, `targetKey`): what the server's hot heads are looked up by. */
  target: number;
  /** A request on a hot route the front may answer; the others are lent to node:http. */
  hot: boolean;
  path: string;
  /** The episode id of a step route; undefined for the batched route. */
  id: string | undefined;
  headers: Map<string, string>;
  bodyStart: number;
  length: number;
  /** The guard's verdict on this head's Host/Origin/Authorization and Content-Type, computed once (a head is reused when its bytes repeat). */
  admission?: { token: string | undefined; json: boolean };
  /** A copy of the head's bytes (through the blank line), made once the head is kept for reuse. */
  bytes?: Buffer;
  /**
   * Where the Idempotency-Key's value is in `bytes` (a step's head from a client that sends a new key with every
   * request): a request whose head differs from `bytes` only there reuses this head, with its own key.
   */
  keyAt?: { start: number; end: number };
  /**
   * The episode this head's token (for its id) was authorised for: while the registry still holds it, a request
   * with this head needs no second token hash. Set only from `registry.authorize(id, token)` of this very head.
   */
  ep?: ServerEpisode;
}

/**
 * Takes over node:http's connection handling on `server`: every new socket starts in the front. Call before
 * the server listens; the server's other 'connection' listeners (limits, bookkeeping) still run for every socket.
 */
export function installFront(server: Server, options: FrontOptions): void {
  const nodeConnection = server.listeners('connection').find((l) => l.name === 'connectionListener') as ((this: Server, socket: Socket) => void) | undefined;
  // Another Node version without its listener under that name: node:http serves everything, as before.
  if (nodeConnection === undefined) return;
  server.removeListener('connection', nodeConnection);
  const stats: FrontStats = options.stats ?? { answered: 0, lent: 0, handedOver: 0, lending: 0 };
  const registry = options.episodes;
  const hotHeads = new HotHeads<number, Head, ServerEpisode>(HOT_HEADS);
  // A closed episode's head goes at once (not when it is next sent): the cache never holds closed episodes' state.
  registry.listen((ep, event) => {
    if (event.kind === 'close') hotHeads.forget(ep);
  });
  /**
   * The head kept for the request target of the request at the start of `buf` (a step authorised before, on any
   * connection: a pooled client's episodes on whichever connection is free); the caller compares the bytes (a
   * head kept for another target of the same hash is not this request's).
   */
  const keptHead = (buf: Buffer): Head | undefined => {
    const end = Math.min(buf.length, MAX_FRONT_HEAD);
    let at = 0;
    while (at < end && buf[at] !== 32) if (++at > 8) return undefined;
    // Read in place (a string of the target, hashed for a lookup, cost about three times as much).
    let hash = TARGET_HASH_START;
    for (at++; at < end; at++) {
      const byte = buf[at]!;
      if (byte === 32) return hotHeads.get(hash >>> 0)?.head;
      hash = Math.imul(hash ^ byte, TARGET_HASH_PRIME);
    }
    return undefined;
  };
  const keepAliveTail = `\r\nConnection: keep-alive\r\nKeep-Alive: timeout=${Math.floor(options.keepAliveTimeoutMs / 1000)}\r\n\r\n`;
  /**
   * Replies are encoded one after another into a slab (a write not done at once keeps reading its bytes, so no
   * byte of a slab is used twice; a full slab is left to the garbage collector and a new one taken).
   */
  let slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
  let slabAt = 0;
  /**
   * The buffer every connection's reads go to (`readInto`), instead of a new buffer and a stream 'data' event per
   * read: a read is handled before the next one, of any connection, is made, and the bytes kept past it are copied.
   */
  const readBuffer = Buffer.allocUnsafeSlow(READ_BYTES);
  const inReadBuffer = (bytes: Buffer | undefined): boolean => bytes !== undefined && bytes.buffer === readBuffer.buffer;
  let dateSecond = -1;
  let dateText = '';
  const date = () => {
    const now = Date.now();
    const second = Math.floor(now / 1000);
    if (second !== dateSecond) {
      dateSecond = second;
      dateText = new Date(second * 1000).toUTCString();
    }
    return dateText;
  };

  /** The guard's verdict on a head (the same for every request that repeats the head byte for byte). */
  const admissionOf = (head: Head): { token: string | undefined; json: boolean } => {
    if (head.admission !== undefined) return head.admission;
    const h = head.headers;
    const admission = admit(options.hosts, h.get('host'), h.get('origin'), h.get('authorization'));
    head.admission = { token: admission.problem === undefined ? admission.token : undefined, json: isJsonContentType(h.get('content-type')) };
    return head.admission;
  };

  /** Replicas: a step's reply, or undefined when node:http must answer (resolving may take the episode over first). */
  const decideReplicated = async (head: Head, body: string, progress: { applying: boolean }): Promise<Reply | undefined> => {
    const { token, json } = admissionOf(head);
    if (token === undefined || !json) return undefined;
    let ep: ServerEpisode | undefined;
    try {
      ep = await options.episodes.resolve(head.id!, token);
    } catch {
      return undefined;
    }
    if (ep === undefined) return undefined;
    progress.applying = true;
    try {
      return await options.episodes.step(ep, body, head.headers.get('idempotency-key'), head.path);
    } catch (error) {
      return problemReply(problemOf(error, head.path));
    }
  };

  /** The batched route's reply, or undefined when node:http must answer (a guard refuses). */
  const decideBatch = async (head: Head, raw: string, progress: { applying: boolean }): Promise<Reply | undefined> => {
    const { token, json } = admissionOf(head);
    if (token === undefined || !json || !tokenMatches(token, options.adminTokenHash)) return undefined;
    progress.applying = true;
    try {
      return await options.episodes.stepMany(parseJsonBody(raw), raw);
    } catch (error) {
      return problemReply(problemOf(error, head.path));
    }
  };

  // node:http's 'request' for a lent request: the front resumes once its response is written.
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    if (socket instanceof LentSocket) socket.responding(res);
  });

  server.prependListener('connection', (socket: Socket) => {
    /** Bytes read and not answered yet, joined into one buffer only when a head or a whole body is there. */
    let buffer: Buffer | undefined;
    let pieces: Buffer[] = [];
    let size = 0;
    let head: Head | undefined;
    /** The head arrived before its body: the body deadline runs. */
    let waitingBody = false;
    /** A request is being answered (by the front or by node:http); bytes that arrive meanwhile wait in `buffer` (pipelining). */
    let busy = false;
    /** The peer does not read its answers: the next request waits for 'drain'. */
    let waitingDrain = false;
    /** Reading stopped while `buffer` holds PAUSE_AT bytes that cannot be answered yet. */
    let paused = false;
    let served = 0;
    let peerEnded = false;
    /** The connection is node:http's for good, or closing. */
    let gone = false;
    /** The in-memory connection through which node:http answers the requests the front lends it, one at a time. */
    let lent: LentSocket | undefined;
    /** The last hot head read here (with a copy of its bytes): a request whose head repeats them byte for byte reuses it. */
    let lastHead: Head | undefined;
    /** The current request's head length and Idempotency-Key (a reused head's are its own: the key may differ). */
    let bodyStart = 0;
    let key: string | undefined;
    /** The registry is in `stepThen`: an answer given before it returns is taken up by `advance`'s loop, not by a nested one. */
    let inStep = false;
    let early: Reply | undefined;
    const onReply = (reply: Reply): void => {
      if (inStep) early = reply;
      // Its bytes were taken off the buffer when the registry got it.
      else guarded(() => answered(0, reply), false);
    };

    const onData = (chunk: Buffer) => {
      // Closing after a last answer: what else arrives is never read (node:http discards it too).
      if (gone) return;
      if (size === 0) buffer = chunk;
      else pieces.push(chunk);
      size += chunk.length;
      if (!busy && !waitingDrain) guarded(advance);
      else if (!paused && size >= PAUSE_AT) {
        paused = true;
        socket.pause();
      }
    };
    /**
     * A bug in the front must not take the process down. Before a request is applied its connection can go to
     * node:http; once one was applied or lent (an answer is due), the connection is closed instead, never applied twice.
     */
    const guarded = (run: () => void, mayHandOff = true) => {
      try {
        run();
      } catch {
        try {
          if (mayHandOff && !gone && !busy) handOff();
          else socket.destroy();
        } catch {
          socket.destroy();
        }
      }
    };
    const joined = (): Buffer | undefined => {
      if (pieces.length > 0) {
        buffer = Buffer.concat([buffer!, ...pieces], size);
        pieces = [];
      }
      return buffer;
    };
    /** Takes the first `used` buffered bytes (one whole request) off the buffer; returns them when `keep` (a view, made only then). */
    const consume = (used: number, keep: boolean): Buffer | undefined => {
      if (used === 0) return undefined;
      const all = joined()!;
      buffer = all.length === used ? undefined : all.subarray(used);
      size = all.length - used;
      head = undefined;
      return keep ? all.subarray(0, used) : undefined;
    };
    const onEnd = () => {
      peerEnded = true;
      if (busy || waitingDrain) return;
      if (size === 0) finish();
      else handOff();
    };
    const onTimeout = () => {
      // node:http's keep-alive timeout: only between requests, after one was answered; a closing connection's peer
      // that does not close its side within it is not waited for.
      if (gone || (!busy && !waitingDrain && served > 0 && size === 0)) socket.destroy();
    };
    const onError = () => socket.destroy();
    /** A read into the shared buffer: handled, and what is kept of it copied before the next read writes over it. */
    const onRead = (bytes: number): void => {
      onData(readBuffer.subarray(0, bytes));
      if (size > 0) own();
    };
    const own = (): void => {
      if (inReadBuffer(buffer)) buffer = Buffer.from(buffer!);
      for (let i = 0; i < pieces.length; i++) if (inReadBuffer(pieces[i])) pieces[i] = Buffer.from(pieces[i]!);
    };
    /** Set when the socket reads into the shared buffer: goes back to 'data' events (the connection is node:http's). */
    const toEvents = readInto(socket, readBuffer, onRead);
    if (toEvents === undefined) {
      frontReads.events++;
      socket.on('data', onData);
    } else frontReads.shared++;
    socket.on('end', onEnd);
    socket.on('error', onError);
    socket.on('timeout', onTimeout);
    socket.once('close', () => release());
    socket.setTimeout(options.keepAliveTimeoutMs);

    const closed = () => gone || socket.destroyed || socket.writableEnded;
    const finish = () => {
      if (!socket.writableEnded) socket.end();
    };
    /** Ends the in-memory connection without touching the real socket (node:http frees its parser). */
    const release = () => {
      if (lent === undefined) return;
      const l = lent;
      lent = undefined;
      stats.lending--;
      l.detach();
    };

    /** Parses and answers what is buffered, one request at a time. */
    const advance = (): void => {
      while (!busy) {
        if (closed()) return;
        if (socket.writableNeedDrain) return waitDrain();
        if (paused) {
          paused = false;
          socket.resume();
        }
        if (size === 0) {
          if (peerEnded) finish();
          return;
        }
        // A body still arriving: wait for all of it before joining the pieces.
        if (head !== undefined && size < bodyStart + head.length) return peerEnded ? handOff() : undefined;
        const buf = joined()!;
        if (head === undefined) {
          let kept: Head | undefined;
          if (lastHead !== undefined && (bodyStart = headLength(buf, lastHead)) > 0) {
            // The same head as the last request (a client stepping one episode): parsed already.
            head = lastHead;
            key = keyOf(buf, head, bodyStart);
          } else if ((kept = keptHead(buf)) !== undefined && (bodyStart = headLength(buf, kept)) > 0) {
            head = lastHead = kept;
            key = keyOf(buf, head, bodyStart);
          } else {
            const end = buf.indexOf(HEAD_END);
            if (end < 0) {
              if (buf.length > MAX_FRONT_HEAD || peerEnded) return handOff();
              const line = buf.indexOf('\r\n');
              if (line >= 0 && !REQUEST_LINE.test(buf.toString('latin1', 0, line))) return handOff();
              return;
            }
            const parsed = parseHead(buf.toString('latin1', 0, end), end + 4, options.bodyLimit);
            if (parsed === undefined) return handOff();
            head = parsed;
            bodyStart = parsed.bodyStart;
            key = parsed.headers.get('idempotency-key');
            // A head with an Idempotency-Key is reused with another key only on the route that reads it from here.
            if (key !== undefined && (parsed.id === undefined || registry.replicated)) parsed.keyAt = undefined;
            if (parsed.hot && (key === undefined || parsed.keyAt !== undefined)) {
              // Its own memory, not a slice of Node's shared 8 KiB pool (a kept head would hold all of it).
              parsed.bytes = Buffer.allocUnsafeSlow(end + 4);
              buf.copy(parsed.bytes, 0, 0, end + 4);
              lastHead = parsed;
            }
          }
          waitingBody = buf.length < bodyStart + head.length;
          options.deadlines.headArrived(socket, !waitingBody);
        }
        const need = bodyStart + head.length;
        if (buf.length < need) return peerEnded ? handOff() : undefined;
        if (waitingBody) options.deadlines.bodyArrived(socket);
        waitingBody = false;
        busy = true;
        const current = head;
        if (!current.hot) return lend(need);
        const body = buf.subarray(bodyStart, need);
        if (current.id !== undefined && !registry.replicated) {
          const { token, json } = admissionOf(current);
          if (token === undefined || !json) return lend(need);
          let ep = current.ep;
          if (ep === undefined || !registry.holds(ep)) {
            ep = registry.authorize(current.id, token);
            current.ep = ep;
            // Kept only once authorised (and gone once not): what is kept says which episode its token opens.
            if (ep === undefined) hotHeads.drop(current.target, current);
            else if (current.bytes !== undefined) hotHeads.keep(current.target, current, ep);
          }
          // Unknown id or foreign token: node:http answers the one 404.
          if (ep === undefined) return lend(need);
          // Once the registry has the request, it is answered or the connection closed: never lent on (applied twice).
          // Its bytes are taken off the buffer now (the registry has its text): none are kept past this read.
          const text = DECODER.decode(body);
          consume(need, false);
          inStep = true;
          try {
            registry.stepThen(ep, text, key, current.path, onReply);
          } finally {
            inStep = false;
          }
          if (early === undefined) return;
          const reply = early;
          early = undefined;
          // As an answer given later would be: a failure to write it closes the connection (never a handoff).
          let more = false;
          guarded(() => {
            more = deliver(0, reply);
          }, false);
          if (!more) return;
          continue;
        }
        const progress = { applying: false };
        const text = DECODER.decode(body);
        void (current.id === undefined ? decideBatch(current, text, progress) : decideReplicated(current, text, progress)).then(
          (reply) => guarded(() => answered(need, reply), reply === undefined),
          () => (progress.applying ? socket.destroy() : guarded(() => answered(need, undefined))),
        );
      }
    };

    const waitDrain = (): void => {
      if (waitingDrain) return;
      waitingDrain = true;
      socket.once('drain', () => {
        waitingDrain = false;
        guarded(advance);
      });
    };

    const answered = (used: number, reply: Reply | undefined): void => {
      if (reply === undefined) return lend(used);
      if (deliver(used, reply)) advance();
    };

    /** Writes the reply to the request in the first `used` buffered bytes (0: taken off already); false when nothing more is to be read. */
    const deliver = (used: number, reply: Reply): boolean => {
      consume(used, false);
      busy = false;
      if (closed()) return false;
      served++;
      stats.answered++;
      const close = write(reply);
      if (close) {
        gone = true;
        socket.end();
        return false;
      }
      options.deadlines.answered(socket);
      return true;
    };

    /** Lends node:http the request in the first `used` buffered bytes; the front resumes when its response is written. */
    const lend = (used: number): void => {
      const request = consume(used, true)!;
      if (closed()) return;
      if (lent === undefined) {
        lent = new LentSocket(socket, lentAnswered);
        // node:http ended the connection (an error answer without a response object, a socket end): nothing more is read.
        lent.once('finish', () => {
          gone = true;
        });
        stats.lending++;
        nodeConnection.call(server, lent as unknown as Socket);
      }
      stats.lent++;
      // node:http may parse it after this read: its own copy.
      lent.lend(inReadBuffer(request) ? Buffer.from(request) : request);
    };

    /** node:http wrote its whole response to a lent request (into the real socket's queue, so in order). */
    const lentAnswered = (): void =>
      guarded(() => {
        if (!busy) return;
        // node:http ends the connection after this response (`Connection: close` in it, an error): it closes the real socket.
        if (lent === undefined || lent.writableEnded || lent.destroyed) {
          gone = true;
          return;
        }
        busy = false;
        if (closed()) return;
        served++;
        options.deadlines.answered(socket);
        advance();
      }, false);

    /** Writes a reply as node:http's `send` would (same status line and headers); true when the connection closes after it. */
    const write = (reply: Reply): boolean => {
      const { prefix, ownConnection, close, ascii } = skeletonOf(reply);
      const body = reply.body;
      const tail = ownConnection ? '\r\n\r\n' : keepAliveTail;
      const day = date();
      if (!ascii) {
        socket.write(`${prefix}${Buffer.byteLength(body)}\r\nDate: ${day}${tail}${body}`);
        return close;
      }
      // One buffer, one write: the body is encoded once, at a place that leaves room before it for the head
      // (whose Content-Length is the body's byte count), then the head is written just before it.
      const headRoom = prefix.length + 10 + 8 + day.length + tail.length;
      const bound = headRoom + body.length * 3;
      if (slab.length - slabAt < bound) {
        slab = Buffer.allocUnsafeSlow(Math.max(SLAB_BYTES, bound));
        slabAt = 0;
      }
      const bodyAt = slabAt + headRoom;
      const length = slab.write(body, bodyAt, 'utf8');
      const head = `${prefix}${length}\r\nDate: ${day}${tail}`;
      const start = bodyAt - head.length;
      slab.write(head, start, 'latin1');
      slabAt = bodyAt + length;
      socket.write(slab.subarray(start, slabAt));
      return close;
    };

    /** Leaves the connection to node:http for good, with the bytes the front read and not answered. */
    const handOff = (): void => {
      if (gone) return;
      gone = true;
      socket.removeListener('data', onData);
      socket.removeListener('end', onEnd);
      socket.removeListener('error', onError);
      socket.removeListener('timeout', onTimeout);
      socket.setTimeout(0);
      release();
      if (socket.destroyed) return;
      stats.handedOver++;
      // node:http's parser reads the socket's handle itself; reads that come back to JavaScript (after an
      // upgrade) become 'data' events again, with bytes of their own.
      toEvents?.();
      nodeConnection.call(server, socket);
      // Reading stopped by the front: node:http's parser (now reading the socket's handle) starts it again.
      if (paused) socket.resume();
      // node:http's listener now reads the socket (from its handle); the bytes already read come first (an
      // upgrade's listener may keep them: copied out of the shared buffer).
      const joinedRest = size > 0 ? joined() : undefined;
      const rest = inReadBuffer(joinedRest) ? Buffer.from(joinedRest!) : joinedRest;
      buffer = undefined;
      size = 0;
      if (rest !== undefined) socket.emit('data', rest);
      if (peerEnded) socket.emit('end');
    };
  });
}

const TARGET_HASH_START = 0x811c9dc5;
const TARGET_HASH_PRIME = 0x01000193;

/** The hash of a request target (FNV-1a of its bytes: `keptHead` hashes the same from a request's bytes). */
function targetKey(target: string): number {
  let hash = TARGET_HASH_START;
  for (let i = 0; i < target.length; i++) hash = Math.imul(hash ^ target.charCodeAt(i), TARGET_HASH_PRIME);
  return hash >>> 0;
}

/** net.Socket's own keys of its `onread` mode (node's `kBuffer`, `kBufferCb`), read off the first socket; null on a Node without them. */
let onreadKeys: { buffer: symbol; callback: symbol } | null | undefined;

/** @internal How the front's connections have read: into the shared buffer, or through 'data' events (`forced`: by `readThroughDataEvents`). */
export const frontReads = { shared: 0, events: 0, forced: false };

/**
 * @internal Tests: every connection reads through 'data' events from now on, as on a Node without net's `onread`
 * internals (the fallback `readInto` takes there).
 */
export function readThroughDataEvents(): void {
  onreadKeys = null;
  frontReads.forced = true;
}

/**
 * Makes `socket` read into `buffer` and call `onRead(bytes)` for each read: net.Socket's `onread` option (which
 * sockets a server accepts cannot be given), set as its constructor sets it. Node then makes no buffer and emits
 * no 'data' event per read (about 1.2 µs of CPU a request, measured: a wrk loop against a bare net server,
 * 'data' events 8.0 against 6.8 µs, medians of 10 rounds). Returns the switch back to 'data' events (each read's
 * bytes copied, as a read of its own), or undefined when this Node offers neither (nothing changed: the caller
 * listens for 'data').
 */
function readInto(socket: Socket, buffer: Buffer, onRead: (bytes: number) => void): (() => void) | undefined {
  if (onreadKeys === undefined) {
    const symbols = Object.getOwnPropertySymbols(socket);
    const bufferKey = symbols.find((s) => s.description === 'kBuffer');
    const callbackKey = symbols.find((s) => s.description === 'kBufferCb');
    onreadKeys = bufferKey !== undefined && callbackKey !== undefined ? { buffer: bufferKey, callback: callbackKey } : null;
  }
  const keys = onreadKeys;
  const fields = socket as unknown as Record<symbol, unknown>;
  const handle = (socket as unknown as { _handle?: { useUserBuffer?: (buffer: Uint8Array) => void } })._handle;
  if (keys === null || typeof handle?.useUserBuffer !== 'function' || fields[keys.buffer] !== null || fields[keys.callback] !== null) return undefined;
  fields[keys.buffer] = buffer;
  fields[keys.callback] = onRead;
  handle.useUserBuffer(buffer);
  socket.resume();
  return () => {
    fields[keys.callback] = (bytes: number) => socket.push(Buffer.from(buffer.subarray(0, bytes)));
  };
}

/** A reply's status line and headers up to `content-length: ` (its value follows), and whether the connection closes after it. */
interface Skeleton {
  prefix: string;
  /** The reply names its own Connection header: none of the front's keep-alive headers follow. */
  ownConnection: boolean;
  close: boolean;
  /** The prefix is ASCII (its UTF-8 bytes are its characters), as every header the server sends is. */
  ascii: boolean;
}

/** Skeletons of replies whose headers are a shared frozen object (a step's answer), by status. */
const skeletons = new WeakMap<object, Map<number, Skeleton>>();
/** The last skeleton used, and for which headers object and status (nearly every reply is a step's 200). */
let lastHeaders: object | undefined;
let lastStatus = 0;
let lastSkeleton: Skeleton | undefined;

/** The skeleton of a reply, computed once per status for shared frozen headers. */
function skeletonOf(reply: Reply): Skeleton {
  const headers = reply.headers;
  if (headers !== undefined && headers === lastHeaders && reply.status === lastStatus) return lastSkeleton!;
  if (headers === undefined || !Object.isFrozen(headers)) return buildSkeleton(reply.status, headers);
  let byStatus = skeletons.get(headers);
  if (byStatus === undefined) skeletons.set(headers, (byStatus = new Map()));
  let skeleton = byStatus.get(reply.status);
  if (skeleton === undefined) byStatus.set(reply.status, (skeleton = buildSkeleton(reply.status, headers)));
  lastHeaders = headers;
  lastStatus = reply.status;
  lastSkeleton = skeleton;
  return skeleton;
}

function buildSkeleton(status: number, headers: Record<string, string> | undefined): Skeleton {
  let prefix = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'unknown'}\r\n`;
  let connection: string | undefined;
  if (headers !== undefined) {
    for (const name in headers) {
      prefix += `${name}: ${headers[name]}\r\n`;
      if (name.toLowerCase() === 'connection') connection = headers[name];
    }
  }
  return { prefix: `${prefix}content-length: `, ownConnection: connection !== undefined, close: connection !== undefined && /close/i.test(connection), ascii: /^[\x00-\x7f]*$/.test(prefix) };
}

/** The head of a request the front answers or lends node:http, or undefined for one node:http must have the connection for. */
function parseHead(text: string, bodyStart: number, bodyLimit: number): Head | undefined {
  const lines = text.split('\r\n');
  const m = REQUEST_LINE.exec(lines[0]!);
  if (m === null) return undefined;
  const method = m[1]!;
  const url = m[2]!;
  // A tunnel (CONNECT) or the HTTP/2 preface (PRI): node:http takes the connection.
  if (method === 'CONNECT' || method === 'PRI') return undefined;
  const step = method === 'POST' ? STEP.exec(url) : null;
  const hotRoute = step !== null || (method === 'POST' && BATCH.test(url));
  const headers = new Map<string, string>();
  let keyAt: { start: number; end: number } | undefined;
  let lineEnd = lines[0]!.length;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    lineEnd += 2 + line.length;
    if (line.includes('\n') || line.includes('\r')) return undefined;
    const h = HEADER_LINE.exec(line);
    if (h === null) return undefined;
    const name = h[1]!.toLowerCase();
    if (UNUSUAL.has(name)) return undefined;
    if (!READ.has(name)) continue;
    if (headers.has(name)) return undefined;
    const value = h[2]!;
    headers.set(name, value);
    // A key of visible ASCII that ends its line: another request may differ from this head only there.
    if (name === 'idempotency-key' && KEY_VALUE.test(value) && line.endsWith(value)) keyAt = { start: lineEnd - value.length, end: lineEnd };
  }
  const connection = headers.get('connection');
  if (connection !== undefined && connection.toLowerCase() !== 'keep-alive') return undefined;
  const length = headers.get('content-length');
  if (length !== undefined && !/^\d{1,10}$/.test(length)) return undefined;
  // Without Content-Length (and Transfer-Encoding) a request has no body; a hot request needs one to be the front's.
  const n = length === undefined ? 0 : Number(length);
  if (n > bodyLimit) return undefined;
  const head: Head = { target: targetKey(url), hot: hotRoute && length !== undefined, path: url.split('?')[0]!, id: step === null ? undefined : decodeSegment(step[1]!), headers, bodyStart, length: n };
  if (keyAt !== undefined) head.keyAt = keyAt;
  return head;
}

/**
 * The length of the head at the start of `buf` when it repeats `head`'s bytes (`head.bytes`): byte for byte, or
 * but for its Idempotency-Key's value (`head.keyAt`), which may be any other run of visible ASCII; else 0.
 */
function headLength(buf: Buffer, head: Head): number {
  const bytes = head.bytes;
  if (bytes === undefined) return 0;
  const at = head.keyAt;
  if (at === undefined) return buf.length >= bytes.length && buf.compare(bytes, 0, bytes.length, 0, bytes.length) === 0 ? bytes.length : 0;
  if (buf.length <= at.start || buf.compare(bytes, 0, at.start, 0, at.start) !== 0) return 0;
  let end = at.start;
  while (end < buf.length && end < MAX_FRONT_HEAD && buf[end]! >= 0x21 && buf[end]! <= 0x7e) end++;
  const rest = bytes.length - at.end;
  if (end === at.start || buf.length < end + rest || buf.compare(bytes, at.end, bytes.length, end, end + rest) !== 0) return 0;
  return end + rest;
}

/** The Idempotency-Key of a request whose head (`length` bytes at the start of `buf`) repeats `head`'s. */
function keyOf(buf: Buffer, head: Head, length: number): string | undefined {
  const at = head.keyAt;
  if (at === undefined) return head.headers.get('idempotency-key');
  return buf.toString('latin1', at.start, length - (head.bytes!.length - at.end));
}
