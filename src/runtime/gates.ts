/** The generation gates that need the simulator: oracle replay and non-triviality. */
import { isEnvHarnessError, toEnvHarnessError } from '../core/index.js';
import type { Action, Domain, Feedback, FeedbackCode, GateVerdict, JsonValue, Rng, StepResult, Task, ToolSpec } from '../core/index.js';
import { createGateEpisode, normalizeOutput } from './episode.js';
import { runtimeCacheFor } from './runtime-cache.js';
import { nonTrivialRng } from './task-rng.js';
import type { EpisodeOptions } from './episode.js';

/** Feedback a reference solution must never earn. */
const ORACLE_FAILURES: ReadonlySet<FeedbackCode> = new Set<FeedbackCode>(['INVALID_ACTION', 'PRECONDITION_FAILED', 'POLICY_VIOLATION', 'ORDER_VIOLATION']);

/** Options of the oracle gate. */
export interface OracleGateOptions {
  cache?: EpisodeOptions['cache'];
  /** Seed of the episode the reference solution is played in (default 0). */
  seed?: number;
  /** @internal false plays stateless questions too (tests compare both ways). */
  shortcut?: boolean;
}

/**
 * The oracle gate: plays the task's reference solution in a real episode (faults off, the domain's
 * simulated user on, every constraint and policy rule on) and passes iff every step is accepted (no
 * INVALID_ACTION, PRECONDITION_FAILED, POLICY_VIOLATION or ORDER_VIOLATION) and the episode terminates
 * with outcome 1.
 * @example
 * const oracle = createOracleGate(retail);
 * oracle(task); // { ok: true } or { ok: false, reason }
 */
export function createOracleGate(domain: Domain<any>, options: OracleGateOptions = {}): (task: Task) => GateVerdict {
  return (task) =>
    guard(task, () => {
      // A stateless question's episode is its answer check: skip the episode when that check passes
      // (a failing one still plays the episode, for the exact verdict and details).
      const stateless = options.shortcut === false ? undefined : statelessAnswer(domain, task);
      if (stateless !== undefined && stateless.solutionAnswers) return { ok: true };
      const episode = createGateEpisode(domain, task, options.cache);
      episode.reset({ seed: options.seed ?? 0 });
      let last: StepResult | undefined;
      const solution = task.spec.solution;
      for (let i = 0; i < solution.length; i++) {
        const action = solution[i]!;
        if (episode.status !== 'running') {
          return { ok: false, reason: `the reference solution's episode ended at step ${i} of ${task.spec.solution.length} before it was played out`, details: info(last) };
        }
        last = episode.step(action);
        const fault = oracleFailure(last.feedback);
        if (fault !== undefined) {
          return { ok: false, reason: `reference solution step ${i} (${describe(action)}): ${fault.code}: ${fault.message}`, details: info(last) };
        }
      }
      if (last === undefined || !last.terminated) {
        return { ok: false, reason: last?.truncated ? `the reference solution was truncated (${last.truncation})` : 'the reference solution does not end the episode (no finish, and the user is not done)', details: info(last) };
      }
      if (last.info.outcome !== 1) {
        return { ok: false, reason: 'the reference solution does not reach outcome 1', details: info(last) };
      }
      return { ok: true };
    });
}

/** The first feedback a reference solution must never earn. */
function oracleFailure(feedback: readonly Feedback[]): Feedback | undefined {
  for (let i = 0; i < feedback.length; i++) if (ORACLE_FAILURES.has(feedback[i]!.code)) return feedback[i];
  return undefined;
}

/** Options of the non-triviality gate. */
export interface NonTrivialGateOptions {
  cache?: EpisodeOptions['cache'];
  /** Also play one seeded random trajectory (default true). */
  random?: boolean;
  /** Actions of the random trajectory before it finishes (default 8, capped by the step budget). */
  randomSteps?: number;
  /** @internal false plays stateless questions too (tests compare both ways). */
  shortcut?: boolean;
}

/**
 * The non-triviality gate: the empty trajectory (just `finish`) must score outcome 0, and so must a
 * seeded random trajectory (random allowed tools with arguments drawn from the observed text, random
 * messages, then `finish`), seeded by the task id.
 */
export function createNonTrivialGate(domain: Domain<any>, options: NonTrivialGateOptions = {}): (task: Task) => GateVerdict {
  return (task) =>
    guard(task, () => {
      // In a stateless question only finish's answer can score: the empty and random trajectories
      // (messages, then finish without an answer) score 0 without being played.
      if (options.shortcut !== false && statelessAnswer(domain, task) !== undefined) return { ok: true };
      if (options.shortcut === false || options.random === false || !emptyTrajectoryFails(domain, task, options)) {
        const empty = createGateEpisode(domain, task, options.cache);
        empty.reset({ seed: 0 });
        const result = empty.step({ type: 'finish' });
        if (result.info.outcome > 0) {
          return { ok: false, reason: 'the empty trajectory (finish right away) already succeeds', details: info(result) };
        }
        if (options.random === false) return { ok: true };
      }
      const random = playRandomTrajectory(domain, task, options);
      if (random !== undefined && random.info.outcome > 0) {
        return { ok: false, reason: 'a seeded random trajectory succeeds', details: info(random) };
      }
      return { ok: true };
    });
}

/**
 * Whether the empty trajectory scores 0 without playing it: its final state is the initial one (no tool
 * runs), so a task graded on its final state whose reference solution changes that state fails it.
 * Only used when the random trajectory is played next: its reset and finish fail where the empty
 * trajectory's would (a user that cannot start), so the verdict is the same.
 */
function emptyTrajectoryFails(domain: Domain<any>, task: Task, options: NonTrivialGateOptions): boolean {
  if (task.spec.acceptance.finalState !== true) return false;
  const cache = options.cache ?? runtimeCacheFor(domain);
  // Another domain's cache: the episode reports it (CONFIG_INVALID).
  if (cache.domain !== domain) return false;
  const prepared = cache.prepare(task);
  return prepared.baseHash !== prepared.referenceHash;
}

/**
 * Both simulator gates of a domain on one runtime cache (default: the domain's shared one), in the
 * shape `generateBatch` takes as `hooks`; a hook module for worker threads exports a
 * `createGateHooks()` that returns this.
 * @example
 * // retail-hooks.ts, passed as generateBatch's hookModule
 * export const createGateHooks = () => createDomainGateHooks(retail);
 */
export function createDomainGateHooks(domain: Domain<any>, options: { cache?: EpisodeOptions['cache'] } = {}): { oracle: (task: Task) => GateVerdict; nonTrivial: (task: Task) => GateVerdict } {
  const cache = options.cache ?? runtimeCacheFor(domain);
  return { oracle: createOracleGate(domain, { cache }), nonTrivial: createNonTrivialGate(domain, { cache }) };
}

/**
 * @internal The non-triviality gate's seeded random trajectory; returns its last step, and lists the
 * actions it sent in `played` when given (tests compare it with the reference algorithm).
 */
export function playRandomTrajectory(domain: Domain<any>, task: Task, options: NonTrivialGateOptions, played?: Action[]): StepResult | undefined {
  const rng = nonTrivialRng(task.id);
  const episode = createGateEpisode(domain, task, options.cache);
  const first = episode.reset({ seed: 0 });
  const tools = first.tools ?? [];
  const words = new WordList();
  words.addText(first.text ?? '');
  const steps = Math.max(0, Math.min(options.randomSteps ?? 8, (first.budget?.steps ?? 30) - 1));
  let last: StepResult | undefined;
  for (let i = 0; i < steps && episode.status === 'running'; i++) {
    const action: Action =
      tools.length === 0 || rng.chance(0.25)
        ? { type: 'message', text: words.sorted.length > 0 ? rng.sample(words.sorted, 3).join(' ') : 'ok' }
        : randomCall(rng.pick(tools), words, rng);
    played?.push(action);
    last = episode.step(action);
    const observation = last.observation;
    if (observation.text !== undefined) words.addText(observation.text);
    if (observation.output !== undefined) words.addOutput(observation.output);
  }
  if (episode.status === 'running') last = episode.step({ type: 'finish' });
  return last;
}

type ParameterSchema = { type?: string; enum?: JsonValue[] };

// Tool specs are frozen and shared by every episode of a cache: sort each one's parameters once.
const sortedParameters = new WeakMap<ToolSpec, ReadonlyArray<readonly [string, ParameterSchema]>>();

function parametersOf(tool: ToolSpec): ReadonlyArray<readonly [string, ParameterSchema]> {
  let list = sortedParameters.get(tool);
  if (list === undefined) {
    const props = (tool.parameters['properties'] ?? {}) as Record<string, ParameterSchema>;
    list = Object.keys(props)
      .sort()
      .map((name) => [name, props[name]!] as const);
    if (Object.isFrozen(tool)) sortedParameters.set(tool, list);
  }
  return list;
}

function randomCall(tool: ToolSpec, words: WordList, rng: Rng): Action {
  const args: Record<string, JsonValue> = {};
  for (const [name, schema] of parametersOf(tool)) {
    if (Array.isArray(schema.enum) && schema.enum.length > 0) args[name] = rng.pick(schema.enum);
    else if (schema.type === 'string') args[name] = words.sorted.length > 0 ? rng.pick(words.sorted) : 'x';
    else if (schema.type === 'integer' || schema.type === 'number') {
      args[name] = words.numbers.length > 0 && rng.chance(0.5) ? Number(rng.pick(words.numbers)) : rng.int(1, 10);
    } else if (schema.type === 'boolean') args[name] = rng.chance(0.5);
  }
  return { type: 'tool', tool: tool.name, args };
}

const WORD = /[A-Za-z0-9][A-Za-z0-9_@.-]*[A-Za-z0-9]|[0-9]+/g;

/** [A-Za-z0-9] */
function isAlnum(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}

/** The other characters WORD allows inside a word: _ @ . - */
function isWordPunct(c: number): boolean {
  return c === 0x5f || c === 0x40 || c === 0x2e || c === 0x2d;
}
const NUMBER = /^[0-9]+$/;
const MAX_WORDS = 500;

/**
 * @internal The first 500 distinct words the agent has seen, in default sort order (as `[...set].sort()` would
 * order them). New words wait unsorted until the list is read, then are sorted and merged in at once:
 * a step costs O(new words log new words) rather than a sorted insertion per word. The words of a
 * memoised tool output come sorted already (sorted once per output): they are merged, not sorted.
 */
export class WordList {
  private readonly seen = new Set<string>();
  private all: string[] = [];
  private digits: string[] = [];
  private pending: string[] = [];
  /** Sorted runs of new words (from memoised outputs), merged in at the next read. */
  private runs: string[][] = [];

  /** Every word, in default sort order (UTF-16 code units). */
  get sorted(): readonly string[] {
    this.flush();
    return this.all;
  }

  /** The all-digit words, in the same order. */
  get numbers(): readonly string[] {
    this.flush();
    return this.digits;
  }

  addText(text: string): void {
    // A hand-written scan for WORD (no match arrays, no backtracking): stops as soon as the list is full.
    const n = text.length;
    let i = 0;
    while (i < n && this.seen.size < MAX_WORDS) {
      const c = text.charCodeAt(i);
      if (!isAlnum(c)) {
        i++;
        continue;
      }
      // WORD's first branch: the longest run of word characters from here, cut back to its last letter or digit.
      let end = i;
      let j = i + 1;
      while (j < n) {
        const d = text.charCodeAt(j);
        if (isAlnum(d)) end = j;
        else if (!isWordPunct(d)) break;
        j++;
      }
      if (end > i) {
        this.add(text.slice(i, end + 1));
        i = end + 1;
      } else if (c <= 0x39) {
        // The second branch, [0-9]+: a lone digit (a following digit would have matched the first).
        this.add(text[i]!);
        i++;
      } else i++;
    }
  }

  /** The words of `JSON.stringify(output)`, as `addText` would add them. */
  addOutput(output: JsonValue): void {
    if (output === null || typeof output !== 'object' || !Object.isFrozen(output)) {
      const text = JSON.stringify(output);
      if (text.length < MEMO_TEXT_MIN) {
        this.addText(text);
        return;
      }
      // A long output built afresh by each call (a listing) is often the same text: scan it once.
      let words = textWords.get(text);
      if (words === undefined) {
        words = wordsOf(text);
        if (textWords.size >= MEMO_TEXTS_MAX) textWords.delete(textWords.keys().next().value!);
        textWords.set(text, words);
      }
      this.addAll(words);
      return;
    }
    // A frozen output is a record shared by every episode on its world (a read tool's answer): its
    // distinct words are scanned (and sorted) once. Adding them adds what a scan of its text would:
    // repeats of a word change nothing.
    let words = outputWords.get(output);
    if (words === undefined) {
      words = wordsOf(JSON.stringify(output));
      outputWords.set(output, words);
    }
    this.addAll(words);
  }

  /** Adds the distinct words of a text: what scanning it adds (repeats change nothing). */
  private addAll(words: TextWords): void {
    const distinct = words.distinct;
    if (this.seen.size + distinct.length > MAX_WORDS) {
      // The list fills up within these words: the first ones in order of appearance get in.
      for (let i = 0; i < distinct.length && this.seen.size < MAX_WORDS; i++) this.add(distinct[i]!);
      return;
    }
    // All of them get in: take the unseen ones from the sorted copy, a run to merge rather than sort.
    const sorted = words.sorted;
    const fresh: string[] = [];
    for (let i = 0; i < sorted.length; i++) {
      const w = sorted[i]!;
      if (this.seen.has(w)) continue;
      this.seen.add(w);
      fresh.push(w);
    }
    if (fresh.length > 0) this.runs.push(fresh);
  }

  private add(w: string): void {
    if (this.seen.has(w)) return;
    this.seen.add(w);
    this.pending.push(w);
  }

  private flush(): void {
    if (this.pending.length === 0 && this.runs.length === 0) return;
    let fresh = this.pending.length === 0 ? [] : sortWords(this.pending);
    this.pending = [];
    for (const run of this.runs) fresh = mergeSorted(fresh, run);
    this.runs = [];
    this.all = mergeSorted(this.all, fresh);
    const numbers = fresh.filter((w) => NUMBER.test(w));
    if (numbers.length > 0) this.digits = mergeSorted(this.digits, numbers);
  }
}

/** The distinct words of a text, in order of first appearance and sorted. */
interface TextWords {
  readonly distinct: readonly string[];
  readonly sorted: readonly string[];
}

/** Distinct words of frozen tool outputs (see `WordList.addOutput`), dropped with the output. */
const outputWords = new WeakMap<object, TextWords>();

/** Distinct words of long unfrozen outputs by their JSON text (the oldest dropped first): a pure function's memo. */
const textWords = new Map<string, TextWords>();
const MEMO_TEXT_MIN = 256;
const MEMO_TEXTS_MAX = 64;

/** The distinct words of a text (WORD's matches) in order of first appearance, and sorted. */
function wordsOf(text: string): TextWords {
  const distinct = [...new Set(text.match(WORD) ?? [])];
  return { distinct, sorted: [...distinct].sort() };
}

/**
 * Sorts distinct words in place in default sort order (UTF-16 code units, what `sort()` gives strings):
 * by insertion when there are few (a step adds a handful; cheaper than the built-in sort's calls), else
 * with the built-in sort.
 */
function sortWords(words: string[]): string[] {
  if (words.length > 32) return words.sort();
  for (let i = 1; i < words.length; i++) {
    const w = words[i]!;
    let j = i - 1;
    while (j >= 0 && words[j]! > w) {
      words[j + 1] = words[j]!;
      j--;
    }
    words[j + 1] = w;
  }
  return words;
}

/** Two sorted lists of distinct words, merged (no word is in both). */
function mergeSorted(a: readonly string[], b: readonly string[]): string[] {
  if (a.length === 0) return b as string[];
  const out = new Array<string>(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) out[k++] = a[i]! < b[j]! ? a[i++]! : b[j++]!;
  while (i < a.length) out[k++] = a[i++]!;
  while (j < b.length) out[k++] = b[j++]!;
  return out;
}

/**
 * When a task is a stateless question (no tools, user, policy rules or domain checks; no initial state;
 * graded on the answer alone; solved by one `finish` with an answer) its episodes reduce to the answer
 * check: returns whether the reference answer passes it, as the episode's grading would compute it.
 * Undefined for every other task (those are played).
 */
function statelessAnswer(domain: Domain<any>, task: Task): { solutionAnswers: boolean } | undefined {
  const spec = task.spec;
  const acceptance = spec.acceptance;
  if (domain.tools.length > 0 || domain.createUser !== undefined || (domain.policy?.rules.length ?? 0) > 0 || (domain.acceptance?.length ?? 0) > 0) return undefined;
  if (spec.initialState !== null || acceptance.finalState || acceptance.answer === undefined) return undefined;
  if ((acceptance.outputs?.length ?? 0) > 0 || (acceptance.ordering?.length ?? 0) > 0) return undefined;
  if (spec.solution.length !== 1 || !((spec.budget.steps ?? 1) >= 1)) return undefined;
  const only = spec.solution[0]!;
  if (only.type !== 'finish') return undefined;
  const normalize = domain.normalizeOutput ?? normalizeOutput;
  const answer = only.answer;
  return { solutionAnswers: answer !== undefined && normalize(answer).trim() === normalize(acceptance.answer).trim() };
}

function guard(task: Task, run: () => GateVerdict): GateVerdict {
  try {
    return run();
  } catch (error) {
    const e = toEnvHarnessError(error);
    if (isEnvHarnessError(e, 'TASK_INVALID') || isEnvHarnessError(e, 'INTERNAL')) {
      return { ok: false, reason: `task ${task.id} cannot be played: ${e.message}`, details: { code: e.code } };
    }
    throw e;
  }
}

function info(result: StepResult | undefined): JsonValue {
  if (result === undefined) return null;
  return { step: result.info.step, outcome: result.info.outcome, endReason: result.info.endReason ?? null, acceptance: result.info['acceptance'] ?? null };
}

function describe(action: Action): string {
  return action.type === 'tool' ? `tool ${action.tool}` : action.type;
}
