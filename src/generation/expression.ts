/** `{placeholder}` text with a tiny, safe arithmetic language (no eval): numbers, params, + - * / %, min, max. */
import { EnvHarnessError } from '../core/index.js';
import type { JsonObject, JsonValue } from '../core/index.js';

/** The type of a declarative template parameter. */
export type ParamType = 'integer' | 'number' | 'string' | 'boolean';

type Expr =
  | { kind: 'number'; value: number }
  | { kind: 'param'; name: string }
  | { kind: 'negate'; operand: Expr }
  | { kind: 'binary'; op: '+' | '-' | '*' | '/' | '%'; left: Expr; right: Expr }
  | { kind: 'call'; fn: 'min' | 'max'; args: Expr[] };

interface Placeholder {
  expr: Expr;
  source: string;
}

/** A parsed text: literal pieces and placeholders. */
export interface CompiledText {
  parts: Array<string | Placeholder>;
  /** The text is exactly one placeholder, so as a JSON value it keeps the placeholder's type. */
  single: boolean;
}

/** A problem found while compiling a text; `offset` is the character position in the text. */
export interface TextProblem {
  message: string;
  offset: number;
}

/** Parses `text`, checking every placeholder against the declared parameters and their types. */
export function compileText(
  text: string,
  params: Readonly<Record<string, ParamType>>,
): { ok: true; value: CompiledText } | { ok: false; problem: TextProblem } {
  const parts: Array<string | Placeholder> = [];
  let literal = '';
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === '{' && text[i + 1] === '{') {
      literal += '{';
      i += 2;
    } else if (ch === '}' && text[i + 1] === '}') {
      literal += '}';
      i += 2;
    } else if (ch === '}') {
      return { ok: false, problem: { message: 'unmatched "}"; write "}}" for a literal brace', offset: i } };
    } else if (ch === '{') {
      const end = text.indexOf('}', i + 1);
      if (end < 0) {
        return { ok: false, problem: { message: 'unclosed "{"; close the placeholder or write "{{" for a literal brace', offset: i } };
      }
      const source = text.slice(i + 1, end);
      const parsed = parseExpression(source, params);
      if (!parsed.ok) {
        return { ok: false, problem: { message: `in {${source}}: ${parsed.message}`, offset: i + 1 + parsed.offset } };
      }
      if (literal !== '') parts.push(literal);
      literal = '';
      parts.push({ expr: parsed.expr, source });
      i = end + 1;
    } else {
      literal += ch;
      i += 1;
    }
  }
  if (literal !== '') parts.push(literal);
  return { ok: true, value: { parts, single: parts.length === 1 && typeof parts[0] !== 'string' } };
}

/** Renders a compiled text as a string. Throws `PARAMS_INVALID` when arithmetic has no finite result. */
export function renderText(text: CompiledText, params: JsonObject): string {
  let out = '';
  for (const part of text.parts) out += typeof part === 'string' ? part : String(evaluatePlaceholder(part, params));
  return out;
}

/** Renders a compiled text as a JSON value: a lone placeholder keeps its type (`"{n}"` gives a number). */
export function renderValue(text: CompiledText, params: JsonObject): JsonValue {
  if (text.single) return evaluatePlaceholder(text.parts[0] as Placeholder, params);
  return renderText(text, params);
}

function evaluatePlaceholder(placeholder: Placeholder, params: JsonObject): string | number | boolean {
  const value = evaluate(placeholder.expr, params);
  if (typeof value === 'number' && !Number.isFinite(value)) {
    throw new EnvHarnessError(
      'PARAMS_INVALID',
      `{${placeholder.source}} has no finite value for params ${JSON.stringify(params)} (division by zero?); narrow the parameter ranges`,
      { details: { expression: placeholder.source } },
    );
  }
  return value;
}

function evaluate(expr: Expr, params: JsonObject): string | number | boolean {
  switch (expr.kind) {
    case 'number':
      return expr.value;
    case 'param':
      return params[expr.name] as string | number | boolean;
    case 'negate':
      return -(evaluate(expr.operand, params) as number);
    case 'binary':
      return arithmetic(expr.op, evaluate(expr.left, params) as number, evaluate(expr.right, params) as number);
    case 'call': {
      let result = evaluate(expr.args[0]!, params) as number;
      for (let i = 1; i < expr.args.length; i++) {
        const value = evaluate(expr.args[i]!, params) as number;
        result = expr.fn === 'min' ? Math.min(result, value) : Math.max(result, value);
      }
      return result;
    }
  }
}

function arithmetic(op: '+' | '-' | '*' | '/' | '%', left: number, right: number): number {
  if (op === '+') return left + right;
  if (op === '-') return left - right;
  if (op === '*') return left * right;
  if (op === '/') return left / right;
  return left % right;
}

type Token = { type: 'number'; value: number; at: number } | { type: 'name'; value: string; at: number } | { type: 'op'; value: string; at: number };

function tokenize(source: string): { ok: true; tokens: Token[] } | { ok: false; message: string; offset: number } {
  const tokens: Token[] = [];
  let at = 0;
  while (at < source.length) {
    const ch = source[at]!;
    if (/\s/.test(ch)) {
      at++;
    } else if (/[0-9]/.test(ch)) {
      const m = /^\d+(?:\.\d+)?/.exec(source.slice(at))!;
      tokens.push({ type: 'number', value: Number(m[0]), at });
      at += m[0].length;
    } else if (/[A-Za-z_]/.test(ch)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(source.slice(at))!;
      tokens.push({ type: 'name', value: m[0], at });
      at += m[0].length;
    } else if ('+-*/%(),'.includes(ch)) {
      tokens.push({ type: 'op', value: ch, at });
      at++;
    } else {
      return {
        ok: false,
        message: `unexpected character "${ch}"; use numbers, parameter names, + - * / % ( ) and min/max`,
        offset: at,
      };
    }
  }
  return { ok: true, tokens };
}

type Typed = { expr: Expr; type: ParamType };

/** Deepest parenthesis nesting an expression may have (docs/errors.md, "Input limits"). */
export const MAX_EXPRESSION_DEPTH = 64;

class ParseFailure extends Error {
  constructor(message: string, readonly offset: number) {
    super(message);
  }
}

function parseExpression(
  source: string,
  params: Readonly<Record<string, ParamType>>,
): { ok: true; expr: Expr } | { ok: false; message: string; offset: number } {
  const lexed = tokenize(source);
  if (!lexed.ok) return lexed;
  const tokens = lexed.tokens;
  if (tokens.length === 0) return { ok: false, message: 'empty placeholder; write a parameter name such as {a}', offset: 0 };
  // The parser recurses per parenthesis: a bounded depth keeps a hostile template from overflowing the stack.
  let depth = 0;
  for (const t of tokens) {
    if (t.type !== 'op') continue;
    if (t.value === '(') depth += 1;
    else if (t.value === ')') depth -= 1;
    if (depth > MAX_EXPRESSION_DEPTH) return { ok: false, message: `parentheses nested deeper than ${MAX_EXPRESSION_DEPTH} levels`, offset: t.at };
  }
  let pos = 0;
  const peek = (): Token | undefined => tokens[pos];
  const isOp = (value: string): boolean => {
    const t = tokens[pos];
    return t !== undefined && t.type === 'op' && t.value === value;
  };
  const where = (): number => tokens[pos]?.at ?? source.length;
  const numeric = (typed: Typed, at: number): Expr => {
    if (typed.type === 'string' || typed.type === 'boolean') {
      throw new ParseFailure(`a ${typed.type} parameter cannot be used in arithmetic`, at);
    }
    return typed.expr;
  };

  function sum(): Typed {
    const start = where();
    let left = product();
    while (isOp('+') || isOp('-')) {
      const op = (tokens[pos++] as { value: '+' | '-' }).value;
      const rightAt = where();
      const right = product();
      left = { expr: { kind: 'binary', op, left: numeric(left, start), right: numeric(right, rightAt) }, type: 'number' };
    }
    return left;
  }
  function product(): Typed {
    const start = where();
    let left = unary();
    while (isOp('*') || isOp('/') || isOp('%')) {
      const op = (tokens[pos++] as { value: '*' | '/' | '%' }).value;
      const rightAt = where();
      const right = unary();
      left = { expr: { kind: 'binary', op, left: numeric(left, start), right: numeric(right, rightAt) }, type: 'number' };
    }
    return left;
  }
  function unary(): Typed {
    if (isOp('-')) {
      pos++;
      const at = where();
      const operand = unary();
      return { expr: { kind: 'negate', operand: numeric(operand, at) }, type: 'number' };
    }
    return primary();
  }
  function primary(): Typed {
    const token = peek();
    if (token === undefined) throw new ParseFailure('expression ends too early; expected a number, a parameter or "("', source.length);
    if (token.type === 'number') {
      pos++;
      return { expr: { kind: 'number', value: token.value }, type: Number.isInteger(token.value) ? 'integer' : 'number' };
    }
    if (token.type === 'name') {
      pos++;
      if (isOp('(')) {
        if (token.value !== 'min' && token.value !== 'max') {
          throw new ParseFailure(`unknown function "${token.value}"; the functions are min and max`, token.at);
        }
        pos++;
        const args: Expr[] = [];
        for (;;) {
          const at = where();
          args.push(numeric(sum(), at));
          if (isOp(',')) {
            pos++;
            continue;
          }
          if (isOp(')')) {
            pos++;
            break;
          }
          throw new ParseFailure('expected "," or ")" in the argument list', where());
        }
        return { expr: { kind: 'call', fn: token.value, args }, type: 'number' };
      }
      const type = params[token.value];
      if (type === undefined || !Object.hasOwn(params, token.value)) {
        const known = Object.keys(params).sort();
        throw new ParseFailure(
          `unknown parameter "${token.value}"; declared parameters: ${known.join(', ') || '(none)'}`,
          token.at,
        );
      }
      return { expr: { kind: 'param', name: token.value }, type };
    }
    if (token.value === '(') {
      pos++;
      const inner = sum();
      if (!isOp(')')) throw new ParseFailure('missing ")"', where());
      pos++;
      return inner;
    }
    throw new ParseFailure(`unexpected "${token.value}"; expected a number, a parameter or "("`, token.at);
  }

  try {
    const result = sum();
    if (pos < tokens.length) {
      throw new ParseFailure(`unexpected "${String(tokens[pos]!.value)}" after the expression`, tokens[pos]!.at);
    }
    return { ok: true, expr: result.expr };
  } catch (error) {
    if (error instanceof ParseFailure) return { ok: false, message: error.message, offset: error.offset };
    throw error;
  }
}
