/** The zod schema of a Task: what the schema gate checks before anything else. */
import { z } from 'zod';
import type { JsonValue } from '../core/index.js';

// A hand-written JSON check: z.json() reports nested union failures that say little to a reader.
function isJson(value: unknown, depth = 0): value is JsonValue {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (typeof value !== 'object' || depth > 64) return false;
  if (Array.isArray(value)) {
    for (const item of value) if (!isJson(item, depth + 1)) return false;
    return true;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  for (const key of Object.keys(value)) {
    if (!isJson((value as Record<string, unknown>)[key], depth + 1)) return false;
  }
  return true;
}

const json = z.custom<JsonValue>((value) => isJson(value), { error: 'must be a JSON value (no undefined, NaN, Infinity, functions or class instances)' });
const jsonObject = z.record(z.string(), json);
const count = z.number().int().min(0);
const usage = z.strictObject({ inputTokens: count.optional(), outputTokens: count.optional() });
const nonEmpty = z.string().trim().min(1, { error: 'must not be empty' });

const action = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('tool'), tool: nonEmpty, args: jsonObject, usage: usage.optional() }),
  z.strictObject({ type: z.literal('message'), text: z.string(), usage: usage.optional() }),
  z.strictObject({ type: z.literal('finish'), answer: z.string().optional(), usage: usage.optional() }),
]);

const actionPattern = z.strictObject({
  type: z.enum(['tool', 'message', 'finish']).optional(),
  tool: z.string().optional(),
  args: jsonObject.optional(),
});

const budget = z.strictObject({
  steps: count.optional(),
  tokens: count.optional(),
  timeMs: count.optional(),
  toolCalls: count.optional(),
  perTool: z.record(z.string(), count).optional(),
  consecutiveErrors: count.optional(),
});

const faultRule = z.strictObject({
  tool: nonEmpty,
  kind: z.enum(['timeout', 'transient', 'rate_limit', 'partial', 'stale']),
  rate: z.number().min(0).max(1),
  retryAfterMs: count.optional(),
  maxPerEpisode: count.optional(),
  persistent: z.boolean().optional(),
});

/** The content of a task (TaskSpec), strict: unknown fields are mistakes. */
export const taskSpecSchema = z.strictObject({
  instructions: nonEmpty,
  initialState: json,
  budget,
  constraints: z
    .strictObject({
      allowedTools: z.array(nonEmpty).optional(),
      confirmTools: z.array(nonEmpty).optional(),
      forbidden: z.array(z.strictObject({ tool: nonEmpty, args: jsonObject.optional(), reason: z.string().optional() })).optional(),
    })
    .optional(),
  faults: z.strictObject({ rules: z.array(faultRule) }).optional(),
  acceptance: z.strictObject({
    finalState: z.boolean(),
    outputs: z.array(z.string()).optional(),
    answer: z.string().optional(),
    ordering: z
      .array(z.strictObject({ id: nonEmpty, before: actionPattern, after: actionPattern, message: z.string().optional() }))
      .optional(),
    subgoals: z.array(z.strictObject({ id: nonEmpty, pattern: actionPattern })).optional(),
  }),
  solution: z.array(action).min(1, { error: 'the reference solution is empty; solve() must return at least one action' }),
  user: json.optional(),
  tags: z.array(z.string()).optional(),
});

/** A whole task, strict. */
export const taskSchema = z.strictObject({
  id: z.string().regex(/^[0-9a-f]{64}$/, { error: 'must be a sha256 hex digest' }),
  template: z.string().regex(/^[a-z0-9][a-z0-9_-]*\/[a-z0-9][a-z0-9_-]*@[1-9][0-9]*$/, { error: 'must be domain/name@version' }),
  domain: nonEmpty,
  taskType: nonEmpty,
  level: z.number().int().min(1),
  params: json,
  spec: taskSpecSchema,
  origin: z.strictObject({ seed: z.number().int(), index: count, templateDigest: z.string().min(1) }),
});
