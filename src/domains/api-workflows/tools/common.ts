/** Shared pieces of the api-workflows tools: pagination, argument helpers, errors. */
import { z } from 'zod';
import type { JsonObject, JsonValue, ToolOutcome } from '../../../core/index.js';
import type { WorldRecord } from '../world.js';

/** Largest page a list tool returns. */
export const PAGE_SIZE = 5;

export const cursorArg = z.string().max(32).optional().describe('next_cursor of the previous page; omit for the first page');
export const pageSizeArg = z.number().int().min(1).max(PAGE_SIZE).optional().describe(`items per page (1-${PAGE_SIZE}, default ${PAGE_SIZE})`);
export const keyArg = z.string().min(1).max(64).optional().describe('idempotency key: a retried request with the same key is applied at most once');
export const consistentArg = z.boolean().optional().describe('read from the primary instead of a replica (slower, never stale)');
export const id = (prefix: string) => z.string().regex(new RegExp(`^${prefix}_[0-9]{4}$`), `must be an id like ${prefix}_0001`);
export const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'must be an ISO date YYYY-MM-DD');
export const isoTime = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?(Z|[+-]\d{2}:\d{2})$/, 'must be an ISO-8601 date-time with a zone, e.g. 2026-03-03T14:30:00Z');

/** One page of `items` starting at `cursor`. */
export function page(items: readonly WorldRecord[], cursor: string | undefined, size: number | undefined): ToolOutcome {
  let offset = 0;
  if (cursor !== undefined) {
    const m = /^cur_(\d{1,6})$/.exec(cursor);
    if (m === null || Number(m[1]) > items.length) return invalid('cursor', `cursor "${cursor}" is not a cursor this list returned`);
    offset = Number(m[1]);
  }
  const take = size ?? PAGE_SIZE;
  const slice = items.slice(offset, offset + take) as unknown as JsonValue[];
  const next = offset + take < items.length ? `cur_${offset + take}` : null;
  return { ok: true, output: { items: slice, next_cursor: next, total: items.length } };
}

export function notFound(what: string, value: string): ToolOutcome {
  return { ok: false, error: { code: 'NOT_FOUND', message: `no ${what} ${value}` } };
}

export function invalid(field: string, message: string): ToolOutcome {
  return { ok: false, error: { code: 'INVALID_ACTION', message, pointer: `/${field}` } };
}

export function refused(message: string): ToolOutcome {
  return { ok: false, error: { code: 'PRECONDITION_FAILED', message } };
}

export function ok(output: JsonObject | WorldRecord): ToolOutcome {
  return { ok: true, output: output as unknown as JsonValue };
}
