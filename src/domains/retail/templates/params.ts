/**
 * The retail templates' params schema with a hand-written fast path: `retailParamsSchema` (zod) decides,
 * a checker written against goal.ts answers first for the params the samplers make.
 */
import type { z } from 'zod';
import type { RetailParams } from './index.js';

type Out = Record<string, unknown>;
type Check = (value: unknown) => unknown;

/** `undefined` from a check means "not sure": zod decides. Never a valid value here (no member may be undefined). */
const NO = undefined;

/** A plain object (`{}` or JSON) whose every enumerable key is its own and one of `known`. */
function plainWithin(value: unknown, known: ReadonlySet<string>): value is Out {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return false;
  for (const key in value) if (!Object.hasOwn(value, key) || !known.has(key)) return false;
  return true;
}

/**
 * A strict object: every key known, every required key there, each member passing its check. The copy
 * lists the keys in the shape's order (zod's output order), optional ones only when present.
 */
function strict(shape: Record<string, Check>, optional: readonly string[] = []): Check {
  const keys = Object.keys(shape);
  const known = new Set(keys);
  const checks = keys.map((k) => shape[k]!);
  const isOptional = keys.map((k) => optional.includes(k));
  return (value) => {
    if (!plainWithin(value, known)) return NO;
    const out: Out = {};
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      if (!Object.hasOwn(value, key)) {
        if (isOptional[i]) continue;
        return NO;
      }
      const member = checks[i]!(value[key]);
      if (member === NO) return NO;
      out[key] = member;
    }
    return out;
  };
}

const string: Check = (value) => (typeof value === 'string' ? value : NO);
const boolean: Check = (value) => (typeof value === 'boolean' ? value : NO);
/** zod's `.int()`: a safe integer, within [min, max]. */
const int =
  (min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER): Check =>
  (value) =>
    typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max ? value : NO;
const oneOf = (...values: string[]): Check => {
  const set = new Set(values);
  return (value) => (typeof value === 'string' && set.has(value) ? value : NO);
};
const literal = (want: string): Check => (value) => (value === want ? value : NO);

function array(item: Check, min = 0): Check {
  return (value) => {
    if (!Array.isArray(value) || value.length < min) return NO;
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      const member = item(value[i]);
      if (member === NO) return NO;
      out[i] = member;
    }
    return out;
  };
}

const pair: Check = (value) =>
  Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && typeof value[1] === 'string' ? [value[0], value[1]] : NO;

// ---- goal.ts, member for member ----

const address = strict({ address1: string, address2: string, city: string, state: string, country: string, zip: string });
const orderRef = strict({ order_id: string, refer: oneOf('id', 'items', 'latest'), names: array(string) });
const methodRef = strict({ id: string, text: string, cues: array(string) });
const itemRef = strict(
  { item_id: string, product_id: string, name: string, options: array(string), new_item_id: string, new_options: array(pair) },
  ['new_item_id', 'new_options'],
);

const INTENTS: Record<string, Check> = {
  status: strict({ kind: literal('status'), order: orderRef, status: string, tracking: string }, ['tracking']),
  cancel: strict({ kind: literal('cancel'), order: orderRef, reason: oneOf('no longer needed', 'ordered by mistake'), status: string, trap: boolean }),
  return: strict({ kind: literal('return'), order: orderRef, items: array(itemRef, 1), method: methodRef, insist: methodRef }, ['insist']),
  exchange: strict({ kind: literal('exchange'), order: orderRef, items: array(itemRef, 1), method: methodRef }),
  order_address: strict({ kind: literal('order_address'), order: orderRef, address }),
  user_address: strict({ kind: literal('user_address'), address }),
  payment: strict({ kind: literal('payment'), order: orderRef, method: methodRef, current: string }),
  out_of_scope: strict({ kind: literal('out_of_scope'), topic: string }),
  other_customer: strict({ kind: literal('other_customer'), order_id: string, relation: string }),
};

const intent: Check = (value) => {
  if (typeof value !== 'object' || value === null) return NO;
  const kind = (value as Out)['kind'];
  const check = typeof kind === 'string' && Object.hasOwn(INTENTS, kind) ? INTENTS[kind] : undefined;
  return check === undefined ? NO : check(value);
};

const goal = strict(
  {
    user: int(),
    bank: oneOf('train', 'heldout'),
    disclosure: oneOf('all_at_once', 'on_request', 'one_fact'),
    noise: int(0, 2),
    staggered: boolean,
    paraphrased: array(int(0)),
    identity: oneOf('email', 'name_zip'),
    profile: strict({ user_id: string, first_name: string, last_name: string, zip: string, email: string }),
    intents: array(intent, 1),
    conditional: strict({ order_id: string, status: string, pending: boolean }),
  },
  ['paraphrased', 'conditional'],
);

/**
 * @internal The fast check of retail params: a copy equal to what `retailParamsSchema.parse(value)` returns
 * (same members, same key order), or undefined when it cannot tell (zod then parses, and decides).
 * Conservative by construction: it only accepts what the zod schema accepts (tested against zod on
 * sampled and mutated params); anything unusual (class instances, inherited enumerable keys, keys present
 * with an undefined value, unsafe integers) is left to zod.
 */
export const fastRetailParams = strict({ world: int(), goal }) as (value: unknown) => RetailParams | undefined;

/**
 * `schema` (the zod params schema) whose `safeParse` answers from the fast check when it accepts, and is
 * zod's own otherwise: the same success and data, and the same error for every input zod rejects.
 */
export function withFastParams(schema: z.ZodType<RetailParams>): z.ZodType<RetailParams> {
  const fast = schema.clone();
  const zodSafeParse = fast.safeParse.bind(fast);
  fast.safeParse = ((data: unknown, params?: Parameters<typeof zodSafeParse>[1]) => {
    if (params === undefined) {
      const copy = fastRetailParams(data);
      if (copy !== undefined) return { success: true, data: copy };
    }
    return zodSafeParse(data, params);
  }) as typeof fast.safeParse;
  return fast;
}
