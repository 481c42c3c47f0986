import { describe, expect, it } from 'vitest';
import { compileText, renderText, renderValue } from './expression.js';
import type { CompiledText, ParamType } from './expression.js';

const types: Record<string, ParamType> = { a: 'integer', b: 'integer', x: 'number', op: 'string', flag: 'boolean' };

function compiled(text: string): CompiledText {
  const result = compileText(text, types);
  if (!result.ok) throw new Error(result.problem.message);
  return result.value;
}

function problem(text: string): { message: string; offset: number } {
  const result = compileText(text, types);
  if (result.ok) throw new Error(`expected a problem in ${text}`);
  return result.problem;
}

describe('placeholder texts', () => {
  const params = { a: 7, b: 3, x: 0.5, op: 'plus', flag: true };

  it('fills parameters and evaluates arithmetic with precedence', () => {
    expect(renderText(compiled('What is {a} {op} {b}?'), params)).toBe('What is 7 plus 3?');
    expect(renderText(compiled('{a + b * 2}'), params)).toBe('13');
    expect(renderText(compiled('{(a + b) * 2}'), params)).toBe('20');
    expect(renderText(compiled('{a % b} {a / 2} {-a + 1} {a - -b}'), params)).toBe('1 3.5 -6 10');
    expect(renderText(compiled('{min(a, b, 5)} {max(a * x, 1)}'), params)).toBe('3 3.5');
  });

  it('keeps literal braces written twice', () => {
    expect(renderText(compiled('{{a}} is {a}'), params)).toBe('{a} is 7');
  });

  it('keeps the type of a lone placeholder as a JSON value', () => {
    expect(renderValue(compiled('{a}'), params)).toBe(7);
    expect(renderValue(compiled('{flag}'), params)).toBe(true);
    expect(renderValue(compiled('#{a}'), params)).toBe('#7');
  });

  it('reports unknown parameters with the declared ones', () => {
    expect(problem('{c + 1}')).toEqual({ message: 'in {c + 1}: unknown parameter "c"; declared parameters: a, b, flag, op, x', offset: 1 });
  });

  it('refuses strings and booleans in arithmetic', () => {
    expect(problem('{op + 1}').message).toContain('a string parameter cannot be used in arithmetic');
    expect(problem('{max(flag, 1)}').message).toContain('boolean');
  });

  it('refuses anything that is not the tiny language (no eval)', () => {
    expect(problem('{a.constructor}').message).toContain('unexpected character "."');
    expect(problem('{process}').message).toContain('unknown parameter "process"');
    expect(problem('{Function("x")}').message).toContain('unexpected character');
    expect(problem('{Function(a)}').message).toContain('unknown function "Function"');
    expect(problem('{a ** 2}').message).toContain('unexpected "*"');
    expect(problem('{a +}').message).toContain('ends too early');
    expect(problem('{(a + b}').message).toContain('missing ")"');
    expect(problem('{}').message).toContain('empty placeholder');
    expect(problem('open {a').message).toContain('unclosed "{"');
    expect(problem('close }').message).toContain('unmatched "}"');
  });

  it('refuses a division by zero at render time', () => {
    expect(() => renderText(compiled('{a / (b - 3)}'), params)).toThrow(/no finite value/);
  });
});
