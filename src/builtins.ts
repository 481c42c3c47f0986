/** The built-in domains, wired explicitly (importing a domain registers nothing): the one file that names them. */
import type { Domain, GateVerdict, Task } from './core/index.js';
import { apiWorkflows } from './domains/api-workflows/index.js';
import { library } from './domains/library/index.js';
import { math } from './domains/math/index.js';
import { createBuiltinRetail, retail } from './domains/retail/index.js';
import { web } from './domains/web/index.js';
import { createApiWorkflowsSafetyDomain, createRetailSafetyDomain, createWebSafetyDomain } from './domains/safety/index.js';
import { createDomainGateHooks } from './runtime/index.js';

// Retail runs through the tau-bench view so that imported tau-bench tasks grade as tau-bench does;
// every other retail task behaves exactly as plain retail.
const retailView = createBuiltinRetail(retail);

// The safety layer over the domains that declare injectionPoints: attacks and out-of-bounds requests,
// no defense (the library builds defended variants), each with the kinds its base can host.
const safetyRetail = createRetailSafetyDomain(retailView);
const safetyApiWorkflows = createApiWorkflowsSafetyDomain(apiWorkflows);
const safetyWeb = createWebSafetyDomain(web);

/** The domains `envharness` (CLI and `serve`) runs. */
export function builtinDomains(): Domain<any>[] {
  return [retailView, math, apiWorkflows, library, web, safetyRetail, safetyApiWorkflows, safetyWeb];
}

/**
 * Every template of the built-in domains, for generation worker threads (`templateModules`): a worker
 * imports this module to get the same templates the CLI's registry holds.
 */
export const templates = builtinDomains().flatMap((d) => d.templates);

/**
 * This module's URL, for `generate({ workers, templateModules: [BUILTIN_TEMPLATES_MODULE] })` and, when
 * every template is a built-in domain's, `hookModule: BUILTIN_TEMPLATES_MODULE`.
 */
export const BUILTIN_TEMPLATES_MODULE = import.meta.url;

/**
 * The oracle and non-triviality gates of the built-in domains, chosen by the task's domain (a task of
 * another domain passes both, as `Harness.generate` does): what a generation worker thread runs when
 * given this module as `hookModule`, so the CLI's gated batches run their simulator gates in the workers.
 */
export function createGateHooks(): { oracle: (task: Task) => GateVerdict; nonTrivial: (task: Task) => GateVerdict } {
  const byDomain = new Map<string, ReturnType<typeof createDomainGateHooks>>();
  const domains = new Map(builtinDomains().map((d) => [d.name, d]));
  const hooksOf = (task: Task): ReturnType<typeof createDomainGateHooks> | undefined => {
    let hooks = byDomain.get(task.domain);
    const domain = domains.get(task.domain);
    if (hooks === undefined && domain !== undefined) {
      hooks = createDomainGateHooks(domain);
      byDomain.set(task.domain, hooks);
    }
    return hooks;
  };
  return {
    oracle: (task) => hooksOf(task)?.oracle(task) ?? { ok: true },
    nonTrivial: (task) => hooksOf(task)?.nonTrivial(task) ?? { ok: true },
  };
}

/** Whether `createGateHooks` covers a domain (the CLI hands gates to workers only then). */
export function isBuiltinDomain(name: string): boolean {
  return builtinDomains().some((d) => d.name === name);
}
