import { describe, expect, it } from 'vitest';
import { evaluateExpression } from './calculate.js';

const value = (expression: string): string => {
  const result = evaluateExpression(expression);
  if (!result.ok) throw new Error(`expected a value for ${expression}, got error ${result.message}`);
  return result.value;
};
const error = (expression: string): string => {
  const result = evaluateExpression(expression);
  if (result.ok) throw new Error(`expected an error for ${expression}, got ${result.value}`);
  return result.message;
};

describe('calculate (Python eval semantics on digits, + - * / ( ) . and spaces)', () => {
  it.each([
    ['2 + 2', '4.0'],
    ['(19.99 + 5) * 3', '74.97'],
    ['10 / 4', '2.5'],
    ['1 / 3', '0.33'],
    ['0.1 + 0.2', '0.3'],
    ['0.125', '0.12'],
    ['0.375', '0.38'],
    ['2.675', '2.67'],
    ['  3', '3.0'],
    ['.5 + 1.', '1.5'],
    ['00 + 1', '1.0'],
    ['-3 - -3', '0.0'],
    ['-0.001', '-0.0'],
    ['+-+2', '-2.0'],
    ['2 ** 10', '1024.0'],
    ['-2 ** 2', '-4.0'],
    ['2 ** -1', '0.5'],
    ['2 ** 3 ** 2', '512.0'],
    ['2 ** 0.5', '1.41'],
    ['7 // 2', '3.0'],
    ['-7 // 2', '-4.0'],
    ['7.5 // 2', '3.0'],
    ['-7.5 // 2', '-4.0'],
    ['10 ** 16', '1e+16'],
    ['10 ** 20 + 1', '1e+20'],
    ['(10 ** 400) / (10 ** 399)', '10.0'],
    ['(2 ** 60 + 1) / 3', '3.843071682022823e+17'],
    ['1 - 0.9', '0.1'],
    ['100 * 1.1', '110.0'],
    // Values checked against CPython 3.11; V8's Math.pow gives the last digit wrong on these.
    ['(1507673227 - 8. + 117.5) ** 1.5', '58541100379139.24'],
    ['(213826427 - .489) ** 3', '9.776516422283296e+24'],
    ['(.5) ** -3', '8.0'],
    ['1.05 ** 12', '1.8'],
  ])('%s = %s', (expression, expected) => {
    expect(value(expression)).toBe(expected);
  });

  it('reports the errors CPython reports', () => {
    expect(error('1 / 0')).toBe('division by zero');
    expect(error('1.0 / 0')).toBe('float division by zero');
    expect(error('1 // 0')).toBe('integer division or modulo by zero');
    expect(error('1.5 // 0')).toBe('float floor division by zero');
    expect(error('0 ** -1')).toBe('0.0 cannot be raised to a negative power');
    expect(error('10 ** 400 + 0.5')).toBe('int too large to convert to float');
    expect(error('(0 - 8) ** 0.5')).toBe("float() argument must be a string or a real number, not 'complex'");
    expect(error('2(3)')).toBe("'int' object is not callable");
    expect(error('()')).toBe("float() argument must be a string or a real number, not 'tuple'");
    expect(error('() + 1')).toBe('can only concatenate tuple (not "int") to tuple');
    expect(error('-()')).toBe("bad operand type for unary -: 'tuple'");
  });

  it('rejects characters outside the allowed set before parsing', () => {
    expect(error('2 + x')).toBe('invalid characters in expression');
    expect(error('1e5')).toBe('invalid characters in expression');
    expect(error('__import__("os")')).toBe('invalid characters in expression');
  });

  it('reports syntax errors with their CPython text', () => {
    expect(error('2 +')).toBe('invalid syntax (<string>, line 1)');
    expect(error('')).toBe('invalid syntax (<string>, line 0)');
    expect(error('3 4')).toBe('invalid syntax (<string>, line 1)');
    expect(error('1.2.3')).toBe('invalid syntax (<string>, line 1)');
    expect(error('* 2')).toBe('invalid syntax (<string>, line 1)');
    expect(error('2 * * 2')).toBe('invalid syntax (<string>, line 1)');
    expect(error('(1 + 2')).toBe("'(' was never closed (<string>, line 1)");
    expect(error('1 + 2)')).toBe("unmatched ')' (<string>, line 1)");
    expect(error('01')).toBe(
      'leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers (<string>, line 1)',
    );
  });

  it('refuses pathological input instead of hanging', () => {
    expect(error('('.repeat(300) + '1' + ')'.repeat(300))).toBe('too many nested parentheses (<string>, line 1)');
    expect(error('9 ** 9 ** 9')).toBe('integer result too large');
    expect(error(Array(3000).fill('1').join('+'))).toMatch(/expression too long/);
  });
});
