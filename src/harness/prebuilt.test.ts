/** The build's template-digest table: used only for the compiled code it was made from, equal to probing. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTemplate, knownSourceDigest, templateSourceDigest, type Template } from '../core/index.js';
import { applyTemplateDigests, prebuiltDir, writeTemplateDigests } from './prebuilt.js';

const dir = mkdtempSync(path.join(tmpdir(), 'envharness-prebuilt-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A template that counts how often it was probed (sampled). */
function counted(name: string): { declaration: Template<{ a: number }>; samples: () => number } {
  let samples = 0;
  const declaration: Template<{ a: number }> = {
    domain: 'demo',
    name,
    version: 1,
    taskType: 'arithmetic',
    levels: [{ max: 9 }],
    params: z.object({ a: z.number() }),
    sample: (rng) => {
      samples++;
      return { a: rng.int(0, 9) };
    },
    build: (p) => ({ instructions: `${p.a} + 1 = ?`, initialState: null, budget: { steps: 2 }, acceptance: { finalState: false, answer: String(p.a + 1) } }),
    solve: (p) => [{ type: 'finish', answer: String(p.a + 1) }],
  };
  return { declaration, samples: () => samples };
}

describe('template source digests', () => {
  it('are computed when first read, not when declared, and a known digest is taken only before that', () => {
    const t = counted('lazy');
    const registered = defineTemplate(t.declaration);
    expect(t.samples()).toBe(0);
    expect(registered.sourceDigest).toBe(templateSourceDigest(t.declaration));
    const after = t.samples();
    expect(after).toBeGreaterThan(0);
    knownSourceDigest(registered, 'f'.repeat(64));
    expect(registered.sourceDigest).toBe(templateSourceDigest(t.declaration));

    const other = counted('known');
    const known = defineTemplate(other.declaration);
    knownSourceDigest(known, 'e'.repeat(64));
    expect(known.sourceDigest).toBe('e'.repeat(64));
    expect(other.samples()).toBe(0);
  });
});

describe('the prebuilt template-digest table', () => {
  it('gives the probed digests without probing, and is ignored once any compiled file changes', () => {
    // A stand-in compiled package: <root>/x.js and <root>/prebuilt/.
    const root = path.join(dir, 'pkg');
    const prebuilt = path.join(root, 'prebuilt');
    mkdirSync(root, { recursive: true });
    writeFileSync(path.join(root, 'x.js'), 'export const x = 1;\n');
    const probed = counted('table');
    writeTemplateDigests(prebuilt, [defineTemplate(probed.declaration)]);

    const fresh = counted('table');
    const template = defineTemplate(fresh.declaration);
    expect(applyTemplateDigests([template], prebuilt)).toBe(1);
    expect(template.sourceDigest).toBe(templateSourceDigest(probed.declaration));
    expect(fresh.samples()).toBe(0);

    writeFileSync(path.join(root, 'x.js'), 'export const x = 2;\n');
    const changed = counted('table');
    const second = defineTemplate(changed.declaration);
    expect(applyTemplateDigests([second], prebuilt)).toBe(0);
    expect(second.sourceDigest).toBe(templateSourceDigest(changed.declaration));
    expect(changed.samples()).toBeGreaterThan(0);
  });

  it('is looked for only beside compiled modules', () => {
    expect(prebuiltDir('file:///pkg/src/harness/prebuilt.ts')).toBeUndefined();
    expect(prebuiltDir('file:///pkg/dist/harness/prebuilt.js')).toBe('/pkg/dist/prebuilt');
  });
});
