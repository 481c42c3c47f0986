/** Author-facing declarations (`defineTemplate`, `defineTool`, `defineDomain`) and the template source digest (task ids: hashing.ts). */
import { digest } from './digest.js';
import type { Domain, Tool } from './domain.js';
import { EnvHarnessError } from './errors.js';
import { formatTemplateId } from './ids.js';
import type { JsonObject, JsonValue } from './json.js';
import { createRng } from './rng.js';
import type { RegisteredTemplate, Template } from './template.js';

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
  const registered = { ...template, id } as RegisteredTemplate<P>;
  // Computed when first read: a fingerprint probes the template's output (tens of milliseconds for a
  // domain's worth), which a process that never reads it, or that knows it from the build
  // (knownSourceDigest), does not pay.
  Object.defineProperty(registered, 'sourceDigest', {
    enumerable: true,
    configurable: true,
    get: () => settle(registered, templateSourceDigest(template)),
  });
  return registered;
}

function settle(template: RegisteredTemplate<unknown>, sourceDigest: string): string {
  Object.defineProperty(template, 'sourceDigest', { value: sourceDigest, enumerable: true, configurable: false, writable: false });
  return sourceDigest;
}

/**
 * Gives a template made by `defineTemplate` the source digest computed beforehand from the same code (the
 * build's table of the shipped templates, src/harness/prebuilt.ts), so reading it costs nothing. Does
 * nothing once the digest was read or set: a digest never changes after it was seen.
 */
export function knownSourceDigest(template: RegisteredTemplate<unknown>, sourceDigest: string): void {
  const property = Object.getOwnPropertyDescriptor(template, 'sourceDigest');
  if (property?.get !== undefined && property.configurable === true) settle(template, sourceDigest);
}

/** Probe tasks per level that a template's content fingerprint is computed from. */
export const TEMPLATE_PROBES_PER_LEVEL = 4;

/**
 * The digest of what a template produces, independent of how its code was compiled: its declaration
 * (domain, name, version, task type, levels, declarative source) and its content: the author's
 * `contentDigest` (retail: a digest of its source files) or else a fingerprint, the params and full
 * spec (with the reference solution) it generates for fixed probe seeds at every level. A change to
 * anything the output depends on (samplers, intents, builders, the reference solver, data they close
 * over) changes the digest, even without a version bump; recompiling the same code with another
 * toolchain (tsx, tsc, a bundler) does not. docs/generation.md, "Template digests".
 */
export function templateSourceDigest(template: Template<unknown>): string {
  const source = typeof template.sourceText === 'function' ? template.sourceText() : template.sourceText;
  return digest({
    domain: template.domain,
    name: template.name,
    version: template.version,
    taskType: template.taskType,
    levels: template.levels,
    ...(source !== undefined ? { source } : {}),
    ...(template.contentDigest !== undefined ? { content: template.contentDigest } : { probes: templateProbes(template) }),
  });
}

/** The fingerprint's probe outputs: per level, per probe index, the sampled params and built spec (or the error). */
function templateProbes(template: Template<unknown>): JsonValue[] {
  const out: JsonValue[] = [];
  template.levels.forEach((levelSpec, i) => {
    const level = i + 1;
    for (let index = 0; index < TEMPLATE_PROBES_PER_LEVEL; index++) {
      // A stream of its own: never one that generation uses ([seed, template id, index]).
      const rng = createRng(['template-probe', template.domain, template.name, template.version, level, index]);
      try {
        const sampled = template.sample(rng, level, levelSpec);
        const parsed = template.params.safeParse(sampled);
        if (!parsed.success) {
          out.push({ level, index, invalid: parsed.error.issues.map((issue) => issue.message) });
          continue;
        }
        const ctx = { rng, level, levelSpec };
        const built = template.build(parsed.data, ctx);
        const solution = template.solve(parsed.data, built, ctx);
        out.push({ level, index, params: parsed.data as JsonValue, spec: { ...built, solution } as unknown as JsonValue });
      } catch (error) {
        out.push({ level, index, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
      }
    }
  });
  return out;
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
