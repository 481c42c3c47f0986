/** Call keys and action patterns: how the runtime decides that two calls are "the same call". */
import { canonicalize } from '../core/index.js';
import type { Action, ActionPattern, JsonObject } from '../core/index.js';

/**
 * Identity of a tool call: tool name plus the canonical JSON (RFC 8785) of its parsed arguments. Arguments
 * with no canonical form (a lone surrogate from a JSON body) still get an identity: their JSON.stringify text.
 */
export function callKey(tool: string, args: unknown): string {
  let text: string;
  try {
    text = canonicalize(args);
  } catch {
    text = '\u0000' + JSON.stringify(args);
  }
  return tool + '\u0000' + text;
}

/** RFC 8785 canonical JSON of a value: core's `canonicalize` (throws on values with no canonical form). */
export function canonicalJson(value: unknown): string {
  return canonicalize(value);
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
