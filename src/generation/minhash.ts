/** MinHash signatures of tasks and an LSH-banded index over them, for the near-duplicate and leakage gates. */
import { canonicalize, createRng, EnvHarnessError, MINHASH_PERMUTATIONS, SHINGLE_SIZE } from '../core/index.js';
import type { JsonValue, Task } from '../core/index.js';
import { createSimdSignature } from './minhash-simd.js';

/** A task's MinHash signature: MINHASH_PERMUTATIONS unsigned 32-bit minima. */
export type MinHashSignature = Uint32Array;

/** The serialised form of a `MinHashIndex`: ids and hex signatures in insertion order. */
export interface MinHashIndexData {
  format: 'envharness.minhash/1';
  permutations: number;
  shingleSize: number;
  entries: Array<{ id: string; signature: string }>;
}

const FORMAT = 'envharness.minhash/1';
/**
 * The LSH banding for a threshold. A pair with fewer unequal minima than there are bands shares at
 * least one band (pigeonhole), so with bands >= 65 - 64 * threshold every stored signature whose
 * estimated similarity reaches the threshold is a candidate: the index is exact, and as few bands as
 * that (8 at the default 0.9) keep unrelated candidates rare.
 */
function bandsFor(threshold: number): number {
  const needed = MINHASH_PERMUTATIONS + 1 - MINHASH_PERMUTATIONS * threshold;
  let bands = 8;
  while (bands < needed && bands < MINHASH_PERMUTATIONS) bands *= 2;
  return bands;
}

// The permutations are fixed forever by this seed: changing it would change every signature.
const PERMUTATION_SEED = createRng(['envharness/minhash', 1]);
const XOR = new Int32Array(MINHASH_PERMUTATIONS);
const MUL = new Int32Array(MINHASH_PERMUTATIONS);
for (let i = 0; i < MINHASH_PERMUTATIONS; i++) {
  XOR[i] = PERMUTATION_SEED.nextUint32();
  MUL[i] = PERMUTATION_SEED.nextUint32() | 1;
}

// The same minima four permutations at a time (WebAssembly SIMD), where the engine has it.
const SIMD = createSimdSignature(XOR, MUL);

/** murmur3's finaliser: a bijection on 32-bit integers with good avalanche. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** FNV-1a over UTF-16 code units, finalised. */
function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return fmix32(h);
}

const PUNCTUATION = /[^\p{L}\p{N}\s]+/gu;
const SPACE = /\s+/;

/** Lower-case, punctuation replaced by spaces, whitespace collapsed: the words MinHash sees. */
export function normalizeWords(text: string): string[] {
  const words = text.toLowerCase().replace(PUNCTUATION, ' ').split(SPACE);
  return words.filter((w) => w !== '');
}

// One task's feature hashes (and its instructions' word hashes) go into scratch buffers reused from task to
// task, grown as needed: a signature allocates no arrays. Only the functions below touch them, each run
// to completion (no re-entry), so a buffer never holds two tasks' features at once.
// With WebAssembly, features are written straight into the module's memory (until a task has more than it holds).
let featureBuffer = SIMD?.features ?? new Int32Array(256);
let featureCount = 0;
let wordBuffer = new Int32Array(256);
let wordCount = 0;

function pushFeature(h: number): void {
  if (featureCount === featureBuffer.length) {
    const grown = new Int32Array(featureBuffer.length * 2);
    grown.set(featureBuffer);
    featureBuffer = grown;
  }
  featureBuffer[featureCount++] = h;
}

function pushWord(h: number): void {
  if (wordCount === wordBuffer.length) {
    const grown = new Int32Array(wordBuffer.length * 2);
    grown.set(wordBuffer);
    wordBuffer = grown;
  }
  wordBuffer[wordCount++] = h;
}

/**
 * `normalizeWords(text).map(hashString)` into the word buffer. ASCII text (the usual case) is scanned
 * once, hashing each maximal run of letters and digits lower-cased as it goes: in ASCII those runs are
 * exactly the words (every other character is whitespace or punctuation, and both separate words).
 */
function wordHashes(text: string): void {
  wordCount = 0;
  let h = 0x811c9dc5;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c > 0x7f) {
      wordCount = 0;
      for (const word of normalizeWords(text)) pushWord(hashString(word));
      return;
    }
    if (c >= 0x41 && c <= 0x5a) c += 0x20;
    else if (!((c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39))) {
      if (inWord) pushWord(fmix32(h));
      inWord = false;
      h = 0x811c9dc5;
      continue;
    }
    h = Math.imul(h ^ c, 0x01000193);
    inWord = true;
  }
  if (inWord) pushWord(fmix32(h));
}

/** The feature hashes of a task into the feature buffer: word shingles of its instructions plus one feature per param leaf. */
function features(instructions: string, params: JsonValue): void {
  featureCount = 0;
  if (SIMD !== undefined) featureBuffer = SIMD.features; // back from a larger buffer a long text needed
  instructionFeatures(instructions);
  paramFeatures(params, PARAM_STATE);
}

// Tasks of one template usually share their instructions: the last text's shingles are kept (pure memo),
// copied into a buffer of their own that is reused too.
let lastInstructions: string | undefined;
let lastShingles = new Int32Array(256);
let lastShingleCount = 0;

function instructionFeatures(instructions: string): void {
  if (instructions === lastInstructions) {
    for (let i = 0; i < lastShingleCount; i++) pushFeature(lastShingles[i]!);
    return;
  }
  wordHashes(instructions);
  const words = wordBuffer;
  const n = wordCount;
  if (n > 0 && n < SHINGLE_SIZE) {
    let h = 0;
    for (let i = 0; i < n; i++) h = fmix32(Math.imul(h, 0x9e3779b1) ^ words[i]!);
    pushFeature(h);
  }
  for (let i = 0; i + SHINGLE_SIZE <= n; i++) {
    let h = 0;
    for (let k = 0; k < SHINGLE_SIZE; k++) h = fmix32(Math.imul(h, 0x9e3779b1) ^ words[i + k]!);
    pushFeature(h);
  }
  // Called first for a task, so the buffer holds exactly these shingles.
  if (lastShingles.length < featureCount) lastShingles = new Int32Array(featureBuffer.length);
  for (let i = 0; i < featureCount; i++) lastShingles[i] = featureBuffer[i]!;
  lastShingleCount = featureCount;
  lastInstructions = instructions;
}

/** FNV-1a state after `text`, continuing from state `h` (so a prefix is hashed once for every leaf under it). */
function fnv(h: number, text: string): number {
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h;
}

/** `fnv(h, String(n))` for an integer, digit by digit below 2^31 (no string); -0 is written "0", as String does. */
function fnvInteger(h: number, n: number): number {
  if (n < 0) {
    h = Math.imul(h ^ 0x2d, 0x01000193);
    n = -n;
  }
  if (n > 0x7fffffff) return fnv(h, String(n));
  let scale = 1;
  while (scale * 10 <= n) scale *= 10;
  while (scale >= 1) {
    const digit = (n / scale) | 0;
    h = Math.imul(h ^ (0x30 + digit), 0x01000193);
    n -= digit * scale;
    scale = (scale / 10) | 0;
  }
  return h;
}

const PARAM_STATE = fnv(0x811c9dc5, '\u0000param');
const SLASH = 0x2f;
const EQUALS = 0x3d;

// A leaf's feature is hashString(`\u0000param${pointer}=${canonical value}`); the FNV state is carried
// down the path instead of building each pointer string.
function paramFeatures(value: JsonValue, h: number): void {
  if (value !== null && typeof value === 'object') {
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        if (!(i in value)) continue; // forEach's holes
        paramFeatures(value[i]!, fnvInteger(Math.imul(h ^ SLASH, 0x01000193), i));
      }
    } else {
      for (const key of Object.keys(value).sort()) paramFeatures(value[key]!, fnv(Math.imul(h ^ SLASH, 0x01000193), key));
    }
    return;
  }
  const at = Math.imul(h ^ EQUALS, 0x01000193);
  pushFeature(fmix32(Number.isInteger(value) ? fnvInteger(at, value as number) : fnv(at, leafText(value))));
}

/** A leaf's canonical JSON: a finite number's or a boolean's is its `String` (RFC 8785); the rest through `canonicalize`. */
function leafText(value: JsonValue): string {
  if ((typeof value === 'number' && Number.isFinite(value)) || typeof value === 'boolean') return String(value);
  return canonicalize(value);
}

/** The MinHash signature of instructions plus canonical params. */
export function minhashText(instructions: string, params: JsonValue = null): MinHashSignature {
  const signature = new Uint32Array(MINHASH_PERMUTATIONS);
  features(instructions, params);
  signatureInto(signature, 0);
  return signature;
}

/** The MinHash signature of a task (its normalised instructions and canonical params). */
export function minhashTask(task: Pick<Task, 'spec' | 'params'>): MinHashSignature {
  return minhashText(task.spec.instructions, task.params);
}

/**
 * `minhashTask(task)` written into `out` at `offset` (a chunk's signatures back to back): no typed array
 * per task.
 */
export function minhashTaskInto(task: Pick<Task, 'spec' | 'params'>, out: Uint32Array, offset: number): void {
  features(task.spec.instructions, task.params);
  signatureInto(out, offset);
}

/** The signature of the features in the buffer, into `out` at `offset`. */
function signatureInto(out: Uint32Array, offset: number): void {
  const n = featureCount;
  if (SIMD !== undefined && featureBuffer === SIMD.features) {
    SIMD.run(n);
    out.set(SIMD.out, offset);
    return;
  }
  signatureOfFeatures(featureBuffer, n, out, offset);
}

/** @internal The WebAssembly signature of features [0, n) of `hashes`, or undefined without SIMD (or past its capacity). */
export function simdSignatureOfFeatures(hashes: Int32Array, n: number): Uint32Array | undefined {
  if (SIMD === undefined || n > SIMD.capacity) return undefined;
  SIMD.features.set(hashes.subarray(0, n));
  SIMD.run(n);
  return SIMD.out.slice();
}

/**
 * @internal The JavaScript signature of features [0, n) of `hashes` into `out` at `offset`: what the
 * WebAssembly module computes (tested equal), and what runs without it.
 */
export function signatureOfFeatures(hashes: Int32Array, n: number, out: Uint32Array, offset: number): void {
  for (let i = 0; i < MINHASH_PERMUTATIONS; i++) {
    const xor = XOR[i]!;
    const mul = MUL[i]!;
    // Minima compared as signed 32-bit integers with the top bit flipped: the unsigned order, without
    // leaving int32 arithmetic.
    let min = 0x7fffffff;
    for (let f = 0; f < n; f++) {
      // xor, odd multiply and xorshifts are each bijective, so this is a permutation of 2^32.
      let h = Math.imul(hashes[f]! ^ xor, mul);
      h ^= h >>> 15;
      h = Math.imul(h, 0x2c1b3c6d);
      h = h ^ (h >>> 12) ^ 0x80000000;
      // min = h < min ? h : min, without a branch (a new minimum is unpredictable): the halves' difference
      // fits in 31 bits, and the low bits break its tie.
      const less = ((h >> 1) - (min >> 1) - (~h & min & 1)) >> 31;
      min = (h & less) | (min & ~less);
    }
    out[offset + i] = min ^ 0x80000000;
  }
}

/** Estimated Jaccard similarity of two signatures: the share of equal minima. */
export function estimateSimilarity(a: MinHashSignature, b: MinHashSignature): number {
  let same = 0;
  for (let i = 0; i < MINHASH_PERMUTATIONS; i++) if (a[i] === b[i]) same++;
  return same / MINHASH_PERMUTATIONS;
}

/** A band's bucket key; 30 bits so that V8 keeps it a small integer (collisions are re-checked anyway). */
function bandKey(signature: MinHashSignature, offset: number, band: number, rows: number): number {
  let h = band + 1;
  const start = offset + band * rows;
  for (let r = 0; r < rows; r++) h = fmix32(Math.imul(h, 0x9e3779b1) ^ signature[start + r]!);
  return h >>> 2;
}

/**
 * A signature's LSH band keys for a threshold's banding. A caller that queries (and adds to) several
 * indexes with one signature computes them once and passes them along; results are the same. With
 * `into`, the keys are written there (its length set to the band count) and it is returned.
 */
export function bandKeysOf(signature: MinHashSignature, threshold: number, into?: number[]): number[] {
  const bands = bandsFor(threshold);
  const rows = MINHASH_PERMUTATIONS / bands;
  const keys = into ?? [];
  keys.length = 0;
  for (let band = 0; band < bands; band++) keys.push(bandKey(signature, 0, band, rows));
  return keys;
}

/**
 * One banding of the index: per band, bucket key -> the entry positions with that key, in insertion order.
 * Typed arrays instead of a Map per band: each band hashes its keys into `slots` chains (a chain may mix
 * keys that share a slot; readers skip the other keys), so adding an entry allocates nothing but growth.
 */
class BandTable {
  readonly rows: number;
  /** keys[position * bands + band]: the entry's bucket key in that band. */
  private keys = new Int32Array(0);
  /** next[position * bands + band]: the next position in the same slot of that band, or -1. */
  private next = new Int32Array(0);
  /**
   * ends[2 * (band * slots + slot)] and the entry after it: the first and last position in that slot, or -1.
   * Side by side, a query's read of a slot's head brings its tail into the cache for the add that follows.
   */
  private ends = new Int32Array(0);
  private slots = 0;
  private count = 0;

  /** `capacity`: the entries expected, allocated up front (growing copies the arrays and rehashes every entry). */
  constructor(readonly bands: number, capacity = 64) {
    this.rows = MINHASH_PERMUTATIONS / bands;
    let slots = 64;
    while (slots < capacity) slots *= 2;
    this.keys = new Int32Array(bands * slots);
    this.next = new Int32Array(bands * slots);
    this.resize(slots);
  }

  /** Appends the entry at `position` (always the next one): its band keys, given or computed from its signature. */
  add(position: number, signatures: Uint32Array, keys?: readonly number[]): void {
    const bands = this.bands;
    if ((position + 1) * bands > this.keys.length) this.grow();
    for (let band = 0; band < bands; band++) {
      this.keys[position * bands + band] = keys !== undefined ? keys[band]! : bandKey(signatures, position * MINHASH_PERMUTATIONS, band, this.rows);
    }
    this.count = position + 1;
    if (this.count > this.slots) this.resize(this.slots * 2);
    else this.link(position);
  }

  /** Appends the entry at `position` (always the next one) with the band keys `source` holds for its entry at `from`. */
  addCopied(position: number, source: BandTable, from: number): void {
    const bands = this.bands;
    if ((position + 1) * bands > this.keys.length) this.grow();
    this.keys.set(source.keys.subarray(from * bands, (from + 1) * bands), position * bands);
    this.count = position + 1;
    if (this.count > this.slots) this.resize(this.slots * 2);
    else this.link(position);
  }

  /** The first position of the chain `key` falls in, in band `band` (-1: none); walk on with `after`. */
  first(band: number, key: number): number {
    return this.ends[2 * (band * this.slots + (key & (this.slots - 1)))]!;
  }

  /** The position after `position` in its chain of band `band` (-1: the end). */
  after(band: number, position: number): number {
    return this.next[position * this.bands + band]!;
  }

  /** The key of the entry at `position` in band `band`. */
  keyAt(band: number, position: number): number {
    return this.keys[position * this.bands + band]!;
  }

  /** Doubles the per-entry arrays. */
  private grow(): void {
    const keys = new Int32Array(this.keys.length * 2 || this.bands * 64);
    keys.set(this.keys);
    this.keys = keys;
    const next = new Int32Array(keys.length);
    next.set(this.next);
    this.next = next;
  }

  private link(position: number): void {
    const { bands, slots, ends, keys, next } = this;
    for (let band = 0; band < bands; band++) {
      const at = position * bands + band;
      const slot = band * slots + (keys[at]! & (slots - 1));
      next[at] = -1;
      const tail = ends[2 * slot + 1]!;
      if (tail === -1) ends[2 * slot] = position;
      else next[tail * bands + band] = position;
      ends[2 * slot + 1] = position;
    }
  }

  /** Rehashes every entry, in insertion order, into `slots` slots per band. */
  private resize(slots: number): void {
    this.slots = slots;
    this.ends = new Int32Array(2 * this.bands * slots).fill(-1);
    for (let position = 0; position < this.count; position++) this.link(position);
  }
}

/** A match found in an index. */
export interface MinHashMatch {
  id: string;
  similarity: number;
}

/**
 * Task ids and their MinHash signatures, banded (LSH) so that a query touches only likely
 * matches. Build it from the stored pool with `add(task)`; `toJSON()` and `fromJSON()` serialise it.
 */
export class MinHashIndex {
  private ids: string[] = [];
  /** Position by id; with `uniqueIds`, built only when first asked (`has`, `signatureOf`). */
  private positions: Map<string, number> | undefined;
  private signatures: Uint32Array;
  // Bandings by band count, built on the first query that needs one and kept up to date after.
  private tables: BandTable[] = [];
  // Per-entry "seen in this query" marks, so an entry sharing several bands is compared once.
  private marks: Uint32Array;
  private query = 0;
  private readonly capacity: number;

  /**
   * `capacity`: the entries expected (e.g. a batch's candidates), allocated up front instead of grown by
   * copying. `uniqueIds`: the caller never adds an id twice (a batch's accepted tasks), so no id map is
   * kept unless `has` or `signatureOf` is called. Neither changes any result.
   */
  constructor(options: { capacity?: number; uniqueIds?: boolean } = {}) {
    this.capacity = Math.max(64, Math.floor(options.capacity ?? 64));
    this.signatures = new Uint32Array(MINHASH_PERMUTATIONS * this.capacity);
    this.marks = new Uint32Array(this.capacity);
    this.positions = options.uniqueIds === true ? undefined : new Map();
  }

  get size(): number {
    return this.ids.length;
  }

  has(id: string): boolean {
    return this.lookup().has(id);
  }

  private lookup(): Map<string, number> {
    if (this.positions === undefined) {
      const positions = new Map<string, number>();
      this.ids.forEach((id, position) => positions.set(id, position));
      this.positions = positions;
    }
    return this.positions;
  }

  /** Adds a task (ignored when its id is already present). */
  add(task: Pick<Task, 'id' | 'spec' | 'params'>): void {
    if (!this.lookup().has(task.id)) this.addSignature(task.id, minhashTask(task));
  }

  /** Adds a precomputed signature (ignored when the id is already present); `keys` from `bandKeysOf`, if at hand. */
  addSignature(id: string, signature: MinHashSignature, keys?: readonly number[]): void {
    const positions = this.positions;
    if (positions?.has(id) === true) return;
    if (signature.length !== MINHASH_PERMUTATIONS) {
      throw new EnvHarnessError('PARAMS_INVALID', `a MinHash signature has ${MINHASH_PERMUTATIONS} values, got ${signature.length}`);
    }
    const position = this.ids.length;
    this.reserve(position + 1);
    this.signatures.set(signature, position * MINHASH_PERMUTATIONS);
    this.ids.push(id);
    positions?.set(id, position);
    for (const table of this.tables) this.band(table, position, keys?.length === table.bands ? keys : undefined);
  }

  /**
   * Adds every entry of `source` in its order: the same index as `addSignature` of each (an id present already is
   * skipped), without taking the signatures out one by one or banding again what `source` has banded already.
   */
  addAll(source: MinHashIndex): void {
    const count = source.ids.length;
    const positions = this.positions;
    if (source === this || count === 0) return;
    if (positions !== undefined && source.ids.some((id) => positions.has(id))) {
      source.ids.forEach((id, k) => this.addSignature(id, source.signatures.subarray(k * MINHASH_PERMUTATIONS, (k + 1) * MINHASH_PERMUTATIONS)));
      return;
    }
    const start = this.ids.length;
    this.reserve(start + count);
    this.signatures.set(source.signatures.subarray(0, count * MINHASH_PERMUTATIONS), start * MINHASH_PERMUTATIONS);
    for (let k = 0; k < count; k++) {
      const id = source.ids[k]!;
      this.ids.push(id);
      positions?.set(id, start + k);
    }
    for (const table of this.tables) {
      const banded = source.tables.find((t) => t.bands === table.bands);
      for (let k = 0; k < count; k++) {
        if (banded !== undefined) table.addCopied(start + k, banded, k);
        else this.band(table, start + k);
      }
    }
  }

  /** Room for `entries` signatures and marks, doubling as often as needed. */
  private reserve(entries: number): void {
    let capacity = this.marks.length;
    if (entries <= capacity) return;
    while (entries > capacity) capacity *= 2;
    const grown = new Uint32Array(capacity * MINHASH_PERMUTATIONS);
    grown.set(this.signatures);
    this.signatures = grown;
    const marks = new Uint32Array(capacity);
    marks.set(this.marks);
    this.marks = marks;
  }

  /** The id of the entry at `position` (insertion order). */
  idAt(position: number): string | undefined {
    return this.ids[position];
  }

  private band(table: BandTable, position: number, keys?: readonly number[]): void {
    table.add(position, this.signatures, keys);
  }

  private tableFor(bands: number): BandTable {
    let table = this.tables.find((t) => t.bands === bands);
    if (table === undefined) {
      table = new BandTable(bands, Math.max(this.capacity, this.ids.length));
      for (let position = 0; position < this.ids.length; position++) this.band(table, position);
      this.tables.push(table);
    }
    return table;
  }

  /** The signature stored for an id. */
  signatureOf(id: string): MinHashSignature | undefined {
    const position = this.lookup().get(id);
    if (position === undefined) return undefined;
    return this.signatures.slice(position * MINHASH_PERMUTATIONS, (position + 1) * MINHASH_PERMUTATIONS);
  }

  /**
   * The first entry (in band order, then insertion order: deterministic) whose estimated Jaccard
   * similarity with `signature` is at least `threshold`. Exact: it finds one whenever a linear scan would.
   */
  findSimilar(signature: MinHashSignature, threshold: number, keys?: readonly number[]): MinHashMatch | undefined {
    if (this.ids.length === 0) return undefined;
    this.query = (this.query + 1) >>> 0;
    if (this.query === 0) {
      this.marks.fill(0);
      this.query = 1;
    }
    const bands = bandsFor(threshold);
    const rows = MINHASH_PERMUTATIONS / bands;
    const table = this.tableFor(bands);
    const given = keys?.length === bands ? keys : undefined;
    for (let band = 0; band < bands; band++) {
      const key = given !== undefined ? given[band]! : bandKey(signature, 0, band, rows);
      for (let position = table.first(band, key); position !== -1; position = table.after(band, position)) {
        if (table.keyAt(band, position) !== key) continue;
        const match = this.matchAt(signature, position, threshold);
        if (match !== undefined) return match;
      }
    }
    return undefined;
  }

  /** The entry at `position` if this query has not compared it yet and it reaches the threshold. */
  private matchAt(signature: MinHashSignature, position: number, threshold: number): MinHashMatch | undefined {
    if (this.marks[position] === this.query) return undefined;
    this.marks[position] = this.query;
    const similarity = this.similarityAt(signature, position);
    return similarity >= threshold ? { id: this.ids[position]!, similarity } : undefined;
  }

  private similarityAt(signature: MinHashSignature, position: number): number {
    const offset = position * MINHASH_PERMUTATIONS;
    const stored = this.signatures;
    let same = 0;
    for (let i = 0; i < MINHASH_PERMUTATIONS; i++) if (stored[offset + i] === signature[i]) same++;
    return same / MINHASH_PERMUTATIONS;
  }

  /** Plain JSON: ids and hex signatures in insertion order. */
  toJSON(): MinHashIndexData {
    const entries = this.ids.map((id, position) => {
      let hex = '';
      for (let i = 0; i < MINHASH_PERMUTATIONS; i++) {
        hex += this.signatures[position * MINHASH_PERMUTATIONS + i]!.toString(16).padStart(8, '0');
      }
      return { id, signature: hex };
    });
    return { format: FORMAT, permutations: MINHASH_PERMUTATIONS, shingleSize: SHINGLE_SIZE, entries };
  }

  /** Rebuilds an index from `toJSON()` output; throws `IMPORT_INVALID` for another format. */
  static fromJSON(data: MinHashIndexData): MinHashIndex {
    if (
      data === null || typeof data !== 'object' || data.format !== FORMAT ||
      data.permutations !== MINHASH_PERMUTATIONS || data.shingleSize !== SHINGLE_SIZE || !Array.isArray(data.entries)
    ) {
      throw new EnvHarnessError(
        'IMPORT_INVALID',
        `not a MinHash index of format ${FORMAT} with ${MINHASH_PERMUTATIONS} permutations and shingle size ${SHINGLE_SIZE}; rebuild it from the tasks`,
        { details: { pointer: '/format' } },
      );
    }
    const index = new MinHashIndex();
    const hexLength = MINHASH_PERMUTATIONS * 8;
    data.entries.forEach((entry, i) => {
      if (typeof entry?.id !== 'string' || typeof entry.signature !== 'string' || !/^[0-9a-f]*$/.test(entry.signature) || entry.signature.length !== hexLength) {
        throw new EnvHarnessError('IMPORT_INVALID', `MinHash index entry ${i} needs an id and a ${hexLength}-character hex signature`, {
          details: { pointer: `/entries/${i}` },
        });
      }
      const signature = new Uint32Array(MINHASH_PERMUTATIONS);
      for (let k = 0; k < MINHASH_PERMUTATIONS; k++) signature[k] = parseInt(entry.signature.slice(k * 8, k * 8 + 8), 16);
      index.addSignature(entry.id, signature);
    });
    return index;
  }
}
