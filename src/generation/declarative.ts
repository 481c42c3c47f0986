/** Declarative templates: tasks from YAML or JSON data, with no user code (see docs/declarative-templates.md). */
import { parseDocument } from 'yaml';
import { z } from 'zod';
import { canonicalize, defineTemplate, depthExceeds, EnvHarnessError, escapePointerToken, issuePointer } from '../core/index.js';
import type { Action, Budget, JsonObject, JsonValue, LevelSpec, RegisteredTemplate, Rng, TaskSpec } from '../core/index.js';
import { compileText, renderText, renderValue } from './expression.js';
import type { CompiledText, ParamType } from './expression.js';

/** Limits on a template document (docs/errors.md, "Input limits"). */
export const TEMPLATE_DOCUMENT_LIMITS = {
  maxBytes: 1024 * 1024,
  /** The yaml parser needs ~0.3 ms per line of flow mappings (measured under load): 10k lines stay within seconds. */
  maxLines: 10_000,
  maxDepth: 64,
  maxAliasCount: 100,
  /** Levels of one template. */
  maxLevels: 1000,
} as const;

/** One problem in a template document: the JSON pointer of the bad field and what to do about it. */
export interface DeclarativeIssue {
  pointer: string;
  message: string;
}

/** A parameter's declaration at one level: an integer range, a list of choices, or a fixed value. */
export type ParamDeclaration = [number, number] | { choices: Array<string | number | boolean> } | string | number | boolean;

interface CommonDefinition {
  domain: string;
  name: string;
  version: number;
  taskType: string;
  description?: string;
  heldout?: boolean;
  tags?: string[];
  levels: Array<Record<string, ParamDeclaration>>;
  instructions: string;
  budget?: Budget;
}

/** A question with one expected `finish` answer. */
export interface QuestionAnswerDefinition extends CommonDefinition {
  kind: 'question_answer';
  answer: string;
}

/** A fixed family of tool calls, graded by the final state the reference calls reach. */
export interface ToolCallsDefinition extends CommonDefinition {
  kind: 'tool_calls';
  tools: string[];
  budget: Budget;
  solution: Array<{ tool: string; args?: JsonObject }>;
  initialState?: JsonValue;
  outputs?: string[];
  user?: JsonValue;
}

/** A declarative template definition, as validated. */
export type DeclarativeDefinition = QuestionAnswerDefinition | ToolCallsDefinition;

/** A template made from a definition; workers rebuild it from `definition` without importing code. */
export type DeclarativeTemplate = RegisteredTemplate<JsonObject> & { definition: DeclarativeDefinition };

/** The step budget of question/answer templates that declare none: read, then finish. */
export const DEFAULT_QUESTION_ANSWER_BUDGET: Budget = { steps: 2 };

const NAME_HINT = 'use lower-case letters, digits, "-" and "_", starting with a letter or digit (e.g. "quiz")';
const NAME = z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, { error: NAME_HINT });
const TOOL = z.string().regex(/^[a-z][a-z0-9_]*$/, { error: 'tool names are snake_case, e.g. "cancel_pending_order"' });
const COUNT = z.number().int().min(1);
const BUDGET = z.strictObject({
  steps: COUNT.optional(),
  tokens: COUNT.optional(),
  timeMs: COUNT.optional(),
  toolCalls: COUNT.optional(),
  perTool: z.record(TOOL, z.number().int().min(0)).optional(),
  consecutiveErrors: COUNT.optional(),
});
const PARAM_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const COMMON = {
  domain: NAME,
  name: NAME,
  version: COUNT,
  taskType: NAME,
  description: z.string().optional(),
  heldout: z.boolean().optional(),
  tags: z.array(z.string().min(1)).optional(),
  levels: z
    .array(z.record(z.string(), z.unknown()))
    .min(1, { error: 'declare at least one level' })
    .max(TEMPLATE_DOCUMENT_LIMITS.maxLevels, { error: `at most ${TEMPLATE_DOCUMENT_LIMITS.maxLevels} levels per template` }),
  instructions: z.string().trim().min(1, { error: 'instructions must not be empty' }),
};
const QUESTION_ANSWER = z.strictObject({
  kind: z.literal('question_answer'),
  ...COMMON,
  answer: z.string().min(1, { error: 'answer must not be empty' }),
  budget: BUDGET.optional(),
});
const TOOL_CALLS = z.strictObject({
  kind: z.literal('tool_calls'),
  ...COMMON,
  tools: z.array(TOOL).min(1, { error: 'list the tools the task may use' }),
  budget: BUDGET,
  solution: z
    .array(z.strictObject({ tool: TOOL, args: z.record(z.string(), z.unknown()).optional() }))
    .min(1, { error: 'the reference solution needs at least one tool call' }),
  initialState: z.unknown().optional(),
  outputs: z.array(z.string().min(1)).optional(),
  user: z.unknown().optional(),
});
const KINDS = ['question_answer', 'tool_calls'] as const;

/**
 * Parses a YAML or JSON document `{ templates: [...] }` into templates. Every problem is reported
 * at once as `IMPORT_INVALID`, each with the JSON pointer of the bad field and how to fix it.
 * @example
 * const templates = loadDeclarativeTemplates(readFileSync('arithmetic.yaml', 'utf8'), 'yaml');
 */
export function loadDeclarativeTemplates(text: string, format: 'yaml' | 'json'): DeclarativeTemplate[] {
  const root = parseText(text, format);
  const issues: DeclarativeIssue[] = [];
  if (!isRecord(root) || !Array.isArray(root.templates)) {
    fail([{ pointer: '', message: 'expected an object with a `templates` list, e.g. "templates: [ { kind: question_answer, ... } ]"' }]);
  }
  for (const key of Object.keys(root)) {
    if (key !== 'templates') issues.push({ pointer: `/${escapePointerToken(key)}`, message: `unknown field "${key}"; the document has only \`templates\`` });
  }
  if (root.templates.length === 0) issues.push({ pointer: '/templates', message: 'the `templates` list is empty; add at least one template' });
  const templates: DeclarativeTemplate[] = [];
  const seen = new Map<string, string>();
  root.templates.forEach((item: unknown, i: number) => {
    const pointer = `/templates/${i}`;
    const result = checkDefinition(item, pointer);
    if (!result.ok) {
      issues.push(...result.issues);
      return;
    }
    const template = result.template;
    const other = seen.get(template.id);
    if (other !== undefined) {
      issues.push({ pointer: `${pointer}/version`, message: `template ${template.id} is declared twice (also at ${other}); bump the version of one of them` });
      return;
    }
    seen.set(template.id, pointer);
    templates.push(template);
  });
  if (issues.length > 0) fail(issues);
  return templates;
}

/** Validates one definition (a parsed object) and turns it into a template; throws `IMPORT_INVALID`. */
export function compileDeclarativeTemplate(definition: unknown): DeclarativeTemplate {
  const result = checkDefinition(definition, '');
  if (!result.ok) fail(result.issues);
  return result.template;
}

function checkDefinition(
  input: unknown,
  at: string,
): { ok: true; template: DeclarativeTemplate } | { ok: false; issues: DeclarativeIssue[] } {
  if (!isRecord(input)) return { ok: false, issues: [{ pointer: at, message: 'a template is an object with a `kind`' }] };
  if (!KINDS.includes(input.kind as (typeof KINDS)[number])) {
    return {
      ok: false,
      issues: [{ pointer: `${at}/kind`, message: `${input.kind === undefined ? 'missing `kind`' : `unknown kind ${JSON.stringify(input.kind)}`}; use one of: ${KINDS.join(', ')}` }],
    };
  }
  const schema = input.kind === 'question_answer' ? QUESTION_ANSWER : TOOL_CALLS;
  const parsed = schema.safeParse(input);
  if (!parsed.success) {
    return { ok: false, issues: parsed.error.issues.map((issue) => describeIssue(issue, input, at)) };
  }
  const issues: DeclarativeIssue[] = [];
  for (const field of ['initialState', 'user'] as const) {
    if (parsed.data[field as keyof typeof parsed.data] !== undefined) checkJson(parsed.data[field as keyof typeof parsed.data], `${at}/${field}`, issues);
  }
  if (parsed.data.kind === 'tool_calls') {
    parsed.data.solution.forEach((step, i) => {
      if (step.args !== undefined) checkJson(step.args, `${at}/solution/${i}/args`, issues);
    });
  }
  if (issues.length > 0) return { ok: false, issues };
  // A copy, so later changes to the caller's object cannot change the template behind its digest.
  const definition = structuredClone(parsed.data) as DeclarativeDefinition;
  const types = checkLevels(definition.levels, `${at}/levels`, issues);
  const compiled = compileTexts(definition, types, at, issues);
  if (definition.kind === 'tool_calls') {
    definition.solution.forEach((step, i) => {
      if (!definition.tools.includes(step.tool)) {
        issues.push({ pointer: `${at}/solution/${i}/tool`, message: `tool "${step.tool}" is not in \`tools\`; add it there or fix the name` });
      }
    });
  }
  if (issues.length > 0 || compiled === undefined) return { ok: false, issues };
  return { ok: true, template: buildTemplate(definition, types, compiled) };
}

type ParamSampler =
  | { name: string; kind: 'range'; min: number; max: number }
  | { name: string; kind: 'choice'; choices: ReadonlyArray<string | number | boolean> }
  | { name: string; kind: 'fixed'; value: string | number | boolean };

function checkLevels(
  levels: ReadonlyArray<Record<string, unknown>>,
  at: string,
  issues: DeclarativeIssue[],
): Record<string, ParamType> {
  const types: Record<string, ParamType> = {};
  const names = Object.keys(levels[0] ?? {}).sort();
  levels.forEach((level, l) => {
    const own = Object.keys(level).sort();
    if (l > 0 && own.join('\u0000') !== names.join('\u0000')) {
      issues.push({
        pointer: `${at}/${l}`,
        message: `level ${l + 1} declares parameters [${own.join(', ')}] but level 1 declares [${names.join(', ')}]; every level must declare the same parameters`,
      });
    }
    for (const name of own) {
      const pointer = `${at}/${l}/${escapePointerToken(name)}`;
      if (!PARAM_NAME.test(name)) {
        issues.push({ pointer, message: `parameter name "${name}" must be an identifier (letters, digits and _, not starting with a digit)` });
        continue;
      }
      const type = declarationType(level[name], pointer, issues);
      if (type === undefined) continue;
      const known = types[name];
      if (known === undefined) types[name] = type;
      else if (known !== type) {
        const merged = mergeTypes(known, type);
        if (merged === undefined) {
          issues.push({ pointer, message: `parameter "${name}" is a ${type} here but a ${known} at another level; keep one type per parameter` });
        } else types[name] = merged;
      }
    }
  });
  return types;
}

function mergeTypes(a: ParamType, b: ParamType): ParamType | undefined {
  const numeric = (t: ParamType): boolean => t === 'integer' || t === 'number';
  return numeric(a) && numeric(b) ? 'number' : undefined;
}

function scalarType(value: unknown): ParamType | undefined {
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'number' && Number.isFinite(value)) return Number.isInteger(value) ? 'integer' : 'number';
  return undefined;
}

const DECLARATION_HINT = 'a parameter is an integer range [min, max], a list of choices {choices: [...]}, or a fixed value';

function declarationType(value: unknown, pointer: string, issues: DeclarativeIssue[]): ParamType | undefined {
  if (Array.isArray(value)) {
    if (value.length !== 2 || !value.every((v) => Number.isSafeInteger(v))) {
      issues.push({ pointer, message: `a range is [min, max] with two integers; for a list of values write {choices: ${JSON.stringify(value)}}` });
      return undefined;
    }
    if (value[0] > value[1]) {
      issues.push({ pointer, message: `range [${value[0]}, ${value[1]}] has min greater than max; write [${value[1]}, ${value[0]}]` });
      return undefined;
    }
    return 'integer';
  }
  if (isRecord(value)) {
    const extra = Object.keys(value).filter((k) => k !== 'choices');
    if (extra.length > 0 || !Array.isArray(value.choices)) {
      issues.push({ pointer, message: DECLARATION_HINT });
      return undefined;
    }
    if (value.choices.length === 0) {
      issues.push({ pointer: `${pointer}/choices`, message: 'choices must not be empty' });
      return undefined;
    }
    let type: ParamType | undefined;
    for (let i = 0; i < value.choices.length; i++) {
      const own = scalarType(value.choices[i]);
      const merged = own === undefined ? undefined : type === undefined ? own : type === own ? own : mergeTypes(type, own);
      if (merged === undefined) {
        issues.push({ pointer: `${pointer}/choices/${i}`, message: 'choices are strings, numbers or booleans, all of one type' });
        return undefined;
      }
      type = merged;
    }
    return type;
  }
  const type = scalarType(value);
  if (type === undefined) issues.push({ pointer, message: DECLARATION_HINT });
  return type;
}

/** A JSON value whose strings may hold placeholders. */
type CompiledJson =
  | { kind: 'constant'; value: JsonValue }
  | { kind: 'text'; text: CompiledText }
  | { kind: 'array'; items: CompiledJson[] }
  | { kind: 'object'; entries: Array<[string, CompiledJson]> };

interface CompiledDefinition {
  instructions: CompiledText;
  answer?: CompiledText;
  outputs?: CompiledText[];
  initialState?: CompiledJson;
  user?: CompiledJson;
  solution?: Array<{ tool: string; args: CompiledJson }>;
}

function compileTexts(
  definition: DeclarativeDefinition,
  types: Record<string, ParamType>,
  at: string,
  issues: DeclarativeIssue[],
): CompiledDefinition | undefined {
  const before = issues.length;
  const text = (value: string, pointer: string): CompiledText => {
    const result = compileText(value, types);
    if (result.ok) return result.value;
    issues.push({ pointer, message: `${result.problem.message} (at character ${result.problem.offset + 1})` });
    return { parts: [], single: false };
  };
  const json = (value: JsonValue, pointer: string): CompiledJson => {
    if (typeof value === 'string') {
      const compiled = text(value, pointer);
      return compiled.parts.every((p) => typeof p === 'string') ? { kind: 'constant', value } : { kind: 'text', text: compiled };
    }
    if (Array.isArray(value)) {
      const items = value.map((item, i) => json(item, `${pointer}/${i}`));
      return items.every((c) => c.kind === 'constant') ? { kind: 'constant', value: frozenCopy(value) } : { kind: 'array', items };
    }
    if (isRecord(value)) {
      const entries = Object.keys(value).map((k): [string, CompiledJson] => [k, json(value[k] as JsonValue, `${pointer}/${escapePointerToken(k)}`)]);
      return entries.every(([, c]) => c.kind === 'constant') ? { kind: 'constant', value: frozenCopy(value) } : { kind: 'object', entries };
    }
    return { kind: 'constant', value };
  };
  const compiled: CompiledDefinition = { instructions: text(definition.instructions, `${at}/instructions`) };
  if (definition.kind === 'question_answer') {
    compiled.answer = text(definition.answer, `${at}/answer`);
  } else {
    if (definition.outputs !== undefined) compiled.outputs = definition.outputs.map((o, i) => text(o, `${at}/outputs/${i}`));
    if (definition.initialState !== undefined) compiled.initialState = json(definition.initialState, `${at}/initialState`);
    if (definition.user !== undefined) compiled.user = json(definition.user, `${at}/user`);
    compiled.solution = definition.solution.map((step, i) => ({
      tool: step.tool,
      args: json(step.args ?? {}, `${at}/solution/${i}/args`),
    }));
  }
  return issues.length > before ? undefined : compiled;
}

function render(compiled: CompiledJson, params: JsonObject): JsonValue {
  switch (compiled.kind) {
    case 'constant':
      return compiled.value;
    case 'text':
      return renderValue(compiled.text, params);
    case 'array':
      return compiled.items.map((item) => render(item, params));
    case 'object': {
      const out: JsonObject = {};
      for (const [key, value] of compiled.entries) out[key] = render(value, params);
      return out;
    }
  }
}

function buildTemplate(
  definition: DeclarativeDefinition,
  types: Record<string, ParamType>,
  compiled: CompiledDefinition,
): DeclarativeTemplate {
  const names = Object.keys(types).sort();
  const samplers: ParamSampler[][] = definition.levels.map((level) =>
    names.map((name): ParamSampler => {
      const value = level[name]!;
      if (Array.isArray(value)) return { name, kind: 'range', min: value[0], max: value[1] };
      if (typeof value === 'object') return { name, kind: 'choice', choices: value.choices };
      return { name, kind: 'fixed', value };
    }),
  );
  const shape: Record<string, z.ZodType> = {};
  for (const name of names) {
    const type = types[name]!;
    shape[name] = type === 'integer' ? z.number().int() : type === 'number' ? z.number() : type === 'string' ? z.string() : z.boolean();
  }
  const tags = definition.tags === undefined ? undefined : deepFreeze([...definition.tags]);
  const budget = deepFreeze({ ...(definition.budget ?? DEFAULT_QUESTION_ANSWER_BUDGET) });
  const base = {
    domain: definition.domain,
    name: definition.name,
    version: definition.version,
    taskType: definition.taskType,
    description: definition.description,
    heldout: definition.heldout,
    levels: definition.levels as unknown as LevelSpec[],
    params: z.strictObject(shape) as unknown as z.ZodType<JsonObject>,
    sourceText: canonicalize(definition),
    sample(rng: Rng, level: number): JsonObject {
      const params: JsonObject = {};
      for (const sampler of samplers[level - 1]!) {
        params[sampler.name] =
          sampler.kind === 'range' ? rng.int(sampler.min, sampler.max) : sampler.kind === 'choice' ? rng.pick(sampler.choices) : sampler.value;
      }
      return params;
    },
  };
  let template: RegisteredTemplate<JsonObject>;
  if (definition.kind === 'question_answer') {
    const answerText = compiled.answer!;
    template = defineTemplate<JsonObject>({
      ...base,
      build: (params): Omit<TaskSpec, 'solution'> => {
        const spec: Omit<TaskSpec, 'solution'> = {
          instructions: renderText(compiled.instructions, params),
          initialState: null,
          budget,
          acceptance: { finalState: false, answer: renderText(answerText, params) },
        };
        if (tags !== undefined) spec.tags = tags;
        return spec;
      },
      solve: (_params, spec): Action[] => [{ type: 'finish', answer: spec.acceptance.answer! }],
    });
  } else {
    const constraints = deepFreeze({ allowedTools: [...definition.tools] });
    const solution = compiled.solution!;
    template = defineTemplate<JsonObject>({
      ...base,
      build: (params): Omit<TaskSpec, 'solution'> => {
        const spec: Omit<TaskSpec, 'solution'> = {
          instructions: renderText(compiled.instructions, params),
          initialState: compiled.initialState === undefined ? null : render(compiled.initialState, params),
          budget,
          constraints,
          acceptance: { finalState: true },
        };
        if (compiled.outputs !== undefined) spec.acceptance.outputs = compiled.outputs.map((o) => renderText(o, params));
        if (compiled.user !== undefined) spec.user = render(compiled.user, params);
        if (tags !== undefined) spec.tags = tags;
        return spec;
      },
      solve: (params): Action[] =>
        solution.map((step) => ({ type: 'tool', tool: step.tool, args: render(step.args, params) as JsonObject })),
    });
  }
  return { ...template, definition };
}


function parseText(text: string, format: 'yaml' | 'json'): unknown {
  if (text.length > TEMPLATE_DOCUMENT_LIMITS.maxBytes) {
    fail([{ pointer: '', message: `the document is larger than ${TEMPLATE_DOCUMENT_LIMITS.maxBytes} bytes; split it into several files` }]);
  }
  let lines = 1;
  for (let i = text.indexOf('\n'); i !== -1 && lines <= TEMPLATE_DOCUMENT_LIMITS.maxLines; i = text.indexOf('\n', i + 1)) lines += 1;
  if (lines > TEMPLATE_DOCUMENT_LIMITS.maxLines) {
    fail([{ pointer: '', message: `the document has more than ${TEMPLATE_DOCUMENT_LIMITS.maxLines} lines; split it into several files` }]);
  }
  const value = parseUnlimited(text, format);
  if (depthExceeds(value, TEMPLATE_DOCUMENT_LIMITS.maxDepth)) {
    fail([{ pointer: '', message: `the document is nested deeper than ${TEMPLATE_DOCUMENT_LIMITS.maxDepth} levels` }]);
  }
  return value;
}

function parseUnlimited(text: string, format: 'yaml' | 'json'): unknown {
  if (format === 'json') {
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      fail([{ pointer: '', message: `not valid JSON: ${(error as Error).message}` }]);
    }
  }
  if (format !== 'yaml') {
    throw new EnvHarnessError('PARAMS_INVALID', `unknown template document format "${String(format)}"; use "yaml" or "json"`);
  }
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length > 0) {
    const error = doc.errors[0]!;
    const line = error.linePos?.[0];
    fail([{ pointer: '', message: `not valid YAML${line ? ` (line ${line.line}, column ${line.col})` : ''}: ${error.message.split('\n')[0]}` }]);
  }
  try {
    return doc.toJS({ maxAliasCount: TEMPLATE_DOCUMENT_LIMITS.maxAliasCount }) as unknown;
  } catch (error) {
    // yaml throws a ReferenceError for alias bombs ("billion laughs"): a bad file, not a crash.
    fail([{ pointer: '', message: `YAML aliases expand too much (more than ${TEMPLATE_DOCUMENT_LIMITS.maxAliasCount} uses of one anchor): ${(error as Error).message}` }]);
  }
}

function describeIssue(issue: z.core.$ZodIssue, input: unknown, at: string): DeclarativeIssue {
  const path = issue.path.map(String);
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0]!;
    return {
      pointer: issuePointer(issue, at),
      message: `unknown field "${key}"${issue.keys.length > 1 ? ` (and ${issue.keys.slice(1).map((k) => `"${k}"`).join(', ')})` : ''}; remove it or check its spelling`,
    };
  }
  const pointer = issuePointer(issue, at);
  if (issue.code === 'invalid_type' && valueAt(input, path) === undefined) {
    return { pointer, message: `missing required field "${path[path.length - 1]}" (${issue.expected}); add it` };
  }
  return { pointer, message: issue.message.replace(/^Invalid input: /, '') };
}

function checkJson(value: unknown, pointer: string, issues: DeclarativeIssue[]): void {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) issues.push({ pointer, message: `${value} is not a JSON number; use a finite number` });
  } else if (Array.isArray(value)) value.forEach((item, i) => checkJson(item, `${pointer}/${i}`, issues));
  else if (isRecord(value) && Object.getPrototypeOf(value) === Object.prototype) {
    for (const key of Object.keys(value)) checkJson(value[key], `${pointer}/${escapePointerToken(key)}`, issues);
  } else issues.push({ pointer, message: `a ${typeof value} is not a JSON value; use null, booleans, numbers, strings, lists and objects` });
}

function valueAt(value: unknown, path: readonly string[]): unknown {
  let current = value;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}


function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function frozenCopy<T>(value: T): T {
  return deepFreeze(structuredClone(value));
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

function fail(issues: DeclarativeIssue[]): never {
  const first = issues[0]!;
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? 's' : ''})` : '';
  throw new EnvHarnessError('IMPORT_INVALID', `invalid template document at ${first.pointer || '/'}: ${first.message}${more}`, {
    details: { pointer: first.pointer, issues },
  });
}
