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

const toolAction = z.strictObject({ type: z.literal('tool'), tool: nonEmpty, args: jsonObject, usage: usage.optional() });
const messageAction = z.strictObject({ type: z.literal('message'), text: z.string(), usage: usage.optional() });
const finishAction = z.strictObject({ type: z.literal('finish'), answer: z.string().optional(), usage: usage.optional() });
const action = z.discriminatedUnion('type', [toolAction, messageAction, finishAction]);

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

const faultKind = z.enum(['timeout', 'transient', 'rate_limit', 'partial', 'stale']);
const faultRule = z.strictObject({
  tool: nonEmpty,
  kind: faultKind,
  rate: z.number().min(0).max(1),
  retryAfterMs: count.optional(),
  maxPerEpisode: count.optional(),
  persistent: z.boolean().optional(),
});

const forbidden = z.strictObject({ tool: nonEmpty, args: jsonObject.optional(), reason: z.string().optional() });
const constraints = z.strictObject({
  allowedTools: z.array(nonEmpty).optional(),
  confirmTools: z.array(nonEmpty).optional(),
  forbidden: z.array(forbidden).optional(),
});
const faults = z.strictObject({ rules: z.array(faultRule) });
const ordering = z.strictObject({ id: nonEmpty, before: actionPattern, after: actionPattern, message: z.string().optional() });
const subgoal = z.strictObject({ id: nonEmpty, pattern: actionPattern });
const acceptance = z.strictObject({
  finalState: z.boolean(),
  outputs: z.array(z.string()).optional(),
  answer: z.string().optional(),
  ordering: z.array(ordering).optional(),
  subgoals: z.array(subgoal).optional(),
});
const origin = z.strictObject({ seed: z.number().int(), index: count, templateDigest: z.string().min(1) });

/** The content of a task (TaskSpec), strict: unknown fields are mistakes. */
export const taskSpecSchema = z.strictObject({
  instructions: nonEmpty,
  initialState: json,
  budget,
  constraints: constraints.optional(),
  faults: faults.optional(),
  acceptance,
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
  origin,
});

// ---- a fast, conservative check ----------------------------------------------------------------
// The schema gate runs on every candidate and zod walks (and copies) the whole task. `isPlainValidTask`
// answers "certainly valid" without allocating; anything it is unsure of (and every invalid task)
// goes through zod, so verdicts and messages are zod's. A property test keeps it no looser than zod.

type Obj = Record<string, unknown>;

function isPlain(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;
}

/**
 * Every enumerable key is in `allowed` (a strict object): zod's strict objects list unknown keys with for-in
 * too, so a non-enumerable own member is ignored by both (tested). No key arrays: this runs on every object
 * of every candidate.
 */
function onlyKeys(value: Obj, allowed: ReadonlySet<string>): boolean {
  for (const key in value) if (!allowed.has(key)) return false;
  return true;
}

const isCount = (v: unknown): boolean => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isText = (v: unknown): boolean => typeof v === 'string' && v.trim().length > 0;
const isStr = (v: unknown): boolean => typeof v === 'string';
const optional = (v: unknown, check: (v: unknown) => boolean): boolean => v === undefined || check(v);
/** An array whose every slot passes (holes included: `every` would skip them, zod does not). */
function isStrings(v: unknown, check: (v: unknown) => boolean): boolean {
  if (!Array.isArray(v)) return false;
  for (let i = 0; i < v.length; i++) if (!check(v[i])) return false;
  return true;
}

function isJsonChecked(value: unknown, seen: Set<object>): boolean {
  // The same object reached twice (a task's params and its user goal often share one) is checked once.
  if (typeof value === 'object' && value !== null) {
    if (seen.has(value)) return true;
    if (!isJson(value)) return false;
    seen.add(value);
    return true;
  }
  return isJson(value);
}

function isJsonObject(value: unknown, seen: Set<object>): boolean {
  return isPlain(value) && isJsonChecked(value, seen);
}

/** The keys of a strict zod object: the fast check reads them from the schemas, never a copy. */
const keysOf = (schema: { shape: object }): ReadonlySet<string> => new Set(Object.keys(schema.shape));
const TASK_KEYS = keysOf(taskSchema);
const SPEC_KEYS = keysOf(taskSpecSchema);
const BUDGET_KEYS = keysOf(budget);
const CONSTRAINT_KEYS = keysOf(constraints);
const FORBIDDEN_KEYS = keysOf(forbidden);
const ACCEPTANCE_KEYS = keysOf(acceptance);
const ORDERING_KEYS = keysOf(ordering);
const SUBGOAL_KEYS = keysOf(subgoal);
const PATTERN_KEYS = keysOf(actionPattern);
const ORIGIN_KEYS = keysOf(origin);
const TOOL_KEYS = keysOf(toolAction);
const MESSAGE_KEYS = keysOf(messageAction);
const FINISH_KEYS = keysOf(finishAction);
const USAGE_KEYS = keysOf(usage);
const FAULTS_KEYS = keysOf(faults);
const FAULT_RULE_KEYS = keysOf(faultRule);
/** @internal The keys the fast check knows per strict object (read from the zod shapes above). */
export const FAST_CHECKED_KEYS = {
  task: TASK_KEYS,
  spec: SPEC_KEYS,
  budget: BUDGET_KEYS,
  constraints: CONSTRAINT_KEYS,
  forbidden: FORBIDDEN_KEYS,
  acceptance: ACCEPTANCE_KEYS,
  ordering: ORDERING_KEYS,
  subgoal: SUBGOAL_KEYS,
  pattern: PATTERN_KEYS,
  origin: ORIGIN_KEYS,
  usage: USAGE_KEYS,
  faults: FAULTS_KEYS,
  faultRule: FAULT_RULE_KEYS,
  tool: TOOL_KEYS,
  message: MESSAGE_KEYS,
  finish: FINISH_KEYS,
};
/** `/^[0-9a-f]{64}$/.test(id)`, without the regular expression's per-call cost (every candidate's id). */
function isSha256Hex(id: string): boolean {
  if (id.length !== 64) return false;
  for (let i = 0; i < 64; i++) {
    const c = id.charCodeAt(i);
    if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))) return false;
  }
  return true;
}
const TEMPLATE_ID = /^[a-z0-9][a-z0-9_-]*\/[a-z0-9][a-z0-9_-]*@[1-9][0-9]*$/;

function isUsage(v: unknown): boolean {
  return isPlain(v) && onlyKeys(v, USAGE_KEYS) && optional(v['inputTokens'], isCount) && optional(v['outputTokens'], isCount);
}

function isAction(v: unknown, seen: Set<object>): boolean {
  if (!isPlain(v) || !optional(v['usage'], isUsage)) return false;
  switch (v['type']) {
    case 'tool':
      return onlyKeys(v, TOOL_KEYS) && isText(v['tool']) && isJsonObject(v['args'], seen);
    case 'message':
      return onlyKeys(v, MESSAGE_KEYS) && isStr(v['text']);
    case 'finish':
      return onlyKeys(v, FINISH_KEYS) && optional(v['answer'], isStr);
    default:
      return false;
  }
}

const FAULT_KINDS: ReadonlySet<string> = new Set(faultKind.options);

function isFaultRule(r: unknown): boolean {
  if (!isPlain(r) || !onlyKeys(r, FAULT_RULE_KEYS) || !isText(r['tool']) || !FAULT_KINDS.has(r['kind'] as string)) return false;
  const rate = r['rate'];
  if (!(typeof rate === 'number' && rate >= 0 && rate <= 1)) return false;
  return optional(r['retryAfterMs'], isCount) && optional(r['maxPerEpisode'], isCount) && optional(r['persistent'], (p) => typeof p === 'boolean');
}

function isPattern(v: unknown, seen: Set<object>): boolean {
  if (!isPlain(v) || !onlyKeys(v, PATTERN_KEYS)) return false;
  const type = v['type'];
  return (type === undefined || type === 'tool' || type === 'message' || type === 'finish') && optional(v['tool'], isStr) && optional(v['args'], (a) => isJsonObject(a, seen));
}

function isSpec(v: unknown, seen: Set<object>): boolean {
  if (!isPlain(v) || !onlyKeys(v, SPEC_KEYS)) return false;
  if (!isText(v['instructions']) || !isJsonChecked(v['initialState'], seen) || v['initialState'] === undefined) return false;
  const budget = v['budget'];
  if (!isPlain(budget) || !onlyKeys(budget, BUDGET_KEYS)) return false;
  // One property name per read: a loop over the names makes the read megamorphic, and the names a budget
  // lacks (most of them) are then each a slow look-up through the prototype chain.
  if (!optional(budget['steps'], isCount) || !optional(budget['tokens'], isCount) || !optional(budget['timeMs'], isCount)) return false;
  if (!optional(budget['toolCalls'], isCount) || !optional(budget['consecutiveErrors'], isCount)) return false;
  const perTool = budget['perTool'];
  if (perTool !== undefined && !(isPlain(perTool) && Object.values(perTool).every(isCount))) return false;
  const constraints = v['constraints'];
  if (constraints !== undefined) {
    if (!isPlain(constraints) || !onlyKeys(constraints, CONSTRAINT_KEYS)) return false;
    if (!optional(constraints['allowedTools'], (a) => isStrings(a, isText)) || !optional(constraints['confirmTools'], (a) => isStrings(a, isText))) return false;
    const forbidden = constraints['forbidden'];
    if (forbidden !== undefined && !isStrings(forbidden, (f) => isPlain(f) && onlyKeys(f, FORBIDDEN_KEYS) && isText(f['tool']) && optional(f['args'], (a) => isJsonObject(a, seen)) && optional(f['reason'], isStr))) return false;
  }
  const faults = v['faults'];
  if (faults !== undefined && !(isPlain(faults) && onlyKeys(faults, FAULTS_KEYS) && isStrings(faults['rules'], isFaultRule))) return false;
  const acceptance = v['acceptance'];
  if (!isPlain(acceptance) || !onlyKeys(acceptance, ACCEPTANCE_KEYS) || typeof acceptance['finalState'] !== 'boolean') return false;
  if (!optional(acceptance['outputs'], (a) => isStrings(a, isStr)) || !optional(acceptance['answer'], isStr)) return false;
  const ordering = acceptance['ordering'];
  if (ordering !== undefined && !isStrings(ordering, (r) => isPlain(r) && onlyKeys(r, ORDERING_KEYS) && isText(r['id']) && isPattern(r['before'], seen) && isPattern(r['after'], seen) && optional(r['message'], isStr))) return false;
  const subgoals = acceptance['subgoals'];
  if (subgoals !== undefined && !isStrings(subgoals, (g) => isPlain(g) && onlyKeys(g, SUBGOAL_KEYS) && isText(g['id']) && isPattern(g['pattern'], seen))) return false;
  const solution = v['solution'];
  if (!Array.isArray(solution) || solution.length === 0 || !isStrings(solution, (a) => isAction(a, seen))) return false;
  return optional(v['user'], (u) => isJsonChecked(u, seen)) && optional(v['tags'], (t) => isStrings(t, isStr));
}

/**
 * Whether `task` certainly passes `taskSchema` (never true for a task zod would reject); false means
 * "ask zod", which also writes the message.
 */
export function isPlainValidTask(task: unknown): boolean {
  if (!isPlain(task) || !onlyKeys(task, TASK_KEYS)) return false;
  const seen = new Set<object>();
  const { id, template, level, params, origin } = task;
  if (typeof id !== 'string' || !isSha256Hex(id) || typeof template !== 'string' || !TEMPLATE_ID.test(template)) return false;
  if (!isText(task['domain']) || !isText(task['taskType']) || !(typeof level === 'number' && Number.isSafeInteger(level) && level >= 1)) return false;
  if (params === undefined || !isJsonChecked(params, seen)) return false;
  if (!isPlain(origin) || !onlyKeys(origin, ORIGIN_KEYS)) return false;
  if (!(typeof origin['seed'] === 'number' && Number.isSafeInteger(origin['seed'])) || !isCount(origin['index'])) return false;
  if (typeof origin['templateDigest'] !== 'string' || origin['templateDigest'].length === 0) return false;
  return isSpec(task['spec'], seen);
}
