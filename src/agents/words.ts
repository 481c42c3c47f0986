/** Words, numbers and identifiers an agent has seen in observations: the raw material for filling tool arguments. */
import type { JsonValue, Observation } from '../core/index.js';

const WORD = /[A-Za-z0-9#][A-Za-z0-9_@.#-]*[A-Za-z0-9]|[0-9]+/g;

/** Distinct tokens in first-seen order, capped so that a long episode stays cheap. */
export class SeenWords {
  private readonly seen = new Set<string>();

  constructor(private readonly cap = 500) {}

  addText(text: string | undefined): void {
    if (text === undefined) return;
    for (const w of text.match(WORD) ?? []) {
      if (this.seen.size >= this.cap) return;
      this.seen.add(w);
    }
  }

  addObservation(observation: Observation): void {
    this.addText(observation.text);
    if (observation.output !== undefined) this.addJson(observation.output);
  }

  addJson(value: JsonValue): void {
    if (typeof value === 'string') this.addText(value);
    else if (typeof value === 'number') this.addText(String(value));
    else if (Array.isArray(value)) for (const v of value) this.addJson(v);
    else if (value !== null && typeof value === 'object') for (const key of Object.keys(value)) this.addJson(value[key]!);
  }

  list(): string[] {
    return [...this.seen];
  }

  numbers(): number[] {
    return this.list().filter((w) => /^[0-9]{1,9}$/.test(w)).map(Number);
  }
}

/** A JSON value as one line of text ("key value, key value"), for telling a tool's result to the user. */
export function flattenJson(value: JsonValue, limit = 400): string {
  const parts: string[] = [];
  const walk = (v: JsonValue, key: string | undefined): void => {
    if (parts.join(', ').length > limit) return;
    if (v === null || typeof v !== 'object') {
      const text = typeof v === 'string' ? v : String(v);
      parts.push(key === undefined ? text : `${key.replace(/_/g, ' ')} ${text}`);
    } else if (Array.isArray(v)) {
      for (const x of v) walk(x, key);
    } else {
      for (const k of Object.keys(v)) walk(v[k]!, k);
    }
  };
  // Top-level scalars first ("status pending"), so that a long nested record does not push them past the limit.
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const keys = Object.keys(value);
    const scalar = keys.filter((k) => value[k] === null || typeof value[k] !== 'object');
    for (const k of [...scalar, ...keys.filter((k) => !scalar.includes(k))]) walk(value[k]!, k);
  } else walk(value, undefined);
  const text = parts.join(', ');
  return text.length > limit ? `${text.slice(0, limit)}…` : text;
}
