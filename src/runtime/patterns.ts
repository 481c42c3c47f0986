/** Call keys and action patterns: how the runtime decides that two calls are "the same call". */
import { canonicalize } from '../core/index.js';
import type { Action, ActionPattern, JsonObject } from '../core/index.js';

/** Identity of a tool call: tool name plus the canonical JSON (RFC 8785) of its parsed arguments. */
export function callKey(tool: string, args: unknown): string {
  return tool + '\u0000' + canonicalJson(args);
}

/**
 * RFC 8785 canonical JSON of a value already known to be plain JSON (validated arguments): the same
 * text as core's `canonicalize`, without its per-key error bookkeeping (this runs on every tool call).
 * Anything unexpected is handed to `canonicalize`, which throws the usual error.
 */
export function canonicalJson(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return quote(value);
    case 'number':
      if (!Number.isFinite(value)) break;
      return value === 0 ? '0' : String(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (Array.isArray(value)) {
        let out = '[';
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out += ',';
          const item: unknown = value[i];
          out += canonicalJson(item === undefined ? null : item);
        }
        return out + ']';
      }
      if (typeof (value as { toJSON?: unknown }).toJSON === 'function') break;
      const record = value as Record<string, unknown>;
      const keys = Object.keys(record);
      if (keys.length === 0) return '{}';
      // Default sort order is by UTF-16 code units, as RFC 8785 requires.
      if (keys.length > 1) keys.sort();
      let out = '{';
      let first = true;
      for (const key of keys) {
        const item = record[key];
        if (item === undefined) continue;
        if (!first) out += ',';
        first = false;
        out += quote(key) + ':' + canonicalJson(item);
      }
      return out + '}';
    }
  }
  return canonicalize(value);
}

// Strings that need more than a pair of quotes: quote, backslash, control characters, surrogates.
const NEEDS_ESCAPE = /["\\\u0000-\u001f\uD800-\uDFFF]/;

/** JSON.stringify of a string, without its call for the common string that needs no escaping. */
function quote(text: string): string {
  return NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : '"' + text + '"';
}

/** Whether `action` (with parsed args for tool actions) matches a pattern: type, tool, and a subset of argument values. */
export function matchesPattern(pattern: ActionPattern, action: Action): boolean {
  if (pattern.type !== undefined && pattern.type !== action.type) return false;
  if (pattern.tool !== undefined && (action.type !== 'tool' || action.tool !== pattern.tool)) return false;
  if (pattern.args !== undefined) {
    if (action.type !== 'tool') return false;
    return argsContain(action.args, pattern.args);
  }
  return true;
}

function argsContain(args: JsonObject, subset: JsonObject): boolean {
  for (const key of Object.keys(subset)) {
    if (!Object.prototype.hasOwnProperty.call(args, key)) return false;
    const want = subset[key];
    const got = args[key];
    if (want === got) continue;
    if (want === null || typeof want !== 'object' || got === null || typeof got !== 'object') return false;
    if (canonicalJson(want) !== canonicalJson(got)) return false;
  }
  return true;
}
