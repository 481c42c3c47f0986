/** A safe evaluator for tau-bench's `calculate` tool: Python arithmetic semantics without eval. */
import { pyFloatRepr, pyRound2 } from './py.js';

/** The characters tau-bench lets through to Python's `eval`. */
const ALLOWED = /^[0-9+\-*/(). ]*$/;
const MAX_TOKENS = 2_000;
const MAX_PARENS = 200;
/** Integer results above this many bits are refused (Python would compute them, slowly). */
const MAX_INT_BITS = 1_000_000;

export type CalculateResult = { ok: true; value: string } | { ok: false; message: string };

/**
 * tau-bench's `str(round(float(eval(expression)), 2))` for the characters `0-9 + - * / ( ) .` and
 * space: Python's grammar (`**`, `//`, unary signs, implicit calls such as `2(3)` that fail at run
 * time), arbitrary-precision integers, correctly rounded int division, and CPython's error texts for
 * the failures a calculator meets (division by zero, overflow, syntax).
 * @example
 * evaluateExpression('(19.99 + 5) * 3') // { ok: true, value: '74.97' }
 */
export function evaluateExpression(expression: string): CalculateResult {
  if (!ALLOWED.test(expression)) return { ok: false, message: 'invalid characters in expression' };
  try {
    const tree = parse(expression);
    const value = toFloat(evaluate(tree));
    return { ok: true, value: pyFloatRepr(pyRound2(value)) };
  } catch (error) {
    if (error instanceof PyError) return { ok: false, message: error.message };
    throw error;
  }
}

class PyError extends Error {}

const syntaxError = (what = 'invalid syntax', line = 1): PyError => new PyError(`${what} (<string>, line ${line})`);

/** Python values the grammar can produce; complex numbers (from `(-8) ** 0.5`) are tracked only by type. */
type Value = { t: 'int'; v: bigint } | { t: 'float'; v: number } | { t: 'tuple' } | { t: 'complex' };
const COMPLEX: Value = { t: 'complex' };
type BinaryOp = '+' | '-' | '*' | '/' | '//' | '**';
type Node =
  | { k: 'lit'; value: Value }
  | { k: 'unary'; op: '+' | '-'; arg: Node }
  | { k: 'bin'; op: BinaryOp; left: Node; right: Node }
  | { k: 'call'; callee: Node; args: Node[] };

type Token = { k: 'num'; value: Value } | { k: 'op'; op: BinaryOp | '(' | ')' };

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  // eval() strips leading spaces.
  while (text[i] === ' ') i++;
  while (i < text.length) {
    const c = text[i]!;
    if (c === ' ') {
      i++;
      continue;
    }
    if (isDigit(c) || (c === '.' && isDigit(text[i + 1]))) {
      const start = i;
      while (isDigit(text[i])) i++;
      let isFloat = false;
      if (text[i] === '.') {
        isFloat = true;
        i++;
        while (isDigit(text[i])) i++;
      }
      const literal = text.slice(start, i);
      if (isFloat) tokens.push({ k: 'num', value: { t: 'float', v: Number(literal) } });
      else {
        if (literal.length > 1 && literal.startsWith('0') && /[1-9]/.test(literal)) {
          throw syntaxError('leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers');
        }
        tokens.push({ k: 'num', value: { t: 'int', v: BigInt(literal) } });
      }
    } else if (c === '*' || c === '/') {
      const doubled = text[i + 1] === c;
      tokens.push({ k: 'op', op: doubled ? (c === '*' ? '**' : '//') : c });
      i += doubled ? 2 : 1;
    } else if (c === '+' || c === '-' || c === '(' || c === ')') {
      tokens.push({ k: 'op', op: c });
      i++;
    } else {
      throw syntaxError();
    }
    if (tokens.length > MAX_TOKENS) throw new PyError(`expression too long (more than ${MAX_TOKENS} tokens)`);
  }
  return tokens;
}

function isDigit(c: string | undefined): boolean {
  return c !== undefined && c >= '0' && c <= '9';
}

/** Python's expression grammar restricted to these tokens: sum > term > factor (unary) > power > primary. */
function parse(text: string): Node {
  const tokens = tokenize(text);
  let pos = 0;
  let depth = 0;
  const peekOp = (): string | undefined => {
    const t = tokens[pos];
    return t?.k === 'op' ? t.op : undefined;
  };
  const sum = (): Node => {
    let node = term();
    for (let op = peekOp(); op === '+' || op === '-'; op = peekOp()) {
      pos++;
      node = { k: 'bin', op, left: node, right: term() };
    }
    return node;
  };
  const term = (): Node => {
    let node = factor();
    for (let op = peekOp(); op === '*' || op === '/' || op === '//'; op = peekOp()) {
      pos++;
      node = { k: 'bin', op, left: node, right: factor() };
    }
    return node;
  };
  const factor = (): Node => {
    const op = peekOp();
    if (op === '+' || op === '-') {
      pos++;
      return { k: 'unary', op, arg: factor() };
    }
    return power();
  };
  const power = (): Node => {
    const base = primary();
    if (peekOp() === '**') {
      pos++;
      return { k: 'bin', op: '**', left: base, right: factor() };
    }
    return base;
  };
  const primary = (): Node => {
    let node = atom();
    // `2(3)` parses as a call; it fails when evaluated.
    while (peekOp() === '(') {
      pos++;
      const args: Node[] = [];
      if (peekOp() !== ')') args.push(group(sum));
      expectClose();
      node = { k: 'call', callee: node, args };
    }
    return node;
  };
  const atom = (): Node => {
    const token = tokens[pos];
    if (token === undefined) throw syntaxError();
    if (token.k === 'num') {
      pos++;
      return { k: 'lit', value: token.value };
    }
    if (token.op === '(') {
      pos++;
      if (peekOp() === ')') {
        pos++;
        return { k: 'lit', value: { t: 'tuple' } };
      }
      const inner = group(sum);
      expectClose();
      return inner;
    }
    if (token.op === ')') throw syntaxError("unmatched ')'");
    throw syntaxError();
  };
  const group = (inner: () => Node): Node => {
    if (++depth > MAX_PARENS) throw syntaxError('too many nested parentheses');
    const node = inner();
    depth--;
    return node;
  };
  const expectClose = (): void => {
    if (pos >= tokens.length) throw syntaxError("'(' was never closed");
    if (peekOp() !== ')') throw syntaxError();
    pos++;
  };
  // CPython reports an empty expression on line 0.
  if (tokens.length === 0) throw syntaxError('invalid syntax', 0);
  const tree = sum();
  if (pos < tokens.length) throw syntaxError(peekOp() === ')' ? "unmatched ')'" : 'invalid syntax');
  return tree;
}

function evaluate(node: Node): Value {
  switch (node.k) {
    case 'lit':
      return node.value;
    case 'unary': {
      const arg = evaluate(node.arg);
      if (arg.t === 'tuple') throw new PyError(`bad operand type for unary ${node.op}: 'tuple'`);
      if (node.op === '+' || arg.t === 'complex') return arg;
      return arg.t === 'int' ? { t: 'int', v: -arg.v } : { t: 'float', v: -arg.v };
    }
    case 'bin':
      return binary(node.op, evaluate(node.left), evaluate(node.right));
    case 'call': {
      const callee = evaluate(node.callee);
      for (const arg of node.args) evaluate(arg);
      throw new PyError(`'${callee.t}' object is not callable`);
    }
  }
}

function binary(op: BinaryOp, a: Value, b: Value): Value {
  if (a.t === 'tuple' || b.t === 'tuple') return tupleOp(op, a, b);
  if (a.t === 'complex' || b.t === 'complex') return complexOp(op, a, b);
  if (a.t === 'int' && b.t === 'int') {
    switch (op) {
      case '+':
        return int(a.v + b.v);
      case '-':
        return int(a.v - b.v);
      case '*':
        return int(a.v * b.v);
      case '/':
        return { t: 'float', v: intTrueDivide(a.v, b.v) };
      case '//':
        if (b.v === 0n) throw new PyError('integer division or modulo by zero');
        return { t: 'int', v: floorDivide(a.v, b.v) };
      case '**':
        if (b.v >= 0n) return { t: 'int', v: intPower(a.v, b.v) };
        return floatPower(toFloat(a), toFloat(b));
    }
  }
  const x = toFloat(a);
  const y = toFloat(b);
  switch (op) {
    case '+':
      return { t: 'float', v: x + y };
    case '-':
      return { t: 'float', v: x - y };
    case '*':
      return { t: 'float', v: x * y };
    case '/':
      if (y === 0) throw new PyError('float division by zero');
      return { t: 'float', v: x / y };
    case '//':
      return { t: 'float', v: floatFloorDivide(x, y) };
    case '**':
      return floatPower(x, y);
  }
}

/** Arithmetic with a complex operand stays complex; `//` is a TypeError, dividing by zero fails. */
function complexOp(op: BinaryOp, a: Value, b: Value): Value {
  if (op === '//') throw new PyError(`unsupported operand type(s) for //: '${a.t}' and '${b.t}'`);
  if (op === '/' && ((b.t === 'int' && b.v === 0n) || (b.t === 'float' && b.v === 0))) {
    throw new PyError('complex division by zero');
  }
  if (a.t === 'int') toFloat(a);
  if (b.t === 'int') toFloat(b);
  return COMPLEX;
}

const CHEAP_INT = 2n ** 4096n;

function int(v: bigint): Value {
  if ((v > CHEAP_INT || v < -CHEAP_INT) && bitLength(v < 0n ? -v : v) > MAX_INT_BITS) {
    throw new PyError('integer result too large');
  }
  return { t: 'int', v };
}

function tupleOp(op: BinaryOp, a: Value, b: Value): Value {
  if (op === '+' && a.t === 'tuple') {
    if (b.t === 'tuple') return a;
    throw new PyError(`can only concatenate tuple (not "${b.t}") to tuple`);
  }
  if (op === '*') {
    const other = a.t === 'tuple' ? b : a;
    if (other.t === 'int') return { t: 'tuple' };
    throw new PyError(`can't multiply sequence by non-int of type '${other.t}'`);
  }
  const name = op === '**' ? '** or pow()' : op;
  throw new PyError(`unsupported operand type(s) for ${name}: '${a.t}' and '${b.t}'`);
}

/** Python's `float(x)`. */
function toFloat(value: Value): number {
  if (value.t === 'float') return value.v;
  if (value.t === 'tuple' || value.t === 'complex') {
    throw new PyError(`float() argument must be a string or a real number, not '${value.t}'`);
  }
  const x = Number(value.v);
  if (!Number.isFinite(x)) throw new PyError('int too large to convert to float');
  return x;
}

function bitLength(v: bigint): number {
  return v === 0n ? 0 : v.toString(2).length;
}

const TWO_53 = 2n ** 53n;

/** Python's int / int: the exact quotient rounded once to the nearest double. */
function intTrueDivide(a: bigint, b: bigint): number {
  if (b === 0n) throw new PyError('division by zero');
  const negative = a < 0n !== b < 0n;
  const x = a < 0n ? -a : a;
  const y = b < 0n ? -b : b;
  if (x <= TWO_53 && y <= TWO_53) return Number(a) / Number(b);
  // Scale so the integer quotient has at least 55 bits, then fold the remainder into a sticky bit.
  const shift = Math.max(0, 55 + bitLength(y) - bitLength(x));
  const scaled = x << BigInt(shift);
  let q = scaled / y;
  if (scaled % y !== 0n) q |= 1n;
  let result = Number(q);
  for (let s = shift; s > 0; s -= 1000) result /= 2 ** Math.min(s, 1000);
  if (!Number.isFinite(result)) throw new PyError('integer division result too large for a float');
  return negative ? -result : result;
}

function floorDivide(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

/** CPython's float_floor_div (via _float_div_mod). */
function floatFloorDivide(vx: number, wx: number): number {
  if (wx === 0) throw new PyError('float floor division by zero');
  let mod = vx % wx;
  let div = (vx - mod) / wx;
  if (mod) {
    if (wx < 0 !== mod < 0) {
      mod += wx;
      div -= 1;
    }
  }
  if (div) {
    let floordiv = Math.floor(div);
    if (div - floordiv > 0.5) floordiv += 1;
    return floordiv;
  }
  const q = vx / wx;
  return q < 0 || Object.is(q, -0) ? -0 : 0;
}

function intPower(base: bigint, exponent: bigint): bigint {
  const magnitude = base < 0n ? -base : base;
  if (magnitude > 1n && Number(exponent) * bitLength(magnitude) > MAX_INT_BITS) {
    throw new PyError('integer result too large');
  }
  return base ** exponent;
}

/**
 * CPython's float_pow. CPython calls the C library's pow, which glibc rounds correctly in practice;
 * V8's Math.pow does not, so integer and half-integer exponents are computed exactly and rounded
 * once. Other fractional exponents use Math.pow and may differ from CPython in the last bit.
 */
function floatPower(x: number, y: number): Value {
  const float = (v: number): Value => ({ t: 'float', v });
  if (y === 0) return float(1);
  if (Number.isNaN(x)) return float(NaN);
  if (Number.isNaN(y)) return float(x === 1 ? 1 : NaN);
  if (!Number.isFinite(y) && (x === 1 || x === -1)) return float(1);
  if (x === 0 && y < 0) throw new PyError('0.0 cannot be raised to a negative power');
  // CPython returns a complex number for a negative base and a fractional exponent.
  if (x < 0 && Number.isFinite(x) && Number.isFinite(y) && !Number.isInteger(y)) return COMPLEX;
  let result: number;
  if (x !== 0 && Number.isFinite(x) && Number.isInteger(y) && Math.abs(y) <= 1024) result = exactPower(x, y);
  else if (x > 0 && Number.isFinite(x) && Number.isInteger(2 * y) && Math.abs(y) <= 512) result = exactHalfPower(x, 2 * y);
  else result = Math.pow(x, y);
  if (!Number.isFinite(result) && Number.isFinite(x) && Number.isFinite(y)) {
    throw new PyError("(34, 'Numerical result out of range')");
  }
  return float(result);
}

/** x ** n for a finite non-zero double and an integer n, rounded once to the nearest double. */
function exactPower(x: number, n: number): number {
  const [mantissa, exponent] = decompose(Math.abs(x));
  const k = Math.abs(n);
  const m = mantissa ** BigInt(k);
  const e = exponent * k;
  let magnitude: number;
  if (n > 0) {
    magnitude = roundBig(m, e);
  } else {
    // 2^-e / m with enough quotient bits and a sticky bit for the remainder.
    const shift = bitLength(m) + 64;
    const scaled = 1n << BigInt(shift);
    let q = scaled / m;
    if (scaled % m !== 0n) q |= 1n;
    magnitude = roundBig(q, -shift - e);
  }
  return x < 0 && k % 2 === 1 ? -magnitude : magnitude;
}

/** x ** (n / 2) for a finite positive double and an odd n: sqrt(x ** n), rounded once. */
function exactHalfPower(x: number, n: number): number {
  const [mantissa, exponent] = decompose(x);
  const k = Math.abs(n);
  let m = mantissa ** BigInt(k);
  let e = exponent * k;
  if (e % 2 !== 0) {
    m <<= 1n;
    e -= 1;
  }
  // sqrt(m * 2^e) = sqrt(m * 4^s) * 2^(e/2 - s), with s chosen for a 66-bit integer root.
  if (n > 0) {
    const s = Math.max(0, 67 - Math.floor(bitLength(m) / 2));
    const radicand = m << BigInt(2 * s);
    let root = isqrt(radicand);
    if (root * root !== radicand) root |= 1n;
    return roundBig(root, e / 2 - s);
  }
  // 1 / sqrt(m * 2^e) = sqrt(4^t / m) * 2^(-t - e/2), with t chosen for a 66-bit integer root.
  const t = Math.floor(bitLength(m) / 2) + 67;
  const numerator = 1n << BigInt(2 * t);
  const quotient = numerator / m;
  let root = isqrt(quotient);
  if (root * root !== quotient || numerator % m !== 0n) root |= 1n;
  return roundBig(root, -t - e / 2);
}

/** floor(sqrt(n)) for n >= 0 (Newton's method from an over-estimate). */
function isqrt(n: bigint): bigint {
  if (n < 2n) return n;
  let x = 1n << BigInt(Math.ceil(bitLength(n) / 2));
  for (;;) {
    const y = (x + n / x) >> 1n;
    if (y >= x) return x;
    x = y;
  }
}

/** The double nearest to m * 2^e (m > 0), rounding once. */
function roundBig(m: bigint, e: number): number {
  const length = bitLength(m);
  if (length > 64) {
    const drop = length - 64;
    let top = m >> BigInt(drop);
    if ((top << BigInt(drop)) !== m) top |= 1n;
    m = top;
    e += drop;
  }
  let v = Number(m);
  for (; e > 0; e -= Math.min(e, 1000)) v *= 2 ** Math.min(e, 1000);
  for (; e < 0; e += Math.min(-e, 1000)) v /= 2 ** Math.min(-e, 1000);
  return v;
}

/** |x| = mantissa * 2^exponent exactly, for a finite non-zero double. */
function decompose(x: number): [bigint, number] {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const hi = view.getUint32(0);
  const lo = view.getUint32(4);
  const biased = (hi >>> 20) & 0x7ff;
  const fraction = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  return biased === 0 ? [fraction, -1074] : [fraction | (1n << 52n), biased - 1075];
}
