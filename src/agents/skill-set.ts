/**
 * Skill sets: how the learner sees a domain. A skill set turns observations into a small abstract state
 * and offers slot-filled macros (e.g. "look up the order the user mentioned") as the learner's actions.
 * It holds no knowledge of any task's solution: slots are filled from what the agent has observed.
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

type Schema = { type?: unknown; enum?: unknown; items?: unknown; properties?: unknown; required?: unknown };

const GENERIC_WORDS = new Set(['get', 'set', 'list', 'find', 'all', 'the', 'and', 'for', 'with', 'item', 'items', 'details', 'info']);
const IDENT = /[A-Za-z0-9#][A-Za-z0-9_@.#-]*[A-Za-z0-9]/g;

/**
 * The generic skill set: one macro per tool (arguments from the identifiers and numbers the user
 * mentioned), plus tell the last result, ask for confirmation, close, retry after a fault, finish.
 * State: which tools have succeeded (in order), how the last step went, whether confirmation was asked, whether the
 * last result was told.
 */
export const genericSkills: SkillSet = {
  id: 'generic@1',
  handles: () => true,
  start: (reset) => new GenericTracker(reset),
};

class GenericTracker implements SkillTracker {
  private readonly tools: readonly ToolSpec[];
  private readonly entities: string[] = [];
  private readonly numbers: number[] = [];
  private userText = '';
  private readonly succeeded = new Set<string>();
  private last: 'start' | 'ok' | 'error' | 'fault' | 'said' = 'start';
  private lastOutput: JsonValue | undefined;
  private lastCall: Action | undefined;
  private asked = false;
  private told = false;

  /** Words of tool names that the user's opening contains, e.g. "add": what the request is about. */
  private readonly cue: string;

  constructor(reset: Observation) {
    this.tools = [...(reset.tools ?? [])].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    this.hear(reset.text ?? '');
    const said = new Set(this.userText.match(/[a-z]+/g) ?? []);
    const words = new Set<string>();
    for (const tool of this.tools) for (const w of tool.name.split('_')) if (w.length >= 3 && !GENERIC_WORDS.has(w) && said.has(w)) words.add(w);
    this.cue = [...words].sort().join('+');
  }

  state(): string {
    // Tools in the order they first succeeded: "checked, then added" and "added, then checked" differ.
    return `${this.cue}|${[...this.succeeded].join('>')}|${this.last}|${this.asked ? 1 : 0}${this.told ? 1 : 0}`;
  }

  options(): readonly string[] {
    const out: string[] = [];
    for (const tool of this.tools) if (this.fill(tool) !== undefined) out.push(`call:${tool.name}`);
    if (this.lastOutput !== undefined) out.push('tell');
    out.push('confirm', 'close');
    if (this.last === 'fault' && this.lastCall !== undefined) out.push('retry');
    out.push('finish');
    return out;
  }

  expand(macro: string): Action {
    if (macro.startsWith('call:')) {
      const tool = this.tools.find((t) => `call:${t.name}` === macro);
      const args = tool === undefined ? undefined : this.fill(tool);
      if (tool !== undefined && args !== undefined) return { type: 'tool', tool: tool.name, args };
    }
    switch (macro) {
      case 'tell':
        return { type: 'message', text: `Here is what I found: ${flattenJson(this.lastOutput ?? null)}.` };
      case 'confirm':
        return { type: 'message', text: 'I am about to make this change. Do you confirm?' };
      case 'close':
        return { type: 'message', text: 'Is there anything else I can help you with?' };
      case 'retry':
        if (this.lastCall !== undefined) return this.lastCall;
    }
    return { type: 'finish' };
  }

  observe(_macro: string, action: Action, result: StepResult): void {
    const obs = result.observation;
    if (action.type === 'tool') {
      this.lastCall = action;
      if (obs.error === undefined) {
        this.succeeded.add(action.tool);
        this.lastOutput = obs.output;
        this.last = 'ok';
        this.told = false;
        this.asked = false;
      } else {
        this.last = isFaultError(obs) ? 'fault' : 'error';
      }
    } else if (action.type === 'message') {
      this.last = 'said';
      if (action.text.startsWith('Here is')) this.told = true;
      if (action.text.includes('confirm')) this.asked = true;
      this.hear(obs.text ?? '');
    }
  }

  private hear(text: string): void {
    this.userText += ` ${text.toLowerCase()}`;
    for (const token of text.split(/\s+/)) {
      const bare = token.replace(/[.,!?;:]+$/, '');
      if (/^[0-9]{1,9}$/.test(bare)) this.numbers.push(Number(bare));
    }
    for (const w of text.match(IDENT) ?? []) if (/[0-9@_#-]/.test(w) && !/^[0-9]+$/.test(w)) this.entities.push(w);
  }

  /** Arguments for a tool from what the user said, or undefined when a required one cannot be filled. */
  private fill(tool: ToolSpec): Record<string, JsonValue> | undefined {
    const props = (tool.parameters['properties'] ?? {}) as Record<string, Schema>;
    const required = Array.isArray(tool.parameters['required']) ? (tool.parameters['required'] as string[]) : [];
    const args: Record<string, JsonValue> = {};
    for (const name of required) {
      const value = this.slot(props[name] ?? {});
      if (value === undefined) return undefined;
      args[name] = value;
    }
    return args;
  }

  private slot(schema: Schema): JsonValue | undefined {
    if (Array.isArray(schema.enum) && schema.enum.length > 0) {
      const values = schema.enum as JsonValue[];
      return values.find((v) => typeof v === 'string' && this.userText.includes(v.toLowerCase())) ?? values[0];
    }
    if (schema.type === 'string') return this.entities[this.entities.length - 1];
    if (schema.type === 'integer' || schema.type === 'number') return this.numbers[this.numbers.length - 1];
    if (schema.type === 'boolean') return true;
    if (schema.type === 'array') {
      const item = this.slot((schema.items ?? {}) as Schema);
      return item === undefined ? undefined : [item];
    }
    return undefined;
  }
}
