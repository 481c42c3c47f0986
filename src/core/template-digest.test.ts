/** Template digests notice every change to what a template produces, and nothing about the toolchain (issue 13 item 10). */
import { cpSync, mkdtempSync, mkdirSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTemplate } from './define.js';
import type { Rng } from './rng.js';
import { retailSourceDigest } from '../domains/retail/source-digest.js';
import { retailTemplates } from '../domains/retail/index.js';

/** A template whose output depends on `table`, data its functions close over (their text never changes). */
function tableTemplate(table: readonly number[]) {
  return defineTemplate({
    domain: 'toy',
    name: 'pick',
    version: 1,
    taskType: 'pick',
    levels: [{ n: 1 }, { n: 2 }],
    params: z.object({ value: z.number() }),
    sample: (rng: Rng) => ({ value: table[rng.int(0, table.length - 1)]! }),
    build: (p: { value: number }) => ({ instructions: `say ${p.value}`, initialState: null, budget: { steps: 2 }, acceptance: { finalState: false, answer: String(p.value) } }),
    solve: (p: { value: number }) => [{ type: 'finish' as const, answer: String(p.value) }],
  });
}

const dir = mkdtempSync(path.join(tmpdir(), 'envharness-digest-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('template digests', () => {
  it('change when data the functions close over changes, though their source text is the same', () => {
    expect(tableTemplate([1, 2, 3]).sourceDigest).not.toBe(tableTemplate([1, 2, 4]).sourceDigest);
    expect(tableTemplate([1, 2, 3]).sourceDigest).toBe(tableTemplate([1, 2, 3]).sourceDigest);
  });

  it('do not change when the same behaviour is written (or compiled) differently', () => {
    const base = {
      domain: 'toy', name: 'add', version: 1, taskType: 'add', levels: [{ max: 10 }],
      params: z.object({ a: z.number(), b: z.number() }),
      build: (p: { a: number; b: number }) => ({ instructions: `${p.a} + ${p.b}`, initialState: null, budget: { steps: 2 }, acceptance: { finalState: false, answer: String(p.a + p.b) } }),
    };
    const terse = defineTemplate({ ...base, sample: (rng: Rng) => ({ a: rng.int(0, 10), b: rng.int(0, 10) }), solve: (p: { a: number; b: number }) => [{ type: 'finish' as const, answer: String(p.a + p.b) }] });
    const verbose = defineTemplate({
      ...base,
      sample: function sampleBoth(rng: Rng) {
        const first = rng.int(0, 10);
        const second = rng.int(0, 10);
        return { a: first, b: second };
      },
      solve(p: { a: number; b: number }) {
        const sum = p.b + p.a; // transpilers rename, reorder and reformat; the output is what counts
        return [{ type: 'finish' as const, answer: `${sum}` }];
      },
    });
    expect(verbose.sourceDigest).toBe(terse.sourceDigest);
    // A changed reference solution is a changed template.
    const wrong = defineTemplate({ ...base, sample: terse.sample, solve: (p: { a: number; b: number }) => [{ type: 'finish' as const, answer: String(p.a - p.b) }] });
    expect(wrong.sourceDigest).not.toBe(terse.sourceDigest);
  });

  it("retail's digest covers its intents, samplers and reference solver, and reads the same from src and dist", () => {
    // A copy of the package's retail sources, and where src/ and dist/ modules would sit in it.
    const root = path.join(dir, 'pkg');
    mkdirSync(path.join(root, 'src', 'domains'), { recursive: true });
    writeFileSync(path.join(root, 'package.json'), '{}');
    cpSync(path.resolve('src/domains/retail'), path.join(root, 'src', 'domains', 'retail'), { recursive: true });
    const fromSrc = pathToFileURL(path.join(root, 'src', 'domains', 'retail', 'templates', 'index.ts')).href;
    const fromDist = pathToFileURL(path.join(root, 'dist', 'domains', 'retail', 'templates', 'index.js')).href;
    const before = retailSourceDigest(fromSrc);
    expect(before).toMatch(/^[0-9a-f]{64}$/);
    expect(retailSourceDigest(fromDist)).toBe(before);
    // The digest of the real sources is what the registered retail templates carry.
    expect(retailTemplates[0]!.contentDigest).toBe(retailSourceDigest());
    for (const file of ['templates/intents.ts', 'templates/reference.ts', 'generator.ts']) {
      const target = path.join(root, 'src', 'domains', 'retail', file);
      appendFileSync(target, '\n// changed\n');
      const after = retailSourceDigest(fromSrc);
      expect(after, file).not.toBe(before);
      cpSync(path.resolve('src/domains/retail', file), target);
      expect(retailSourceDigest(fromSrc)).toBe(before);
    }
    // Tests are not part of it.
    appendFileSync(path.join(root, 'src', 'domains', 'retail', 'domain.test.ts'), '\n// changed\n');
    expect(retailSourceDigest(fromSrc)).toBe(before);
  });
});
