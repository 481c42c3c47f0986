/** Validation of untrusted actions: the zod schema of `Action` and an allocation-free checker that agrees with it. */
import { z } from 'zod';
import type { Action } from '../core/index.js';
import { MAX_ARGS_DEPTH, MAX_ARGS_NODES } from './defaults.js';
import { formatPointer, type Problem } from '../core/index.js';

const usageSchema = z
  .object({
    inputTokens: z.number().int().nonnegative().optional(),
    outputTokens: z.number().int().nonnegative().optional(),
  })
  .strict();

/**
 * The zod schema of an action, the contract the runtime enforces (also the source of the action's
 * JSON Schema for the HTTP API). `validateAction` implements the same checks without allocating, plus
 * the size limits `MAX_ARGS_DEPTH` / `MAX_ARGS_NODES` and the lone-surrogate check of canonical JSON.
 */
export const actionSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('tool'), tool: z.string().min(1), args: z.record(z.string(), z.json()), usage: usageSchema.optional() }).strict(),
  z.object({ type: z.literal('message'), text: z.string(), usage: usageSchema.optional() }).strict(),
  z.object({ type: z.literal('finish'), answer: z.string().optional(), usage: usageSchema.optional() }).strict(),
]);

/** Why an action was rejected: a JSON pointer into the action (always resolvable in it) and a message. */
/** Why an action is malformed: always INVALID_ACTION, always with a pointer that resolves in the action. */
export interface ActionIssue extends Problem<'INVALID_ACTION'> {
  pointer: string;
}

const ACTION_KEYS: Record<Action['type'], ReadonlySet<string>> = {
  tool: new Set(['type', 'tool', 'args', 'usage']),
  message: new Set(['type', 'text', 'usage']),
  finish: new Set(['type', 'answer', 'usage']),
};

/**
 * A UTF-16 surrogate without its pair: such strings have no canonical JSON form. The action checks ask
 * `!text.isWellFormed()`, the same test (about 3 ns against this RegExp's 9 on short strings).
 */
export const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A plain object: `{}` literal, `JSON.parse` output or `Object.create(null)`; not an array, class instance or proxy target of one. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * Checks an untrusted action. Returns undefined when it is a valid `Action` whose `args` are plain JSON
 * within the size limits, otherwise the first issue found. Never throws for any input.
 */
export function validateAction(input: unknown): ActionIssue | undefined {
  try {
    return check(input);
  } catch {
    // Getters or proxies that throw: the action cannot be read at all.
    return { code: 'INVALID_ACTION', pointer: '', message: 'the action could not be read as plain JSON' };
  }
}

function check(input: unknown): ActionIssue | undefined {
  if (!isPlainObject(input)) {
    return { code: 'INVALID_ACTION', pointer: '', message: `an action must be a JSON object with a "type" ("tool", "message" or "finish"), got ${describe(input)}` };
  }
  const type = input['type'];
  if (type !== 'tool' && type !== 'message' && type !== 'finish') {
    return Object.prototype.hasOwnProperty.call(input, 'type')
      ? { code: 'INVALID_ACTION', pointer: '/type', message: `"type" must be "tool", "message" or "finish", got ${describe(type)}` }
      : { code: 'INVALID_ACTION', pointer: '', message: 'missing "type": expected "tool", "message" or "finish"' };
  }
  const allowed = ACTION_KEYS[type];
  for (const key in input) {
    if (key === 'type' || key === 'usage' || !Object.prototype.hasOwnProperty.call(input, key)) continue;
    if (!allowed.has(key)) {
      return { code: 'INVALID_ACTION', pointer: formatPointer([key]), message: `unknown field "${key}" in a ${type} action; allowed: ${[...allowed].join(', ')}` };
    }
  }
  if (input['usage'] !== undefined) {
    const issue = checkUsage(input['usage']);
    if (issue !== undefined) return issue;
  }
  if (type === 'tool') {
    const tool = input['tool'];
    if (typeof tool !== 'string' || tool.length === 0) {
      return Object.prototype.hasOwnProperty.call(input, 'tool')
        ? { code: 'INVALID_ACTION', pointer: '/tool', message: `"tool" must be a non-empty string naming a tool, got ${describe(tool)}` }
        : { code: 'INVALID_ACTION', pointer: '', message: 'missing "tool": a tool action names the tool to call' };
    }
    const args = input['args'];
    if (args === undefined) {
      return { code: 'INVALID_ACTION', pointer: '', message: 'missing "args": pass the tool arguments as a JSON object ({} when there are none)' };
    }
    if (!isPlainObject(args)) {
      return {
        code: 'INVALID_ACTION',
        pointer: '/args',
        message: `"args" must be a JSON object of arguments, got ${describe(args)}${typeof args === 'string' ? ' (pass the object itself, not its JSON text)' : ''}`,
      };
    }
    return isFlatJson(args) ? undefined : checkJson(args, ['args'], 0, { nodes: 0 });
  }
  if (type === 'message') {
    const text = input['text'];
    if (typeof text !== 'string') {
      return Object.prototype.hasOwnProperty.call(input, 'text')
        ? { code: 'INVALID_ACTION', pointer: '/text', message: `"text" must be a string, got ${describe(text)}` }
        : { code: 'INVALID_ACTION', pointer: '', message: 'missing "text": a message action carries the text said to the user' };
    }
    if (!text.isWellFormed()) return { code: 'INVALID_ACTION', pointer: '/text', message: '"text" contains a lone UTF-16 surrogate' };
    return undefined;
  }
  const answer = input['answer'];
  if (answer !== undefined) {
    if (typeof answer !== 'string') return { code: 'INVALID_ACTION', pointer: '/answer', message: `"answer" must be a string, got ${describe(answer)}` };
    if (!answer.isWellFormed()) return { code: 'INVALID_ACTION', pointer: '/answer', message: '"answer" contains a lone UTF-16 surrogate' };
  }
  return undefined;
}

function checkUsage(usage: unknown): ActionIssue | undefined {
  if (!isPlainObject(usage)) return { code: 'INVALID_ACTION', pointer: '/usage', message: `"usage" must be an object { inputTokens?, outputTokens? }, got ${describe(usage)}` };
  for (const key in usage) {
    if (!Object.prototype.hasOwnProperty.call(usage, key)) continue;
    if (key !== 'inputTokens' && key !== 'outputTokens') {
      return { code: 'INVALID_ACTION', pointer: formatPointer(['usage', key]), message: `unknown field "${key}" in "usage"; allowed: inputTokens, outputTokens` };
    }
    const n = usage[key];
    if (n !== undefined && !(typeof n === 'number' && Number.isSafeInteger(n) && n >= 0)) {
      return { code: 'INVALID_ACTION', pointer: formatPointer(['usage', key]), message: `"usage.${key}" must be a non-negative integer, got ${describe(n)}` };
    }
  }
  return undefined;
}

/** The common case, without allocating: an object whose values are JSON primitives (strings checked for lone surrogates). */
function isFlatJson(args: Record<string, unknown>): boolean {
  let count = 0;
  for (const key in args) {
    if (!Object.prototype.hasOwnProperty.call(args, key)) continue;
    if (++count > 64 || !key.isWellFormed()) return false;
    const value = args[key];
    if (value === null || typeof value === 'boolean') continue;
    if (typeof value === 'number') {
      if (Number.isFinite(value)) continue;
      return false;
    }
    if (typeof value === 'string' && value.isWellFormed()) continue;
    return false;
  }
  return true;
}

function checkJson(value: unknown, path: PropertyKey[], depth: number, count: { nodes: number }): ActionIssue | undefined {
  if (++count.nodes > MAX_ARGS_NODES) return { code: 'INVALID_ACTION', pointer: formatPointer(path), message: `"args" has more than ${MAX_ARGS_NODES} values` };
  if (value === null || typeof value === 'boolean') return undefined;
  if (typeof value === 'number') {
    return Number.isFinite(value) ? undefined : { code: 'INVALID_ACTION', pointer: formatPointer(path), message: `${value} is not a JSON number` };
  }
  if (typeof value === 'string') {
    return !value.isWellFormed() ? { code: 'INVALID_ACTION', pointer: formatPointer(path), message: 'the string contains a lone UTF-16 surrogate' } : undefined;
  }
  if (typeof value !== 'object') return { code: 'INVALID_ACTION', pointer: formatPointer(path), message: `${describe(value)} is not a JSON value` };
  if (depth >= MAX_ARGS_DEPTH) return { code: 'INVALID_ACTION', pointer: formatPointer(path), message: `"args" is nested deeper than ${MAX_ARGS_DEPTH} levels` };
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return { code: 'INVALID_ACTION', pointer: formatPointer(path), message: 'not a plain JSON array' };
    for (let i = 0; i < value.length; i++) {
      path.push(i);
      const issue = checkJson(value[i], path, depth + 1, count);
      path.pop();
      if (issue !== undefined) return issue;
    }
    return undefined;
  }
  if (!isPlainObject(value)) return { code: 'INVALID_ACTION', pointer: formatPointer(path), message: `${describe(value)} is not a plain JSON object` };
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    path.push(key);
    const issue: ActionIssue | undefined = !key.isWellFormed()
      ? { code: 'INVALID_ACTION', pointer: formatPointer(path), message: 'the key contains a lone UTF-16 surrogate' }
      : checkJson(value[key], path, depth + 1, count);
    path.pop();
    if (issue !== undefined) return issue;
  }
  return undefined;
}

/** A short description of a value's JSON type for messages (never echoes large input). */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return value.length <= 40 ? JSON.stringify(value) : 'a long string';
  if (typeof value === 'number') return Number.isFinite(value) ? `the number ${value}` : String(value);
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

/** A tool call's parsed arguments, or the first issue of a failing parse. */
export type ArgsParse<A> = { success: true; data: A } | { success: false; issue: z.core.$ZodIssue | undefined };

/**
 * `schema.safeParse(value)` when only the first issue of a failure is read: that issue is finalised
 * exactly as `safeParse(value).error.issues[0]` (same message, path and code), the others are not, and
 * no error object (an `Error`, with its stack) is built. Most of a failing parse's cost is that work,
 * and a random or careless agent's calls fail often. Schemas without zod 4's internals use `safeParse`.
 */
export function parseArgs<A>(schema: z.ZodType<A>, value: unknown): ArgsParse<A> {
  let fast = fastParsers.get(schema);
  if (fast === undefined) {
    fast = compileArgs(schema);
    fastParsers.set(schema, fast);
  }
  if (fast !== null) {
    const data = fast(value);
    if (data !== undefined) return { success: true, data: data as A };
  }
  const internals = (schema as { _zod?: { run?: unknown } })._zod;
  if (typeof internals?.run === 'function') {
    // What zod's safeParse does, up to building the error: the same context, the same run.
    const ctx = { async: false };
    const result = (internals.run as (payload: { value: unknown; issues: z.core.$ZodRawIssue[] }, ctx: object) => unknown)({ value, issues: [] }, ctx);
    if (!(result instanceof Promise)) {
      const payload = result as { value: A; issues: z.core.$ZodRawIssue[] };
      if (payload.issues.length === 0) return { success: true, data: payload.value };
      return { success: false, issue: z.core.util.finalizeIssue(payload.issues[0]!, ctx as z.core.ParseContext<z.core.$ZodIssue>, z.core.config()) };
    }
  }
  const parsed = schema.safeParse(value);
  return parsed.success ? { success: true, data: parsed.data } : { success: false, issue: parsed.error.issues[0] };
}

// ---- a fast path for the common argument schemas --------------------------------------------------

/** A member check of a compiled schema: the member's parsed value, or undefined when zod must decide. */
type FastCheck = (value: unknown) => unknown;

/** Per schema: its compiled fast path, or null when it has a part the fast path does not cover. */
const fastParsers = new WeakMap<object, ((value: unknown) => Record<string, unknown> | undefined) | null>();

interface ZodDef {
  type?: string;
  checks?: unknown[];
  shape?: Record<string, { _zod?: { def?: ZodDef } }>;
  catchall?: { _zod?: { def?: ZodDef } };
  entries?: Record<string, unknown>;
  element?: { _zod?: { def?: ZodDef } };
}

function defOf(schema: unknown): ZodDef | undefined {
  return (schema as { _zod?: { def?: ZodDef } } | undefined)?._zod?.def;
}

const isString: FastCheck = (value) => (typeof value === 'string' ? value : undefined);
const isBoolean: FastCheck = (value) => (typeof value === 'boolean' ? value : undefined);

/**
 * A member schema without transforms or defaults: a string (its only checks, if any, `.min()` and `.max()`
 * lengths), a boolean, a string enum, an array of those.
 */
function memberCheck(def: ZodDef | undefined): FastCheck | undefined {
  if (def === undefined) return undefined;
  if (def.type === 'string' && def.checks !== undefined && def.checks.length > 0) return boundedString(def.checks);
  if (def.checks !== undefined && def.checks.length > 0) return undefined;
  switch (def.type) {
    case 'string':
      return isString;
    case 'boolean':
      return isBoolean;
    case 'enum': {
      const values = Object.values(def.entries ?? {});
      if (values.length === 0 || !values.every((v) => typeof v === 'string')) return undefined;
      const set = new Set(values as string[]);
      return (value) => (typeof value === 'string' && set.has(value) ? value : undefined);
    }
    case 'array': {
      const item = defOf(def.element)?.type === 'array' ? undefined : memberCheck(defOf(def.element));
      if (item === undefined) return undefined;
      return (value) => {
        if (!Array.isArray(value)) return undefined;
        const out = new Array<unknown>(value.length);
        for (let i = 0; i < value.length; i++) {
          const member = item(value[i]);
          if (member === undefined) return undefined;
          out[i] = member;
        }
        return out;
      };
    }
    default:
      return undefined;
  }
}

/**
 * A string within `.min()` / `.max()` length bounds, when those are its only checks (the web tools' ids and
 * texts). zod counts code points, one or two UTF-16 units each: a string of `units` units has between
 * `ceil(units / 2)` and `units` of them, so the bounds hold for certain when `units <= max` and
 * `ceil(units / 2) >= min`; any other string is left to zod, which counts and words the error.
 */
function boundedString(checks: unknown[]): FastCheck | undefined {
  let min = 0;
  let max = Infinity;
  for (const check of checks) {
    const def = (check as { _zod?: { def?: { check?: string; minimum?: unknown; maximum?: unknown } } })._zod?.def;
    if (def?.check === 'min_length' && typeof def.minimum === 'number') min = Math.max(min, def.minimum);
    else if (def?.check === 'max_length' && typeof def.maximum === 'number') max = Math.min(max, def.maximum);
    else return undefined;
  }
  return (value) => (typeof value === 'string' && value.length <= max && (value.length + 1) >> 1 >= min ? value : undefined);
}

/**
 * @internal The fast path of a zod 4 strict object schema whose members are all required strings (with at
 * most length bounds), booleans, string enums or arrays of those (every retail and web tool's arguments): a
 * plain object with exactly those keys and valid members gives a copy with the keys in the shape's order, as
 * zod's parse does; anything else (undefined) goes to zod, which decides and words the error. Null for other
 * schemas.
 */
export function compileArgs(schema: unknown): ((value: unknown) => Record<string, unknown> | undefined) | null {
  const def = defOf(schema);
  if (def === undefined || def.type !== 'object' || (def.checks !== undefined && def.checks.length > 0)) return null;
  if (defOf(def.catchall)?.type !== 'never' || def.shape === undefined) return null;
  const keys = Object.keys(def.shape);
  const checks: FastCheck[] = [];
  for (const key of keys) {
    const check = memberCheck(defOf(def.shape[key]));
    if (check === undefined) return null;
    checks.push(check);
  }
  const n = keys.length;
  const known = new Set(keys);
  return (value) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null) return undefined;
    const input = value as Record<string, unknown>;
    let count = 0;
    for (const key in input) {
      if (!Object.hasOwn(input, key) || !known.has(key)) return undefined;
      count++;
    }
    // Its enumerable keys are distinct keys of the shape: n of them are all of them.
    if (count !== n) return undefined;
    const out: Record<string, unknown> = {};
    for (let i = 0; i < n; i++) {
      const key = keys[i]!;
      const member = checks[i]!(input[key]);
      if (member === undefined) return undefined;
      out[key] = member;
    }
    return out;
  };
}
