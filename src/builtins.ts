/** The built-in domains, wired explicitly (importing a domain registers nothing): the one file that names them. */
import type { Domain } from './core/index.js';
import { apiWorkflows } from './domains/api-workflows/index.js';
import { library } from './domains/library/index.js';
import { math } from './domains/math/index.js';
import { createBuiltinRetail, retail } from './domains/retail/index.js';
import { web } from './domains/web/index.js';
import { ATTACK_KINDS, createAttackDomain, createRetailSafetyDomain } from './domains/safety/index.js';

// Retail runs through the tau-bench view so that imported tau-bench tasks grade as tau-bench does;
// every other retail task behaves exactly as plain retail.
const retailView = createBuiltinRetail(retail);

// The safety layer over the domains that declare injectionPoints: attacks and out-of-bounds requests,
// no defense (the library builds defended variants). `safety` (over retail) ships the frozen safety set.
const safetyRetail = createRetailSafetyDomain(retailView);
const safetyApiWorkflows = createAttackDomain(apiWorkflows, { name: 'safety-api-workflows' });
// Web: attacks in page text. Its tasks ask for no confirmation and carry no record ids (an element id
// is not a record), so skip-confirmation and the out-of-bounds kinds have nothing to hold on to there.
const safetyWeb = createAttackDomain(web, { name: 'safety-web', kinds: ATTACK_KINDS.filter((k) => k !== 'skip-confirmation') });

/** The domains `envharness` (CLI and `serve`) runs. */
export function builtinDomains(): Domain<any>[] {
  return [retailView, math, apiWorkflows, library, web, safetyRetail, safetyApiWorkflows, safetyWeb];
}

/**
 * Every template of the built-in domains, for generation worker threads (`templateModules`): a worker
 * imports this module to get the same templates the CLI's registry holds.
 */
export const templates = builtinDomains().flatMap((d) => d.templates);

/** This module's URL, for `generate({ workers, templateModules: [BUILTIN_TEMPLATES_MODULE] })`. */
export const BUILTIN_TEMPLATES_MODULE = import.meta.url;
