/**
 * Hashing on the hot path: digests, seed derivation and the task id (its one implementation), written
 * straight to UTF-8 bytes; byte-identical to `digest`/`createRng` over canonical JSON (tested).
 */
import { hash } from 'node:crypto';
import { canonicalize, sortKeysUtf16 } from './canonical-json.js';
import { Rng } from './rng.js';
import type { Task } from './template.js';

/** Thrown inside the byte writer; the caller then takes core's string path (which names any error). */
class NotCanonical extends Error {}

/** Hex sha256 of a UTF-8 string (one-shot `crypto.hash`, cheaper than `createHash` for small inputs). */
export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}

// ---- canonical JSON written straight to UTF-8 bytes, then hashed -------------------------------
// Building a string and letting crypto flatten and encode it costs about twice as much as writing
// the bytes once. The scratch buffer is private, used synchronously, and never escapes a call.
let bytes = new Uint8Array(4096);
let length = 0;
let busy = false;
const HEX = '0123456789abcdef';

function reserve(n: number): void {
  if (length + n <= bytes.length) return;
  let size = bytes.length * 2;
  while (size < length + n) size *= 2;
  const grown = new Uint8Array(size);
  grown.set(bytes.subarray(0, length));
  bytes = grown;
}

function putAscii(text: string): void {
  const n = text.length;
  reserve(n);
  for (let i = 0; i < n; i++) bytes[length++] = text.charCodeAt(i);
}

function putString(text: string): void {
  const n = text.length;
  reserve(n * 6 + 2);
  bytes[length++] = 0x22;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) {
      if (c >= 0x20 && c !== 0x22 && c !== 0x5c) {
        bytes[length++] = c;
        continue;
      }
      // The escapes JSON.stringify (and so RFC 8785) uses.
      bytes[length++] = 0x5c;
      if (c === 0x22 || c === 0x5c) bytes[length++] = c;
      else if (c === 0x08) bytes[length++] = 0x62;
      else if (c === 0x09) bytes[length++] = 0x74;
      else if (c === 0x0a) bytes[length++] = 0x6e;
      else if (c === 0x0c) bytes[length++] = 0x66;
      else if (c === 0x0d) bytes[length++] = 0x72;
      else {
        bytes[length++] = 0x75;
        bytes[length++] = 0x30;
        bytes[length++] = 0x30;
        bytes[length++] = HEX.charCodeAt(c >> 4);
        bytes[length++] = HEX.charCodeAt(c & 15);
      }
    } else if (c < 0x800) {
      bytes[length++] = 0xc0 | (c >> 6);
      bytes[length++] = 0x80 | (c & 63);
    } else if (c < 0xd800 || c > 0xdfff) {
      bytes[length++] = 0xe0 | (c >> 12);
      bytes[length++] = 0x80 | ((c >> 6) & 63);
      bytes[length++] = 0x80 | (c & 63);
    } else {
      const low = i + 1 < n ? text.charCodeAt(i + 1) : 0;
      if (c > 0xdbff || low < 0xdc00 || low > 0xdfff) throw new NotCanonical();
      const cp = 0x10000 + ((c - 0xd800) << 10) + (low - 0xdc00);
      bytes[length++] = 0xf0 | (cp >> 18);
      bytes[length++] = 0x80 | ((cp >> 12) & 63);
      bytes[length++] = 0x80 | ((cp >> 6) & 63);
      bytes[length++] = 0x80 | (cp & 63);
      i++;
    }
  }
  bytes[length++] = 0x22;
}

function putValue(value: unknown): void {
  switch (typeof value) {
    case 'string':
      putString(value);
      return;
    case 'number':
      if (!Number.isFinite(value)) throw new NotCanonical();
      putAscii(value === 0 ? '0' : '' + value);
      return;
    case 'boolean':
      putAscii(value ? 'true' : 'false');
      return;
    case 'object': {
      if (value === null) {
        putAscii('null');
        return;
      }
      if (remembered !== undefined && depth < REMEMBER_DEPTH) putRemembered(value, remembered);
      else putObject(value);
      return;
    }
    default:
      throw new NotCanonical();
  }
}

// Within one task id, an object written a second time (a retail task's user goal is both params.goal
// and spec.user) is copied from the bytes written the first time. Only near the top: few lookups.
const REMEMBER_DEPTH = 3;
let remembered: Map<object, [number, number]> | undefined;
let depth = 0;

function putRemembered(value: object, seen: Map<object, [number, number]>): void {
  const range = seen.get(value);
  if (range !== undefined) {
    const [start, end] = range;
    reserve(end - start);
    bytes.copyWithin(length, start, end);
    length += end - start;
    return;
  }
  const begin = length;
  depth++;
  try {
    putObject(value);
  } finally {
    depth--;
  }
  seen.set(value, [begin, length]);
}

function putObject(value: object): void {
  reserve(1);
  if (Array.isArray(value)) {
    bytes[length++] = 0x5b;
    for (let i = 0; i < value.length; i++) {
      if (i > 0) {
        reserve(1);
        bytes[length++] = 0x2c;
      }
      const item = value[i];
      if (item === undefined) putAscii('null');
      else putValue(item);
    }
    reserve(1);
    bytes[length++] = 0x5d;
    return;
  }
  const record = value as Record<string, unknown>;
  // toJSON may run user code, which might hash too: leave such values to the string path.
  if (typeof (record as { toJSON?: unknown }).toJSON === 'function') throw new NotCanonical();
  bytes[length++] = 0x7b;
  const keys = sortKeysUtf16(Object.keys(record));
  const n = keys.length;
  let first = true;
  for (let i = 0; i < n; i++) {
    const key = keys[i]!;
    const item = record[key];
    if (item === undefined) continue;
    if (!first) {
      reserve(1);
      bytes[length++] = 0x2c;
    }
    first = false;
    putString(key);
    reserve(1);
    bytes[length++] = 0x3a;
    putValue(item);
  }
  reserve(1);
  bytes[length++] = 0x7d;
}

/** Runs a byte writer and returns the hex sha256 of what it wrote, or undefined when it needs the slow path. */
function hashWritten(writeAll: () => void): string | undefined {
  if (busy) return undefined;
  busy = true;
  length = 0;
  depth = 0;
  try {
    writeAll();
    return hash('sha256', bytes.subarray(0, length), 'hex');
  } catch (error) {
    if (error instanceof NotCanonical) return undefined;
    throw error;
  } finally {
    busy = false;
    remembered = undefined;
  }
}

/** Hex sha256 of the canonical JSON of a value; equal to core `digest`. */
export function fastDigest(value: unknown): string {
  return hashWritten(() => putValue(value)) ?? sha256Hex(canonicalize(value));
}

/** The same generator as core `createRng([seed, label, index])`, without the generic canonicaliser. */
export function rngFor(seed: number, label: string, index: number): Rng {
  const hex =
    hashWritten(() => {
      putAscii('[');
      putValue(seed);
      putAscii(',');
      putString(label);
      putAscii(',');
      putValue(index);
      putAscii(']');
    }) ?? sha256Hex(canonicalize([seed, label, index]));
  return rngOfHex(hex);
}

/**
 * The same generator as core `createRng(parts)` for a list of JSON values (not an `RngState`: pass a
 * list with a string in it), through the byte writer instead of the generic canonicaliser.
 */
export function fastRng(parts: readonly unknown[]): Rng {
  return rngOfHex(fastDigest(parts));
}

function rngOfHex(hex: string): Rng {
  const a = parseInt(hex.slice(0, 8), 16);
  const b = parseInt(hex.slice(8, 16), 16);
  const c = parseInt(hex.slice(16, 24), 16);
  let d = parseInt(hex.slice(24, 32), 16);
  // deriveSeed's guard: sfc32 must not start from all zeros.
  if ((a | b | c | d) === 0) d = 1;
  return new Rng([a, b, c, d]);
}

/**
 * The id of a task: sha256 of the canonical JSON of `{ template, domain, taskType, level, params, spec }`
 * (everything but `id` and `origin`). The one implementation; `fastTaskId` is the same function.
 */
export function computeTaskId(task: Pick<Task, 'template' | 'domain' | 'taskType' | 'level' | 'params' | 'spec'>): string {
  const fast =
    task.params !== undefined && task.spec !== undefined
      ? hashWritten(() => {
          remembered = new Map();
          // Keys in RFC 8785 order: domain, level, params, spec, taskType, template.
          putAscii('{"domain":');
          putValue(task.domain);
          putAscii(',"level":');
          putValue(task.level);
          putAscii(',"params":');
          putValue(task.params);
          putAscii(',"spec":');
          putValue(task.spec);
          putAscii(',"taskType":');
          putValue(task.taskType);
          putAscii(',"template":');
          putValue(task.template);
          putAscii('}');
        })
      : undefined;
  return (
    fast ??
    sha256Hex(
      canonicalize({
        template: task.template,
        domain: task.domain,
        taskType: task.taskType,
        level: task.level,
        params: task.params,
        spec: task.spec,
      }),
    )
  );
}

/** `computeTaskId` under the name the generation hot path has always used. */
export const fastTaskId = computeTaskId;
