import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeFileAtomic } from './atomic-file.js';

const dir = mkdtempSync(join(tmpdir(), 'envharness-atomic-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('writeFileAtomic', () => {
  it('replaces the whole file and leaves no temporary file behind', () => {
    const path = join(dir, 'state.json');
    writeFileSync(path, 'old');
    writeFileAtomic(path, 'new content');
    expect(readFileSync(path, 'utf8')).toBe('new content');
    expect(readdirSync(dir)).toEqual(['state.json']);
  });

  it('keeps the old content when the new one cannot be put in place', () => {
    const sub = join(dir, 'sub');
    mkdirSync(join(sub, 'target'), { recursive: true });
    writeFileSync(join(sub, 'target', 'inside'), 'x');
    // Renaming a file over a non-empty directory fails: the directory must survive untouched.
    expect(() => writeFileAtomic(join(sub, 'target'), 'new')).toThrow();
    expect(readFileSync(join(sub, 'target', 'inside'), 'utf8')).toBe('x');
    expect(readdirSync(sub)).toEqual(['target']);
  });
});
