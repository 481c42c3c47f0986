/** Request bodies: strict JSON parsing with a depth cap, and zod validation whose issues become JSON pointers. */
import type { ZodType } from 'zod';
import { depthExceeds, EnvHarnessError } from '../index.js';
import { closestPointer, escapePointerToken, formatPointer, issuePath } from '../index.js';

/** Deepest nesting accepted in any request body (deeper input is a 422, never a stack overflow downstream). */
export const MAX_BODY_DEPTH = 64;

/** Parses a request body as JSON; an empty body is `emptyAs`. Throws PARAMS_INVALID (pointer '') on bad JSON or too deep nesting. */
export function parseJsonBody(text: string, emptyAs?: unknown): unknown {
  if (text.length === 0 || /^\s*$/.test(text)) {
    if (emptyAs !== undefined) return emptyAs;
    throw new EnvHarnessError('PARAMS_INVALID', 'the request body is empty; send a JSON object', { details: { pointer: '' } });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new EnvHarnessError('PARAMS_INVALID', `the request body is not valid JSON: ${(error as Error).message}`, { details: { pointer: '' } });
  }
  // Nesting n levels takes n opening and n closing brackets: a short body (every usual step) cannot be too
  // deep, and a longer one is walked without building pointers unless it is.
  const deep = text.length <= 2 * MAX_BODY_DEPTH || !depthExceeds(value, MAX_BODY_DEPTH) ? undefined : tooDeep(value, MAX_BODY_DEPTH);
  if (deep !== undefined) {
    throw new EnvHarnessError('PARAMS_INVALID', `the request body is nested deeper than ${MAX_BODY_DEPTH} levels`, { details: { pointer: deep } });
  }
  return value;
}

/**
 * The pointer of the first container nested deeper than `max`, or undefined. Iterative, so that a body of
 * a million brackets costs no stack.
 */
export function tooDeep(root: unknown, max: number): string | undefined {
  if (root === null || typeof root !== 'object') return undefined;
  const stack: Array<{ value: object; depth: number; path: string }> = [{ value: root as object, depth: 1, path: '' }];
  while (stack.length > 0) {
    const { value, depth, path } = stack.pop()!;
    if (depth > max) return path;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) {
        const v: unknown = value[i];
        if (v !== null && typeof v === 'object') stack.push({ value: v, depth: depth + 1, path: `${path}/${i}` });
      }
    } else {
      for (const key of Object.keys(value)) {
        const v: unknown = (value as Record<string, unknown>)[key];
        if (v !== null && typeof v === 'object') stack.push({ value: v, depth: depth + 1, path: `${path}/${escapePointerToken(key)}` });
      }
    }
  }
  return undefined;
}

/** Validates with a zod schema; the first issue becomes PARAMS_INVALID with a pointer that resolves in `input`. */
export function parseWith<T>(schema: ZodType<T>, input: unknown, prefix: readonly PropertyKey[] = []): T {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  // An unknown key is reported at the key itself, which exists in the input.
  const pointer = closestPointer(input, issuePath(issue));
  const at = pointer === '' ? 'the body' : pointer;
  throw new EnvHarnessError('PARAMS_INVALID', `${at}: ${issue.message}`, { details: { pointer: formatPointer(prefix) + pointer } });
}

// One implementation of JSON pointers for the whole code base: core's.
export { closestPointer, formatPointer };

/** Whether a plain object (JSON.parse output) has the key as its own property. */
export function has(object: Record<string, unknown>, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(object, key);
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** A `\uD800`-`\uDFFF` escape in JSON text: the only way a lone surrogate gets into parsed input. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/** Whether JSON text can hold a lone surrogate at all (only a `\uD800`-`\uDFFF` escape puts one there): lets the common case skip the walk. */
export function maySurrogate(raw: string): boolean {
  return SURROGATE_ESCAPE.test(raw);
}

/**
 * The pointer of the first object in `root` with a key that holds a lone UTF-16 surrogate, or undefined.
 * Such keys have no canonical JSON form, so they are refused before they reach the runtime (whose
 * feedback would name them and then fail to be recorded).
 */
export function loneSurrogateKey(root: unknown): string | undefined {
  if (root === null || typeof root !== 'object') return undefined;
  const stack: Array<{ value: object; path: string }> = [{ value: root as object, path: '' }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    const keys = Array.isArray(value) ? [] : Object.keys(value);
    if (keys.some((k) => LONE_SURROGATE.test(k))) return path;
    if (Array.isArray(value)) {
      value.forEach((v: unknown, i) => {
        if (v !== null && typeof v === 'object') stack.push({ value: v, path: `${path}/${i}` });
      });
    } else {
      for (const key of keys) {
        const v: unknown = (value as Record<string, unknown>)[key];
        if (v !== null && typeof v === 'object') stack.push({ value: v, path: `${path}/${escapePointerToken(key)}` });
      }
    }
  }
  return undefined;
}
