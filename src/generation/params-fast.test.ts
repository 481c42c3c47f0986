import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { templates as builtinTemplates } from '../builtins.js';
import { rngFor, type RegisteredTemplate } from '../core/index.js';
import { chainSum } from '../domains/math/index.js';
import { fastParamsParser, UNSURE } from './params-fast.js';

/** What zod gives for `value`, as the fast form must give it (key order included). */
function viaZod(schema: z.ZodType, value: unknown): { ok: boolean; json?: string } {
  const parsed = schema.safeParse(value);
  return parsed.success ? { ok: true, json: JSON.stringify(parsed.data) } : { ok: false };
}

describe('fastParamsParser', () => {
  it("compiles math/chain-sum's params and gives zod's data, as a copy", () => {
    const parse = fastParamsParser(chainSum.params)!;
    expect(parse).toBeTypeOf('function');
    const input = { terms: [-77, -448, 765], extra: 1 };
    const out = parse(input) as { terms: number[] };
    expect(out).toEqual({ terms: [-77, -448, 765] });
    expect(out).not.toBe(input);
    expect(out.terms).not.toBe(input.terms);
    expect(JSON.stringify(out)).toBe(viaZod(chainSum.params, input).json);
  });

  it('is unsure of every value zod rejects (or it cannot vouch for)', () => {
    const parse = fastParamsParser(chainSum.params)!;
    for (const bad of [
      { terms: [1] },
      { terms: [1, 2.5] },
      { terms: [1, Number.NaN] },
      { terms: [1, Infinity] },
      { terms: [1, 2 ** 53] },
      { terms: [1, '2'] },
      { terms: [1, , 3] },
      { terms: 'xy' },
      {},
      null,
      [1, 2],
      Object.create({ terms: [1, 2] }),
    ]) {
      expect(parse(bad)).toBe(UNSURE);
    }
  });

  it('gives no function for schemas outside its subset', () => {
    for (const schema of [
      z.object({ a: z.number().optional() }),
      z.object({ a: z.number().default(1) }),
      z.strictObject({ a: z.number() }),
      z.looseObject({ a: z.number() }),
      z.object({ a: z.number().refine((n) => n > 1) }),
      z.object({ a: z.string().trim() }),
      z.object({ a: z.string().regex(/a/) }),
      z.object({ a: z.email() }),
      z.object({ a: z.coerce.number() }),
      z.object({ a: z.number().multipleOf(2) }),
      z.object({ a: z.enum(['x', 'y']) }),
      z.object({ a: z.literal(1) }),
      z.object({ a: z.union([z.number(), z.string()]) }),
      z.object({ a: z.number().transform((n) => n + 1) }),
      z.object({ a: z.int32() }),
      z.object({ a: z.array(z.number()).nonempty().refine(() => true) }),
    ]) {
      expect(fastParamsParser(schema)).toBeUndefined();
    }
  });

  it('treats z.int() as an integer check', () => {
    const parse = fastParamsParser(z.object({ n: z.int() }))!;
    expect(parse({ n: 3 })).toEqual({ n: 3 });
    expect(parse({ n: 1.5 })).toBe(UNSURE);
  });

  it('keeps bounds, exclusive and inclusive, and string and array lengths', () => {
    const schema = z.object({
      p: z.number().positive(),
      q: z.number().min(0).max(10),
      r: z.number().lt(5),
      s: z.string().min(1).max(3),
      t: z.string().length(2),
      u: z.array(z.boolean()).max(2),
    });
    const parse = fastParamsParser(schema)!;
    const good = { p: 0.5, q: 10, r: 4.9, s: 'abc', t: 'xy', u: [true, false] };
    expect(JSON.stringify(parse(good))).toBe(viaZod(schema, good).json);
    for (const change of [{ p: 0 }, { q: -1 }, { q: 10.5 }, { r: 5 }, { s: '' }, { s: 'abcd' }, { t: 'x' }, { u: [true, true, true] }, { u: [1] }]) {
      expect(parse({ ...good, ...change })).toBe(UNSURE);
      expect(schema.safeParse({ ...good, ...change }).success).toBe(false);
    }
  });

  it("gives zod's data for the sampled params of every built-in template it compiles", () => {
    const compiled = (builtinTemplates as RegisteredTemplate<any>[]).filter((t) => fastParamsParser(t.params) !== undefined);
    expect(compiled.map((t) => t.id)).toContain(chainSum.id);
    for (const template of compiled) {
      const parse = fastParamsParser(template.params)!;
      for (let level = 1; level <= template.levels.length; level++) {
        for (let index = 0; index < 50; index++) {
          const sampled = template.sample(rngFor(7, template.id, index), level, template.levels[level - 1]!);
          const fast = parse(sampled);
          const zod = viaZod(template.params, sampled);
          // Sampled params are valid: the fast form must take them all, and give what zod gives.
          expect(fast).not.toBe(UNSURE);
          expect(JSON.stringify(fast)).toBe(zod.json);
        }
      }
    }
  });

  const schemas = fc.letrec<{ schema: z.ZodType }>((tie) => ({
    schema: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.constantFrom(z.number(), z.number().int(), z.int(), z.number().min(-1), z.number().positive(), z.string(), z.string().min(1), z.string().max(2), z.boolean()),
      tie('schema').map((s) => z.array(s as z.ZodType)),
      fc.tuple(tie('schema'), fc.nat(2)).map(([s, n]) => z.array(s as z.ZodType).min(n)),
      fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd'), tie('schema'), { maxKeys: 3 }).map((shape) => z.object(shape as Record<string, z.ZodType>)),
    ),
  })).schema;
  const values = fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, -0, 2 ** 53, Infinity, Number.NaN), fc.string({ maxLength: 3 }), fc.boolean(), fc.constant(null)),
      fc.array(tie('value'), { maxLength: 3 }),
      fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd', 'e'), tie('value'), { maxKeys: 4 }),
    ),
  })).value;

  test.prop([schemas, values], { numRuns: 500 })('accepts only what zod accepts, and gives the same data', (schema, value) => {
    const parse = fastParamsParser(schema);
    expect(parse).toBeTypeOf('function');
    const fast = parse!(value);
    if (fast !== UNSURE) expect(JSON.stringify(fast)).toBe(viaZod(schema, value).json);
  });

  test.prop([schemas], { numRuns: 200 })('takes the values zod accepts in the common shapes', (schema) => {
    // A value built to fit the schema: zod accepts it, and so does the fast form.
    const fit = (s: z.ZodType): unknown => {
      const def = (s as unknown as { _zod: { def: { type: string; shape?: Record<string, z.ZodType>; element?: z.ZodType } } })._zod.def;
      if (def.type === 'object') return Object.fromEntries(Object.entries(def.shape!).map(([k, v]) => [k, fit(v)]));
      if (def.type === 'array') return [fit(def.element!), fit(def.element!), fit(def.element!)];
      if (def.type === 'string') return 'ab';
      if (def.type === 'boolean') return true;
      return 3;
    };
    const value = fit(schema);
    expect(schema.safeParse(value).success).toBe(true);
    expect(JSON.stringify(fastParamsParser(schema)!(value))).toBe(viaZod(schema, value).json);
  });
});
