/** Piscina worker entry: loads templates (modules or declarative definitions) and instantiates candidate ranges. */
import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
import { EnvHarnessError, toEnvHarnessError } from '../core/index.js';
import type { RegisteredTemplate, Task } from '../core/index.js';
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { createCandidatePlan, instantiatePackedCandidates, packChunk } from './candidates.js';
import type { CandidatePlan, PackedChunk } from './candidates.js';
import { compileDeclarativeTemplate } from './declarative.js';
import { checkTaskGates } from './gates.js';
import type { GateHooks, TaskGates, TaskVerdicts } from './gates.js';
import type { DeclarativeDefinition } from './declarative.js';

/** One unit of worker work: the batch's setup and a candidate range. */
export interface WorkerJob {
  /** Identifies the setup, so a worker loads modules once per batch. */
  setupKey: string;
  modules: string[];
  templates: Array<{ id: string; sourceDigest: string; definition?: DeclarativeDefinition }>;
  seed: number;
  weights: number[];
  levels: number[];
  signatures: boolean;
  /** Per-task gates to run here (default none); hooks come from `hookModule`. */
  gates?: TaskGates;
  /** A module exporting `createGateHooks()`, called once per thread (the hooks are kept across batches). */
  hookModule?: string;
  start: number;
  end: number;
}

/** A worker's answer; errors travel as data because piscina would drop the EnvHarnessError class. */
export type WorkerReply = { ok: true; chunk: PackedChunk } | { ok: false; error: { code: string; message: string; details?: unknown } };

interface LoadedSetup {
  plan: CandidatePlan;
  hooks: GateHooks | undefined;
}

// A thread serves the jobs of a batch (or of a few, from a kept pool): caching the loaded plan per
// setup avoids rebuilding it per range. The oldest setups are dropped.
const plans = new Map<string, Promise<LoadedSetup>>();
const MAX_SETUPS = 4;

export default async function run(job: WorkerJob): Promise<WorkerReply> {
  try {
    let setup = plans.get(job.setupKey);
    if (setup === undefined) {
      setup = loadSetup(job);
      if (plans.size >= MAX_SETUPS) plans.delete(plans.keys().next().value!);
      plans.set(job.setupKey, setup);
    }
    const { plan, hooks } = await setup;
    const gates = job.gates;
    let check: ((task: Task) => TaskVerdicts) | undefined;
    if (gates !== undefined && (gates.schema || (hooks !== undefined && (gates.oracle || gates.nonTrivial)))) {
      // Per-task gates depend on the task alone, so computing them here gives the main thread's verdicts.
      const byId = new Map(plan.templates.map((t) => [t.id, t]));
      check = (task) => checkTaskGates(task, gates, hooks, byId.get(task.template));
    }
    return { ok: true, chunk: packChunk(instantiatePackedCandidates(plan, job.start, job.end, check)) };
  } catch (error) {
    plans.delete(job.setupKey);
    const e = toEnvHarnessError(error);
    return { ok: false, error: e.details === undefined ? { code: e.code, message: e.message } : { code: e.code, message: e.message, details: e.details } };
  }
}

/**
 * The entry the worker threads run (piscina's `name`): `run`, with the chunk's typed arrays moved to the
 * main thread instead of copied (the thread never reads them again).
 */
export async function transferring(job: WorkerJob): Promise<WorkerReply> {
  const reply = await run(job);
  if (!reply.ok) return reply;
  const buffers: ArrayBuffer[] = [reply.chunk.picks.buffer as ArrayBuffer];
  if (reply.chunk.signatures !== undefined) buffers.push(reply.chunk.signatures.buffer as ArrayBuffer);
  // Piscina posts the value with the buffers in the transfer list; the main thread receives `reply`.
  return move({ [transferableSymbol]: buffers, [valueSymbol]: reply } as never) as unknown as WorkerReply;
}

// Hooks per hook module, kept across batches: their caches (built worlds, prepared tasks) stay warm.
const hookSets = new Map<string, Promise<GateHooks>>();

async function loadSetup(job: WorkerJob): Promise<LoadedSetup> {
  const plan = await loadPlan(job);
  if (job.hookModule === undefined) return { plan, hooks: undefined };
  let hooks = hookSets.get(job.hookModule);
  if (hooks === undefined) {
    hooks = loadHooks(job.hookModule);
    hookSets.set(job.hookModule, hooks);
    hooks.catch(() => hookSets.delete(job.hookModule!));
  }
  return { plan, hooks: await hooks };
}

async function loadHooks(specifier: string): Promise<GateHooks> {
  const url = isAbsolute(specifier) ? pathToFileURL(specifier).href : specifier;
  let module: { createGateHooks?: unknown };
  try {
    module = (await import(url)) as { createGateHooks?: unknown };
  } catch (error) {
    throw new EnvHarnessError('CONFIG_INVALID', `worker could not import hook module ${specifier}: ${(error as Error).message}`, {
      cause: error,
      details: { module: specifier },
    });
  }
  if (typeof module.createGateHooks !== 'function') {
    throw new EnvHarnessError('CONFIG_INVALID', `hook module ${specifier} does not export \`createGateHooks\` (a function returning { oracle, nonTrivial })`, {
      details: { module: specifier },
    });
  }
  return (await (module.createGateHooks as () => GateHooks | Promise<GateHooks>)()) ?? {};
}

async function loadPlan(job: WorkerJob): Promise<CandidatePlan> {
  const exported = new Map<string, RegisteredTemplate<any>>();
  for (const specifier of job.modules) {
    const url = isAbsolute(specifier) ? pathToFileURL(specifier).href : specifier;
    let module: { templates?: unknown };
    try {
      module = (await import(url)) as { templates?: unknown };
    } catch (error) {
      throw new EnvHarnessError('CONFIG_INVALID', `worker could not import template module ${specifier}: ${(error as Error).message}`, {
        cause: error,
        details: { module: specifier },
      });
    }
    if (!Array.isArray(module.templates)) {
      throw new EnvHarnessError('CONFIG_INVALID', `template module ${specifier} does not export \`templates\` (an array of templates)`, {
        details: { module: specifier },
      });
    }
    for (const template of module.templates as RegisteredTemplate<any>[]) {
      if (!exported.has(template.id)) exported.set(template.id, template);
    }
  }
  const templates = job.templates.map((wanted) => {
    const template = wanted.definition !== undefined ? compileDeclarativeTemplate(wanted.definition) : exported.get(wanted.id);
    if (template === undefined) {
      throw new EnvHarnessError(
        'CONFIG_INVALID',
        `template ${wanted.id} is not exported by any of the template modules (${job.modules.join(', ') || 'none given'}); pass the module that exports it in templateModules`,
        { details: { template: wanted.id } },
      );
    }
    if (template.sourceDigest !== wanted.sourceDigest) {
      throw new EnvHarnessError(
        'CONFIG_INVALID',
        `worker loaded a different ${wanted.id} (source digest ${template.sourceDigest.slice(0, 12)}, expected ${wanted.sourceDigest.slice(0, 12)}); the template modules must export the templates the registry holds (function text counts: running the main thread under another transpiler, e.g. vitest instead of tsx, changes it too)`,
        { details: { template: wanted.id } },
      );
    }
    return template;
  });
  return createCandidatePlan({ seed: job.seed, templates, weights: job.weights, levels: job.levels, signatures: job.signatures });
}
