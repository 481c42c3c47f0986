/**
 * The hot routes on plain node:http: `POST /v1/episodes/{id}/step` and `POST /v1/steps`. Same guard
 * (`admit`), same registry and same replies as the hono routes, without building Request/Response
 * objects; every other request goes to the hono app. Most hot requests never get here: the front
 * (http-front.ts) answers them on the socket; it hands node:http the ones it leaves alone (a refused guard, a
 * chunked or oversized body, an unusual head), and this handler answers those as it always did.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { admit, isJsonContentType, tokenMatches, type HostPolicy } from './auth.js';
import { parseJsonBody } from './body.js';
import { problem, problemOf, problemReply, unsupportedMediaType, type Reply } from './errors.js';
import { decodeSegment, readBody, refuse, send } from './raw-http.js';
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
    void handle(req, res, step === null ? undefined : decodeSegment(step[1]!), path).catch((error: unknown) => send(res, problemReply(problemOf(error, path))));
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
      const raw = await readBody(req, res, bodyLimit, path);
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
    const raw = await readBody(req, res, bodyLimit, path);
    if (raw === undefined) return;
    const key = h['idempotency-key'];
    send(res, await episodes.step(ep, raw, typeof key === 'string' ? key : undefined, path));
  }
}
