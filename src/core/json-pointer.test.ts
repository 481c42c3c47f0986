import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { escapePointerToken, formatPointer, issuePointer, parsePointer, resolvesIn } from './json-pointer.js';

describe('JSON pointers (RFC 6901)', () => {
  it('escapes ~ before / so that "~1" in a key stays distinguishable from "/"', () => {
    expect(escapePointerToken('a/b')).toBe('a~1b');
    expect(escapePointerToken('a~b')).toBe('a~0b');
    expect(escapePointerToken('~1')).toBe('~01');
    expect(escapePointerToken('/~')).toBe('~1~0');
    expect(formatPointer(['args', 'a/b', 0, '~'])).toBe('/args/a~1b/0/~0');
    expect(formatPointer([])).toBe('');
  });

  test.prop([fc.array(fc.string({ unit: fc.constantFrom('a', '/', '~', '0', '1', 'é') }))])('parsePointer inverts formatPointer', (path) => {
    expect(parsePointer(formatPointer(path))).toEqual(path);
  });

  it('turns zod issues into escaped pointers that resolve in the input', () => {
    const schema = z.strictObject({ 'a/b': z.number(), 'c~d': z.object({ 'e/f~g': z.string() }) });
    const cases: Array<[unknown, string]> = [
      [{ 'a/b': 'x', 'c~d': { 'e/f~g': 'y' } }, '/a~1b'],
      [{ 'a/b': 1, 'c~d': { 'e/f~g': 2 } }, '/c~0d/e~1f~0g'],
      // An unknown key is reported at the key itself.
      [{ 'a/b': 1, 'c~d': { 'e/f~g': 'y' }, 'x/~y': 1 }, '/x~1~0y'],
    ];
    for (const [input, pointer] of cases) {
      const parsed = schema.safeParse(input);
      expect(parsed.success).toBe(false);
      const issue = parsed.error!.issues[0]!;
      expect(issuePointer(issue)).toBe(pointer);
      expect(resolvesIn(input, pointer)).toBe(true);
      expect(issuePointer(issue, '/params')).toBe(`/params${pointer}`);
    }
  });

  it('an issue at the root is the empty pointer', () => {
    const parsed = z.number().safeParse('x');
    expect(issuePointer(parsed.error!.issues[0]!)).toBe('');
  });
});
