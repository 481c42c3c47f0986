/** Retail's canonical JSON: core's writer (with its frozen-object memo), its key sorter and a string quoter. */
import { canonicalize, EnvHarnessError, sortKeysUtf16 } from '../../core/index.js';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Canonical JSON of a JSON value (objects, arrays, strings, finite numbers, booleans, null): core's
 * `canonicalize`. With `memo`, the text of every frozen object is remembered: a new record that shares
 * most of its nested objects with an old one is serialised in a fraction of the time.
 */
export function canonicalJson(value: unknown, memo?: WeakMap<object, string>): string {
  return canonicalize(value, memo);
}

/** Sorts keys by UTF-16 code units (RFC 8785): core's sorter, shared by every canonical writer. */
export const sortKeys = sortKeysUtf16;

/**
 * A JSON string literal. Most strings need no escaping: a character scan is cheaper than
 * JSON.stringify; strings with quotes, backslashes, controls or surrogates take the slow path.
 */
export function quote(text: string): string {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) {
      if (LONE_SURROGATE.test(text)) fail('string contains a lone UTF-16 surrogate');
      return JSON.stringify(text);
    }
  }
  return '"' + text + '"';
}

function fail(message: string): never {
  throw new EnvHarnessError('PARAMS_INVALID', `cannot canonicalise the retail world: ${message}`);
}
