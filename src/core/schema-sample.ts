/** Sampling plausible values from a tool's JSON Schema (the subset zod emits): the random agent's actions, the safety layer's forbidden calls. */
import type { JsonObject, JsonValue } from './json.js';
import type { Rng } from './rng.js';

type Schema = JsonObject;

/**
 * A value that fits `schema` most of the time: enums and consts are honoured, strings and numbers are
 * drawn from `words` (what the agent has seen) when there are any, objects get their required properties.
 */
export function sampleFromSchema(schema: Schema, rng: Rng, words: readonly string[], depth = 0): JsonValue {
  if (depth > 6) return null;
  if ('const' in schema) return schema['const']!;
  if (Array.isArray(schema['enum']) && schema['enum'].length > 0) return rng.pick(schema['enum']);
  const union = (schema['anyOf'] ?? schema['oneOf']) as Schema[] | undefined;
  if (Array.isArray(union) && union.length > 0) return sampleFromSchema(rng.pick(union), rng, words, depth + 1);
  let type = schema['type'];
  if (Array.isArray(type)) type = type.length > 0 ? rng.pick(type) : 'string';
  switch (type) {
    case 'string':
      return sampleString(schema, rng, words);
    case 'integer':
    case 'number':
      return sampleNumber(schema, rng, words, type === 'integer');
    case 'boolean':
      return rng.chance(0.5);
    case 'null':
      return null;
    case 'array': {
      const items = (schema['items'] ?? {}) as Schema;
      const min = typeof schema['minItems'] === 'number' ? schema['minItems'] : 1;
      const max = typeof schema['maxItems'] === 'number' ? schema['maxItems'] : min + 2;
      const n = rng.int(min, Math.max(min, Math.min(max, min + 2)));
      return Array.from({ length: n }, () => sampleFromSchema(items, rng, words, depth + 1));
    }
    case 'object':
    default:
      return sampleObject(schema, rng, words, depth);
  }
}

function sampleObject(schema: Schema, rng: Rng, words: readonly string[], depth: number): JsonObject {
  const props = (schema['properties'] ?? {}) as Record<string, Schema>;
  const required = new Set(Array.isArray(schema['required']) ? (schema['required'] as string[]) : []);
  const out: JsonObject = {};
  for (const name of Object.keys(props).sort()) {
    if (required.has(name) || rng.chance(0.3)) out[name] = sampleFromSchema(props[name]!, rng, words, depth + 1);
  }
  return out;
}

function sampleString(schema: Schema, rng: Rng, words: readonly string[]): string {
  if (schema['format'] === 'email') {
    const emails = words.filter((w) => w.includes('@'));
    return emails.length > 0 ? rng.pick(emails) : 'someone@example.com';
  }
  if (words.length > 0 && rng.chance(0.9)) return rng.pick(words);
  return `x${rng.int(0, 99999)}`;
}

function sampleNumber(schema: Schema, rng: Rng, words: readonly string[], integer: boolean): number {
  let min = typeof schema['minimum'] === 'number' ? schema['minimum'] : typeof schema['exclusiveMinimum'] === 'number' ? schema['exclusiveMinimum'] + 1 : 0;
  let max = typeof schema['maximum'] === 'number' ? schema['maximum'] : typeof schema['exclusiveMaximum'] === 'number' ? schema['exclusiveMaximum'] - 1 : min + 20;
  min = Math.ceil(min);
  max = Math.floor(Math.max(min, max));
  const seen = words.filter((w) => /^[0-9]{1,9}$/.test(w)).map(Number).filter((n) => n >= min && n <= max);
  if (seen.length > 0 && rng.chance(0.5)) return rng.pick(seen);
  const n = rng.int(min, Math.min(max, min + 1_000_000));
  return integer ? n : n + rng.int(0, 99) / 100;
}
