/** Tokens, constant-time comparison, loopback detection and the Host/Origin allowlist (DNS-rebinding guard). */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import { EnvHarnessError } from '../index.js';

/** RFC 6750 token68 characters: what a bearer token may consist of. */
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/;
const MAX_TOKEN_LENGTH = 512;
/** Shortest token accepted from the operator (a generated one has 43 characters of base64url). */
export const MIN_TOKEN_LENGTH = 16;

/** A new random token: 256 bits, base64url, with a prefix that says what it is for. */
export function generateToken(prefix: 'ehs' | 'ehe'): string {
  return `${prefix}_${randomBytes(32).toString('base64url')}`;
}

/** A random identifier (128 bits, hex): unguessable, but not a credential by itself. */
export function generateId(prefix: string): string {
  return `${prefix}_${randomBytes(16).toString('hex')}`;
}

/**
 * An identifier whose text sorts by creation time, for what the store keeps under a unique index (server
 * episodes): the time in ms as 12 hex digits, then 80 random bits (as long as `generateId`'s). An id that grows
 * lands at the right edge of the index, where a random one dirties a leaf page of its own once the index
 * outgrows a commit's rows: raw better-sqlite3, an episodes row with the store's indexes, the table growing to 153,600 rows, 13.7-14.9
 * µs with random ids against 5.4-5.5 with these (docs/design/018-write-path.md). Not a credential either; it
 * tells when the episode started.
 */
export function generateOrderedId(prefix: string, nowMs: number): string {
  const ms = Number.isFinite(nowMs) && nowMs > 0 ? Math.floor(nowMs) % 2 ** 48 : 0;
  return `${prefix}_${ms.toString(16).padStart(12, '0')}${randomBytes(10).toString('hex')}`;
}

export function hashToken(token: string): Buffer {
  // One-shot crypto.hash: half the cost of a createHash object, on every request.
  return hash('sha256', token, 'buffer');
}

/**
 * Compares a candidate with a stored token hash in constant time. Hashing first gives equal lengths, so
 * `timingSafeEqual` never throws on a token of the wrong length.
 */
export function tokenMatches(candidate: string, expectedHash: Buffer): boolean {
  return timingSafeEqual(hashToken(candidate), expectedHash);
}

/** Checks an operator-supplied token; throws CONFIG_INVALID with what is wrong. */
export function checkTokenShape(token: string, pointer = '/token'): void {
  if (token.length < MIN_TOKEN_LENGTH || token.length > MAX_TOKEN_LENGTH || !TOKEN68.test(token)) {
    throw new EnvHarnessError(
      'CONFIG_INVALID',
      `the server token must be ${MIN_TOKEN_LENGTH}..${MAX_TOKEN_LENGTH} characters of A-Z a-z 0-9 - . _ ~ + / (RFC 6750); leave it out to have one generated`,
      { details: { pointer } },
    );
  }
}

/** The bearer token of an Authorization header, or undefined when it is missing or malformed. */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined || header.length > MAX_TOKEN_LENGTH + 16) return undefined;
  const space = header.indexOf(' ');
  if (space < 0 || header.slice(0, space).toLowerCase() !== 'bearer') return undefined;
  const token = header.slice(space + 1).trim();
  return token.length > 0 && TOKEN68.test(token) ? token : undefined;
}

/** Whether a bind address is a loopback address (or `localhost`). */
export function isLoopback(host: string): boolean {
  const h = unbracket(host).toLowerCase();
  if (h === 'localhost') return true;
  const kind = isIP(h);
  if (kind === 4) return h.startsWith('127.');
  if (kind === 6) return h === '::1' || h === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(h);
  return false;
}

function unbracket(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** The host name of a Host header value (`name`, `name:port`, `[v6]:port`), lower-cased, without brackets. */
export function hostName(value: string): string | undefined {
  const v = value.trim().toLowerCase();
  if (v.length === 0 || v.length > 255) return undefined;
  if (v.startsWith('[')) {
    const end = v.indexOf(']');
    if (end < 0) return undefined;
    const rest = v.slice(end + 1);
    if (rest !== '' && !/^:\d{1,5}$/.test(rest)) return undefined;
    return v.slice(1, end);
  }
  const colon = v.indexOf(':');
  if (colon < 0) return v;
  if (!/^\d{1,5}$/.test(v.slice(colon + 1))) return undefined;
  return v.slice(0, colon);
}

/**
 * The Host/Origin allowlist: loopback names always, the bind address when it is not a wildcard, and any
 * names the operator adds. Ports are not compared: a rebinding page cannot make the browser send a
 * loopback name as Host, whatever the port.
 */
export class HostPolicy {
  private readonly names: Set<string>;

  constructor(bindHost: string, extra: readonly string[] = []) {
    this.names = new Set(['localhost', '127.0.0.1', '::1']);
    const bind = unbracket(bindHost).toLowerCase();
    if (bind !== '0.0.0.0' && bind !== '::' && bind !== '') this.names.add(bind);
    for (const name of extra) this.names.add(unbracket(name).toLowerCase());
  }

  /** Whether the Host header names this server. */
  allowsHost(value: string | undefined): boolean {
    if (value === undefined) return false;
    const name = hostName(value);
    return name !== undefined && this.names.has(name);
  }

  /** Whether an Origin header (when a browser sent one) is one of ours. `null` and foreign origins are not. */
  allowsOrigin(value: string): boolean {
    const match = /^https?:\/\/([^/?#]+)$/i.exec(value.trim());
    if (match === null) return false;
    return this.allowsHost(match[1]!);
  }
}

/** The result of the request guard: the bearer token, or the problem to answer with. */
export type Admission = { token: string; problem?: undefined } | { token?: undefined; problem: { code: 'FORBIDDEN' | 'UNAUTHORIZED'; detail: string } };

/**
 * The guard every request passes, in order: Host, then Origin (DNS rebinding; 403), then a well-formed
 * bearer token (401). Which token a route accepts is the route's business.
 */
export function admit(hosts: HostPolicy, host: string | undefined, origin: string | undefined, authorization: string | undefined): Admission {
  if (!hosts.allowsHost(host)) {
    return { problem: { code: 'FORBIDDEN', detail: `Host "${(host ?? '').slice(0, 100)}" is not this server; call it through a loopback address` } };
  }
  if (origin !== undefined && !hosts.allowsOrigin(origin)) {
    return { problem: { code: 'FORBIDDEN', detail: `Origin "${origin.slice(0, 100)}" is not allowed` } };
  }
  const token = bearerToken(authorization);
  if (token === undefined) {
    return { problem: { code: 'UNAUTHORIZED', detail: 'send Authorization: Bearer <token> (the server token, or an episode token on episode routes)' } };
  }
  return { token };
}

/** Whether a Content-Type (when present) is JSON. */
export function isJsonContentType(type: string | undefined): boolean {
  return type === undefined || /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i.test(type);
}
