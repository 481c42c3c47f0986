import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { actionSchema, validateAction } from './index.js';
import { parseArgs } from './action.js';
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
    ];
    for (const action of cases) {
      const issue = validateAction(action);
      expect(issue, JSON.stringify(Object.keys((action as { args?: object }).args ?? {}))).toBeDefined();
      expect(resolvesIn(action, issue!.pointer)).toBe(true);
    }
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
