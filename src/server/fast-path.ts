/**
 * The hot routes on plain node:http: `POST /v1/episodes/{id}/step` and `POST /v1/steps`. Same guard
 * (`admit`), same registry and same replies as the hono routes, without building Request/Response
 * objects; every other request goes to the hono app.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { admit, isJsonContentType, tokenMatches, type HostPolicy } from './auth.js';
import { parseJsonBody } from './body.js';
import { payloadTooLarge, problem, problemOf, problemReply, unsupportedMediaType, type Reply } from './errors.js';
import type { EpisodeRegistry } from './episodes.js';

const STEP = /^\/v1\/episodes\/([^/?#]+)\/step(?:\?.*)?$/;
const BATCH = /^\/v1\/steps(?:\?.*)?$/;

export interface FastPathOptions {
  episodes: EpisodeRegistry;
  hosts: HostPolicy;
  adminTokenHash: Buffer;
  bodyLimit: number;
}

/** Returns a handler that answers the hot routes and returns false for anything else. */
export function createFastPath(options: FastPathOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  const { episodes, hosts, bodyLimit } = options;
  return (req, res) => {
    if (req.method !== 'POST' || req.url === undefined) return false;
    const url = req.url;
    const step = STEP.exec(url);
    const batch = step === null && BATCH.test(url);
    if (step === null && !batch) return false;
    const path = url.split('?')[0]!;
    void handle(req, res, step === null ? undefined : decode(step[1]!), path).catch((error: unknown) => send(res, problemReply(problemOf(error, path))));
    return true;
  };

  async function handle(req: IncomingMessage, res: ServerResponse, id: string | undefined, path: string): Promise<void> {
    const h = req.headers;
    const admission = admit(hosts, h.host, h.origin, h.authorization);
    if (admission.problem !== undefined) return refuse(req, res, problemReply(problem(admission.problem.code, admission.problem.detail, { instance: path })));
    const type = h['content-type'];
    if (!isJsonContentType(type)) return refuse(req, res, problemReply({ ...unsupportedMediaType(type!), instance: path }));
    if (id === undefined) {
      if (!tokenMatches(admission.token, options.adminTokenHash)) {
        return refuse(req, res, problemReply(problem('UNAUTHORIZED', 'this route needs the server token (printed by `envharness serve`), not an episode token', { instance: path })));
      }
      const raw = await readBody(req, res, path);
      if (raw === undefined) return;
      let reply: Reply;
      try {
        reply = await episodes.stepMany(parseJsonBody(raw), raw);
      } catch (error) {
        reply = problemReply(problemOf(error, path));
      }
      return send(res, reply);
    }
    let ep: ReturnType<typeof episodes.authorize>;
    try {
      ep = await episodes.resolve(id, admission.token);
    } catch (error) {
      return refuse(req, res, problemReply(problemOf(error, path)));
    }
    if (ep === undefined) return refuse(req, res, problemReply(episodes.notFound(id, path)));
    const raw = await readBody(req, res, path);
    if (raw === undefined) return;
    const key = h['idempotency-key'];
    send(res, await episodes.step(ep, raw, typeof key === 'string' ? key : undefined, path));
  }

  /** The body as UTF-8 text (a BOM dropped, as WHATWG decoding does), or undefined after answering 413. */
  function readBody(req: IncomingMessage, res: ServerResponse, path: string): Promise<string | undefined> {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > bodyLimit) {
      refuse(req, res, problemReply(payloadTooLarge(bodyLimit, path), { connection: 'close' }));
      return Promise.resolve(undefined);
    }
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let over = false;
      req.on('data', (chunk: Buffer) => {
        if (over) return;
        size += chunk.length;
        if (size > bodyLimit) {
          over = true;
          refuse(req, res, problemReply(payloadTooLarge(bodyLimit, path), { connection: 'close' }));
          resolve(undefined);
          return;
        }
        chunks.push(chunk);
      });
      req.on('end', () => {
        if (over) return;
        resolve(DECODER.decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
      });
      req.on('error', reject);
    });
  }
}

const DECODER = new TextDecoder();

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function send(res: ServerResponse, reply: Reply): void {
  if (res.headersSent) return;
  const headers: Record<string, string | number> = { ...reply.headers, 'content-length': Buffer.byteLength(reply.body) };
  res.writeHead(reply.status, headers);
  res.end(reply.body);
}

/** Answers without reading the body; a connection with an unread body is closed after the answer. */
function refuse(req: IncomingMessage, res: ServerResponse, reply: Reply): void {
  if (!req.complete && reply.headers?.['connection'] === undefined) reply = { ...reply, headers: { ...reply.headers, connection: 'close' } };
  send(res, reply);
  if (!req.complete) req.resume();
}
