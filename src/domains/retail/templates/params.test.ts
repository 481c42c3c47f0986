import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { instantiateTask } from '../../../generation/index.js';
import { retailParamsSchema, retailTemplates } from './index.js';
import { fastRetailParams } from './params.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const sampled = (t: number, level: number, seed: number, index: number): Json => instantiateTask(retailTemplates[t]!, { level, seed, index }).params as Json;

/** Every object and array in a value, with the path to it. */
function containers(value: unknown, path: Array<string | number> = [], out: Array<{ path: Array<string | number>; node: object }> = []): typeof out {
  if (typeof value === 'object' && value !== null) {
    out.push({ path, node: value });
    if (Array.isArray(value)) value.forEach((v, i) => containers(v, [...path, i], out));
    else for (const [k, v] of Object.entries(value)) containers(v, [...path, k], out);
  }
  return out;
}

class Boxed {
  constructor(readonly value: string) {}
}

/** Replacement values: wrong types, edge numbers, near-miss strings, odd objects. */
const ODD: unknown[] = [
  undefined,
  null,
  0,
  -0,
  -1,
  3,
  1.5,
  2 ** 53,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  '',
  'x',
  'pending',
  'status',
  'cancel',
  'items',
  'train',
  'email',
  true,
  false,
  [],
  [''],
  ['a', 'b'],
  ['a', 'b', 'c'],
  [1, 2],
  {},
  { kind: 'status' },
  Object.create(null),
  new Boxed('x'),
  new Date(0),
];

/**
 * One mutation of a copy of `params`: replace a member, delete one, add an unknown one, empty or extend an
 * array, turn a container into another shape.
 */
function mutate(params: Json, pick: number, op: number, odd: number): unknown {
  const copy = structuredClone(params) as Record<string, unknown>;
  const all = containers(copy);
  const { node } = all[pick % all.length]!;
  const keys = Array.isArray(node) ? node.map((_, i) => i) : Object.keys(node);
  const key = keys.length === 0 ? undefined : keys[pick % keys.length];
  const target = node as Record<string | number, unknown>;
  switch (op % 8) {
    case 0:
      if (key !== undefined) target[key] = ODD[odd % ODD.length];
      break;
    case 1:
      if (key !== undefined) {
        if (Array.isArray(node)) node.splice(Number(key), 1);
        else delete target[key];
      }
      break;
    case 2:
      if (Array.isArray(node)) node.push(ODD[odd % ODD.length] as Json);
      else target['extra'] = 1;
      break;
    case 3:
      if (Array.isArray(node)) node.length = 0;
      else if (key !== undefined) target[key] = [target[key]];
      break;
    case 4:
      // A known optional key present with an undefined value, or an inherited enumerable one.
      if (!Array.isArray(node)) {
        if (odd % 2 === 0) target['tracking'] = undefined;
        else return Object.setPrototypeOf(copy, Object.create({ inherited: 1 }));
      }
      break;
    case 5:
      if (key !== undefined && typeof target[key] === 'object' && target[key] !== null) target[key] = Object.assign(Object.create(null), target[key]);
      break;
    case 6:
      // Another intent kind's tag on this object.
      if (!Array.isArray(node)) target['kind'] = ['status', 'cancel', 'return', 'exchange', 'order_address', 'user_address', 'payment', 'out_of_scope', 'other_customer', 'refund'][odd % 10];
      break;
    default:
      if (key !== undefined && typeof target[key] === 'number') target[key] = (target[key] as number) + (odd % 2 === 0 ? 0.5 : 3);
  }
  return copy;
}

/** The fast check accepts only what zod accepts, with zod's data (members and key order). */
function agrees(value: unknown): void {
  const fast = fastRetailParams(value);
  const zod = retailParamsSchema.safeParse(value);
  if (fast !== undefined) {
    expect(zod.success).toBe(true);
    expect(fast).toStrictEqual(zod.data);
    expect(JSON.stringify(fast)).toBe(JSON.stringify(zod.data));
    expect(fast).not.toBe(value);
  }
  // What the templates call: zod's answer, error included.
  const template = retailTemplates[0]!.params.safeParse(value);
  expect(template.success).toBe(zod.success);
  if (zod.success) expect(JSON.stringify(template.data)).toBe(JSON.stringify(zod.data));
  else expect(template.error!.issues).toEqual(zod.error.issues);
}

describe('retail params: the fast check', () => {
  test.prop([fc.nat(retailTemplates.length - 1), fc.integer({ min: 1, max: 5 }), fc.integer({ min: -1e9, max: 1e9 }), fc.nat(1000)], { numRuns: 300, seed: 18 })(
    'accepts every sampled params object, with the data zod returns',
    (t, level, seed, index) => {
      const params = sampled(t, level, seed, index);
      expect(fastRetailParams(params)).toBeDefined();
      agrees(params);
    },
  );

  test.prop([fc.nat(retailTemplates.length - 1), fc.integer({ min: 1, max: 5 }), fc.nat(10_000), fc.nat(), fc.nat(), fc.nat()], { numRuns: 3000, seed: 19 })(
    'never accepts what zod rejects, and the templates report zod\'s own error',
    (t, level, seed, pick, op, odd) => {
      agrees(mutate(sampled(t, level, seed, 0), pick, op, odd));
    },
  );

  it('agrees with zod on every member of sampled params replaced by every odd value (and a near-miss of itself)', () => {
    for (let t = 0; t < retailTemplates.length; t++) {
      for (const level of [1, 5]) {
        const params = sampled(t, level, 7, t);
        for (const { path, node } of containers(params)) {
          const keys = Array.isArray(node) ? node.map((_, i) => i) : Object.keys(node);
          for (const key of keys) {
            const value = (node as Record<string | number, unknown>)[key];
            const near = typeof value === 'string' ? [value + 'x', value.toUpperCase(), ''] : typeof value === 'number' ? [value + 1, value - 1, value + 0.5] : [];
            for (const replacement of [...ODD, ...near]) {
              const copy = structuredClone(params);
              let target = copy as Record<string | number, unknown>;
              for (const step of path) target = target[step] as Record<string | number, unknown>;
              target[key] = replacement;
              agrees(copy);
            }
          }
        }
      }
    }
  });

  it('leaves non-objects, arrays and class instances to zod', () => {
    for (const value of [undefined, null, 1, 'x', [], [1], new Boxed('x'), { world: 1 }, { world: 1, goal: null }]) {
      expect(fastRetailParams(value)).toBeUndefined();
      agrees(value);
    }
  });

  it('copies: the data shares no object with the input', () => {
    const params = sampled(6, 5, 3, 0) as Record<string, unknown>;
    const copy = fastRetailParams(params)!;
    const inputs = new Set(containers(params).map((c) => c.node));
    for (const { node } of containers(copy)) expect(inputs.has(node)).toBe(false);
  });
});
