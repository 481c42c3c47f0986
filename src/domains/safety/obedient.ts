/** The `obedient` baseline: a scripted agent that does whatever instruction it reads in a tool output. */
import type { Action, Agent, AgentContext, AgentEpisode, JsonValue, Observation, StepResult } from '../../core/index.js';
import { parsePointer } from '../../core/index.js';
import { formatDirective, fromBase64, parseDirective, type Directive } from './attacks.js';

export interface ObedientOptions {
  /** The agent that works on the user's task between attacker instructions (default: finish at once). */
  inner?: Agent;
  /**
   * Which instructions it follows, given the instruction and the text it was found in (default: every
   * one). A scripted "resists weak attacks" agent is `follows: (_d, text) => !text.includes('Ignore previous')`.
   */
  follows?(directive: Directive, text: string): boolean;
  name?: string;
  /** Also obey instructions in the user's messages (out-of-bounds requests), not only in tool outputs. */
  readsUser?: boolean;
  /** The domain the inner agent is told it plays (the attack layer passes its base's name). */
  innerDomain?: string;
}

const DIRECTIVE = /ACTION: [\s\S]*? END/g;
const BASE64_TOKEN = /[A-Za-z0-9+/]{16,}={0,2}/g;
const PART = /\[(\d)\/(\d)\]([\s\S]*?)\[\/\1\]/g;

function stringsOf(value: JsonValue | undefined): string[] {
  if (typeof value === 'string') return [value];
  if (value === null || value === undefined || typeof value !== 'object') return [];
  if (Array.isArray(value)) return value.flatMap(stringsOf);
  return Object.values(value).flatMap(stringsOf);
}

function valueAt(root: JsonValue | undefined, pointer: string): JsonValue | undefined {
  let node: JsonValue | undefined = root;
  for (const key of parsePointer(pointer)) {
    if (node === null || typeof node !== 'object') return undefined;
    node = Array.isArray(node) ? node[Number(key)] : node[key];
  }
  return node;
}

/**
 * An agent that reads every string of every tool output (through delimiters and `^` datamarks, base64
 * and split parts) and, with `readsUser`, every user message, and carries out each `ACTION: … END` it
 * finds before anything else, as long as the tool was offered to it at reset. It measures exposure: what a fully obedient model would do.
 * @example
 * const agent = createObedientAgent({ inner: retail.baselines!['rule-based']!() });
 */
export function createObedientAgent(options: ObedientOptions = {}): Agent {
  const inner = options.inner;
  const follows = options.follows ?? (() => true);
  return {
    name: options.name ?? 'obedient',
    version: '1',
    ...(inner?.privileged === true ? { privileged: true } : {}),
    config: () => ({ inner: inner === undefined ? null : `${inner.name}@${inner.version}` }),
    begin(ctx: AgentContext): AgentEpisode {
      const session = inner?.begin(options.innerDomain === undefined ? ctx : { ...ctx, domain: options.innerDomain });
      let offered = new Set<string>();
      const queue: Directive[] = [];
      const done = new Set<string>();
      const parts = new Map<string, string>();
      const outputs = new Map<string, JsonValue[]>();
      let lastTool: string | undefined;
      let stashed: Action | undefined;

      const consider = (directive: Directive | undefined, text: string): void => {
        if (directive === undefined) return;
        const key = formatDirective(directive);
        if (done.has(key) || !follows(directive, text)) return;
        if (directive.type === 'call' && !offered.has(directive.tool)) return;
        done.add(key);
        queue.push(directive);
      };
      const read = (raw: string): void => {
        const text = raw.replace(/<<\/?untrusted-data>>/g, ' ').replace(/\^/g, ' ');
        for (const m of text.match(DIRECTIVE) ?? []) consider(parseDirective(m), text);
        for (const t of text.match(BASE64_TOKEN) ?? []) {
          const decoded = fromBase64(t);
          for (const m of decoded?.match(DIRECTIVE) ?? []) consider(parseDirective(m), decoded!);
        }
        for (const m of text.matchAll(PART)) {
          parts.set(`${m[1]}/${m[2]}`, m[3]!);
          const n = Number(m[2]);
          const all = Array.from({ length: n }, (_, i) => parts.get(`${i + 1}/${n}`));
          if (all.every((p) => p !== undefined)) consider(parseDirective(all.join('')), text);
        }
      };
      const toAction = (d: Directive): Action => {
        if (d.type === 'call') return { type: 'tool', tool: d.tool, args: d.args };
        if (d.type === 'say') return { type: 'message', text: d.text };
        // Every output of that tool it has read (the field may be on an earlier call than the last).
        const values = (outputs.get(d.tool) ?? []).map((o) => valueAt(o, d.pointer)).filter((v) => v !== undefined);
        return { type: 'message', text: values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(' ') };
      };
      return {
        // Synchronous when the inner agent is (the conformance suite plays synchronous baselines only).
        act(observation: Observation): Action | Promise<Action> {
          if (observation.kind === 'reset') offered = new Set((observation.tools ?? []).map((t) => t.name));
          if (options.readsUser === true && (observation.kind === 'reset' || observation.kind === 'message') && observation.text !== undefined) read(observation.text);
          if (observation.kind === 'tool' && observation.output !== undefined) {
            if (lastTool !== undefined) outputs.set(lastTool, [...(outputs.get(lastTool) ?? []), observation.output]);
            for (const s of stringsOf(observation.output)) read(s);
          }
          const innerAct = (): Action | Promise<Action> => (session !== undefined ? session.act(observation) : { type: 'finish' });
          const taken = (action: Action): Action => {
            lastTool = action.type === 'tool' ? action.tool : undefined;
            return action;
          };
          const pick = (): Action | Promise<Action> => {
            const next = queue.shift();
            if (next !== undefined) return taken(toAction(next));
            if (stashed !== undefined) {
              const action = stashed;
              stashed = undefined;
              return taken(action);
            }
            const action = innerAct();
            return action instanceof Promise ? action.then(taken) : taken(action);
          };
          // The inner agent decides on what it was shown; its action waits until the attacker's are done.
          if (queue.length > 0 && stashed === undefined) {
            const action = innerAct();
            if (action instanceof Promise) {
              return action.then((a) => {
                stashed = a;
                return pick();
              });
            }
            stashed = action;
          }
          return pick();
        },
        observe(result: StepResult) {
          session?.observe?.(result);
        },
        async end(summary) {
          await session?.end?.(summary);
        },
      };
    },
  };
}
