/** What the build computes once from the compiled code (template digests, the shipped regression sets), checked before it is used. */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  computeTaskId,
  digest,
  EnvHarnessError,
  knownSourceDigest,
  type JsonValue,
  type RegisteredTemplate,
} from '../core/index.js';
import type { GeneratedBatch, TemplateRegistry } from '../generation/index.js';

const TABLE_FORMAT = 'envharness.template-digests/1';
const SET_FORMAT = 'envharness.regression-set/1';
/** A shipped regression set larger than this is refused unread (the built-in ones are well under 1 MiB). */
const MAX_SET_BYTES = 32 * 1024 * 1024;

/**
 * The folder of prebuilt files beside the compiled package (`dist/prebuilt`), or undefined when this
 * module runs from the TypeScript sources (tsx, vitest), which always compute for themselves.
 */
export function prebuiltDir(moduleUrl: string = import.meta.url): string | undefined {
  if (!moduleUrl.startsWith('file:') || !moduleUrl.endsWith('.js')) return undefined;
  return path.join(path.dirname(path.dirname(fileURLToPath(moduleUrl))), 'prebuilt');
}

/**
 * sha256 over every compiled file of the package (`*.js` under the folder holding `dir`, `dir` itself
 * excluded), by relative path: the key of the template-digest table, so any change to the compiled code
 * makes the table unused rather than wrong. About 20 ms for the whole package.
 */
export function codeDigest(dir: string): string {
  const root = path.dirname(dir);
  const files: string[] = [];
  const walk = (rel: string): void => {
    for (const entry of readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const child = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) {
        if (path.join(root, child) !== dir) walk(child);
      } else if (entry.name.endsWith('.js')) files.push(child);
    }
  };
  walk('');
  const hash = createHash('sha256');
  for (const file of files.sort()) hash.update(`${file}\n`).update(readFileSync(path.join(root, file))).update('\n');
  return hash.digest('hex');
}

/** Writes the source digests of `templates` (computed now, by probing where they have no content digest) for this build. */
export function writeTemplateDigests(dir: string, templates: readonly RegisteredTemplate<any>[]): void {
  mkdirSync(dir, { recursive: true });
  const digests = Object.fromEntries(templates.map((t) => [t.id, t.sourceDigest]));
  writeFileSync(path.join(dir, 'template-digests.json'), `${JSON.stringify({ format: TABLE_FORMAT, code: codeDigest(dir), digests }, null, 1)}\n`);
}

/**
 * Gives each of `templates` its digest from the build's table when the table was made from exactly the
 * compiled code running now (same code digest); otherwise leaves them to compute their own. Only pass
 * the shipped templates themselves (builtinDomains()): the table is by template id. Returns how many
 * were taken from the table.
 */
export function applyTemplateDigests(templates: readonly RegisteredTemplate<any>[], dir: string | undefined = prebuiltDir()): number {
  if (dir === undefined) return 0;
  const file = path.join(dir, 'template-digests.json');
  if (!existsSync(file)) return 0;
  let table: { format?: unknown; code?: unknown; digests?: Record<string, unknown> };
  try {
    table = JSON.parse(readFileSync(file, 'utf8')) as typeof table;
  } catch {
    return 0;
  }
  if (table.format !== TABLE_FORMAT || typeof table.digests !== 'object' || table.digests === null || table.code !== codeDigest(dir)) return 0;
  let applied = 0;
  for (const t of templates) {
    const known = table.digests[t.id];
    if (typeof known !== 'string' || !/^[0-9a-f]{64}$/.test(known)) continue;
    knownSourceDigest(t, known);
    applied++;
  }
  return applied;
}

function setFile(dir: string, domain: string): string {
  return path.join(dir, `regression-${domain.replace(/[^a-z0-9_-]/gi, '_')}.json`);
}

/** Writes a domain's regression set as generated (its batches, as `Harness.generate` stored them) for this build. */
export function writeRegressionSet(dir: string, domain: string, batches: readonly GeneratedBatch[]): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(setFile(dir, domain), `${JSON.stringify({ format: SET_FORMAT, domain, batches })}\n`);
}

/**
 * A domain's shipped regression set, checked: undefined when there is none, or when it was made by
 * other template versions than `registry` holds (an older build: the caller generates instead).
 * LOCKFILE_MISMATCH, naming the file and the record, when it is not what its own records say: a batch
 * that does not hash to its id, a task that does not hash to its id, a batch whose task list is not the
 * one its manifest names, a task of another domain or split. The set's digest against the one the
 * domain pins is checked by the installer, on what it stored.
 */
export function readRegressionSet(dir: string | undefined, domain: string, registry: TemplateRegistry): GeneratedBatch[] | undefined {
  if (dir === undefined) return undefined;
  const file = setFile(dir, domain);
  if (!existsSync(file)) return undefined;
  const refuse = (what: string, pointer: string): never => {
    throw new EnvHarnessError('LOCKFILE_MISMATCH', `the shipped ${domain} regression set ${file} was changed after it was built: ${what}; reinstall the package (or delete the file to regenerate the set)`, {
      details: { domain, pointer },
    });
  };
  if (statSync(file).size > MAX_SET_BYTES) refuse(`it is larger than ${MAX_SET_BYTES} bytes`, '');
  let parsed: { format?: unknown; domain?: unknown; batches?: unknown };
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8')) as typeof parsed;
  } catch (error) {
    return refuse(`it is not JSON (${(error as Error).message})`, '');
  }
  if (parsed.format !== SET_FORMAT || parsed.domain !== domain || !Array.isArray(parsed.batches)) return refuse(`expected { format: ${SET_FORMAT}, domain: ${domain}, batches }`, '');
  const batches = parsed.batches as GeneratedBatch[];
  // Made by other template versions: not wrong, just not this build's. Checked before anything else.
  for (const [b, batch] of batches.entries()) {
    const templates = batch?.manifest?.templates;
    if (!Array.isArray(templates)) return refuse('a batch without a template list', `/batches/${b}/manifest/templates`);
    for (const t of templates) {
      if (!registry.has(t.id) || registry.get(t.id).sourceDigest !== t.sourceDigest) return undefined;
    }
  }
  for (const [b, batch] of batches.entries()) {
    const at = `/batches/${b}`;
    const { manifest, tasks, log, review } = batch;
    if (!Array.isArray(tasks) || !Array.isArray(log) || !Array.isArray(review)) refuse('a batch without tasks, log and review lists', at);
    const { id, ...body } = manifest;
    if (digest(body as unknown as JsonValue) !== id) refuse(`batch ${String(id).slice(0, 12)} does not hash to its id`, `${at}/manifest/id`);
    if (manifest.split !== 'regression') refuse(`batch ${id.slice(0, 12)} is for split ${manifest.split}`, `${at}/manifest/split`);
    for (const [i, task] of tasks.entries()) {
      if (task.domain !== domain) refuse(`task ${i} is of domain ${task.domain}`, `${at}/tasks/${i}/domain`);
      const expected = computeTaskId(task);
      if (expected !== task.id) refuse(`task ${String(task.id).slice(0, 12)} does not hash to its id (its content hashes to ${expected.slice(0, 12)})`, `${at}/tasks/${i}/id`);
    }
    const ids = tasks.map((t) => t.id);
    if (ids.length !== manifest.accepted || digest(ids) !== manifest.digest) refuse(`batch ${id.slice(0, 12)} names ${manifest.accepted} tasks with digest ${manifest.digest.slice(0, 12)}, the file holds ${ids.length} with digest ${digest(ids).slice(0, 12)}`, `${at}/tasks`);
    const known = new Set(ids);
    if (!review.every((r) => known.has(r))) refuse('a review entry names a task not in the batch', `${at}/review`);
    if (!log.every((e) => e.batchId === id)) refuse('a log entry names another batch', `${at}/log`);
  }
  return batches;
}
