/** Opens the harness the CLI works on: the store from --store, built-in domains, declarative template files. */
import { existsSync, readFileSync } from 'node:fs';
import { EnvHarnessError, type Domain, type RegisteredTemplate } from '../core/index.js';
import { loadDeclarativeTemplates } from '../generation/declarative.js';
import { createHarness, type Harness } from '../harness/harness.js';
import { loadTauBenchWorld } from '../domains/retail/index.js';
import type { RetailDomain } from '../domains/retail/index.js';
import { builtinDomains } from '../builtins.js';
import type { GlobalOptions } from './main.js';

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
  const harness = await createHarness({ store: globals.store, domains: [...builtinDomains(), ...(options.domains ?? [])], templates });
  await harness.initialize();
  // A store with imported tau-bench tasks needs tau-bench's world registered with the retail domain.
  const meta = (await harness.store.getMeta('interop.tau-bench')) as { dir?: string } | undefined;
  const retail = harness.domains.get('retail') as RetailDomain | undefined;
  if (meta?.dir && retail && existsSync(meta.dir)) retail.addWorld(loadTauBenchWorld(meta.dir));
  return harness;
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
