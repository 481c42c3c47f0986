/**
 * Hashing on the hot path: digests, seed derivation and the task id (its one implementation), written
 * with the canonical byte writer of canonical-json.ts; byte-identical to `digest`/`createRng` over
 * canonical JSON (tested against an RFC 8785 reference).
 */
import { hash } from 'node:crypto';
import { canonicalize, canonicalSha256, sha256OfCanonicalBytes } from './canonical-json.js';
import type { CanonicalBytes } from './canonical-json.js';
import { Rng } from './rng.js';
import type { Task } from './template.js';

/** Hex sha256 of a UTF-8 string (one-shot `crypto.hash`, cheaper than `createHash` for small inputs). */
export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}

/** Hex sha256 of the canonical JSON of a value; equal to core `digest`. */
export const fastDigest: (value: unknown) => string = canonicalSha256;

/** The same generator as core `createRng([seed, label, index])`, without building the canonical string. */
export function rngFor(seed: number, label: string, index: number): Rng {
  // The usual case: integers and a short label, one SHA-256 block of ASCII, hashed here (no native call).
  if (Number.isSafeInteger(seed) && Number.isSafeInteger(index)) {
    let quoted = quotedLabels.get(label);
    if (quoted === undefined) {
      quoted = canonicalize(label);
      if (quotedLabels.size >= MAX_QUOTED_LABELS) quotedLabels.clear();
      quotedLabels.set(label, quoted);
    }
    // A safe integer's canonical JSON is its String (RFC 8785: no exponent below 1e21).
    if (sha256HeadOfAscii(`[${seed},${quoted},${index}]`)) return rngOfWords(HEAD[0]!, HEAD[1]!, HEAD[2]!, HEAD[3]!);
  }
  const hex =
    sha256OfCanonicalBytes((out) => {
      out.ascii('[');
      out.value(seed);
      out.ascii(',');
      out.string(label);
      out.ascii(',');
      out.value(index);
      out.ascii(']');
    }) ?? sha256Hex(canonicalize([seed, label, index]));
  return rngOfHex(hex);
}

/** Labels (template ids, mostly) as canonical JSON strings: a pure function's memo, cleared when full. */
const quotedLabels = new Map<string, string>();
const MAX_QUOTED_LABELS = 1024;

// SHA-256 (FIPS 180-4) of one block, for the short ASCII texts seeds are derived from.
const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
  0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
  0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);
const H = new Int32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
const W = new Int32Array(64);
/** The first four words of the last `sha256HeadOfAscii` digest, big-endian, as unsigned integers. */
const HEAD = new Float64Array(4);

/**
 * SHA-256 of `text` when it is ASCII and fits one block (at most 55 bytes): writes the digest's first four
 * words to HEAD and returns true; returns false (and computes nothing) otherwise.
 */
function sha256HeadOfAscii(text: string): boolean {
  const n = text.length;
  if (n > 55) return false;
  W.fill(0, 0, 16);
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c > 0x7f) return false;
    W[i >> 2]! |= c << (24 - (i & 3) * 8);
  }
  W[n >> 2]! |= 0x80 << (24 - (n & 3) * 8);
  W[15] = n * 8;
  for (let t = 16; t < 64; t++) {
    const w15 = W[t - 15]!;
    const w2 = W[t - 2]!;
    const s0 = ((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3);
    const s1 = ((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10);
    W[t] = (W[t - 16]! + s0 + W[t - 7]! + s1) | 0;
  }
  let a = H[0]!;
  let b = H[1]!;
  let c = H[2]!;
  let d = H[3]!;
  let e = H[4]!;
  let f = H[5]!;
  let g = H[6]!;
  let h = H[7]!;
  for (let t = 0; t < 64; t++) {
    const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (h + s1 + ((e & f) ^ (~e & g)) + K[t]! + W[t]!) | 0;
    const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (s0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  HEAD[0] = (H[0]! + a) >>> 0;
  HEAD[1] = (H[1]! + b) >>> 0;
  HEAD[2] = (H[2]! + c) >>> 0;
  HEAD[3] = (H[3]! + d) >>> 0;
  return true;
}

/**
 * The same generator as core `createRng(parts)` for a list of JSON values (not an `RngState`: pass a
 * list with a string in it), through the byte writer instead of the string one.
 */
export function fastRng(parts: readonly unknown[]): Rng {
  // The usual case: a few plain strings and integers, one SHA-256 block of ASCII, hashed here (no native call).
  const short = shortCanonicalList(parts);
  if (short !== undefined && sha256HeadOfAscii(short)) return rngOfWords(HEAD[0]!, HEAD[1]!, HEAD[2]!, HEAD[3]!);
  return rngOfHex(canonicalSha256(parts));
}

/** Strings canonical JSON writes as they are between quotes: printable ASCII without `"` and `\`. */
const PLAIN_ASCII = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/**
 * The canonical JSON of a list of plain ASCII strings and safe integers, if it fits one SHA-256 block (55
 * bytes); undefined for any other list (the caller takes the general writer).
 */
function shortCanonicalList(parts: readonly unknown[]): string | undefined {
  let text = '[';
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    if (i > 0) text += ',';
    if (typeof part === 'string') {
      if (part.length > 53 || !PLAIN_ASCII.test(part)) return undefined;
      text += `"${part}"`;
    } else if (typeof part === 'number' && Number.isSafeInteger(part)) {
      // A safe integer's canonical JSON is its String (RFC 8785: no exponent below 1e21; -0 is "0").
      text += String(part);
    } else return undefined;
    if (text.length > 54) return undefined;
  }
  return `${text}]`;
}

function rngOfHex(hex: string): Rng {
  return rngOfWords(parseInt(hex.slice(0, 8), 16), parseInt(hex.slice(8, 16), 16), parseInt(hex.slice(16, 24), 16), parseInt(hex.slice(24, 32), 16));
}

/** The generator seeded by a digest's first four words (as createRng reads its hex). */
function rngOfWords(a: number, b: number, c: number, d: number): Rng {
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
      ? sha256OfCanonicalBytes((out) => writeIdContent(out, task), true) // a retail task's user goal is both params.goal and spec.user: written once
      : undefined;
  return fast ?? sha256Hex(canonicalize(idContent(task)));
}

/**
 * A task's id and its stored body (the canonical JSON of `{ id, template, domain, taskType, level, params,
 * spec, origin }`, what the stores keep) from one canonical writing: the body is the id's hashed text with
 * `id` and `origin` spliced in at their sorted places. Equal to `computeTaskId` and `canonicalize` of the
 * body (tested).
 */
export function taskIdAndBody(task: Pick<Task, 'template' | 'domain' | 'taskType' | 'level' | 'params' | 'spec' | 'origin'>): { id: string; body: string } {
  // The string writer and a hash of its text: cheaper than the byte writer plus decoding its bytes (measured).
  const text = canonicalize(idContent(task));
  const id = sha256Hex(text);
  // `,"level":` and `,"params":` first occur where they are keys: a quote inside a JSON string is escaped.
  const atLevel = text.indexOf(',"level":');
  const atParams = text.indexOf(',"params":', atLevel);
  const body = `${text.slice(0, atLevel)},"id":"${id}"${text.slice(atLevel, atParams)},"origin":${canonicalize(task.origin)}${text.slice(atParams)}`;
  return { id, body };
}

function idContent(task: Pick<Task, 'template' | 'domain' | 'taskType' | 'level' | 'params' | 'spec'>): Pick<Task, 'template' | 'domain' | 'taskType' | 'level' | 'params' | 'spec'> {
  return { template: task.template, domain: task.domain, taskType: task.taskType, level: task.level, params: task.params, spec: task.spec };
}

function writeIdContent(out: CanonicalBytes, task: Pick<Task, 'template' | 'domain' | 'taskType' | 'level' | 'params' | 'spec'>): void {
  // Keys in RFC 8785 order: domain, level, params, spec, taskType, template.
  out.ascii('{"domain":');
  out.value(task.domain);
  out.ascii(',"level":');
  out.value(task.level);
  out.ascii(',"params":');
  out.value(task.params);
  out.ascii(',"spec":');
  out.value(task.spec);
  out.ascii(',"taskType":');
  out.value(task.taskType);
  out.ascii(',"template":');
  out.value(task.template);
  out.ascii('}');
}

/** `computeTaskId` under the name the generation hot path has always used. */
export const fastTaskId = computeTaskId;
