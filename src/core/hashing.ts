/**
 * Hashing on the hot path: digests, seed derivation and the task id (its one implementation), written
 * with the canonical byte writer of canonical-json.ts; byte-identical to `digest`/`createRng` over
 * canonical JSON (tested against an RFC 8785 reference).
 */
import { hash } from 'node:crypto';
import { canonicalize, canonicalSha256, sha256OfCanonicalBytes } from './canonical-json.js';
import type { CanonicalBytes } from './canonical-json.js';
import { Rng } from './rng.js';
import type { Task } from './template.js';

/** Hex sha256 of a UTF-8 string (one-shot `crypto.hash`, cheaper than `createHash` for small inputs). */
export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}

/** Hex sha256 of the canonical JSON of a value; equal to core `digest`. */
export const fastDigest: (value: unknown) => string = canonicalSha256;

/** The same generator as core `createRng([seed, label, index])`, without building the canonical string. */
export function rngFor(seed: number, label: string, index: number): Rng {
  const hex =
    sha256OfCanonicalBytes((out) => {
      out.ascii('[');
      out.value(seed);
      out.ascii(',');
      out.string(label);
      out.ascii(',');
      out.value(index);
      out.ascii(']');
    }) ?? sha256Hex(canonicalize([seed, label, index]));
  return rngOfHex(hex);
}

/**
 * The same generator as core `createRng(parts)` for a list of JSON values (not an `RngState`: pass a
 * list with a string in it), through the byte writer instead of the string one.
 */
export function fastRng(parts: readonly unknown[]): Rng {
  return rngOfHex(canonicalSha256(parts));
}

function rngOfHex(hex: string): Rng {
  const a = parseInt(hex.slice(0, 8), 16);
  const b = parseInt(hex.slice(8, 16), 16);
  const c = parseInt(hex.slice(16, 24), 16);
  let d = parseInt(hex.slice(24, 32), 16);
  // deriveSeed's guard: sfc32 must not start from all zeros.
  if ((a | b | c | d) === 0) d = 1;
  return new Rng([a, b, c, d]);
}

/**
 * The id of a task: sha256 of the canonical JSON of `{ template, domain, taskType, level, params, spec }`
 * (everything but `id` and `origin`). The one implementation; `fastTaskId` is the same function.
 */
export function computeTaskId(task: Pick<Task, 'template' | 'domain' | 'taskType' | 'level' | 'params' | 'spec'>): string {
  const fast =
    task.params !== undefined && task.spec !== undefined
      ? sha256OfCanonicalBytes((out) => writeIdContent(out, task), true) // a retail task's user goal is both params.goal and spec.user: written once
      : undefined;
  return fast ?? sha256Hex(canonicalize(idContent(task)));
}

/**
 * A task's id and its stored body (the canonical JSON of `{ id, template, domain, taskType, level, params,
 * spec, origin }`, what the stores keep) from one canonical writing: the body is the id's hashed text with
 * `id` and `origin` spliced in at their sorted places. Equal to `computeTaskId` and `canonicalize` of the
 * body (tested).
 */
export function taskIdAndBody(task: Pick<Task, 'template' | 'domain' | 'taskType' | 'level' | 'params' | 'spec' | 'origin'>): { id: string; body: string } {
  // The string writer and a hash of its text: cheaper than the byte writer plus decoding its bytes (measured).
  const text = canonicalize(idContent(task));
  const id = sha256Hex(text);
  // `,"level":` and `,"params":` first occur where they are keys: a quote inside a JSON string is escaped.
  const atLevel = text.indexOf(',"level":');
  const atParams = text.indexOf(',"params":', atLevel);
  const body = `${text.slice(0, atLevel)},"id":"${id}"${text.slice(atLevel, atParams)},"origin":${canonicalize(task.origin)}${text.slice(atParams)}`;
  return { id, body };
}

function idContent(task: Pick<Task, 'template' | 'domain' | 'taskType' | 'level' | 'params' | 'spec'>): Pick<Task, 'template' | 'domain' | 'taskType' | 'level' | 'params' | 'spec'> {
  return { template: task.template, domain: task.domain, taskType: task.taskType, level: task.level, params: task.params, spec: task.spec };
}

function writeIdContent(out: CanonicalBytes, task: Pick<Task, 'template' | 'domain' | 'taskType' | 'level' | 'params' | 'spec'>): void {
  // Keys in RFC 8785 order: domain, level, params, spec, taskType, template.
  out.ascii('{"domain":');
  out.value(task.domain);
  out.ascii(',"level":');
  out.value(task.level);
  out.ascii(',"params":');
  out.value(task.params);
  out.ascii(',"spec":');
  out.value(task.spec);
  out.ascii(',"taskType":');
  out.value(task.taskType);
  out.ascii(',"template":');
  out.value(task.template);
  out.ascii('}');
}

/** `computeTaskId` under the name the generation hot path has always used. */
export const fastTaskId = computeTaskId;
