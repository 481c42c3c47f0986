/** Canonical JSON per RFC 8785 (JCS): sorted keys by UTF-16 code units, ECMAScript number form. */
import { EnvHarnessError } from './errors.js';

/**
 * Serialises a JSON-compatible value canonically. Object keys with `undefined` values are
 * dropped (as JSON.stringify does); non-finite numbers, bigints, functions and lone
 * surrogates are rejected because they have no canonical form.
 */
export function canonicalize(value: unknown): string {
  try {
    return fast(value);
  } catch (error) {
    if (!(error instanceof NotCanonical)) throw error;
  }
  // Only values that have no canonical form get here: the checked writer names where the problem is.
  const out: string[] = [];
  write(value, out, '');
  return out.join('');
}

// ---- fast path: no pointer bookkeeping; bails out to the checked writer on anything unusual ----

class NotCanonical extends Error {}

// Strings that need more than a pair of quotes: quote, backslash, control characters, surrogates.
const NEEDS_ESCAPE = /["\\\u0000-\u001f\uD800-\uDFFF]/;

function fastQuote(text: string): string {
  if (!NEEDS_ESCAPE.test(text)) return '"' + text + '"';
  if (!text.isWellFormed()) throw new NotCanonical();
  return JSON.stringify(text);
}

function fast(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return fastQuote(value);
    case 'number':
      if (!Number.isFinite(value)) throw new NotCanonical();
      return value === 0 ? '0' : '' + value;
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) return 'null';
      if (Array.isArray(value)) {
        const n = value.length;
        if (n === 0) return '[]';
        let out = '[' + (value[0] === undefined ? 'null' : fast(value[0]));
        for (let i = 1; i < n; i++) {
          const item = value[i];
          out += ',' + (item === undefined ? 'null' : fast(item));
        }
        return out + ']';
      }
      const record = value as Record<string, unknown>;
      if (typeof (record as { toJSON?: unknown }).toJSON === 'function') return fast((record as { toJSON: () => unknown }).toJSON());
      const keys = sortKeysUtf16(Object.keys(record));
      let out = '{';
      let first = true;
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i]!;
        const item = record[key];
        if (item === undefined) continue;
        out += (first ? '' : ',') + fastQuote(key) + ':' + fast(item);
        first = false;
      }
      return out + '}';
    }
    default:
      throw new NotCanonical();
  }
}

/**
 * Sorts object keys in place into RFC 8785 order (UTF-16 code units: `<` on strings) and returns them.
 * Small objects (the common case) are sorted by insertion, large ones by the built-in sort with the same
 * comparison. Every canonical writer in the project (this one, generation's byte writer, the retail
 * world's) sorts with it.
 */
export function sortKeysUtf16(keys: string[]): string[] {
  const n = keys.length;
  if (n > 16) return keys.sort(compareUtf16);
  for (let i = 1; i < n; i++) {
    const key = keys[i]!;
    let j = i - 1;
    while (j >= 0 && keys[j]! > key) {
      keys[j + 1] = keys[j]!;
      j--;
    }
    keys[j + 1] = key;
  }
  return keys;
}

// ---- checked path: tracks the JSON pointer so errors name the offending member ----

function write(value: unknown, out: string[], pointer: string): void {
  if (value === null) {
    out.push('null');
    return;
  }
  switch (typeof value) {
    case 'boolean':
      out.push(value ? 'true' : 'false');
      return;
    case 'number':
      if (!Number.isFinite(value)) fail(pointer, `number ${value} has no JSON form`);
      // ECMAScript Number::toString is exactly RFC 8785's number serialisation; -0 prints as 0.
      out.push(Object.is(value, -0) ? '0' : String(value));
      return;
    case 'string':
      out.push(quote(value, pointer));
      return;
    case 'object': {
      if (Array.isArray(value)) {
        out.push('[');
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out.push(',');
          const item = value[i];
          write(item === undefined ? null : item, out, `${pointer}/${i}`);
        }
        out.push(']');
        return;
      }
      const record = value as Record<string, unknown>;
      if (typeof (record as { toJSON?: unknown }).toJSON === 'function') {
        write((record as { toJSON: () => unknown }).toJSON(), out, pointer);
        return;
      }
      const keys = Object.keys(record).filter((k) => record[k] !== undefined);
      keys.sort(compareUtf16);
      out.push('{');
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i]!;
        if (i > 0) out.push(',');
        out.push(quote(key, pointer));
        out.push(':');
        write(record[key], out, `${pointer}/${escapePointer(key)}`);
      }
      out.push('}');
      return;
    }
    default:
      fail(pointer, `${typeof value} values have no JSON form`);
  }
}

// Array.prototype.sort's default order compares UTF-16 code units, which is what RFC 8785 requires;
// spelled out so that nobody "fixes" it with localeCompare.
function compareUtf16(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function quote(text: string, pointer: string): string {
  if (LONE_SURROGATE.test(text)) fail(pointer, 'string contains a lone UTF-16 surrogate');
  // JSON.stringify escapes exactly the characters RFC 8785 requires (", \, and U+0000..U+001F).
  return JSON.stringify(text);
}

function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

function fail(pointer: string, message: string): never {
  throw new EnvHarnessError('PARAMS_INVALID', `cannot canonicalise ${pointer || 'the value'}: ${message}`, {
    details: { pointer },
  });
}
