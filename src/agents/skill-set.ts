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

/** An object seen in a tool's output: the words of its strings (its own and its nested ones'), scored against what the user said. */
interface Holder {
  words: readonly string[];
  /** Sum over the user's words in `words` of 1 / (objects seen holding that word): words every record shares count little. */
  score: number;
  /** Share of `words` the user has said (the tie-breaker: "The Silent River", not "The Silent River Returns"). */
  share: number;
  /** `heard` words and `objects` objects seen when the scores were computed. */
  stamp: number;
}

/** A value seen in a tool's output: the object holding it, when (the call's order), and whether it ended a list. */
interface Seen {
  value: JsonValue;
  holder: Holder;
  order: number;
  /** Whether it is an element of a list (`orders: ['#W1', '#W2']`), and the list's last one. */
  listed: boolean;
  last: boolean;
  /** The objects it is nested in, innermost first (its holder and the holder's ancestors). */
  within: readonly Holder[];
}

const GENERIC_WORDS = new Set(['get', 'set', 'list', 'find', 'all', 'the', 'and', 'for', 'with', 'item', 'items', 'details', 'info', 'by']);
const IDENT = /[A-Za-z0-9#][A-Za-z0-9_@.#-]*[A-Za-z0-9]/g;
const WORDS = /[a-z0-9]+/g;
const MAX_SEEN = 2000;
const MAX_WORDS = 200;
/** Words that pick a list's last element when they come just before the argument's noun ("my most recent order"). */
const RECENT = 'last|latest|newest|most\\s+recent|recent';

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
  id: 'generic@4',
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
  /** How many seen objects hold each word, and how many objects were seen (for `Holder.score`). */
  private readonly holding = new Map<string, number>();
  private objects = 0;
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
  private readonly doneCalls: Array<Action & { type: 'tool' }> = [];
  /** `tool\0arg` of reads already called with every value the outputs offer for that argument (cleared with `fromSeen`). */
  private readonly exhausted = new Set<string>();
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
  /** Per producer, the id arguments of other tools its name says it makes (`find_user_id_by_email` → `user_id`). */
  private readonly produces = new Map<string, readonly string[]>();
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
      const made = others.filter((arg) => wordsOf(tool.name).some((w) => arg.split('_').includes(w)) && /_id$/.test(arg));
      if (wordsOf(tool.name).some((w) => others.some((arg) => arg.split('_').includes(w)))) this.producers.add(tool.name);
      this.produces.set(tool.name, [...new Set(made)]);
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
        this.doneCalls.push(action);
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
    /** Arguments worth asking for, with the tool that lacks them. */
    const missing = new Map<string, string>();
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
          const v = this.fillOf(tool, arg, props[arg] ?? {}, s);
          return v === undefined ? [] : [{ s, v }];
        });
        // Only ids are slots (state features): a city or a zip read from a record says nothing about what to do next.
        const spent = this.exhausted.has(`${tool.name}\u0000${arg}`);
        if ((spent || options.some((o) => o.s === 'o')) && /(^|_)ids?$/.test(arg)) this.slots.add(arg);
        // A read already made with every value the outputs offer: nothing new to look up (and nothing to ask).
        if (spent) {
          combos = [];
          unsure.length = 0;
          break;
        }
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
      if (unsure.length === 1 && (isNamed || this.producers.has(tool.name) || exampleShape(props[unsure[0]!]?.description) !== undefined)) missing.set(unsure[0]!, tool.name);
      // Several facts a user could know (each with an example: a first name, a last name, a zip) are asked for in one question.
      if (unsure.length > 1 && unsure.length <= 3 && (isNamed || this.producers.has(tool.name)) && unsure.every((a) => exampleShape(props[a]?.description) !== undefined)) missing.set(unsure.join('+'), tool.name);
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
    for (const arg of [...missing.keys()].sort()) {
      // A tool that produces what an output already gave (a user id found by email) is not worth asking for.
      const tool = missing.get(arg)!;
      if (this.producers.has(tool) && (this.produces.get(tool) ?? []).some((a) => this.slots.has(a))) continue;
      const words = arg.split('+').map((a) => a.replace(/_/g, ' '));
      const list = words.length === 1 ? words[0]! : `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]!}`;
      if ((this.asks.get(arg) ?? 0) < 2) out.set(`ask:${arg}`, { type: 'message', text: `Could you tell me your ${list}?` });
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
    this.exhausted.clear();
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
    const top: Holder = { words: [], score: 0, share: 0, stamp: -1 };
    const walk = (value: JsonValue, key: string, within: readonly Holder[], container: string | undefined, last: boolean, listed: boolean): void => {
      if (this.seenCount >= MAX_SEEN) return;
      if (Array.isArray(value)) value.forEach((v, i) => walk(v, key, within, container, i === value.length - 1, true));
      else if (value !== null && typeof value === 'object') {
        // An object's words are its strings and its nested objects' (an order's items name it: "the order with the Hair Dryer").
        const words = [...new Set(deepWords(value))];
        for (const w of words) this.holding.set(w, (this.holding.get(w) ?? 0) + 1);
        this.objects++;
        const inner: Holder = { words, score: 0, share: 0, stamp: -1 };
        // The nearest plural key above names what this object is: `payment_methods: { x: { id } }` → `payment_method_id`.
        const thing = key.endsWith('s') && key.length > 3 ? key.slice(0, -1) : container;
        const chain = [inner, ...within];
        for (const k of Object.keys(value)) walk(value[k]!, k, chain, thing, false, false);
      } else {
        const entry: Seen = { value, holder: within[0]!, order, listed, last, within };
        this.index(key, entry);
        if (key === 'id' && container !== undefined) this.index(`${container}_id`, entry);
      }
    };
    walk(output, named, [top], undefined, false, false);
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
  private fillOf(tool: ToolSpec, arg: string, schema: Schema, source: Source): JsonValue | undefined {
    const memo = source === 'o' ? this.fromSeen : this.fromText;
    const key = `${tool.name}\u0000${arg}\u0000${source}`;
    if (memo.has(key)) return memo.get(key);
    const value = this.fill(tool, arg, schema, source);
    memo.set(key, value);
    return value;
  }

  /** A value for `arg` of `tool` from one source, or undefined. */
  private fill(tool: ToolSpec, arg: string, schema: Schema, source: Source): JsonValue | undefined {
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
      const items = (schema.items ?? {}) as Schema;
      if (source === 'o') return this.listFromOutputs(tool, arg, items);
      const item = this.fill(tool, arg.replace(/s$/, ''), items, source);
      return item === undefined ? undefined : [item];
    }
    if (type === 'boolean') return source === 't' ? true : undefined;
    const numeric = type === 'integer' || type === 'number';
    if (type !== 'string' && !numeric) return undefined;
    const fits = fitsType(type);
    switch (source) {
      case 'o':
        return this.fromOutputs(tool, arg, fits, !numeric && !/(^|_)ids?$/.test(arg))?.value;
      case 'n': {
        const value = this.named(arg, numeric) ?? (numeric ? undefined : this.namedInTurn(tool, arg));
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
   * The best output value for `arg` of `tool`. A read is not called again with a value it had: the next
   * candidate is on offer instead, so the learner can look through a list ("the order with the Hair Dryer").
   */
  private fromOutputs(tool: ToolSpec, arg: string, fits: (v: JsonValue) => boolean, descriptive: boolean): Seen | undefined {
    const list = this.candidates(arg, fits, descriptive);
    if (tool.effect !== 'read') return list[0];
    const used = new Set<string>();
    for (const call of this.doneCalls) if (call.tool === tool.name && Object.hasOwn(call.args, arg)) used.add(JSON.stringify(call.args[arg]));
    // Only a list's elements are looked through one by one; any other value is read once.
    const next = used.size === 0 ? list[0] : list.find((s) => s.listed && !used.has(JSON.stringify(s.value)));
    if (next === undefined && list.length > 0) this.exhausted.add(`${tool.name}\u0000${arg}`);
    return next;
  }

  /**
   * Ids gathered from outputs for an array argument. The items come from inside the object the tool's
   * first argument names (an order's items for `item_ids`), every one the user spoke about. An argument
   * with no field of its own name (`new_item_ids`) takes the field without its first word (`item_id`) from
   * outside that object, as many as its unqualified sibling takes and never the same ones.
   */
  private listFromOutputs(tool: ToolSpec, arg: string, items: Schema): JsonValue[] | undefined {
    const fits = fitsType(items.type);
    if (items.type !== 'string' && items.type !== 'integer' && items.type !== 'number') return undefined;
    const field = arg.replace(/s$/, '');
    let list = this.candidates(field, fits, false);
    let sibling: JsonValue[] | undefined;
    const props = (tool.parameters['properties'] ?? {}) as Record<string, Schema>;
    if (list.length === 0) {
      const base = field.split('_').slice(1).join('_');
      const other = [`${base}s`, base].find((p) => p !== arg && Object.hasOwn(props, p) && props[p]!.type === 'array');
      if (base.split('_').length < 2 || other === undefined) return undefined;
      const taken = this.fillOf(tool, other, props[other]!, 'o');
      if (!Array.isArray(taken)) return undefined;
      sibling = taken;
      const seen = new Set(taken.map((v) => JSON.stringify(v)));
      list = this.candidates(base, fits, false).filter((s) => !seen.has(JSON.stringify(s.value)));
    }
    const anchor = this.anchorOf(tool);
    if (anchor !== undefined) {
      const inside = list.filter((s) => s.within.includes(anchor));
      if (sibling !== undefined) list = list.filter((s) => !s.within.includes(anchor));
      else if (inside.length > 0) list = inside;
    }
    if (list.length === 0) return undefined;
    const out: JsonValue[] = [];
    const keys = new Set<string>();
    const top = list[0]!.holder.score;
    for (const s of list) {
      const key = JSON.stringify(s.value);
      if (keys.has(key)) continue;
      if (sibling !== undefined ? out.length >= Math.max(1, sibling.length) : out.length > 0 && (top === 0 || s.holder.score < top / 2)) break;
      keys.add(key);
      out.push(s.value);
    }
    return out;
  }

  /** The object holding the best value for the tool's first required (scalar) argument: what the call is about. */
  private anchorOf(tool: ToolSpec): Holder | undefined {
    const first = (Array.isArray(tool.parameters['required']) ? (tool.parameters['required'] as string[]) : [])[0];
    const schema = first === undefined ? undefined : ((tool.parameters['properties'] ?? {}) as Record<string, Schema>)[first];
    if (first === undefined || schema === undefined || schema.type === 'array') return undefined;
    return this.candidates(first, fitsType(schema.type), false)[0]?.within[0];
  }

  /**
   * The output values whose field matches `arg`, best first: from the object most like what the user said
   * (its words that few other objects share), then the most recent; a list's last element first when the
   * user asked for the latest ("my most recent order"). A descriptive value (a string argument that is not
   * an id: a city, a street) is copied only from an object the user spoke about, so that a write is not
   * filled with the record's current values.
   */
  private candidates(arg: string, fits: (v: JsonValue) => boolean, descriptive: boolean): Seen[] {
    const stem = arg.replace(/_ids?$/, '');
    const stamp = this.userWords.size * 1_000_003 + this.objects;
    const noun = stem.split('_').pop()!;
    const latest = noun.length > 0 && new RegExp(`\\b(?:${RECENT})\\s+(?:[a-z]+\\s+)?${noun}`, 'i').test(this.userText);
    const out: Seen[] = [];
    for (const key of new Set([arg, `${stem}s`, `${arg}s`])) {
      for (const s of this.seen.get(key) ?? []) {
        if (!fits(s.value)) continue;
        const h = s.holder;
        if (h.stamp !== stamp) {
          let matched = 0;
          h.score = 0;
          for (const w of h.words) {
            if (!this.userWords.has(w)) continue;
            matched++;
            h.score += 1 / (this.holding.get(w) ?? 1);
          }
          h.share = h.words.length === 0 ? 0 : matched / h.words.length;
          h.stamp = stamp;
        }
        if (descriptive && h.score === 0) continue;
        out.push(s);
      }
    }
    return out.sort((x, y) => (latest && x.last !== y.last ? (x.last ? -1 : 1) : 0) || y.holder.score - x.holder.score || y.holder.share - x.holder.share || y.order - x.order);
  }

  /**
   * Arguments that share a noun (`first_name`, `last_name`) take, in the order the tool declares them, the
   * successive words the user gave after that noun ("my name is Hassan Dubois").
   */
  private namedInTurn(tool: ToolSpec, arg: string): string | undefined {
    const noun = arg.split('_').pop()!;
    const required = Array.isArray(tool.parameters['required']) ? (tool.parameters['required'] as string[]) : [];
    const siblings = required.filter((a) => a.includes('_') && a.split('_').pop() === noun);
    if (siblings.length < 2 || !siblings.includes(arg) || !/^[a-z]+$/.test(noun)) return undefined;
    const word = "[A-Za-z][A-Za-z'-]*";
    const re = new RegExp(`\\b${noun}\\b(?:\\s+(?:is|was|:))*\\s*:?\\s+(${word}(?:\\s+${word}){${siblings.length - 1}})`, 'gi');
    let found: string | undefined;
    for (const m of this.userText.matchAll(re)) found = m[1];
    return found?.split(/\s+/)[siblings.indexOf(arg)];
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

/** Whether a value has a scalar schema type (`string`, `integer`, `number`). */
function fitsType(type: unknown): (v: JsonValue) => boolean {
  if (type === 'integer') return (v) => typeof v === 'number' && Number.isInteger(v);
  if (type === 'number') return (v) => typeof v === 'number';
  return (v) => typeof v === 'string';
}

/** Every word of an object's strings, its nested objects' included, capped at `MAX_WORDS`. */
function deepWords(value: JsonValue, out: string[] = []): string[] {
  if (out.length >= MAX_WORDS) return out;
  if (typeof value === 'string') {
    for (const w of value.toLowerCase().match(WORDS) ?? []) if (out.length < MAX_WORDS) out.push(w);
  } else if (Array.isArray(value)) for (const v of value) deepWords(v, out);
  else if (value !== null && typeof value === 'object') for (const k of Object.keys(value)) deepWords(value[k]!, out);
  return out;
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
