/** Opens the harness the CLI works on: the store from --store, built-in domains, declarative template files. */
import { readFileSync } from 'node:fs';
import { defineDomain, EnvHarnessError, type Domain, type RegisteredTemplate } from '../core/index.js';
import { loadDeclarativeTemplates } from '../generation/declarative.js';
import { createHarness, type Harness } from '../harness/harness.js';
import { applyTemplateDigests } from '../harness/prebuilt.js';
import { builtinDomains } from '../builtins.js';
import type { GlobalOptions } from './options.js';
import { systemClock } from './clock.js';

/** Reads declarative template files (YAML, or JSON by extension) for `--templates`. */
export function loadTemplateFiles(files: readonly string[]): RegisteredTemplate<any>[] {
  const templates: RegisteredTemplate<any>[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new EnvHarnessError('CONFIG_INVALID', `cannot read template file ${file}: ${(error as Error).message}`, { cause: error });
    }
    templates.push(...loadDeclarativeTemplates(text, file.endsWith('.json') ? 'json' : 'yaml'));
  }
  return templates;
}

/**
 * The one way every command (train, eval, serve, mcp, ...) opens its harness: the store, the built-in
 * domains plus `domains` (e.g. serve's --domain-module), the declarative templates, imported worlds.
 */
export async function openHarness(globals: GlobalOptions, options: { domains?: readonly Domain<any>[] } = {}): Promise<Harness> {
  const templates = loadTemplateFiles(globals.templates);
  const builtin = builtinDomains();
  // The compiled CLI knows its templates' digests from the build (probing them is most of a start-up).
  applyTemplateDigests(builtin.flatMap((d) => d.templates as RegisteredTemplate<any>[]));
  const domains = [...builtin, ...(options.domains ?? [])];
  const harness = await createHarness({
    clock: systemClock,
    store: globals.store,
    domains: [...domains, ...declarativeDomains(templates, domains)],
    templates,
    ...(globals.recordAs !== undefined ? { recordAs: globals.recordAs as 'inputs' } : {}),
  });
  // initialize() also lets each domain restore what its imported tasks need (Domain.restore).
  await harness.initialize();
  return harness;
}

/**
 * A stateless domain for each domain named only by declarative question/answer templates (e.g.
 * examples/templates/arithmetic.yaml's `arith`), so tasks made without code train and evaluate like any
 * other. Tool-call templates need a registered domain with their tools, and get none.
 */
export function declarativeDomains(templates: readonly RegisteredTemplate<any>[], known: readonly Domain<any>[]): Domain<any>[] {
  const names = new Set(known.map((d) => d.name));
  const qa = (t: RegisteredTemplate<any>) => {
    try {
      return typeof t.sourceText === 'string' && (JSON.parse(t.sourceText) as { kind?: string }).kind === 'question_answer';
    } catch {
      return false;
    }
  };
  const wanted = [...new Set(templates.filter((t) => !names.has(t.domain)).map((t) => t.domain))];
  return wanted.filter((name) => templates.filter((t) => t.domain === name).every(qa)).map((name) =>
    defineDomain<null>({
      name,
      version: 1,
      description: `declarative question/answer domain ${name}`,
      createState: () => null,
      fork: () => null,
      hashState: () => 'stateless',
      exportState: () => null,
      tools: [],
      templates: [],
    }),
  );
}

/** Opens the harness, runs `fn`, and always closes it. */
export async function withHarness<T>(globals: GlobalOptions, fn: (harness: Harness) => Promise<T>): Promise<T> {
  const harness = await openHarness(globals);
  try {
    return await fn(harness);
  } finally {
    await harness.close();
  }
}
