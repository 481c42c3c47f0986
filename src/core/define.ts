/** Author-facing declarations (`defineTemplate`, `defineTool`, `defineDomain`) and the template source digest (task ids: hashing.ts). */
import { digest } from './digest.js';
import type { Domain, Tool } from './domain.js';
import { EnvHarnessError } from './errors.js';
import { formatTemplateId } from './ids.js';
import type { JsonObject } from './json.js';
import type { RegisteredTemplate, Task, Template } from './template.js';

/**
 * Declares a template. Checks the declaration's shape and computes its id and source digest.
 * @example
 * const t = defineTemplate({ domain: 'math', name: 'add', version: 1, taskType: 'arithmetic',
 *   levels: [{ max: 10 }, { max: 100 }], params: z.object({ a: z.number(), b: z.number() }),
 *   sample: (rng, _l, spec) => ({ a: rng.int(0, spec.max as number), b: rng.int(0, spec.max as number) }),
 *   build: (p) => ({ instructions: `${p.a} + ${p.b} = ?`, initialState: null, budget: { steps: 2 },
 *     acceptance: { finalState: false, answer: String(p.a + p.b) } }),
 *   solve: (p) => [{ type: 'finish', answer: String(p.a + p.b) }] });
 */
export function defineTemplate<P>(template: Template<P>): RegisteredTemplate<P> {
  const id = formatTemplateId({ domain: template.domain, name: template.name, version: template.version });
  if (!template.taskType || !/^[a-z0-9][a-z0-9_-]*$/.test(template.taskType)) {
    throw new EnvHarnessError('PARAMS_INVALID', `template ${id}: taskType must be a lower-case word, got "${template.taskType}"`);
  }
  if (template.levels.length < 1) {
    throw new EnvHarnessError('PARAMS_INVALID', `template ${id}: declare at least one level in \`levels\``);
  }
  return { ...template, id, sourceDigest: templateSourceDigest(template) };
}

/**
 * The digest of what makes a template produce what it produces: its declaration and the source
 * text of its functions. Changing any of them without bumping the version shows up as a new digest.
 */
export function templateSourceDigest(template: Template<unknown>): string {
  return digest({
    domain: template.domain,
    name: template.name,
    version: template.version,
    taskType: template.taskType,
    levels: template.levels,
    source: template.sourceText ?? [template.sample, template.build, template.solve, template.validate]
      .map((fn) => (fn === undefined ? '' : fn.toString())),
  });
}


/** Declares a tool (helps type inference of `args`). */
export function defineTool<S, A extends JsonObject>(tool: Tool<S, A>): Tool<S, A> {
  if (!/^[a-z][a-z0-9_]*$/.test(tool.name)) {
    throw new EnvHarnessError('PARAMS_INVALID', `tool name "${tool.name}" must be snake_case`);
  }
  return tool;
}

/** Declares a domain; tool names must be unique. */
export function defineDomain<S>(domain: Domain<S>): Domain<S> {
  const seen = new Set<string>();
  for (const tool of domain.tools) {
    if (seen.has(tool.name)) {
      throw new EnvHarnessError('REGISTRATION_CONFLICT', `domain ${domain.name}: tool ${tool.name} is declared twice`);
    }
    seen.add(tool.name);
  }
  return domain;
}
