/** A fast RFC 8785 writer for plain JSON data; output is identical to core's `canonicalize` (tested). */
import { EnvHarnessError, sortKeysUtf16 } from '../../core/index.js';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Canonical JSON of a JSON value (objects, arrays, strings, finite numbers, booleans, null).
 * Core's `canonicalize` tracks JSON pointers for its error messages, which makes it several times
 * slower on a 1 MB world; this writer skips that bookkeeping and throws a plain message instead.
 * With `memo`, the text of every frozen object is remembered: a new record that shares most of
 * its nested objects with an old one is serialised in a fraction of the time.
 */
export function canonicalJson(value: unknown, memo?: WeakMap<object, string>): string {
  switch (typeof value) {
    case 'string':
      return quote(value);
    case 'number':
      if (!Number.isFinite(value)) fail(`number ${value} has no JSON form`);
      return value === 0 ? '0' : String(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) return 'null';
      let out = memo?.get(value);
      if (out !== undefined) return out;
      if (Array.isArray(value)) {
        out = '[';
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out += ',';
          const item: unknown = value[i];
          out += item === undefined ? 'null' : canonicalJson(item, memo);
        }
        out += ']';
      } else {
        const record = value as Record<string, unknown>;
        const keys = sortKeys(Object.keys(record));
        out = '{';
        let first = true;
        for (const key of keys) {
          const item = record[key];
          if (item === undefined) continue;
          out += first ? quote(key) : ',' + quote(key);
          out += ':' + canonicalJson(item, memo);
          first = false;
        }
        out += '}';
      }
      // Only frozen objects can be memoised by identity: their content never changes. Flattening
      // V8's concatenation tree once keeps later records built from this text cheap to flatten.
      if (memo !== undefined && Object.isFrozen(value)) {
        out.charCodeAt(0);
        memo.set(value, out);
      }
      return out;
    }
    default:
      return fail(`${typeof value} values have no JSON form`);
  }
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
