/** Replies and bodies on plain node:http, shared by the fast path and the OpenEnv surface (no hono objects). */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { payloadTooLarge, problemReply, type Reply } from './errors.js';

const DECODER = new TextDecoder();

/** Writes a reply with its Content-Length; does nothing once headers are out. */
export function send(res: ServerResponse, reply: Reply): void {
  if (res.headersSent) return;
  const headers: Record<string, string | number> = { ...reply.headers, 'content-length': Buffer.byteLength(reply.body) };
  res.writeHead(reply.status, headers);
  res.end(reply.body);
}

/** Answers without reading the body; a connection with an unread body is closed after the answer. */
export function refuse(req: IncomingMessage, res: ServerResponse, reply: Reply): void {
  if (!req.complete && reply.headers?.['connection'] === undefined) reply = { ...reply, headers: { ...reply.headers, connection: 'close' } };
  send(res, reply);
  if (!req.complete) req.resume();
}

/** The body as UTF-8 text (a BOM dropped, as WHATWG decoding does), or undefined after answering 413. */
export function readBody(req: IncomingMessage, res: ServerResponse, limit: number, instance: string): Promise<string | undefined> {
  if (Number(req.headers['content-length'] ?? 0) > limit) {
    refuse(req, res, problemReply(payloadTooLarge(limit, instance), { connection: 'close' }));
    return Promise.resolve(undefined);
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size > limit) {
        over = true;
        refuse(req, res, problemReply(payloadTooLarge(limit, instance), { connection: 'close' }));
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

/** A path segment, percent-decoded; a malformed escape stays as it is (and then matches nothing). */
export function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
