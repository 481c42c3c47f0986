/**
 * Skill sets: how the learner sees a domain. A skill set turns observations into a small abstract state
 * and offers slot-filled macros (e.g. "call checkout_book with the member id the last lookup returned")
 * as the learner's actions. It holds no knowledge of any task's solution: slots are filled from what the
 * agent has observed.
 */
import type { Action, JsonValue, Observation, StepResult, ToolSpec } from '../core/index.js';
import { isFaultError } from './faults.js';
import { flattenJson } from './words.js';

/** One episode's view of the world through a skill set. */
export interface SkillTracker {
  /** The abstract dialogue state: a short, stable string (the learner's table key). */
  state(): string;
  /** The macros that can be slot-filled now, in a stable order. Never empty: `finish` is always there. */
  options(): readonly string[];
  /** The concrete action a macro stands for, right now. */
  expand(macro: string): Action;
  /** Updates the slots from the result of the action `expand(macro)` gave. */
  observe(macro: string, action: Action, result: StepResult): void;
}

/** A family of macros and state features for a domain. */
export interface SkillSet {
  /** `name@version`: recorded with the learner's state, since tables are only valid for one version. */
  readonly id: string;
  /** Whether this skill set understands `domain` (the learner uses the first that does). */
  handles(domain: string): boolean;
  /** Starts an episode from the reset observation. */
  start(reset: Observation): SkillTracker;
}

type Schema = { type?: unknown; enum?: unknown; items?: unknown; properties?: unknown; required?: unknown; description?: unknown; pattern?: unknown };

/**
 * Where an argument's value comes from, one letter each (a macro's name lists one per required argument):
 * `o` a tool output's field of the same name (the most relevant object, then the most recent),
 * `n` the value the user gave right after the argument's name ("my card is C-4821"),
 * `i` the latest identifier the user said, `q` the latest quoted phrase, `d` the latest number,
 * `e` the enum value the user mentioned, `t` true.
 */
type Source = 'o' | 'n' | 'i' | 'q' | 'd' | 'e' | 't';
const SOURCES: readonly Source[] = ['o', 'n', 'i', 'q', 'd', 'e', 't'];

/** A value seen in a tool's output: the words of the object holding it, and when (the call's order). */
interface Seen {
  value: JsonValue;
  words: readonly string[];
  order: number;
  /** Share of `words` the user has said, as of `heard` words heard (recomputed when the user says more). */
  relevance: number;
  heard: number;
}

const GENERIC_WORDS = new Set(['get', 'set', 'list', 'find', 'all', 'the', 'and', 'for', 'with', 'item', 'items', 'details', 'info', 'by']);
const IDENT = /[A-Za-z0-9#][A-Za-z0-9_@.#-]*[A-Za-z0-9]/g;
const WORDS = /[a-z0-9]+/g;
const MAX_SEEN = 2000;

/**
 * The generic skill set: it learns any domain from the declared tool schemas, the observations, the tool
 * outputs it has seen and the user's messages, with no domain code. Macros: one per tool and way of filling
 * its required arguments (see `Source`), ask the user for an argument no one has given, tell the last
 * result, ask for confirmation, close, retry after a fault, finish, and finish with an answer built from
 * the question (a number it saw, the signed sum of its numbers, or how often one quoted string occurs in
 * another) or read from the last output (a field the user asked about by name). Only the writes the user
 * named are offered (when they named any), and a loose value must fit the schema's pattern and example.
 * State: the tool-name words the user said (or, with no tools, the question's first two words),
 * the tools that succeeded in order, how the last step went (error code or fault), the non-empty fields of
 * each tool's latest output, and whether confirmation was asked and the result told.
 */
export const genericSkills: SkillSet = {
  id: 'generic@3',
  handles: () => true,
  start: (reset) => new GenericTracker(reset),
};

class GenericTracker implements SkillTracker {
  private readonly tools: readonly ToolSpec[];
  private readonly cue: string;
  private userText = '';
  private userWords = new Set<string>();
  private readonly userStems = new Set<string>();
  /** Values seen in outputs, by field name (and by the `<thing>_id` an `id` field stands for inside a `<things>` map). */
  private readonly seen = new Map<string, Seen[]>();
  private seenCount = 0;
  /** Non-empty top-level fields of each tool's latest successful output. */
  private readonly facts = new Map<string, string[]>();
  private readonly succeeded: string[] = [];
  private last = 'start';
  private lastOutput: JsonValue | undefined;
  private lastCall: Action | undefined;
  private readonly asks = new Map<string, number>();
  private asked = false;
  private told = false;
  /** Calls that succeeded, and calls that failed since the last successful write (canonical JSON): not offered again. */
  private readonly done = new Set<string>();
  private readonly failed = new Set<string>();
  private calls = 0;
  private cache: Map<string, Action> | undefined;
  /** The refused write just proposed to the user, if the last step proposed one. */
  private proposed: Action | undefined;
  /** Required arguments that a tool output can fill now (part of the state). */
  private slots = new Set<string>();

  /** Per tool, the words of its name that at most one other tool's name shares: the words that name it. */
  private readonly naming = new Map<string, readonly string[]>();
  /** Tools whose name says they produce what another tool takes (`find_member` → `member_id`): asking for their arguments is worth it. */
  private readonly producers = new Set<string>();
  /** Per tool, optional arguments that a refusal said are needed. */
  private readonly needed = new Map<string, Set<string>>();

  constructor(reset: Observation) {
    this.tools = [...(reset.tools ?? [])].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const wordsOf = (name: string): string[] => name.split('_').filter((w) => w.length >= 3 && !GENERIC_WORDS.has(w));
    // What names a tool: the words of its name and of its description's first clause ("Deletes an item from the catalogue").
    const namingWords = (tool: ToolSpec): Set<string> =>
      new Set([...wordsOf(tool.name), ...((tool.description ?? '').split(/[.;:,(]/)[0]!.toLowerCase().match(/[a-z]+/g) ?? [])].filter((w) => w.length >= 3 && !GENERIC_WORDS.has(w)).map(stem));
    const frequency = new Map<string, number>();
    for (const tool of this.tools) for (const w of namingWords(tool)) frequency.set(w, (frequency.get(w) ?? 0) + 1);
    for (const tool of this.tools) {
      this.naming.set(tool.name, [...namingWords(tool)].filter((w) => frequency.get(w)! <= 2));
      const others = this.tools.filter((t) => t !== tool).flatMap((t) => (Array.isArray(t.parameters['required']) ? (t.parameters['required'] as string[]) : []));
      if (wordsOf(tool.name).some((w) => others.some((arg) => arg.split('_').includes(w)))) this.producers.add(tool.name);
    }
    this.hear(reset.text ?? '');
    const said = this.userWords;
    if (this.tools.length === 0) {
      this.cue = (reset.text ?? '').toLowerCase().match(/[a-z]+/g)?.slice(0, 2).join('_') ?? '';
    } else {
      const words = new Set<string>();
      for (const tool of this.tools) for (const w of tool.name.split('_')) if (w.length >= 3 && !GENERIC_WORDS.has(w) && said.has(w)) words.add(w);
      this.cue = [...words].sort().join('+');
    }
  }

  state(): string {
    this.macros();
    const facts = [...new Set([...this.facts.values()].flat())].sort().join(',');
    // Not which tools ran (reads that led nowhere would multiply the states), but what they made possible:
    // the arguments now fillable from outputs, and the writes done.
    const writes = this.succeeded.filter((t) => this.tools.find((x) => x.name === t)?.effect === 'write').sort();
    return `${this.cue}|${writes.join('+')}|${[...this.slots].sort().join('+')}|${this.last}|${facts}|${this.asked ? 1 : 0}${this.told ? 1 : 0}`;
  }

  options(): readonly string[] {
    return [...this.macros().keys()];
  }

  expand(macro: string): Action {
    return this.macros().get(macro) ?? { type: 'finish' };
  }

  observe(macro: string, action: Action, result: StepResult): void {
    this.cache = undefined;
    // Right after proposing a refused write, the choice is to make it (`do`) or not.
    this.proposed = macro === 'confirm' ? this.refusedWrite() : undefined;
    if (macro.startsWith('ask:')) this.asks.set(macro.slice(4), (this.asks.get(macro.slice(4)) ?? 0) + 1);
    const obs = result.observation;
    if (action.type === 'tool') {
      this.lastCall = action;
      const key = JSON.stringify(action);
      if (obs.error === undefined) {
        this.done.add(key);
        if (this.tools.find((t) => t.name === action.tool)?.effect === 'write') this.failed.clear();
        if (!this.succeeded.includes(action.tool)) this.succeeded.push(action.tool);
        this.lastOutput = obs.output;
        this.remember(action.tool, obs.output ?? null);
        this.last = 'ok';
        this.told = false;
        this.asked = false;
      } else {
        this.last = isFaultError(obs) ? 'fault' : `e:${obs.error.code}`;
        if (!isFaultError(obs)) this.failed.add(key);
        // An optional argument the refusal names (by pointer, or by name in its message) is needed after all.
        const props = this.tools.find((t) => t.name === action.tool)?.parameters['properties'] as Record<string, unknown> | undefined;
        const pointed = obs.error.pointer?.match(/^\/(?:args\/)?([^/]+)$/)?.[1];
        for (const prop of Object.keys(props ?? {})) {
          if (Object.hasOwn(action.args, prop) || !(prop === pointed || new RegExp(`\\b${prop}\\b`).test(obs.error.message))) continue;
          const set = this.needed.get(action.tool) ?? new Set<string>();
          this.needed.set(action.tool, set.add(prop));
        }
        // A refused write may need a (new) confirmation that names it.
        if (this.tools.find((t) => t.name === action.tool)?.effect === 'write') this.asked = false;
      }
    } else if (action.type === 'message') {
      this.last = 'said';
      // What the user says can lift a refusal (a confirmation, a missing detail): refused calls may be tried again.
      this.failed.clear();
      if (action.text.startsWith('Here is')) this.told = true;
      if (action.text.includes('confirm')) this.asked = true;
      this.hear(obs.text ?? '');
    }
  }

  /** Every macro that can be filled now, by name, in a stable order (duplicates of an earlier action dropped). */
  private macros(): Map<string, Action> {
    if (this.cache !== undefined) return this.cache;
    const out = new Map<string, Action>();
    if (this.proposed !== undefined) {
      out.set('do', this.proposed);
      out.set('close', { type: 'message', text: 'Is there anything else I can help you with?' });
      out.set('finish', { type: 'finish' });
      this.cache = out;
      return out;
    }
    const concrete = new Set<string>();
    const missing = new Set<string>();
    this.slots = new Set();
    let writable = false;
    // A write the user asked for by name is the only kind on offer, unless they named none (in other words).
    const named = (tool: ToolSpec): boolean => this.naming.get(tool.name)!.some((w) => this.userStems.has(w));
    const anyWriteNamed = this.tools.some((t) => t.effect === 'write' && named(t));
    for (const tool of this.tools) {
      const isNamed = named(tool);
      if (tool.effect === 'write' && anyWriteNamed && !isNamed) continue;
      // A read that takes nothing (a whole catalogue) only when the user named it.
      if (!isNamed && (!Array.isArray(tool.parameters['required']) || (tool.parameters['required'] as unknown[]).length === 0)) continue;
      const props = (tool.parameters['properties'] ?? {}) as Record<string, Schema>;
      const declared = Array.isArray(tool.parameters['required']) ? (tool.parameters['required'] as string[]) : [];
      // An optional argument a refusal named ("customer_id is required") is required from then on.
      const required = [...declared, ...[...(this.needed.get(tool.name) ?? [])].filter((a) => !declared.includes(a))];
      let combos: Array<{ name: string; args: Record<string, JsonValue> }> = [{ name: '', args: {} }];
      const unsure: string[] = [];
      for (const arg of required) {
        let options = SOURCES.flatMap((s) => {
          // A loose identifier for an argument with no example to check it against, only for a tool the user named.
          if (s === 'i' && !isNamed && exampleShape(props[arg]?.description) === undefined) return [];
          const v = this.fillOf(tool.name, arg, props[arg] ?? {}, s);
          return v === undefined ? [] : [{ s, v }];
        });
        if (options.some((o) => o.s === 'o')) this.slots.add(arg);
        // A value read from an output or given by name beats a guess among the user's loose words.
        // (A number the user said stays on offer next to one read from an output: "add 5 units" vs the stock it returned.)
        const sure = options.filter((o) => o.s === 'n' || o.s === 'o' || o.s === 'e' || o.s === 't');
        if (sure.length > 0) options = options.filter((o) => sure.includes(o) || o.s === 'd');
        else unsure.push(arg);
        combos = combos.flatMap((c) => options.map((o) => ({ name: c.name + o.s, args: { ...c.args, [arg]: o.v } })));
        if (combos.length > 16) combos = combos.slice(0, 16);
      }
      // Ask for an argument only when it is the one thing a call lacks; guess at most one argument from loose words.
      // ... and only what a user could know: an argument with an example, or one of a tool named or producing another's input.
      if (unsure.length === 1 && (isNamed || this.producers.has(tool.name) || exampleShape(props[unsure[0]!]?.description) !== undefined)) missing.add(unsure[0]!);
      if (unsure.length > 1) continue;
      for (const c of combos) {
        const action: Action = { type: 'tool', tool: tool.name, args: c.args };
        const key = JSON.stringify(action);
        if (concrete.has(key) || this.done.has(key) || this.failed.has(key)) continue;
        concrete.add(key);
        if (tool.effect === 'write') writable = true;
        out.set(c.name === '' ? `call:${tool.name}` : `call:${tool.name}:${c.name}`, action);
      }
    }
    for (const arg of [...missing].sort()) {
      if ((this.asks.get(arg) ?? 0) < 2) out.set(`ask:${arg}`, { type: 'message', text: `Could you tell me your ${arg.replace(/_/g, ' ')}?` });
    }
    if (this.lastOutput !== undefined && !this.told) out.set('tell', { type: 'message', text: `Here is what I found: ${flattenJson(this.lastOutput)}.` });
    if ((writable || this.refusedWrite() !== undefined) && !this.asked) out.set('confirm', { type: 'message', text: `${this.proposal()}Do you confirm?` });
    out.set('close', { type: 'message', text: 'Is there anything else I can help you with?' });
    if (this.last === 'fault' && this.lastCall !== undefined) out.set('retry', this.lastCall);
    // Answers only where there is nothing to change: a world with write tools is graded on its state.
    if (!this.tools.some((t) => t.effect === 'write')) for (const [name, answer] of this.answers()) out.set(`answer:${name}`, { type: 'finish', answer });
    // An answer read from the last output: a field the user asked about by name ("what is the status of ...").
    for (const [field, value] of this.askedFields()) out.set(`answer:field:${field}`, { type: 'finish', answer: value });
    out.set('finish', { type: 'finish' });
    this.cache = out;
    return out;
  }

  /** The refused write the confirmation is about, in words ("I can cancel pending order with order id #W1, reason no longer needed. "), or a generic line. */
  private refusedWrite(): (Action & { type: 'tool' }) | undefined {
    const call = this.lastCall;
    if (call?.type !== 'tool' || !this.last.startsWith('e:') || this.tools.find((t) => t.name === call.tool)?.effect !== 'write') return undefined;
    return call;
  }

  private proposal(): string {
    const call = this.refusedWrite();
    if (call === undefined) return 'I am about to make this change. ';
    const args = Object.entries(call.args).map(([k, v]) => `${k.replace(/_/g, ' ')} ${Array.isArray(v) ? v.join(', ') : String(v)}`);
    return `I can ${call.tool.replace(/_/g, ' ')} with ${args.join(', ')}. Shall I go ahead? `;
  }

  /** Scalar fields of the last output (or of its only list element) whose name the user said, with their values as text. */
  private askedFields(): Array<[string, string]> {
    let record = this.lastOutput;
    if (record !== null && typeof record === 'object' && !Array.isArray(record)) {
      const lists = Object.values(record).filter((v) => Array.isArray(v));
      if (lists.length === 1 && (lists[0] as JsonValue[]).length === 1) record = (lists[0] as JsonValue[])[0]!;
    }
    if (record === null || typeof record !== 'object' || Array.isArray(record)) return [];
    const out: Array<[string, string]> = [];
    for (const key of Object.keys(record).sort()) {
      const value = record[key]!;
      if (value === null || typeof value === 'object') continue;
      const words = key.split('_').filter((w) => w !== 'id' && w.length >= 3);
      if (words.length > 0 && words.every((w) => this.userWords.has(w))) out.push([key, String(value)]);
    }
    return out;
  }

  /** Answers built from what was said: the last number, the signed sum of the numbers, how often one quoted string occurs in another. */
  private answers(): Array<[string, string]> {
    const out: Array<[string, string]> = [];
    const terms = [...this.userText.matchAll(/(?:([+-])\s+)?((?<![\w.-])-?\d+(?:\.\d+)?)(?![\w.-])/g)].map((m) => (m[1] === '-' ? -1 : 1) * Number(m[2]));
    if (terms.length > 0) out.push(['last', String(terms[terms.length - 1])]);
    if (terms.length >= 2) out.push(['sum', String(terms.reduce((a, b) => a + b, 0))]);
    const quoted = [...this.userText.matchAll(/"([^"]+)"/g)].map((m) => m[1]!);
    if (quoted.length >= 2) {
      const sorted = [...quoted].sort((a, b) => a.length - b.length);
      const needle = sorted[0]!;
      const hay = sorted[sorted.length - 1]!;
      out.push(['count', String(hay.split(needle).length - 1)]);
    }
    return out;
  }

  private hear(text: string): void {
    this.fromText.clear();
    this.idents = undefined;
    if (this.userText.length < 20_000) this.userText += ` ${text}`;
    for (const w of text.toLowerCase().match(WORDS) ?? []) {
      this.userWords.add(w);
      this.userStems.add(stem(w));
    }
  }

  /** Records the fields of a tool's output (values to copy later, and the non-empty ones as state facts). */
  private remember(tool: string, output: JsonValue): void {
    this.fromSeen.clear();
    const order = this.calls++;
    const facts: string[] = [];
    if (output !== null && typeof output === 'object' && !Array.isArray(output)) {
      for (const key of Object.keys(output).sort()) {
        const v = output[key]!;
        if (v === true || (typeof v === 'number' && v !== 0) || (Array.isArray(v) && v.length > 0)) facts.push(key);
        else if (typeof v === 'string' && /^[a-z]{2,12}$/.test(v)) facts.push(`${key}=${v}`);
      }
    } else if (Array.isArray(output)) facts.push(output.length === 0 ? `${tool}:0` : output.length === 1 ? `${tool}:1` : `${tool}:n`);
    this.facts.set(tool, facts);
    // A bare value is named by what the tool's name says it returns: find_user_id_by_email → "user_id".
    const named = tool.replace(/_by_.*$/, '').replace(/^[a-z]+_(?=[a-z])/, '');
    const walk = (value: JsonValue, key: string, holder: readonly string[], container: string | undefined): void => {
      if (this.seenCount >= MAX_SEEN) return;
      if (Array.isArray(value)) for (const v of value) walk(v, key, holder, container);
      else if (value !== null && typeof value === 'object') {
        const words = Object.values(value).flatMap((v) => (typeof v === 'string' ? v.toLowerCase().match(WORDS) ?? [] : []));
        // The nearest plural key above names what this object is: `payment_methods: { x: { id } }` → `payment_method_id`.
        const inner = key.endsWith('s') && key.length > 3 ? key.slice(0, -1) : container;
        for (const k of Object.keys(value)) walk(value[k]!, k, words, inner);
      } else {
        const entry: Seen = { value, words: holder, order, relevance: 0, heard: -1 };
        this.index(key, entry);
        if (key === 'id' && container !== undefined) this.index(`${container}_id`, entry);
      }
    };
    walk(output, named, [], undefined);
  }

  private index(key: string, entry: Seen): void {
    this.seenCount++;
    const list = this.seen.get(key);
    if (list === undefined) this.seen.set(key, [entry]);
    else list.push(entry);
  }

  /** `fill`'s answers from outputs since a tool last answered, and from words since the user last spoke (they depend on nothing else). */
  private readonly fromSeen = new Map<string, JsonValue | undefined>();
  private readonly fromText = new Map<string, JsonValue | undefined>();
  /** The identifier-like tokens the user said, latest first (computed once per message). */
  private idents: string[] | undefined;

  /** A value for `arg` of `tool` from one source, or undefined (memoised until something new is heard or seen). */
  private fillOf(tool: string, arg: string, schema: Schema, source: Source): JsonValue | undefined {
    const memo = source === 'o' ? this.fromSeen : this.fromText;
    const key = `${tool}\u0000${arg}\u0000${source}`;
    if (memo.has(key)) return memo.get(key);
    const value = this.fill(arg, schema, source);
    memo.set(key, value);
    return value;
  }

  /** A value for `arg` from one source, or undefined. */
  private fill(arg: string, schema: Schema, source: Source): JsonValue | undefined {
    const type = schema.type;
    if (Array.isArray(schema.enum) && schema.enum.length > 0) {
      if (source !== 'e') return undefined;
      const text = this.userText.toLowerCase();
      let best: JsonValue | undefined;
      let at = -1;
      for (const v of schema.enum as JsonValue[]) {
        const i = typeof v === 'string' ? text.lastIndexOf(v.toLowerCase()) : -1;
        if (i > at) [best, at] = [v, i];
      }
      return best;
    }
    if (type === 'array') {
      const item = this.fill(arg.replace(/s$/, ''), (schema.items ?? {}) as Schema, source);
      return item === undefined ? undefined : [item];
    }
    if (type === 'boolean') return source === 't' ? true : undefined;
    const numeric = type === 'integer' || type === 'number';
    if (type !== 'string' && !numeric) return undefined;
    const fits = (v: JsonValue): boolean => (numeric ? typeof v === 'number' && (type === 'number' || Number.isInteger(v)) : typeof v === 'string');
    switch (source) {
      case 'o':
        return this.fromOutputs(arg, fits, !numeric && !/(^|_)ids?$/.test(arg));
      case 'n': {
        const value = this.named(arg, numeric);
        // "my order for ..." names no order: with an example in the schema, the value must have its shape.
        const shape = numeric ? undefined : exampleShape(schema.description);
        const pattern = patternOf(schema.pattern);
        if (pattern !== undefined && typeof value === 'string' && !pattern.test(value)) return undefined;
        return shape === undefined || (typeof value === 'string' && shapeOf(value) === shape) ? value : undefined;
      }
      case 'i': {
        if (numeric) return undefined;
        // With an example in the schema ("e.g. '#W0000000'"), only a token of the same shape will do.
        const shape = exampleShape(schema.description);
        this.idents ??= [...(this.userText.match(IDENT) ?? [])].reverse().filter((w) => /[0-9@_#-]/.test(w) && !/^[0-9]+$/.test(w));
        const pattern = patternOf(schema.pattern);
        return this.idents.find((w) => (shape === undefined || shapeOf(w) === shape) && (pattern === undefined || pattern.test(w)));
      }
      case 'q':
        if (numeric) return undefined;
        return [...this.userText.matchAll(/"([^"]+)"/g)].map((m) => m[1]!).pop();
      case 'd': {
        if (!numeric) return undefined;
        // A number on its own, not part of an identifier ("lever-4") or a date.
        const n = this.userText.match(/(?<![\w.-])[0-9]{1,9}(?![\w-]|\.\d)/g)?.pop();
        return n === undefined ? undefined : Number(n);
      }
      default:
        return undefined;
    }
  }

  /**
   * The output value whose field matches `arg`, from the object most like what the user said, then the most
   * recent. A descriptive value (a string argument that is not an id: a city, a street) is copied only from
   * an object the user spoke about, so that a write is not filled with the record's current values.
   */
  private fromOutputs(arg: string, fits: (v: JsonValue) => boolean, descriptive: boolean): JsonValue | undefined {
    const stem = arg.replace(/_ids?$/, '');
    let best: Seen | undefined;
    let score = descriptive ? 0 : -1;
    const heard = this.userWords.size;
    for (const key of new Set([arg, `${stem}s`, `${arg}s`])) {
      for (const s of this.seen.get(key) ?? []) {
        if (!fits(s.value)) continue;
        if (s.heard !== heard) {
          s.relevance = s.words.length === 0 ? 0 : s.words.filter((w) => this.userWords.has(w)).length / s.words.length;
          s.heard = heard;
        }
        if (s.relevance > score || (s.relevance === score && best !== undefined && s.order > best.order)) [best, score] = [s, s.relevance];
      }
    }
    return best?.value;
  }

  /** The value the user gave right after naming the argument ("card is C-4821", "zip code 19122"). */
  private named(arg: string, numeric: boolean): JsonValue | undefined {
    const name = arg.replace(/_ids?$/, '').split('_').filter((w) => w.length > 0).join('[ _]+');
    if (name.length === 0) return undefined;
    const value = numeric ? '(-?[0-9]+(?:\\.[0-9]+)?)' : '("[^"]+"|[A-Za-z0-9#][A-Za-z0-9_@.#-]*[A-Za-z0-9])';
    const re = new RegExp(`\\b${name}\\b(?:\\s+(?:is|was|number|code|id|of|:))*\\s*:?\\s+${value}`, 'gi');
    let found: string | undefined;
    for (const m of this.userText.matchAll(re)) found = m[1];
    if (found === undefined) return undefined;
    if (numeric) return Number(found);
    return found.startsWith('"') ? found.slice(1, -1) : found;
  }
}

/** The shape of the first example a schema description gives ("e.g. 'someone@example.com'"), or undefined. */
function exampleShape(description: unknown): string | undefined {
  if (typeof description !== 'string') return undefined;
  const m = description.match(/e\.g\.,?\s*['"]([^'"\s]+)['"]/);
  // Only a one-token example is a shape to match ("e.g. '#W0000000'"), not a phrase ("e.g. '(19.99 + 5) * 3'").
  return m === null ? undefined : shapeOf(m[1]!);
}

/** A token's shape: its first character's class and the set of punctuation in it ("#W123" → "#:#", "a.b@c.d" → "a:.@"). */
function shapeOf(token: string): string {
  const first = token[0]!;
  const head = /[0-9]/.test(first) ? '9' : /[A-Za-z]/.test(first) ? 'a' : first;
  return `${head}:${[...new Set(token.replace(/[A-Za-z0-9]/g, ''))].sort().join('')}`;
}

/** A word without a plural or third-person `s` ("deletes" → "delete", "items" → "item"). */
function stem(word: string): string {
  return word.length > 4 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word;
}

/** The schema's declared `pattern` as a RegExp (an invalid one is ignored). */
function patternOf(pattern: unknown): RegExp | undefined {
  if (typeof pattern !== 'string') return undefined;
  try {
    return new RegExp(pattern, 'u');
  } catch {
    return undefined;
  }
}
