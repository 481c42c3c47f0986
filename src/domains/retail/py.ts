/** Python semantics the retail tools must reproduce bit for bit: `round(x, 2)`, float `repr`, `sorted(str)`. */

/**
 * Python's `round(x, 2)` for a float: the exact binary value rounded to 2 decimals, ties to even,
 * then read back as the nearest double. `toFixed` is exact except on ties, where it rounds away
 * from zero; a double is exactly halfway between two cents only when it is an odd multiple of 1/8.
 */
export function pyRound2(x: number): number {
  if (x === 0 || !Number.isFinite(x) || Math.abs(x) >= 2 ** 52) return x;
  const eighths = x * 8;
  if (Number.isInteger(eighths) && eighths % 2 !== 0) {
    // An exact tie: |x| * 100 = 25k / 2 for odd k = |x| * 8 (exact: scaling by 8 is a shift).
    const k = BigInt(Math.abs(eighths));
    let cents = (25n * k - 1n) / 2n;
    if (cents % 2n !== 0n) cents += 1n;
    const rounded = nearestDouble(cents, 100n);
    return x < 0 ? -rounded : rounded;
  }
  return Number(x.toFixed(2));
}

/** The double nearest to num / den (both positive), rounded once (ties to even). */
export function nearestDouble(num: bigint, den: bigint): number {
  // Scale so the integer quotient has at least 55 bits; a sticky bit stands for the remainder.
  const shift = Math.max(0, 55 + den.toString(2).length - num.toString(2).length);
  const scaled = num << BigInt(shift);
  let q = scaled / den;
  if (scaled % den !== 0n) q |= 1n;
  let v = Number(q);
  for (let s = shift; s > 0; s -= Math.min(s, 1000)) v /= 2 ** Math.min(s, 1000);
  return v;
}

/** Python's `repr(float)`: shortest round-trip digits, fixed notation for 1e-4 <= |x| < 1e16, else `1e+16`. */
export function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (x === Infinity) return 'inf';
  if (x === -Infinity) return '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const abs = Math.abs(x);
  if (abs >= 1e-4 && abs < 1e16) {
    // In this range ECMAScript's Number::toString never uses an exponent.
    const text = String(x);
    return text.includes('.') ? text : `${text}.0`;
  }
  const [mantissa, exponent] = x.toExponential().split('e') as [string, string];
  const sign = exponent.startsWith('-') ? '-' : '+';
  const digits = exponent.replace(/^[+-]/, '');
  return `${mantissa}e${sign}${digits.length < 2 ? `0${digits}` : digits}`;
}

/** Compares strings by Unicode code point, as Python's `sorted` does (JS sorts by UTF-16 code unit). */
export function comparePyStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Code units differ: only a surrogate against a code unit above U+DFFF orders differently.
    if (x >= 0xd800 && x <= 0xdfff && y >= 0xe000) return 1;
    if (y >= 0xd800 && y <= 0xdfff && x >= 0xe000) return -1;
    return x - y;
  }
  return a.length - b.length;
}

/** Python's `sorted(list_of_str)`. */
export function pySorted(items: readonly string[]): string[] {
  return [...items].sort(comparePyStrings);
}

/** Python truthiness of a JSON value. */
export function pyTruthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === 0 || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}

/** `list.count(x)` for strings. */
export function pyCount(items: readonly string[], x: string): number {
  let n = 0;
  for (const item of items) if (item === x) n++;
  return n;
}
