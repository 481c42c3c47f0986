import fc from 'fast-check';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { actionSchema, validateAction } from './index.js';
import { compileArgs, parseArgs } from './action.js';
import { builtinDomains } from '../builtins.js';
import { retailTools } from '../domains/retail/index.js';
import { resolvesIn } from '../core/index.js';

const valid = [
  { type: 'tool', tool: 'get_stock', args: { item: 'widget-1' } },
  { type: 'tool', tool: 'x', args: { nested: { list: [1, 'a', null, true, { b: [] }] } }, usage: { inputTokens: 3 } },
  { type: 'message', text: '' },
  { type: 'message', text: 'hi', usage: { inputTokens: 0, outputTokens: 5 } },
  { type: 'finish' },
  { type: 'finish', answer: '42' },
];

describe('validateAction', () => {
  it('accepts well-formed actions', () => {
    for (const action of valid) expect(validateAction(action)).toBeUndefined();
    expect(validateAction(JSON.parse('{"type":"tool","tool":"t","args":{"__proto__":1}}'))).toBeUndefined();
    expect(validateAction({ type: 'tool', tool: 't', args: Object.create(null) })).toBeUndefined();
  });

  it('rejects deep, huge and non-JSON arguments with a resolvable pointer', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 10_000; i++) deep = { a: deep };
    const cases: unknown[] = [
      { type: 'tool', tool: 't', args: { deep } },
      { type: 'tool', tool: 't', args: { list: Array.from({ length: 20_000 }, () => 0) } },
      { type: 'tool', tool: 't', args: { when: new Date(0) } },
      { type: 'tool', tool: 't', args: { n: 1n } },
      { type: 'tool', tool: 't', args: { f: () => 1 } },
      { type: 'tool', tool: 't', args: { u: undefined } },
      { type: 'tool', tool: 't', args: { inf: -Infinity } },
      { type: 'tool', tool: 't', args: { ['\uDC00']: 1 } },
      { type: 'message', text: 'a\uD800' },
      { type: 'tool', tool: 't', args: { s: 'x\uDBFF' } },
      { type: 'tool', tool: 't', args: { s: ['\uDC00y'] } },
      { type: 'tool', tool: 't', args: { o: { ['a\uD800']: 1 } } },
      { type: 'finish', answer: '\uDC00\uD800' },
    ];
    for (const action of cases) {
      const issue = validateAction(action);
      expect(issue, JSON.stringify(Object.keys((action as { args?: object }).args ?? {}))).toBeDefined();
      expect(resolvesIn(action, issue!.pointer)).toBe(true);
    }
  });

  it('accepts surrogate pairs in keys and strings', () => {
    expect(validateAction({ type: 'tool', tool: 't', args: { s: 'a\uD83D\uDE00', ['\uD83D\uDE00']: ['\uD83D\uDE00'] } })).toBeUndefined();
    expect(validateAction({ type: 'message', text: '\uD83D\uDE00' })).toBeUndefined();
    expect(validateAction({ type: 'finish', answer: '\uD83D\uDE00!' })).toBeUndefined();
  });

  it('never throws, even for hostile objects', () => {
    const hostile = new Proxy({}, { ownKeys: () => { throw new Error('no'); }, get: () => { throw new Error('no'); } });
    expect(validateAction(hostile)).toBeDefined();
    expect(validateAction({ type: 'tool', tool: 't', args: hostile })).toMatchObject({ pointer: '' });
  });

  it('agrees with the zod schema of Action on JSON input', () => {
    const mutation = fc.tuple(fc.constantFrom(...valid), fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 3 }), fc.boolean()).map(([base, key, junk, drop]) => {
      const copy = structuredClone(base) as Record<string, unknown>;
      if (drop) delete copy[Object.keys(copy)[key.length % Object.keys(copy).length]!];
      else copy[key.length % 2 === 0 ? key : Object.keys(copy)[key.length % Object.keys(copy).length]!] = junk;
      return copy;
    });
    fc.assert(
      fc.property(fc.oneof(mutation, fc.jsonValue({ maxDepth: 4 }), fc.constantFrom(...valid)), (input) => {
        const ours = validateAction(input) === undefined;
        const zods = actionSchema.safeParse(input).success;
        if (ours !== zods) throw new Error(`disagree on ${JSON.stringify(input)}: validateAction ${ours}, zod ${zods}`);
      }),
      { numRuns: 3000, seed: 7 },
    );
  });
});

describe('parseArgs', () => {
  it("gives safeParse's data, or exactly its first issue, for every retail tool on arbitrary and near-valid arguments", () => {
    const leaf = fc.oneof(fc.string({ maxLength: 12 }), fc.integer(), fc.boolean(), fc.constant(null), fc.constantFrom('#W1234567', '1234567890', 'credit_card_1', 'yusuf_rossi_9620'));
    const args = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.dictionary(fc.constantFrom('order_id', 'user_id', 'item_ids', 'new_item_ids', 'payment_method_id', 'reason', 'email', 'zip', 'first_name', 'last_name', 'product_id', 'expression', 'summary', 'thought', 'address1', 'address2', 'city', 'state', 'country'), fc.oneof(leaf, fc.array(leaf, { maxLength: 3 }))),
    );
    fc.assert(
      fc.property(fc.constantFrom(...retailTools), args, (tool, value) => {
        const reference = tool.args.safeParse(value);
        const fast = parseArgs(tool.args, value);
        expect(fast.success).toBe(reference.success);
        if (reference.success && fast.success) expect(fast.data).toEqual(reference.data);
        if (!reference.success && !fast.success) expect(fast.issue).toEqual(reference.error.issues[0]);
      }),
      { numRuns: 3_000 },
    );
  });
});

describe('parseArgs: the fast path for simple argument schemas', () => {
  const tools = builtinDomains().flatMap((d) => d.tools.map((t) => ({ domain: d.name, tool: t })));
  const compiled = tools.filter(({ tool }) => compileArgs(tool.args) !== null);

  it('covers every retail tool', () => {
    for (const tool of retailTools) expect(compileArgs(tool.args), tool.name).not.toBeNull();
    expect(compiled.length).toBeGreaterThanOrEqual(retailTools.length);
  });

  /** Valid arguments for a compiled schema, from its shape (strings within their length bounds, booleans, enum values, arrays of those). */
  function validArgs(schema: unknown, pick: number): Record<string, unknown> {
    const def = (schema as { _zod: { def: { shape: Record<string, { _zod: { def: any } }> } } })._zod.def;
    const strings = (m: z.ZodType): string[] => ['', 'x', '#W1234567', 'a"b', '😀x'].filter((s) => m.safeParse(s).success);
    const member = (m: any): unknown => {
      const d = m._zod.def;
      if (d.type === 'string') return strings(m)[pick % strings(m).length];
      return d.type === 'boolean' ? pick % 2 === 0 : d.type === 'enum' ? Object.values(d.entries)[pick % Object.values(d.entries).length] : [member(d.element), member(d.element)].slice(0, pick % 3);
    };
    // Keys in reverse order: the data must come back in the shape's order.
    return Object.fromEntries(Object.entries(def.shape).reverse().map(([k, v]) => [k, member(v)]));
  }

  class Args {
    constructor(readonly order_id: string) {}
  }
  const junk: unknown[] = [undefined, null, 0, 1.5, true, 'x', [], ['a', 1], {}, Object.create(null), new Args('x'), [['a']]];

  it('accepts only what zod accepts, with zod\'s data in zod\'s key order, and leaves every failure to zod', () => {
    fc.assert(
      fc.property(fc.constantFrom(...compiled), fc.nat(), fc.nat(5), fc.nat(junk.length - 1), ({ tool }, pick, op, j) => {
        const args: Record<string, unknown> = validArgs(tool.args, pick);
        const keys = Object.keys(args);
        const key = keys.length === 0 ? 'extra' : keys[pick % keys.length]!;
        let value: unknown = args;
        if (op === 1) delete args[key];
        else if (op === 2) args[key] = junk[j];
        else if (op === 3) args['extra'] = junk[j];
        else if (op === 4) value = Object.assign(Object.create(null), args);
        else if (op === 5) value = Object.create(args);
        const reference = tool.args.safeParse(value);
        const fast = compileArgs(tool.args)!(value);
        if (fast !== undefined) {
          expect(reference.success).toBe(true);
          expect(JSON.stringify(fast)).toBe(JSON.stringify(reference.data));
          expect(fast).toStrictEqual(reference.data);
        }
        if (op === 0 || op === 4) expect(fast).toBeDefined();
        const parsed = parseArgs(tool.args, value);
        expect(parsed.success).toBe(reference.success);
        if (!parsed.success && !reference.success) expect(parsed.issue).toEqual(reference.error.issues[0]);
      }),
      { numRuns: 4_000, seed: 18 },
    );
  });

  it('covers every web tool, and takes a bounded string only when its length holds in code points whatever its pairs', () => {
    for (const tool of builtinDomains().find((d) => d.name === 'web')!.tools) expect(compileArgs(tool.args), tool.name).not.toBeNull();
    const schema = z.object({ id: z.string().min(2).max(4) }).strict();
    const fast = compileArgs(schema)!;
    for (const id of ['', 'a', 'ab', 'abcd', 'abcde', '😀', '😀😀', '😀😀😀', 'a😀', '\uD800', '\uD800\uD800', 'ab\uDC00']) {
      const reference = schema.safeParse({ id });
      const got = fast({ id });
      if (got !== undefined) expect(got).toStrictEqual(reference.data);
      expect(got !== undefined, id).toBe(reference.success && id.length <= 4 && Math.ceil(id.length / 2) >= 2);
      const parsed = parseArgs(schema, { id });
      expect(parsed.success).toBe(reference.success);
      if (!parsed.success && !reference.success) expect(parsed.issue).toEqual(reference.error.issues[0]);
    }
  });

  it('leaves own non-enumerable and inherited members to zod', () => {
    const tool = retailTools.find((t) => t.name === 'get_order_details')!;
    const hidden = Object.defineProperty({}, 'order_id', { value: '#W1', enumerable: false });
    expect(compileArgs(tool.args)!(hidden)).toBeUndefined();
    expect(compileArgs(tool.args)!(Object.defineProperty({ extra: 1 }, 'order_id', { value: '#W1', enumerable: false }))).toBeUndefined();
    expect(parseArgs(tool.args, hidden).success).toBe(tool.args.safeParse(hidden).success);
  });
});
