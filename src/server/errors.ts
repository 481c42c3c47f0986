/** The HTTP server's one table from error codes to statuses, and problem+json (RFC 9457) bodies. */
import { EnvHarnessError, toEnvHarnessError, type ErrorCode } from '../index.js';

/**
 * Codes only the HTTP layer produces (routing and media type). Proposed for `core/errors.ts`; until then
 * they live here, in the same table.
 */
export type HttpOnlyCode =
  | 'ROUTE_NOT_FOUND'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'MALFORMED_REQUEST'
  | 'HEADERS_TOO_LARGE'
  | 'REQUEST_TIMEOUT'
  | 'IDEMPOTENCY_FORGOTTEN'
  | 'TOO_MANY_REQUESTS';

/** Every `code` a problem response can carry. */
export type ProblemCode = ErrorCode | HttpOnlyCode;

/** The one table: error code -> HTTP status (docs/errors.md, "HTTP" column). */
export const HTTP_STATUS: Record<ProblemCode, number> = {
  TEMPLATE_NOT_FOUND: 404,
  VERSION_NOT_FOUND: 404,
  DOMAIN_NOT_FOUND: 404,
  PARAMS_INVALID: 422,
  TASK_INVALID: 422,
  TASK_NOT_FOUND: 404,
  BATCH_NOT_FOUND: 404,
  POOL_EMPTY: 409,
  REVIEW_NOT_FOUND: 404,
  SPLIT_FROZEN: 409,
  LOCKFILE_MISMATCH: 409,
  EPISODE_NOT_FOUND: 404,
  EPISODE_FINISHED: 409,
  EPISODE_BUSY: 409,
  RUN_NOT_FOUND: 404,
  RUN_NOT_RESUMABLE: 409,
  SNAPSHOT_NOT_FOUND: 404,
  SNAPSHOT_MISMATCH: 409,
  REPLAY_DIVERGED: 409,
  IMPORT_INVALID: 422,
  CONFIG_INVALID: 422,
  REGISTRATION_CONFLICT: 409,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  IDEMPOTENCY_CONFLICT: 422,
  PAYLOAD_TOO_LARGE: 413,
  UPSTREAM_FAILED: 502,
  STORE_CONFLICT: 409,
  STORE_FAILED: 503,
  INTERNAL: 500,
  ROUTE_NOT_FOUND: 404,
  UNSUPPORTED_MEDIA_TYPE: 415,
  MALFORMED_REQUEST: 400,
  HEADERS_TOO_LARGE: 431,
  REQUEST_TIMEOUT: 408,
  IDEMPOTENCY_FORGOTTEN: 409,
  TOO_MANY_REQUESTS: 429,
};

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Content Too Large',
  429: 'Too Many Requests',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** An RFC 9457 problem document with our error `code` and, when a field is at fault, its JSON `pointer`. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  code: ProblemCode;
  detail: string;
  /** RFC 6901 pointer into the request body (for the batched endpoint: into the item). */
  pointer?: string;
  instance?: string;
  details?: Record<string, unknown>;
}

/** A finished HTTP answer: status, JSON text and headers. Transport-independent, so replays are byte-identical. */
export interface Reply {
  status: number;
  body: string;
  headers?: Record<string, string>;
}

/** The problem document of an error code. */
export function problem(code: ProblemCode, detail: string, extra: { pointer?: string; instance?: string; details?: Record<string, unknown> } = {}): Problem {
  const status = HTTP_STATUS[code];
  const out: Problem = { type: `https://envharness.dev/errors#${code}`, title: TITLES[status] ?? 'Error', status, code, detail };
  if (extra.pointer !== undefined) out.pointer = extra.pointer;
  if (extra.instance !== undefined) out.instance = extra.instance;
  if (extra.details !== undefined && Object.keys(extra.details).length > 0) out.details = extra.details;
  return out;
}

/** The problem document of any throwable: EnvHarnessErrors keep their code and pointer; anything else is INTERNAL. */
export function problemOf(error: unknown, instance?: string): Problem {
  if (error instanceof HttpProblem) return instance === undefined ? error.problem : { ...error.problem, instance };
  const e = toEnvHarnessError(error);
  const { pointer, ...rest } = e.details ?? {};
  const details = safeDetails(rest);
  return problem(e.code, e.message, {
    ...(typeof pointer === 'string' ? { pointer } : {}),
    ...(instance !== undefined ? { instance } : {}),
    ...(details !== undefined ? { details } : {}),
  });
}

/** A problem as a reply. */
export function problemReply(p: Problem, headers?: Record<string, string>): Reply {
  const out: Record<string, string> = { 'content-type': PROBLEM_CONTENT_TYPE, ...headers };
  if (p.status === 401) out['www-authenticate'] = 'Bearer realm="envharness"';
  return { status: p.status, body: JSON.stringify(p), headers: out };
}

/** A JSON reply. */
export function jsonReply(status: number, value: unknown): Reply {
  return { status, body: JSON.stringify(value), headers: { 'content-type': 'application/json' } };
}

/** Shorthand for throwing from handlers: `throw fail('PARAMS_INVALID', '...', '/seed')`. */
export function fail(code: ErrorCode, message: string, pointer?: string, details?: Record<string, unknown>): EnvHarnessError {
  return new EnvHarnessError(code, message, { details: { ...(pointer !== undefined ? { pointer } : {}), ...details } });
}

/** Details are user-facing JSON: keep only what serialises (never a cause or a stack). */
function safeDetails(details: Record<string, unknown>): Record<string, unknown> | undefined {
  if (Object.keys(details).length === 0) return undefined;
  try {
    const text = JSON.stringify(details);
    return text.length > 4096 ? undefined : (JSON.parse(text) as Record<string, unknown>);
  } catch {
    return undefined;
  }
}

/** A problem only the HTTP layer raises (routing, media type, limits); app.onError answers it as it is. */
export class HttpProblem extends Error {
  /** `headers`: sent with the problem (e.g. Retry-After for 429). */
  constructor(readonly problem: Problem, readonly headers?: Record<string, string>) {
    super(problem.detail);
    this.name = 'HttpProblem';
  }
}

export function unsupportedMediaType(type: string): Problem {
  return problem('UNSUPPORTED_MEDIA_TYPE', `send the body as application/json, not ${type.slice(0, 100)}`);
}

export function payloadTooLarge(limit: number, instance?: string): Problem {
  return problem('PAYLOAD_TOO_LARGE', `the request body exceeds ${limit} bytes`, { pointer: '', ...(instance !== undefined ? { instance } : {}) });
}
