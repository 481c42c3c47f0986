/** Call keys and action patterns: how the runtime decides that two calls are "the same call". */
import { canonicalize } from '../core/index.js';
import type { Action, ActionPattern, JsonObject } from '../core/index.js';

/**
 * Identity of a tool call: tool name plus the canonical JSON (RFC 8785) of its parsed arguments. Arguments
 * with no canonical form (a lone surrogate from a JSON body) still get an identity: their JSON.stringify text.
 */
export function callKey(tool: string, args: unknown): string {
  return callKeyOf(tool, callText(args));
}

/** The call key of a tool and the `callText` of its arguments. */
export function callKeyOf(tool: string, text: string): string {
  return tool + '\u0000' + text;
}

/** What a call key has after its tool name and the NUL: `callKey(tool, args) === tool + '\u0000' + callText(args)`. */
export function callText(args: unknown): string {
  try {
    return canonicalize(args);
  } catch {
    return '\u0000' + JSON.stringify(args);
  }
}

/**
 * A set of call keys asked by tool name and `callText`: `has(tool, text)` is `keys.has(tool + '\u0000' + text)`.
 * Each tool's texts are listed on first use, so a call is compared with its tool's few texts (those of other
 * lengths at a glance) instead of hashing its new key, a rope that V8 makes flat to hash it (about 100 ns for a
 * web call). Exact for any tool name, NULs included: a key is `tool + '\u0000' + text` iff it starts with that
 * prefix and the rest is `text`.
 */
export class CallKeyIndex {
  private readonly byTool = new Map<string, readonly string[]>();

  constructor(private readonly keys: ReadonlySet<string>) {}

  has(tool: string, text: string): boolean {
    let texts = this.byTool.get(tool);
    if (texts === undefined) {
      const prefix = callKeyOf(tool, '');
      const found: string[] = [];
      for (const key of this.keys) if (key.startsWith(prefix)) found.push(key.slice(prefix.length));
      texts = found;
      this.byTool.set(tool, texts);
    }
    for (let i = 0; i < texts.length; i++) if (texts[i] === text) return true;
    return false;
  }
}

/** One index per key set (a prepared task's read-only `solutionKeys`), shared by the task's episodes. */
const keyIndexes = new WeakMap<ReadonlySet<string>, CallKeyIndex>();

/** The `CallKeyIndex` of a read-only set of call keys. */
export function callKeyIndexOf(keys: ReadonlySet<string>): CallKeyIndex {
  let index = keyIndexes.get(keys);
  if (index === undefined) {
    index = new CallKeyIndex(keys);
    keyIndexes.set(keys, index);
  }
  return index;
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
