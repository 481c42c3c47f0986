/** Canonical JSON per RFC 8785 (JCS): sorted keys by UTF-16 code units, ECMAScript number form. */
// node:crypto is pure computation, not I/O: the one node: import core allows (docs/design/001-core.md).
import { hash } from 'node:crypto';
import { EnvHarnessError } from './errors.js';

/**
 * Serialises a JSON-compatible value canonically. Object keys with `undefined` values are
 * dropped (as JSON.stringify does); non-finite numbers, bigints, functions and lone
 * surrogates are rejected because they have no canonical form.
 * With `memo`, the text of every frozen object is remembered by identity and reused the next time
 * that object is written (retail's world records share most of their nested objects). Without it, the
 * text of a deep-frozen object (frozen all the way down, no getters, up to 64 kB) two or more levels down
 * (a transition's tool output and below) is remembered in a process-wide weak map: a frozen world's record
 * that a tool answers with is written once, not every step.
 */
export function canonicalize(value: unknown, memo?: WeakMap<object, string>): string {
  return serialize(value, 0, memo);
}

/**
 * `canonicalize` of a value that is (or holds) deep-frozen data made to be written again: its text, and that of
 * every deep-frozen object in it, is kept by identity from the top down, as a transition's tool output is
 * (frozen all the way down, no getters, up to 64 kB). Retail hashes each record its tools make with it, so the
 * transition that answers with that record splices the same text instead of serialising the record again.
 * Same text and errors as `canonicalize`.
 *
 * With `memo`, the frozen objects in `value` are written through it as `canonicalize` writes them (the caller
 * vouches that its frozen objects are plain data, as every memo's owner does), and only the top's text is
 * kept for the writers that have no memo: no check of every nested object's members, one kept text per record
 * rather than one per nested object (retail's records, ~30% cheaper to write this way).
 */
export function canonicalizeFrozen(value: unknown, memo?: WeakMap<object, string>): string {
  if (memo === undefined) return serialize(value, FROZEN_DEPTH_MIN, undefined);
  const text = serialize(value, 0, memo);
  if (typeof value === 'object' && value !== null && Object.isFrozen(value) && text.length <= FROZEN_TEXT_MAX) {
    frozenTexts.set(value, text);
  }
  return text;
}

/** The fast writer from `depth` (where it starts keeping frozen texts), or the checked one where it bails out. */
function serialize(value: unknown, depth: number, memo: WeakMap<object, string> | undefined): string {
  // A toJSON on Object.prototype would apply to every plain object: the checked writer honours it.
  if (!busy && !('toJSON' in Object.prototype)) {
    busy = true;
    try {
      return fast(value, depth, memo);
    } catch (error) {
      if (!(error instanceof NotCanonical)) throw error;
    } finally {
      busy = false;
    }
  }
  // Only values that have no canonical form (or toJSON, class instances, a nested call from a getter)
  // get here: the checked writer names where the problem is.
  const out: string[] = [];
  write(value, out, '');
  return out.join('');
}

// ---- fast path: no pointer bookkeeping, no key arrays; bails out to the checked writer on anything unusual ----

class NotCanonical extends Error {}

/** The fast path is running: it owns `scratch`, so a nested call (from a getter) takes the checked writer. */
let busy = false;
/** One key buffer per nesting depth, reused across calls: sorting keys allocates nothing. */
const scratch: string[][] = [];
/** Past this many keys an object's keys are sorted with Array#sort instead of by insertion. */
const INSERTION_SORT_MAX = 16;

// Strings that need more than a pair of quotes: quote, backslash, control characters, surrogates.
const NEEDS_ESCAPE = /["\\\u0000-\u001f\uD800-\uDFFF]/;
/** Up to this length a string is scanned with a loop: cheaper than a RegExp call on the short strings records hold. */
const SCAN_MAX = 48;

/**
 * A JSON string literal in RFC 8785 form (JSON.stringify's escapes), refusing lone surrogates; throws
 * NotCanonical for those.
 */
function fastQuote(text: string): string {
  const n = text.length;
  if (n <= SCAN_MAX) {
    let i = 0;
    for (; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) break;
    }
    if (i === n) return '"' + text + '"';
  } else if (!NEEDS_ESCAPE.test(text)) return '"' + text + '"';
  if (!text.isWellFormed()) throw new NotCanonical();
  return JSON.stringify(text);
}

/** Plain objects only: for-in would also list a prototype's enumerable members, and toJSON runs user code. */
function checkPlain(value: object): void {
  const proto: unknown = Object.getPrototypeOf(value);
  if ((proto !== Object.prototype && proto !== null) || typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    throw new NotCanonical();
  }
}

/**
 * The string writer's half of `checkPlain`: the prototype. An own `toJSON` member is a key, and no shape is
 * learnt for a key sequence holding one (`sortedObject` checks it); Object.prototype's is checked per call.
 */
function checkProto(value: object): void {
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) throw new NotCanonical();
}

// ---- shapes: the sorted key order of each key sequence, learnt once ----
// Records of one kind (transitions, feedback events, episode records) list the same keys in the same order.
// A trie over the keys in for-in order remembers, per sequence, the keys in RFC 8785 order and their quoted
// `"key":` heads, so a known object costs one identity compare per key: no sort, no quoting, no lookups.
// What is written never depends on the trie (a miss takes the sorting path), only how fast.

/** The RFC 8785 order of one key sequence, with each key's text ready to append. */
interface Shape {
  readonly sorted: readonly string[];
  /** `{"k":` for the first sorted key, `,"k":` for the others. */
  readonly heads: readonly string[];
  /** Objects of this shape written so far by the string writer, until `write` is compiled. */
  uses: number;
  /** The string writer specialised to this shape (`compileShape`), once it has been used COMPILE_AFTER times; null when code generation is not allowed. */
  write: ShapeWriter | null | undefined;
}

/** Writes an object of one shape; undefined when a member is undefined (the caller then drops it the slow way). */
type ShapeWriter = (record: Record<string, unknown>, depth: number, memo: WeakMap<object, string> | undefined) => string | undefined;

/** A shape gets its own writer after this many objects: one-off shapes are not worth compiling. */
const COMPILE_AFTER = 8;

/** A trie node: the keys seen so far in for-in order. The first child is inline (most nodes have one). */
interface ShapeNode {
  key: string | undefined;
  child: ShapeNode | undefined;
  more: Map<string, ShapeNode> | undefined;
  shape: Shape | undefined;
}

/** Objects with more keys than this (maps keyed by ids, usually) are never learnt. */
const SHAPE_KEYS_MAX = 24;
/** When the trie holds this many nodes it starts again empty: maps keyed by ids must not grow it without bound. */
const SHAPE_NODES_MAX = 4096;
let shapeRoot = newNode();
let shapeNodes = 0;

function newNode(): ShapeNode {
  return { key: undefined, child: undefined, more: undefined, shape: undefined };
}

/** The shape of a plain object's key sequence, or undefined when it is not (yet) known. */
function knownShape(record: Record<string, unknown>): Shape | undefined {
  let node: ShapeNode | undefined = shapeRoot;
  for (const key in record) {
    node = node.key === key ? node.child : node.more?.get(key);
    if (node === undefined) return undefined;
  }
  return node.shape;
}

/** Learns the shape of an object's key sequence (when it is small enough) and returns it. */
function learnShape(record: Record<string, unknown>): Shape | undefined {
  const keys: string[] = [];
  for (const key in record) {
    if (keys.length === SHAPE_KEYS_MAX) return undefined;
    keys.push(key);
  }
  // An own toJSON (user code) is never written by a shape: such objects take sortedObject, which refuses them.
  if (keys.includes('toJSON')) return undefined;
  if (shapeNodes + keys.length > SHAPE_NODES_MAX) {
    shapeRoot = newNode();
    shapeNodes = 0;
  }
  let node = shapeRoot;
  for (const key of keys) {
    let next = node.key === key ? node.child : node.more?.get(key);
    if (next === undefined) {
      next = newNode();
      shapeNodes++;
      if (node.key === undefined) {
        node.key = key;
        node.child = next;
      } else (node.more ??= new Map()).set(key, next);
    }
    node = next;
  }
  if (node.shape === undefined) {
    const sorted = sortKeysUtf16(keys);
    node.shape = { sorted, heads: sorted.map((key, i) => (i === 0 ? '{' : ',') + fastQuote(key) + ':'), uses: 0, write: undefined };
  }
  return node.shape;
}

/** How many keys the last `sortedKeys` call put in its buffer. */
let keyCount = 0;

/**
 * A plain object's keys in RFC 8785 order, in the reused buffer of `pool` for this depth (no array per
 * object); the count is in `keyCount`. Keys are insertion-sorted as for-in yields them (`<` on strings is
 * UTF-16 code-unit order); objects with many keys take Object.keys and Array#sort with the same order.
 */
function sortedKeys(record: Record<string, unknown>, pool: string[][], depth: number): string[] {
  let keys = pool[depth];
  if (keys === undefined) keys = pool[depth] = [];
  let n = 0;
  for (const key in record) {
    if (n === INSERTION_SORT_MAX) {
      const all = Object.keys(record).sort(compareUtf16);
      keyCount = all.length;
      return all;
    }
    let j = n - 1;
    while (j >= 0 && keys[j]! > key) {
      keys[j + 1] = keys[j]!;
      j--;
    }
    keys[j + 1] = key;
    n++;
  }
  keyCount = n;
  return keys;
}

/** Quoted object keys, remembered: the same few keys recur in every record, and one lookup beats the escape scan. */
const quotedKeys = new Map<string, string>();
const QUOTED_KEYS_MAX = 8192;

function quoteKey(key: string): string {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    quoted = fastQuote(key);
    if (quotedKeys.size < QUOTED_KEYS_MAX) quotedKeys.set(key, quoted);
  }
  return quoted;
}

/** A number's RFC 8785 text: ECMAScript Number::toString, -0 as 0; throws NotCanonical for non-finite numbers. */
function fastNumber(value: number): string {
  if (!Number.isFinite(value)) throw new NotCanonical();
  return value === 0 ? '0' : '' + value;
}

function fast(value: unknown, depth: number, memo: WeakMap<object, string> | undefined): string {
  switch (typeof value) {
    case 'string':
      return fastQuote(value);
    case 'number':
      return fastNumber(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) return 'null';
      if (memo !== undefined) {
        const known = memo.get(value);
        if (known !== undefined) return known;
      }
      if (value === sharedObject && depth === 1) return sharedText ?? (sharedText = fastShared(value, memo));
      // Records are looked up from the members' members down (a transition's tool output is at depth 2): the
      // envelope objects above are never frozen records, and a check per object costs a small transition ~8%.
      if (memo === undefined && depth >= FROZEN_DEPTH_MIN) {
        // An empty array (a step's frozen no-feedback list) is cheaper written than looked up.
        if (Object.isFrozen(value)) return Array.isArray(value) && value.length === 0 ? '[]' : frozenText(value, depth);
        mutableWrites++;
      }
      return fastFresh(value, depth, memo);
    }
    default:
      throw new NotCanonical();
  }
}

/** An object or array written member by member (no lookup of its own text first). */
function fastFresh(value: object, depth: number, memo: WeakMap<object, string> | undefined): string {
  let out: string;
  if (Array.isArray(value)) {
    const n = value.length;
    if (n === 0) out = '[]';
    else {
      const item0: unknown = value[0];
      out = '[' + (item0 === undefined ? 'null' : fast(item0, depth + 1, memo));
      for (let i = 1; i < n; i++) {
        const item: unknown = value[i];
        out += ',' + (item === undefined ? 'null' : fast(item, depth + 1, memo));
      }
      out += ']';
    }
  } else {
    checkProto(value);
    out = fastObject(value as Record<string, unknown>, depth, memo);
  }
  if (memo !== undefined && Object.isFrozen(value)) {
    // Flattening V8's concatenation tree once keeps later texts built from this one cheap to flatten.
    out.charCodeAt(0);
    memo.set(value, out);
  }
  return out;
}

// ---- deep-frozen objects: written once per process ---------------------------------------------
// A tool's answer is often a record of a frozen world, the same object step after step (retail's product
// types, a user, an order). Without a caller's memo, the text of a frozen object whose every member is a
// primitive or another such object (and no getter) is kept by identity: nothing can change it any more.

/** Texts of deep-frozen plain data, by identity (dropped with the object). */
const frozenTexts = new WeakMap<object, string>();
/** Objects nearer the top than this are written without a lookup (a frozen one there is not kept). */
const FROZEN_DEPTH_MIN = 2;
/** Texts longer than this are not kept (a whole frozen world written once must not be held twice). */
const FROZEN_TEXT_MAX = 64 * 1024;
/**
 * Counts the objects `fast` wrote that were not frozen, or frozen with an accessor somewhere in them: unchanged
 * across a frozen object's write means all of it is frozen plain data.
 */
let mutableWrites = 0;

function frozenText(value: object, depth: number): string {
  const known = frozenTexts.get(value);
  if (known !== undefined) return known;
  const before = mutableWrites;
  const out = fastFresh(value, depth, undefined);
  if (mutableWrites !== before || !dataOnly(value)) {
    // Not plain data all the way down: neither this text nor that of a frozen object holding it may be kept.
    mutableWrites++;
  } else if (out.length <= FROZEN_TEXT_MAX) {
    out.charCodeAt(0);
    frozenTexts.set(value, out);
  }
  return out;
}

/** No accessor members: a getter could answer differently next time even on a frozen object. */
function dataOnly(value: object): boolean {
  // The members the writer reads (for-in: enumerable, own or inherited), one descriptor each: measured 6.6x
  // cheaper than Object.getOwnPropertyDescriptors on records of 7 members (178 against 1,178 ns per object,
  // CPU, median of 7). A member with no own descriptor (inherited) is not kept either.
  for (const key in value) {
    const descriptor = Object.getOwnPropertyDescriptor(value, key);
    if (descriptor === undefined || !('value' in descriptor)) return false;
  }
  return true;
}

/** The shared object's text, written as `fast` writes any object. */
function fastShared(value: object, memo: WeakMap<object, string> | undefined): string {
  sharedObject = undefined;
  const out = fast(value, 1, memo);
  sharedObject = value;
  return out;
}

function fastObject(record: Record<string, unknown>, depth: number, memo: WeakMap<object, string> | undefined): string {
  const shape = knownShape(record) ?? learnShape(record);
  if (shape === undefined) return sortedObject(record, depth, memo);
  let compiled = shape.write;
  if (compiled === undefined && ++shape.uses >= COMPILE_AFTER) compiled = shape.write = compileShapeOrNull(shape);
  if (compiled) return compiled(record, depth, memo) ?? sortedObject(record, depth, memo);
  const sorted = shape.sorted;
  const heads = shape.heads;
  const n = sorted.length;
  if (n === 0) return '{}';
  let out = '';
  for (let i = 0; i < n; i++) {
    const item = record[sorted[i]!];
    let text: string;
    switch (typeof item) {
      case 'string':
        text = fastQuote(item);
        break;
      case 'number':
        text = fastNumber(item);
        break;
      case 'boolean':
        text = item ? 'true' : 'false';
        break;
      case 'undefined':
        // A member to drop: the heads assume every member is written.
        return sortedObject(record, depth, memo);
      default:
        text = fast(item, depth + 1, memo);
    }
    out += heads[i]! + text;
  }
  return out + '}';
}

/** An object whose shape is not learnt (many keys) or that has members to drop. */
function sortedObject(record: Record<string, unknown>, depth: number, memo: WeakMap<object, string> | undefined): string {
  if (typeof record.toJSON === 'function') throw new NotCanonical();
  const keys = sortedKeys(record, scratch, depth);
  const n = keyCount;
  let out = '{';
  let first = true;
  for (let i = 0; i < n; i++) {
    const key = keys[i]!;
    const item = record[key];
    if (item === undefined) continue;
    out += (first ? '' : ',') + quoteKey(key) + ':' + fast(item, depth + 1, memo);
    first = false;
  }
  return out + '}';
}

/**
 * The string writer of one shape as its own function: each member read by name (an inline cache per member,
 * where `record[sorted[i]]` is one megamorphic keyed load for every member of every shape) and written after
 * its constant head. Measured on transitions (same process, CPU, median of 9): 1.74 -> 1.56 µs, JSON.stringify
 * 1.53. The code is made from the shape's keys only, each a JSON string literal (which is a JS string literal).
 */
function compileShape(shape: Shape): ShapeWriter {
  const n = shape.sorted.length;
  if (n === 0) return () => '{}';
  let body = 'let v, t, s = "";\n';
  for (let i = 0; i < n; i++) {
    body +=
      `v = r[${JSON.stringify(shape.sorted[i])}];\n` +
      'switch (typeof v) { case "string": t = quote(v); break; case "number": t = number(v); break; ' +
      'case "boolean": t = v ? "true" : "false"; break; case "undefined": return undefined; default: t = write(v, depth + 1, memo); }\n' +
      `s += ${JSON.stringify(shape.heads[i])} + t;\n`;
  }
  body += 'return s + "}";';
  const make = new Function('quote', 'number', 'write', `return function writeShape(r, depth, memo) {\n${body}\n};`) as (
    quote: typeof fastQuote,
    number: typeof fastNumber,
    write: typeof fast,
  ) => ShapeWriter;
  return make(fastQuote, fastNumber, fast);
}

/** `compileShape`, or null (the shape keeps the generic loop) where code generation from strings is disallowed. */
function compileShapeOrNull(shape: Shape): ShapeWriter | null {
  try {
    return compileShape(shape);
  } catch {
    return null;
  }
}

// ---- one object's text, written once for every text that holds it --------------------------------
// A step's observation (the tool output: most of a step's bytes) is in the transition the recorder writes and
// in the reply the server writes. The recorder marks it (`shareCanonical`) before the transition is written;
// the transition's writer keeps the text it wrote for it; the reply takes that text (`takeCanonical`) instead of
// serialising the output again. One object at a time, held by identity: only code holding the very object can
// mark it (no value, whatever it looks like, is ever taken for a written text), and the text is that object's
// canonical JSON as it was when written (the caller does not change the object between the two writes).

/** The object marked by `shareCanonical`, and its canonical text once a write met it as a member of the top-level value. */
let sharedObject: object | undefined;
let sharedText: string | undefined;

/**
 * Marks `value` (replacing any earlier mark): the next `canonicalize` that writes it as a member of the
 * value it is given (a transition's `observation`) keeps the text, and `takeCanonical(value)` returns it.
 * The text is never used where it would change what is written: it is the object's own canonical JSON.
 */
export function shareCanonical(value: object): void {
  sharedObject = value;
  sharedText = undefined;
}

/**
 * The canonical JSON written for `value` since `shareCanonical(value)`, and the mark is cleared; undefined
 * when `value` is not the marked object or was not written (it has no canonical form, or no writer met it).
 */
export function takeCanonical(value: object): string | undefined {
  if (value !== sharedObject) return undefined;
  const text = sharedText;
  sharedObject = undefined;
  sharedText = undefined;
  return text;
}

// ---- the same canonical form written straight to UTF-8 bytes, for hashing ----------------------
// Building a string and letting crypto flatten and encode it costs about 1.5 times as much as writing
// the bytes once (measured on task ids). The buffer is private, used synchronously, and never escapes a call.

/** What a byte-writing caller may put: raw ASCII (structure it knows is canonical), a JSON string, any JSON value. */
export interface CanonicalBytes {
  /** Appends ASCII text as is (the caller's own structure, e.g. `{"domain":`). */
  ascii(text: string): void;
  /** Appends a JSON string literal. */
  string(text: string): void;
  /** Appends the canonical JSON of a value. */
  value(value: unknown): void;
}

let bytes = new Uint8Array(4096);
let length = 0;
let bytesBusy = false;
const byteScratch: string[][] = [];
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

// Within one call with `rememberRepeats`, an object written a second time (a retail task's user goal is
// both params.goal and spec.user) is copied from the bytes written the first time. Only near the top: few lookups.
const REMEMBER_DEPTH = 3;
let remembered: Map<object, [number, number]> | undefined;

function putValue(value: unknown, depth: number): void {
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
      if (remembered !== undefined && depth < REMEMBER_DEPTH) putRemembered(value, remembered, depth);
      else putObject(value, depth);
      return;
    }
    default:
      throw new NotCanonical();
  }
}

function putRemembered(value: object, seen: Map<object, [number, number]>, depth: number): void {
  const range = seen.get(value);
  if (range !== undefined) {
    const [start, end] = range;
    reserve(end - start);
    bytes.copyWithin(length, start, end);
    length += end - start;
    return;
  }
  const begin = length;
  putObject(value, depth);
  seen.set(value, [begin, length]);
}

function putObject(value: object, depth: number): void {
  reserve(1);
  if (Array.isArray(value)) {
    bytes[length++] = 0x5b;
    for (let i = 0; i < value.length; i++) {
      if (i > 0) {
        reserve(1);
        bytes[length++] = 0x2c;
      }
      const item: unknown = value[i];
      if (item === undefined) putAscii('null');
      else putValue(item, depth + 1);
    }
    reserve(1);
    bytes[length++] = 0x5d;
    return;
  }
  const record = value as Record<string, unknown>;
  checkPlain(record);
  bytes[length++] = 0x7b;
  const shape = knownShape(record) ?? learnShape(record);
  const keys = shape !== undefined ? shape.sorted : sortedKeys(record, byteScratch, depth);
  const n = shape !== undefined ? keys.length : keyCount;
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
    putValue(item, depth + 1);
  }
  reserve(1);
  bytes[length++] = 0x7d;
}

const WRITER: CanonicalBytes = {
  ascii: putAscii,
  string: putString,
  value: (value) => putValue(value, 0),
};

/**
 * Runs a byte writer and returns the hex sha256 of the canonical UTF-8 bytes it wrote, or undefined when
 * something written has no canonical form (or the writer is already in use): the caller then hashes
 * `canonicalize` of the same value, which names any error. With `rememberRepeats`, an object written twice
 * near the top is copied from its first bytes.
 */
export function sha256OfCanonicalBytes(writeAll: (out: CanonicalBytes) => void, rememberRepeats = false): string | undefined {
  if (bytesBusy) return undefined;
  bytesBusy = true;
  length = 0;
  if (rememberRepeats) remembered = new Map();
  try {
    writeAll(WRITER);
    return hash('sha256', bytes.subarray(0, length), 'hex');
  } catch (error) {
    if (error instanceof NotCanonical) return undefined;
    throw error;
  } finally {
    bytesBusy = false;
    remembered = undefined;
  }
}

/** Hex sha256 of the RFC 8785 canonical JSON of a value (UTF-8), without building the string. */
export function canonicalSha256(value: unknown): string {
  if (!bytesBusy) {
    bytesBusy = true;
    length = 0;
    try {
      putValue(value, 0);
      return hash('sha256', bytes.subarray(0, length), 'hex');
    } catch (error) {
      if (!(error instanceof NotCanonical)) throw error;
    } finally {
      bytesBusy = false;
    }
  }
  return hash('sha256', canonicalize(value), 'hex');
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
