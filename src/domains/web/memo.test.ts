import { describe, expect, it } from 'vitest';
import { memoOn } from './memo.js';

const KEY = Symbol('test memo');
const make = () => ({ made: true });

describe('memoOn', () => {
  it('keeps one memo per object, made once', () => {
    const target = { a: 1 };
    let made = 0;
    const first = memoOn(target, KEY, () => ({ n: ++made }));
    expect(memoOn(target, KEY, () => ({ n: ++made }))).toBe(first);
    expect(made).toBe(1);
  });

  it('a spread copy carries the symbol along but gets a memo of its own', () => {
    const target = { a: 1 };
    const original = memoOn(target, KEY, make);
    const copy = { ...target };
    const mine = memoOn(copy, KEY, make);
    expect(mine).not.toBe(original);
    expect(memoOn(copy, KEY, make)).toBe(mine);
    expect(memoOn(target, KEY, make)).toBe(original);
  });

  it('a frozen object keeps its memo too, and stays frozen and untouched', () => {
    const target = Object.freeze({ a: 1 });
    const memo = memoOn(target, KEY, make);
    expect(memoOn(target, KEY, make)).toBe(memo);
    expect(Object.getOwnPropertySymbols(target)).toEqual([]);
  });

  it('keys are separate memos on one object', () => {
    const target = {};
    const other = Symbol('other');
    expect(memoOn(target, KEY, make)).not.toBe(memoOn(target, other, make));
  });
});
