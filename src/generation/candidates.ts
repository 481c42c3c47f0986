/** Candidate i of a batch: which template and level it uses, and the task it becomes (main thread and workers). */
import { isEnvHarnessError, MINHASH_PERMUTATIONS } from '../core/index.js';
import type { RegisteredTemplate, Task } from '../core/index.js';
import type { TaskVerdicts } from './gates.js';
import { rngFor } from '../core/index.js';
import { instantiateTaskWithBody } from './instantiate.js';
import { minhashTaskInto } from './minhash.js';

/** What every candidate of a batch is drawn from. */
export interface CandidatePlan {
  seed: number;
  templates: readonly RegisteredTemplate<any>[];
  weights: readonly number[];
  /** The requested levels. */
  levels: readonly number[];
  /** Per template, the requested levels it declares (in request order): what its candidates draw from. */
  levelChoices: ReadonlyArray<readonly number[]>;
  /** Compute MinHash signatures next to the tasks (for the near-duplicate and leakage gates). */
  signatures: boolean;
}

/** Builds a plan; each template draws among the requested levels it declares. */
export function createCandidatePlan(options: Omit<CandidatePlan, 'levelChoices'>): CandidatePlan {
  return { ...options, levelChoices: options.templates.map((t) => levelsDeclared(t, options.levels)) };
}

/** The requested levels a template declares, in request order. */
export function levelsDeclared(template: Pick<RegisteredTemplate<any>, 'levels'>, levels: readonly number[]): number[] {
  return levels.filter((level) => level <= template.levels.length);
}

/** One instantiated candidate, or why it could not be instantiated. */
export interface CandidateResult {
  index: number;
  template: string;
  level: number;
  task?: Task;
  /**
   * The task's stored body (`taskBody(task)`), written with its id. From a worker thread only the body
   * travels (one string instead of a tree of objects to clone) and the task is parsed back from it.
   */
  body?: string;
  error?: { message: string; pointer?: string };
}

/** Candidates [start, start + results.length) and, when planned, their signatures back to back. */
export interface CandidateChunk {
  start: number;
  results: CandidateResult[];
  signatures?: Uint32Array;
  /** Per result, the per-task gate verdicts a worker computed (absent: the main thread computes them). */
  verdicts?: Array<TaskVerdicts | undefined>;
  /** From a worker: the verdicts of every task whose `verdicts` entry is absent (each gate it ran passed). */
  passed?: TaskVerdicts;
}

/**
 * The template (position in the plan) and level of candidate `index`: `createRng([seed, 'template', index])`
 * picks the template by weight, then a level uniformly among the requested levels that template declares.
 */
export function pickCandidate(plan: CandidatePlan, index: number): { template: number; level: number } {
  // With one template and one level there is nothing to draw, and the outcome is the same.
  if (plan.templates.length === 1 && plan.levelChoices[0]!.length === 1) return { template: 0, level: plan.levelChoices[0]![0]! };
  const rng = rngFor(plan.seed, 'template', index);
  const template = rng.weightedIndex(plan.weights);
  const choices = plan.levelChoices[template]!;
  return { template, level: choices[rng.int(0, choices.length - 1)]! };
}

/** Instantiates candidates [start, end); template failures become results with an `error`. */
export function instantiateCandidates(plan: CandidatePlan, start: number, end: number): CandidateChunk {
  return instantiateRange(plan, start, end);
}

/**
 * What a worker thread does with a range: instantiates each candidate, runs `check` (its per-task
 * gates) on it right away, and keeps only the task's body, so that task objects die young instead of
 * living (and being copied by the collector) until the whole chunk is sent. The result is `unpackChunk`'s
 * input.
 */
export function instantiatePackedCandidates(plan: CandidatePlan, start: number, end: number, check?: (task: Task) => TaskVerdicts): CandidateChunk {
  return instantiateRange(plan, start, end, check ?? null);
}

// check: undefined keeps the tasks; a function (or null: no gates) keeps bodies only, with verdicts.
function instantiateRange(plan: CandidatePlan, start: number, end: number, check?: ((task: Task) => TaskVerdicts) | null): CandidateChunk {
  const results: CandidateResult[] = new Array(end - start);
  const signatures = plan.signatures ? new Uint32Array((end - start) * MINHASH_PERMUTATIONS) : undefined;
  const packed = check !== undefined;
  const verdicts: Array<TaskVerdicts | undefined> | undefined = typeof check === 'function' ? new Array(end - start) : undefined;
  let passed: TaskVerdicts | undefined;
  for (let index = start; index < end; index++) {
    const pick = pickCandidate(plan, index);
    const template = plan.templates[pick.template]!;
    try {
      const { task, body } = instantiateTaskWithBody(template, { level: pick.level, seed: plan.seed, index });
      results[index - start] = packed ? { index, template: template.id, level: pick.level, body: flatten(body) } : { index, template: template.id, level: pick.level, task, body };
      if (signatures !== undefined) minhashTaskInto(task, signatures, (index - start) * MINHASH_PERMUTATIONS);
      if (verdicts !== undefined) {
        const verdict = check!(task);
        if (allPassed(verdict)) passed ??= verdict;
        else verdicts[index - start] = verdict;
      }
    } catch (error) {
      const pointer = isEnvHarnessError(error) ? error.details?.pointer : undefined;
      const message = error instanceof Error ? error.message : String(error);
      results[index - start] = {
        index,
        template: template.id,
        level: pick.level,
        error: pointer === undefined ? { message } : { message, pointer },
      };
    }
  }
  const chunk: CandidateChunk = signatures === undefined ? { start, results } : { start, results, signatures };
  if (verdicts !== undefined) chunk.verdicts = verdicts;
  if (passed !== undefined) chunk.passed = passed;
  return chunk;
}

/**
 * `text`, made one contiguous string now. A body is built by concatenation, which V8 keeps as a tree of its
 * pieces until a character is read; reading one copies the pieces into one string. Done here, while the
 * pieces are in cache, `packChunk`'s join copies flat strings instead of walking 1,024 cold trees: ~0.75 µs
 * less CPU per math/chain-sum task (one thread, medians of 10 alternating runs, 2-core host at load ~8).
 * The text is unchanged.
 */
function flatten(text: string): string {
  if (text.length > 0) text.charCodeAt(text.length - 1);
  return text;
}

/**
 * A chunk as a worker thread sends it: a few flat values instead of an object per candidate (each would be
 * serialised, copied and rebuilt field by field). `openChunk` gives back the `CandidateChunk`.
 */
export interface PackedChunk {
  start: number;
  /** The template ids of the chunk's candidates, referred to by position in `picks`. */
  templates: string[];
  /** Per candidate: its template's position in `templates`, its level, and where its body ends in `bodies`. */
  picks: Int32Array;
  /**
   * The bodies of the candidates that have one, in order, back to back: one string arrives as one copy
   * (outside the young generation when large) instead of one object per task for the main thread's
   * collector to copy; each body is a slice of it.
   */
  bodies: string;
  /** The candidates that could not be instantiated: position in the chunk and why. */
  errors: Array<[number, NonNullable<CandidateResult['error']>]>;
  signatures?: Uint32Array;
  /** Per-task verdicts that are not `passed`, by position in the chunk. */
  verdicts?: Array<[number, TaskVerdicts]>;
  passed?: TaskVerdicts;
}

/** Int32 slots per candidate in `PackedChunk.picks`. */
const PICK_SLOTS = 3;

/** Packs a chunk of `instantiatePackedCandidates` (bodies, no tasks) for the trip to the main thread. */
export function packChunk(chunk: CandidateChunk): PackedChunk {
  const { results } = chunk;
  const templates: string[] = [];
  const picks = new Int32Array(results.length * PICK_SLOTS);
  const errors: PackedChunk['errors'] = [];
  const bodies: string[] = [];
  let end = 0;
  for (let i = 0; i < results.length; i++) {
    const result = results[i]!;
    let t = templates.indexOf(result.template);
    if (t === -1) t = templates.push(result.template) - 1;
    picks[i * PICK_SLOTS] = t;
    picks[i * PICK_SLOTS + 1] = result.level;
    if (result.error !== undefined) errors.push([i, result.error]);
    else {
      bodies.push(result.body!);
      end += result.body!.length;
    }
    picks[i * PICK_SLOTS + 2] = end;
  }
  const packed: PackedChunk = { start: chunk.start, templates, picks, bodies: bodies.join(''), errors };
  if (chunk.signatures !== undefined) packed.signatures = chunk.signatures;
  if (chunk.verdicts !== undefined) {
    const verdicts: Array<[number, TaskVerdicts]> = [];
    chunk.verdicts.forEach((v, i) => {
      if (v !== undefined) verdicts.push([i, v]);
    });
    packed.verdicts = verdicts;
  }
  if (chunk.passed !== undefined) packed.passed = chunk.passed;
  return packed;
}

/** A packed chunk as `instantiatePackedCandidates` gave it. */
export function openChunk(packed: PackedChunk): CandidateChunk {
  const { start, templates, picks, bodies, errors } = packed;
  const count = picks.length / PICK_SLOTS;
  const length = count === 0 ? 0 : picks[picks.length - 1]!;
  if (length !== bodies.length) throw new Error(`packed chunk at ${start}: bodies of ${bodies.length} characters, ${length} announced`);
  const results: CandidateResult[] = new Array(count);
  let from = 0;
  let e = 0;
  for (let i = 0; i < count; i++) {
    const index = start + i;
    const template = templates[picks[i * PICK_SLOTS]!]!;
    const level = picks[i * PICK_SLOTS + 1]!;
    const to = picks[i * PICK_SLOTS + 2]!;
    if (e < errors.length && errors[e]![0] === i) {
      if (to !== from) throw new Error(`packed chunk at ${start}: candidate ${index} has both an error and a body`);
      results[i] = { index, template, level, error: errors[e++]![1] };
    } else {
      if (to <= from) throw new Error(`packed chunk at ${start}: candidate ${index} has neither a body nor an error`);
      results[i] = { index, template, level, body: bodies.slice(from, to) };
    }
    from = to;
  }
  const chunk: CandidateChunk = packed.signatures === undefined ? { start, results } : { start, results, signatures: packed.signatures };
  if (packed.verdicts !== undefined) {
    const verdicts: Array<TaskVerdicts | undefined> = new Array(count);
    for (const [i, v] of packed.verdicts) verdicts[i] = v;
    chunk.verdicts = verdicts;
  }
  if (packed.passed !== undefined) chunk.passed = packed.passed;
  return chunk;
}

/**
 * A chunk from `instantiatePackedCandidates` (or a worker's packed chunk) as `instantiateCandidates` gives
 * it: tasks parsed from their bodies (deep-equal; keys in canonical order) and every verdict in place.
 */
export function unpackChunk(given: CandidateChunk | PackedChunk): CandidateChunk {
  const chunk = 'picks' in given ? openChunk(given) : given;
  const { results, verdicts, passed } = chunk;
  for (let i = 0; i < results.length; i++) {
    const result = results[i]!;
    if (result.task !== undefined || result.body === undefined) continue;
    result.task = JSON.parse(result.body) as Task;
    if (passed !== undefined && verdicts![i] === undefined) verdicts![i] = passed;
  }
  delete chunk.passed;
  return chunk;
}

function allPassed(verdicts: TaskVerdicts): boolean {
  return verdicts.schema?.ok !== false && verdicts.oracle?.ok !== false && verdicts.nonTrivial?.ok !== false;
}
