/** Quality gates a candidate task must pass to enter the pool, cheapest first. */
import { issuePointer } from '../core/index.js';
import type { GateName, GateProblemCode, GateResult, GateVerdict, JsonValue, Problem, RegisteredTemplate, Split, Task } from '../core/index.js';
import { bandKeysOf, MinHashIndex, minhashTask } from './minhash.js';
import type { MinHashSignature } from './minhash.js';
import { isPlainValidTask, taskSchema } from './task-schema.js';

/** The order gates run in: cheap checks first, simulator replays last. */
export const GATE_ORDER: readonly GateName[] = ['schema', 'exact_duplicate', 'near_duplicate', 'leakage', 'oracle', 'non_trivial'];

/** A rejection verdict: `reason` and the same text as a `Problem` with `code` (and `pointer`, when given). */
function rejection(code: GateProblemCode, reason: string, details?: JsonValue, pointer?: string): GateVerdict {
  const problem: Problem<GateProblemCode> = pointer === undefined ? { code, message: reason } : { code, message: reason, pointer };
  return details === undefined ? { ok: false, reason, problem } : { ok: false, reason, details, problem };
}

/** The code of a hook's rejection that names none. */
const HOOK_CODES: Partial<Record<GateName, GateProblemCode>> = { oracle: 'ORACLE_FAILED', non_trivial: 'TRIVIAL' };

/** A caller-supplied check of one task (the runtime wires oracle replay and non-triviality). */
export type GateHook = (task: Task) => GateVerdict;

/** The gates that need a simulator, supplied by the caller. */
export interface GateHooks {
  /** The reference solution must reach the goal. */
  oracle?: GateHook;
  /** The empty and a random trajectory must fail. */
  nonTrivial?: GateHook;
}

/** A candidate as the gates see it: a task, or the reason instantiating it failed. */
export interface GateCandidate {
  index: number;
  task?: Task;
  /**
   * A task not parsed yet (it came from a worker thread as its body): its id, and how to get the task.
   * The gates parse it only if a check needs more than the id (a verdict or signature not given), and
   * then keep it in `task`.
   */
  pending?: { id: string; parse: () => Task };
  /** Why the template could not produce this candidate (it is then rejected by the schema gate). */
  error?: { message: string; pointer?: string };
  /** Precomputed MinHash signature of `task` (computed on demand when absent). */
  signature?: MinHashSignature;
  /** The task id is already in the store. */
  stored?: boolean;
  /** Verdicts of the per-task gates computed elsewhere (a worker thread ran the same checks on this task). */
  verdicts?: TaskVerdicts;
}

/**
 * What the per-task gates said about one task: the schema check and the hooks, which depend on the
 * task alone (not on the rest of the batch), so a worker thread can compute them. A gate not run is absent.
 */
export interface TaskVerdicts {
  schema?: GateVerdict;
  oracle?: GateVerdict;
  nonTrivial?: GateVerdict;
}

/** Which per-task gates to compute. */
export interface TaskGates {
  schema: boolean;
  oracle: boolean;
  nonTrivial: boolean;
}

/**
 * Runs a hook the way the gate runner does: a hook that throws rejects the task with the error's
 * message. Worker threads use it too, so a verdict is the same whichever thread computed it.
 */
export function runGateHook(name: 'oracle' | 'non_trivial', hook: GateHook, task: Task): GateVerdict {
  try {
    return hook(task);
  } catch (error) {
    return rejection('GATE_ERROR', `${name} check failed to run: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * The per-task verdicts of one task in the runner's order, stopping at the first rejection: schema
 * (with the template's `validate`), oracle, non-triviality. Hooks absent from `hooks` are skipped.
 */
export function checkTaskGates(task: Task, gates: TaskGates, hooks: GateHooks | undefined, template?: RegisteredTemplate<any>): TaskVerdicts {
  const out: TaskVerdicts = {};
  if (gates.schema) {
    out.schema = checkTaskSchema(task, template);
    if (!out.schema.ok) return out;
  }
  if (hooks === undefined) return out;
  if (gates.oracle && hooks.oracle !== undefined) {
    out.oracle = runGateHook('oracle', hooks.oracle, task);
    if (!out.oracle.ok) return out;
  }
  if (gates.nonTrivial && hooks.nonTrivial !== undefined) out.nonTrivial = runGateHook('non_trivial', hooks.nonTrivial, task);
  return out;
}

/** A candidate's task, parsed from its body the first time a gate needs more than its id. */
function taskOf(candidate: GateCandidate): Task {
  return (candidate.task ??= candidate.pending!.parse());
}

/** What the gates say about one candidate. */
export type GateOutcome = { accepted: true } | { accepted: false; gate: GateName; reason: string; details?: JsonValue; problem: Problem<GateProblemCode> };

/** The verdict of a batch-level gate that passed (one shared object: `record` only reads it). */
const PASSED: GateVerdict = Object.freeze({ ok: true });

/** The outcome of every accepted candidate (one shared object: callers only read it). */
const ACCEPTED: GateOutcome = Object.freeze({ accepted: true });

/** The inputs of one batch's gates. */
export interface GateRunnerOptions {
  /** Requested gates (absent = on). Gates without their input (hook, index) are recorded as off. */
  gates?: Partial<Record<GateName, boolean>>;
  split: Split;
  nearDuplicateThreshold: number;
  hooks?: GateHooks;
  /** Signatures of the existing pool, for near duplicates across batches. */
  poolIndex?: MinHashIndex;
  /** Ids and signatures of the regression set, for the leakage gate. */
  regressionIndex?: MinHashIndex;
  /** Looks up a task's template, for its optional `validate` hook. */
  template?: (id: string) => RegisteredTemplate<any> | undefined;
  /** The candidates expected (the batch's count): the runner's tables are allocated for them up front. */
  candidates?: number;
}

/** Runs the gates over candidates in index order; it remembers accepted tasks for duplicate checks. */
export interface GateRunner {
  /** Which gates run. */
  readonly enabled: Readonly<Record<GateName, boolean>>;
  check(candidate: GateCandidate): GateOutcome;
  /** Totals per gate, in `GATE_ORDER`. */
  results(): GateResult[];
  /**
   * The accepted tasks' MinHash signatures, in the order they were accepted (undefined when the near-duplicate
   * gate is off): what indexing the stored batch would compute, without reading it back.
   */
  readonly accepted: MinHashIndex | undefined;
}

/**
 * Checks a task against the Task schema (and its template's `validate`, when given): the schema gate.
 * @example
 * const verdict = checkTaskSchema(task);   // { ok: false, reason: 'spec.instructions: must not be empty', ... }
 */
export function checkTaskSchema(task: unknown, template?: RegisteredTemplate<any>): GateVerdict {
  // Most candidates are valid: a cheap conservative check spares them zod's walk (same verdicts, tested).
  const parsed = isPlainValidTask(task) ? undefined : taskSchema.safeParse(task);
  if (parsed !== undefined && !parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = issue.path.map(String);
    const pointer = issuePointer(issue);
    const missing = issue.code === 'invalid_type' && valueAt(task, path) === undefined;
    const message = missing ? `missing required field (${issue.expected})` : issue.message.replace(/^Invalid input: /, '');
    const more = parsed.error.issues.length > 1 ? ` (and ${parsed.error.issues.length - 1} more)` : '';
    return rejection('TASK_SCHEMA', `${path.join('.') || 'task'}: ${message}${more}`, { pointer }, pointer);
  }
  if (template?.validate !== undefined) {
    const problems = template.validate(task as Task);
    if (problems.length > 0) {
      // Messages are logged as they were; Problems keep their code and pointer in the details.
      const text = problems.map((p) => (typeof p === 'string' ? p : p.message)).join('; ');
      // Where to look: the first problem's pointer, when it is a Problem that has one.
      const first = problems[0];
      const pointer = first !== undefined && typeof first !== 'string' ? first.pointer : undefined;
      return rejection('TEMPLATE_CHECK', `template ${template.id} check: ${text}`, { problems: problems as JsonValue[] }, pointer);
    }
  }
  return { ok: true };
}

/** The most candidates a runner allocates for up front (32 MiB of signatures); a larger batch grows past it. */
const MAX_PRESIZED = 1 << 17;

/** Creates the gate runner of one batch. */
export function createGateRunner(options: GateRunnerOptions): GateRunner {
  const requested = (gate: GateName): boolean => options.gates?.[gate] !== false;
  const enabled: Record<GateName, boolean> = {
    schema: requested('schema'),
    exact_duplicate: requested('exact_duplicate'),
    near_duplicate: requested('near_duplicate'),
    leakage: requested('leakage') && options.split !== 'regression' && options.regressionIndex !== undefined,
    oracle: requested('oracle') && options.hooks?.oracle !== undefined,
    non_trivial: requested('non_trivial') && options.hooks?.nonTrivial !== undefined,
  };
  const totals = new Map<GateName, GateResult>(
    GATE_ORDER.map((gate) => [gate, { gate, enabled: enabled[gate], checked: 0, passed: 0, rejected: 0 }]),
  );
  const threshold = options.nearDuplicateThreshold;
  const seen = new Map<string, number>();
  // Ids reach it once: a second copy of an accepted task is an exact (or, with that gate off, a near) duplicate.
  const accepted = new MinHashIndex({ capacity: Math.min(options.candidates ?? 0, MAX_PRESIZED), uniqueIds: true });
  // The candidate index of each accepted task: `seen` holds it already when the exact-duplicate gate runs.
  const acceptedAt = enabled.exact_duplicate ? seen : new Map<string, number>();
  // A candidate's band keys, overwritten by the next: the indexes read them during the call and copy what they keep.
  const bandKeys: number[] = [];

  function record(gate: GateName, verdict: GateVerdict): GateOutcome | undefined {
    const total = totals.get(gate)!;
    total.checked++;
    if (verdict.ok) {
      total.passed++;
      return undefined;
    }
    total.rejected++;
    // A hook may return a bare reason: its gate's code, with the reason as the message.
    const problem = verdict.problem ?? { code: HOOK_CODES[gate] ?? 'GATE_ERROR', message: verdict.reason };
    return verdict.details === undefined
      ? { accepted: false, gate, reason: verdict.reason, problem }
      : { accepted: false, gate, reason: verdict.reason, details: verdict.details, problem };
  }

  function check(candidate: GateCandidate): GateOutcome {
    const task = candidate.task;
    const pending = task === undefined ? candidate.pending : undefined;
    if (task === undefined && pending === undefined) {
      // Always rejected, even with the schema gate off: there is no task to accept.
      const message = candidate.error?.message ?? 'the template produced no task';
      const pointer = candidate.error?.pointer;
      const verdict = rejection('INSTANTIATE_FAILED', `could not instantiate: ${message}`, pointer === undefined ? undefined : { pointer }, pointer);
      return record('schema', verdict)!;
    }
    const id = task !== undefined ? task.id : pending!.id;
    let outcome: GateOutcome | undefined;
    if (enabled.schema) {
      outcome = record('schema', candidate.verdicts?.schema ?? checkTaskSchema(taskOf(candidate), options.template?.(taskOf(candidate).template)));
      if (outcome) return outcome;
    }
    if (enabled.exact_duplicate) {
      const firstSeen = seen.get(id);
      if (firstSeen === undefined) seen.set(id, candidate.index);
      let verdict: GateVerdict = PASSED;
      if (firstSeen !== undefined) {
        verdict = rejection('DUPLICATE_IN_BATCH', `same task id as candidate ${firstSeen} of this batch`, { duplicateOf: id, candidate: firstSeen });
      } else if (candidate.stored === true) {
        verdict = rejection('ALREADY_STORED', 'this task is already in the store', { duplicateOf: id });
      } else if (options.poolIndex?.has(id) === true) {
        verdict = rejection('ALREADY_IN_POOL', 'this task is already in the pool', { duplicateOf: id });
      }
      outcome = record('exact_duplicate', verdict);
      if (outcome) return outcome;
    }
    let signature = candidate.signature;
    // One signature is looked up in up to three indexes and added to one: its band keys are computed once.
    let keys: number[] | undefined;
    if (enabled.near_duplicate) {
      signature ??= minhashTask(taskOf(candidate));
      keys = bandKeysOf(signature, threshold, bandKeys);
      const inPool = options.poolIndex?.findSimilar(signature, threshold, keys);
      const match = inPool ?? accepted.findSimilar(signature, threshold, keys);
      let verdict: GateVerdict = PASSED;
      if (match !== undefined) {
        const where = inPool !== undefined ? `pool task ${match.id}` : `candidate ${acceptedAt.get(match.id)} (task ${match.id})`;
        verdict = rejection('NEAR_DUPLICATE', `near duplicate of ${where}: estimated Jaccard ${match.similarity.toFixed(3)} >= ${threshold}`, {
          similarTo: match.id,
          similarity: match.similarity,
          source: inPool !== undefined ? 'pool' : 'batch',
        });
      }
      outcome = record('near_duplicate', verdict);
      if (outcome) return outcome;
    }
    if (enabled.leakage) {
      const regression = options.regressionIndex!;
      let verdict: GateVerdict = PASSED;
      if (regression.has(id)) {
        verdict = rejection('LEAKS_REGRESSION', `leaks regression task ${id}: identical content`, { regressionTask: id, similarity: 1 });
      } else {
        signature ??= minhashTask(taskOf(candidate));
        keys ??= bandKeysOf(signature, threshold, bandKeys);
        const match = regression.findSimilar(signature, threshold, keys);
        if (match !== undefined) {
          verdict = rejection('LEAKS_REGRESSION', `leaks regression task ${match.id}: estimated Jaccard ${match.similarity.toFixed(3)} >= ${threshold}`, {
            regressionTask: match.id,
            similarity: match.similarity,
          });
        }
      }
      outcome = record('leakage', verdict);
      if (outcome) return outcome;
    }
    if (enabled.oracle) {
      outcome = record('oracle', candidate.verdicts?.oracle ?? runGateHook('oracle', options.hooks!.oracle!, taskOf(candidate)));
      if (outcome) return outcome;
    }
    if (enabled.non_trivial) {
      outcome = record('non_trivial', candidate.verdicts?.nonTrivial ?? runGateHook('non_trivial', options.hooks!.nonTrivial!, taskOf(candidate)));
      if (outcome) return outcome;
    }
    if (enabled.near_duplicate) {
      accepted.addSignature(id, signature!, keys);
      if (acceptedAt !== seen) acceptedAt.set(id, candidate.index);
    }
    return ACCEPTED;
  }

  return {
    enabled,
    check,
    results: () => GATE_ORDER.map((gate) => ({ ...totals.get(gate)! })),
    accepted: enabled.near_duplicate ? accepted : undefined,
  };
}

function valueAt(value: unknown, path: readonly string[]): unknown {
  let current = value;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}
