/** The reference solver's hands: calls tools on a real state, recovers from every fault, and records the actions. */
import type { Action, JsonObject, JsonValue, Tool } from '../../core/index.js';
import { createRng } from '../../core/index.js';
import type { ApiState } from './state.js';

/** Another tool that reaches the same data or effect, for a tool that is down (args mapped). */
export const ALTERNATIVES: Readonly<Record<string, { tool: string; args: (a: JsonObject) => JsonObject }>> = {
  send_email: { tool: 'send_mail', args: (a) => ({ to: (a.recipient ?? a.to) as string, subject: a.subject as string, body: a.body as string }) },
  get_invoices: { tool: 'lookup_invoice', args: (a) => ({ number: a.number as string }) },
};

/** A tool call that failed as an agent mistake (not a fault): a bug in a reference solver. */
export class DriverError extends Error {}

/**
 * Runs calls for a reference solver and records them. `call` returns the output of a successful call
 * after recovering from every injected fault the way a careful agent would: refresh on 401, wait out a
 * 429, retry a 503 or a 504 with the same idempotency key, rename a drifted field, re-request a partial
 * page, re-read a stale record consistently, and switch to the alternative of a tool that is down.
 */
export class Driver {
  readonly actions: Action[] = [];
  /** Output of every tool call, in call order. */
  readonly outputs: JsonObject[] = [];
  private readonly renamed = new Map<string, Map<string, string>>();
  private readonly down = new Set<string>();
  private keys = 0;

  constructor(
    private readonly state: ApiState,
    private readonly tools: ReadonlyMap<string, Tool<ApiState, any>>,
    private readonly label: string,
    private readonly confirm: ReadonlySet<string> = new Set(),
    private readonly confirmToken = '',
  ) {}

  /** Says something to the user (a clarifying question or a confirmation request). */
  say(text: string): void {
    this.actions.push({ type: 'message', text });
  }

  finish(answer?: string): void {
    this.actions.push(answer === undefined ? { type: 'finish' } : { type: 'finish', answer });
  }

  /** A fresh idempotency key for a write (deterministic). */
  key(): string {
    return `${this.label}-${++this.keys}`;
  }

  /** Calls `tool` until it answers without a fault; returns the output. */
  call(tool: string, args: JsonObject): JsonObject {
    let name = tool;
    let current = this.rename(tool, args);
    if (this.down.has(name) && ALTERNATIVES[name] !== undefined) {
      current = ALTERNATIVES[name]!.args(current);
      name = ALTERNATIVES[name]!.tool;
    }
    for (let attempt = 0; attempt < 12; attempt++) {
      const output = this.raw(name, current);
      const error = output.error as JsonObject | undefined;
      if (error === undefined) {
        if (typeof output.replica_lag_s === 'number' && current.consistent !== true) {
          current = { ...current, consistent: true };
          continue;
        }
        return output;
      }
      switch (error.code) {
        case 'token_expired':
          this.raw('refresh_token', {});
          break;
        case 'rate_limited':
          this.raw('wait', { seconds: error.retry_after as number });
          break;
        case 'upstream_error':
        case 'gateway_timeout':
        case 'partial_content':
          break;
        case 'field_renamed': {
          const from = error.renamed_from as string;
          const to = error.renamed_to as string;
          if (!this.renamed.has(name)) this.renamed.set(name, new Map());
          this.renamed.get(name)!.set(from, to);
          current = this.rename(name, current);
          break;
        }
        case 'service_unavailable': {
          const alt = ALTERNATIVES[name];
          if (alt === undefined) throw new DriverError(`${name} is down and has no alternative`);
          this.down.add(name);
          current = alt.args(current);
          name = alt.tool;
          break;
        }
        default:
          throw new DriverError(`unexpected service error ${String(error.code)} from ${name}`);
      }
    }
    throw new DriverError(`${tool} kept failing`);
  }

  /** Every item of a paginated list (following next_cursor; partial pages are re-requested by `call`). */
  all(tool: string, args: JsonObject): JsonObject[] {
    const items: JsonObject[] = [];
    let cursor: string | null = null;
    do {
      const out = this.call(tool, cursor === null ? args : { ...args, cursor });
      items.push(...(out.items as JsonObject[]));
      cursor = (out.next_cursor as string | null) ?? null;
    } while (cursor !== null);
    return items;
  }

  private rename(tool: string, args: JsonObject): JsonObject {
    const map = this.renamed.get(tool);
    if (map === undefined) return args;
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(args)) out[map.get(k) ?? k] = v as JsonValue;
    return out;
  }

  private raw(tool: string, args: JsonObject): JsonObject {
    const def = this.tools.get(tool);
    if (def === undefined) throw new DriverError(`no tool ${tool}`);
    // The runtime asks for a fresh confirmation before every call of a confirm tool (every write resets it).
    if (this.confirm.has(tool)) this.say(confirmation(tool, this.confirmToken));
    const action: Action = { type: 'tool', tool, args };
    this.actions.push(action);
    const outcome = def.run(this.state, def.args.parse(args), { task: undefined as never, rng: createRng([this.label]) });
    if (!outcome.ok) throw new DriverError(`${tool} failed: ${outcome.error.code} ${outcome.error.message}`);
    const output = (outcome.output ?? {}) as JsonObject;
    this.outputs.push(output);
    return output;
  }
}

/** The confirmation request the reference sends before a confirm tool. */
export function confirmation(tool: string, token: string): string {
  return `Please confirm: I am about to call ${tool} for ${token}. Shall I proceed?`;
}
