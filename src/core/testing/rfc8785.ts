/** A reference RFC 8785 writer and JSON arbitraries for property tests of the canonical writers. */
import { fc } from '@fast-check/vitest';

// ---- the reference: RFC 8785 section 3.2, spelled out, no shortcuts shared with the code under test ----

/** Thrown by `reference` for a value with no canonical form. */
export class NoCanonicalForm extends Error {}

/** x as an exact fraction num / den (den a power of two). */
function exactFraction(x: number): { num: bigint; den: bigint } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const exponentBits = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & ((1n << 52n) - 1n);
  const mantissa = exponentBits === 0 ? fraction : fraction | (1n << 52n);
  const e = (exponentBits === 0 ? 1 : exponentBits) - 1075; // x = mantissa x 2^e
  return e >= 0 ? { num: mantissa << BigInt(e), den: 1n } : { num: mantissa, den: 1n << BigInt(-e) };
}

/** Sign of |a x 10^q - x| - |b x 10^q - x|, exactly (x > 0). */
function compareDistance(a: bigint, b: bigint, q: number, x: number): number {
  const { num, den } = exactFraction(x);
  // Scale everything by den x 10^max(0,-q) to stay in integers.
  const up = q >= 0 ? 10n ** BigInt(q) : 1n;
  const down = q < 0 ? 10n ** BigInt(-q) : 1n;
  const target = num * down;
  const dist = (s: bigint): bigint => {
    const d = s * up * den - target;
    return d < 0n ? -d : d;
  };
  const da = dist(a);
  const db = dist(b);
  return da < db ? -1 : da > db ? 1 : 0;
}

/** ECMAScript Number::toString (ECMA-262 7.1.12.1), which RFC 8785 section 3.2.2.3 adopts. */
function referenceNumber(x: number): string {
  if (!Number.isFinite(x)) throw new NoCanonicalForm(`number ${x}`);
  if (x === 0) return '0'; // both +0 and -0
  if (x < 0) return '-' + referenceNumber(-x);
  // The shortest digit string s (k digits) with s x 10^(n-k) === x. toPrecision(k) is the correctly rounded
  // k-digit string, but it breaks a tie upwards where Number::toString wants the even one (and, at the
  // shortest k, a neighbour of the rounded string may read back as x too), so the candidates are the rounded
  // string and its two neighbours, compared with x exactly.
  let digits = '';
  let n = 0;
  for (let k = 1; k <= 17; k++) {
    if (Number(x.toPrecision(k)) !== x) continue;
    const [mantissa, exponent] = x.toExponential(k - 1).split('e') as [string, string];
    const rounded = BigInt(mantissa.replace('.', ''));
    const q = Number(exponent) - (k - 1); // s x 10^q
    let best: bigint | undefined;
    for (const s of [rounded - 1n, rounded, rounded + 1n]) {
      if (String(s).length !== k || Number(`${s}e${q}`) !== x) continue;
      if (best === undefined) best = s;
      else {
        const order = compareDistance(s, best, q, x);
        if (order < 0 || (order === 0 && s % 2n === 0n)) best = s;
      }
    }
    digits = String(best);
    n = q + k;
    break;
  }
  const k = digits.length;
  if (k <= n && n <= 21) return digits + '0'.repeat(n - k);
  if (0 < n && n <= 21) return digits.slice(0, n) + '.' + digits.slice(n);
  if (-6 < n && n <= 0) return '0.' + '0'.repeat(-n) + digits;
  const e = n - 1;
  const sign = e < 0 ? '-' : '+';
  const mant = k === 1 ? digits : digits[0] + '.' + digits.slice(1);
  return mant + 'e' + sign + String(Math.abs(e));
}

/** RFC 8785 section 3.2.2.2: JSON string with the short escapes, other controls as \u00xx (lower-case hex). */
function referenceString(text: string): string {
  let out = '"';
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = i + 1 < text.length ? text.charCodeAt(i + 1) : -1;
      if (!(next >= 0xdc00 && next <= 0xdfff)) throw new NoCanonicalForm('lone high surrogate');
      out += text[i]! + text[i + 1]!;
      i++;
      continue;
    }
    if (c >= 0xdc00 && c <= 0xdfff) throw new NoCanonicalForm('lone low surrogate');
    const short: Record<number, string> = { 0x08: '\\b', 0x09: '\\t', 0x0a: '\\n', 0x0c: '\\f', 0x0d: '\\r', 0x22: '\\"', 0x5c: '\\\\' };
    if (short[c] !== undefined) out += short[c];
    else if (c < 0x20) out += '\\u' + c.toString(16).padStart(4, '0');
    else out += text[i];
  }
  return out + '"';
}

/** RFC 8785 section 3.2.3: member names sorted by their UTF-16 code units, compared one unit at a time. */
function compareCodeUnits(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = a.charCodeAt(i) - b.charCodeAt(i);
    if (d !== 0) return d;
  }
  return a.length - b.length;
}

/** RFC 8785 canonical JSON of a value, written straight from the RFC (tests only). */
export function reference(value: unknown): string {
  if (value === null) return 'null';
  if (value === true) return 'true';
  if (value === false) return 'false';
  if (typeof value === 'number') return referenceNumber(value);
  if (typeof value === 'string') return referenceString(value);
  if (Array.isArray(value)) return '[' + value.map((v) => (v === undefined ? 'null' : reference(v))).join(',') + ']';
  if (typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const names = Object.keys(record).filter((k) => record[k] !== undefined);
    names.sort(compareCodeUnits);
    return '{' + names.map((k) => referenceString(k) + ':' + reference(record[k])).join(',') + '}';
  }
  throw new NoCanonicalForm(typeof value);
}

// ---- arbitraries: any JSON, full Unicode strings and keys, every double including -0 and subnormals ----

/** Well-formed strings over all of Unicode. */
export const wellFormed = fc.string({ unit: 'grapheme', maxLength: 12 });
const anyUnits = fc.string({ unit: 'binary', maxLength: 8 }); // lone surrogates included
const double = fc.oneof(fc.double(), fc.integer(), fc.constantFrom(-0, 5e-324, 1e21, 1e-7, 9007199254740993, 0.1 + 0.2));
const scalar = (text: fc.Arbitrary<string>, number: fc.Arbitrary<number>): fc.Arbitrary<unknown> =>
  fc.oneof(fc.constant(null), fc.boolean(), number, text);
const jsonOf = (text: fc.Arbitrary<string>, number: fc.Arbitrary<number>, maxKeys: number) =>
  fc.letrec((tie) => ({
    value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar(text, number), tie('array'), tie('object')),
    array: fc.array(tie('value'), { maxLength: 5 }),
    // Object.fromEntries makes own members even for "__proto__"; integer-like keys come from fc.string too.
    object: fc
      .array(fc.tuple(fc.oneof(text, fc.constantFrom('__proto__', '10', '2', '', 'toJSON', '\u20ac', '\ud83d\ude00')), tie('value')), { maxLength: maxKeys })
      .map((entries) => Object.fromEntries(entries)),
  })).value;

/** Any JSON value with well-formed strings and finite numbers. */
export const validJson = jsonOf(wellFormed, double.filter(Number.isFinite), 20);
/** Any JSON-like value: lone surrogates, NaN and infinities included. */
export const anyJson = jsonOf(anyUnits, double, 6);

