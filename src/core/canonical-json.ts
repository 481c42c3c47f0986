/** Canonical JSON per RFC 8785 (JCS): sorted keys by UTF-16 code units, ECMAScript number form. */
import { EnvHarnessError } from './errors.js';

/**
 * Serialises a JSON-compatible value canonically. Object keys with `undefined` values are
 * dropped (as JSON.stringify does); non-finite numbers, bigints, functions and lone
 * surrogates are rejected because they have no canonical form.
 */
export function canonicalize(value: unknown): string {
  const out: string[] = [];
  write(value, out, '');
  return out.join('');
}

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
