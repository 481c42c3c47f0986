/**
 * A template's params schema as a plain function, for the params it certainly accepts: what `safeParse`
 * returns as `data` for them, without zod's run. Every candidate's params go through its template's
 * schema: for math/chain-sum's `{ terms: int[] }` this form took ~0.4 µs less CPU per candidate in a
 * worker's job than `safeParse` (in-process A/B, docs/generation.md "Params fast path").
 *
 * Only schemas built from required-key strip objects, arrays, numbers, strings and booleans, with length
 * and bound checks, compile; anything else (optional keys, defaults, transforms, refinements, unions, ...)
 * gives no function and zod parses as before. A compiled function accepts no value zod rejects, and
 * returns a fresh copy made as zod makes it (object keys in shape order, undeclared keys dropped); for
 * anything it is unsure of it returns `UNSURE`, and zod answers (with its messages for invalid params).
 */

/** What a compiled check returns for a value it does not certainly accept. */
export const UNSURE: unique symbol = Symbol('unsure');

export type FastParse = (value: unknown) => unknown;

interface ZodLike {
  _zod?: { def?: ZodDef; optin?: unknown; optout?: unknown };
}
interface ZodDef {
  type?: unknown;
  checks?: unknown;
  shape?: unknown;
  element?: unknown;
}
interface CheckDef {
  check?: unknown;
  format?: unknown;
  minimum?: unknown;
  maximum?: unknown;
  length?: unknown;
  value?: unknown;
  inclusive?: unknown;
}

const compiled = new WeakMap<object, FastParse | null>();

/** The compiled form of `schema`, or undefined when it uses anything outside the subset above. */
export function fastParamsParser(schema: unknown): FastParse | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined;
  let parse = compiled.get(schema);
  if (parse === undefined) {
    parse = compile(schema as ZodLike) ?? null;
    compiled.set(schema, parse);
  }
  return parse ?? undefined;
}

/**
 * The def members each compiled type may have; any other (`coerce`, `catchall`, a string `format`, ...)
 * means semantics this module does not copy. `z.int()` is a number def that is also its own check
 * (`check`, `format`, `abort`).
 */
const DEF_KEYS: Record<string, ReadonlySet<string>> = {
  object: new Set(['type', 'shape']),
  array: new Set(['type', 'element', 'checks']),
  number: new Set(['type', 'checks', 'check', 'format', 'abort']),
  string: new Set(['type', 'checks']),
  boolean: new Set(['type']),
};

function compile(schema: ZodLike): FastParse | undefined {
  const zod = schema?._zod;
  const def = zod?.def;
  if (def === undefined || zod!.optin !== undefined || zod!.optout !== undefined) return undefined;
  const allowed = typeof def.type === 'string' ? DEF_KEYS[def.type] : undefined;
  if (allowed === undefined || !Object.keys(def).every((key) => allowed.has(key))) return undefined;
  switch (def.type) {
    case 'object':
      return compileObject(def);
    case 'array':
      return compileArray(def);
    case 'number':
      return compileNumber(def);
    case 'string':
      return compileString(def);
    default:
      return (value) => (typeof value === 'boolean' ? value : UNSURE);
  }
}

/** The defs of a schema's checks; undefined when they are not a list of check objects. */
function checkDefs(def: ZodDef): CheckDef[] | undefined {
  if (def.checks === undefined) return [];
  if (!Array.isArray(def.checks)) return undefined;
  const defs: CheckDef[] = [];
  for (const check of def.checks as Array<{ _zod?: { def?: CheckDef } }>) {
    const checkDef = check?._zod?.def;
    if (checkDef === undefined) return undefined;
    defs.push(checkDef);
  }
  return defs;
}

/** Length bounds of strings and arrays: [min, max], or undefined for any other check. */
function lengthBounds(def: ZodDef): [number, number] | undefined {
  const checks = checkDefs(def);
  if (checks === undefined) return undefined;
  let min = 0;
  let max = Infinity;
  for (const check of checks) {
    if (check.check === 'min_length' && typeof check.minimum === 'number') min = Math.max(min, check.minimum);
    else if (check.check === 'max_length' && typeof check.maximum === 'number') max = Math.min(max, check.maximum);
    else if (check.check === 'length_equals' && typeof check.length === 'number') {
      min = Math.max(min, check.length);
      max = Math.min(max, check.length);
    } else return undefined;
  }
  return [min, max];
}

function compileObject(def: ZodDef): FastParse | undefined {
  const shape = def.shape;
  if (typeof shape !== 'object' || shape === null || Object.getOwnPropertySymbols(shape).length > 0) return undefined;
  const keys = Object.keys(shape);
  const fields: FastParse[] = [];
  for (const key of keys) {
    if (key === '__proto__') return undefined;
    const field = compile((shape as Record<string, ZodLike>)[key]!);
    if (field === undefined) return undefined;
    fields.push(field);
  }
  return (value) => {
    if (typeof value !== 'object' || value === null || Object.getPrototypeOf(value) !== Object.prototype) return UNSURE;
    const input = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      if (!Object.hasOwn(input, key)) return UNSURE;
      const parsed = fields[i]!(input[key]);
      if (parsed === UNSURE) return UNSURE;
      out[key] = parsed;
    }
    return out;
  };
}

function compileArray(def: ZodDef): FastParse | undefined {
  const bounds = lengthBounds(def);
  const element = compile(def.element as ZodLike);
  if (bounds === undefined || element === undefined) return undefined;
  const [min, max] = bounds;
  return (value) => {
    if (!Array.isArray(value) || value.length < min || value.length > max) return UNSURE;
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      const parsed = element(value[i]);
      if (parsed === UNSURE) return UNSURE;
      out[i] = parsed;
    }
    return out;
  };
}

function compileNumber(def: ZodDef & CheckDef): FastParse | undefined {
  const checks = checkDefs(def);
  if (checks === undefined) return undefined;
  // `z.int()`: the def is its own safe-integer check.
  if (def.check !== undefined || def.format !== undefined) {
    if (def.check !== 'number_format' || def.format !== 'safeint') return undefined;
    checks.push(def);
  }
  let integer = false;
  let low = -Infinity;
  let lowInclusive = true;
  let high = Infinity;
  let highInclusive = true;
  for (const check of checks) {
    if (check.check === 'number_format' && check.format === 'safeint') integer = true;
    else if (check.check === 'greater_than' && typeof check.value === 'number' && typeof check.inclusive === 'boolean') {
      if (check.value > low || (check.value === low && !check.inclusive)) [low, lowInclusive] = [check.value, check.inclusive];
    } else if (check.check === 'less_than' && typeof check.value === 'number' && typeof check.inclusive === 'boolean') {
      if (check.value < high || (check.value === high && !check.inclusive)) [high, highInclusive] = [check.value, check.inclusive];
    } else return undefined;
  }
  return (value) => {
    if (typeof value !== 'number' || !Number.isFinite(value) || (integer && !Number.isSafeInteger(value))) return UNSURE;
    if (lowInclusive ? value < low : value <= low) return UNSURE;
    if (highInclusive ? value > high : value >= high) return UNSURE;
    return value;
  };
}

function compileString(def: ZodDef): FastParse | undefined {
  const bounds = lengthBounds(def);
  if (bounds === undefined) return undefined;
  const [min, max] = bounds;
  return (value) => (typeof value === 'string' && value.length >= min && value.length <= max ? value : UNSURE);
}
