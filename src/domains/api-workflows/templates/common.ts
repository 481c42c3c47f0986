/** The api-workflows template factory: sample a goal, plan its faults from the clean reference run, solve with recovery. */
import { z } from 'zod';
import { defineTemplate, type Action, type JsonObject, type LevelSpec, type RegisteredTemplate, type Rng, type Tool } from '../../../core/index.js';
import { ALTERNATIVES, Driver, DriverError } from '../driver.js';
import { scenarioSchema, type EventSpec, type FaultKindName, type FaultSpec, type Scenario } from '../scenario.js';
import type { ApiState } from '../state.js';
import { apiTools } from '../tools/index.js';
import { buildState, patchSchema, WORLD_SEEDS, worldOf, type Patch } from '../worlds.js';
import type { World } from '../world.js';

export const DOMAIN = 'api-workflows';
/** Version of every api-workflows template. */
export const VERSION = 1;

const TOOLS: ReadonlyMap<string, Tool<ApiState, any>> = new Map(apiTools.map((t) => [t.name, t]));

/** Fields a newer API version renamed, per tool (what a schema-drift fault renames). */
export const DRIFTS: Readonly<Record<string, { from: string; to: string }>> = {
  create_payment: { from: 'amount_cents', to: 'amount_minor' },
  send_email: { from: 'to', to: 'recipient' },
  create_ticket: { from: 'customer_id', to: 'account_id' },
};

/** What the simulated user knows and says, stored in the task (`spec.user`). */
export const userSchema = z.strictObject({
  type: z.string(),
  bank: z.enum(['train', 'heldout']),
  /** Slot values of the request; withheld ones are only told when asked. */
  slots: z.record(z.string(), z.string()),
  withheld: z.array(z.string()),
  /** A confirmation request must name this to be accepted (empty: confirm anything the task asks). */
  confirmToken: z.string(),
});
export type UserFacts = z.infer<typeof userSchema>;

export const paramsSchema = z.strictObject({
  world: z.number().int(),
  goal: z.record(z.string(), z.any()),
  patches: z.array(patchSchema),
  scenario: scenarioSchema,
  visible: z.array(z.string()),
  confirm: z.array(z.string()),
  user: userSchema,
  /** Tokens a sent email must mention (checked by the goal check). */
  mentions: z.array(z.string()),
});
export type ApiParams = z.infer<typeof paramsSchema>;

/** What a task type's sampler returns. */
export interface Sampled {
  goal: JsonObject;
  patches?: Patch[];
  events?: EventSpec[];
  /** Faults the type plants itself (e.g. a stale replica over an event). */
  faults?: FaultSpec[];
  slots: Record<string, string>;
  /** Slots the user withholds when the level asks for ambiguity. */
  vague: string[];
  confirmToken: string;
}

/** A task type's definition. */
export interface TaskTypeDef {
  name: string;
  taskType: string;
  description: string;
  levels: readonly LevelSpec[];
  heldout?: boolean;
  sample(rng: Rng, spec: LevelSpec, world: World): Sampled | undefined;
  /** The reference solver: a careful agent that knows the goal. Returns the answer for question tasks. */
  drive(goal: JsonObject, d: Driver, world: World): string | void;
  /** Tokens a sent email must mention, computed from the clean reference run's outputs. */
  mentions?(goal: JsonObject, outputs: readonly JsonObject[]): string[];
}

const ATTEMPTS = 40;

/** Runs the reference solver on a fresh state; undefined when the solver cannot finish (the sampler tries again). */
export function runReference(params: Pick<ApiParams, 'world' | 'goal' | 'patches' | 'scenario' | 'confirm' | 'user'>, def: TaskTypeDef): { actions: Action[]; outputs: JsonObject[]; answer: string | undefined } | undefined {
  const state = buildState(params.world, params.patches, params.scenario);
  const d = new Driver(state, TOOLS, `${def.name}-${params.world}`, new Set(params.confirm), params.user.confirmToken);
  try {
    for (const slot of params.user.withheld) d.say(`Before I start: could you tell me the ${slot.replace(/_/g, ' ')}?`);
    const answer = def.drive(params.goal, d, worldOf(params.world));
    d.finish(answer ?? undefined);
    return { actions: d.actions, outputs: d.outputs, answer: answer ?? undefined };
  } catch (error) {
    if (error instanceof DriverError) return undefined;
    throw error;
  }
}

/** Seeded faults for a level, placed on calls of the clean reference run. */
export function planFaults(rng: Rng, kinds: readonly FaultKindName[], count: number, clean: readonly Action[], outputs: readonly JsonObject[]): FaultSpec[] {
  const calls: Array<{ tool: string; n: number; args: JsonObject; output: JsonObject; write: boolean }> = [];
  const counts = new Map<string, number>();
  let o = 0;
  for (const a of clean) {
    if (a.type !== 'tool') continue;
    const n = (counts.get(a.tool) ?? 0) + 1;
    counts.set(a.tool, n);
    calls.push({ tool: a.tool, n, args: a.args, output: outputs[o++] ?? {}, write: TOOLS.get(a.tool)!.effect === 'write' });
  }
  const faults: FaultSpec[] = [];
  const used = new Set<string>();
  const order = rng.shuffle(kinds);
  for (let i = 0; i < count && order.length > 0; i++) {
    const kind = order[i % order.length]!;
    const free = (c: (typeof calls)[number]): boolean => !used.has(`${c.tool}#${c.n}`) && c.tool !== 'refresh_token' && c.tool !== 'wait';
    let spec: FaultSpec | undefined;
    let pick: (typeof calls)[number] | undefined;
    const choose = (pool: typeof calls) => (pool.length === 0 ? undefined : rng.pick(pool));
    switch (kind) {
      case 'transient':
        pick = choose(calls.filter(free));
        if (pick) spec = { kind, tool: pick.tool, call: pick.n };
        break;
      case 'rate_limit':
        pick = choose(calls.filter(free));
        if (pick) spec = { kind, tool: pick.tool, call: pick.n, retry_after: rng.int(2, 4) };
        break;
      case 'timeout':
        pick = choose(calls.filter((c) => free(c) && c.write));
        if (pick) spec = { kind, tool: pick.tool, call: pick.n, applied: rng.chance(0.5) };
        break;
      case 'partial':
        pick = choose(calls.filter((c) => free(c) && Array.isArray(c.output.items) && (c.output.items as unknown[]).length > 1));
        if (pick) spec = { kind, tool: pick.tool, call: pick.n };
        break;
      case 'schema_drift':
        pick = choose(calls.filter((c) => free(c) && DRIFTS[c.tool] !== undefined && c.args[DRIFTS[c.tool]!.from] !== undefined && !faults.some((f) => f.kind === 'schema_drift' && f.tool === c.tool)));
        if (pick) spec = { kind, tool: pick.tool, from: DRIFTS[pick.tool]!.from, to: DRIFTS[pick.tool]!.to };
        break;
      case 'auth_expired':
        if (!faults.some((f) => f.kind === 'auth_expired') && calls.length > 1) spec = { kind, at: rng.int(2, calls.length) };
        break;
      case 'tool_down':
        pick = choose(calls.filter((c) => ALTERNATIVES[c.tool] !== undefined && (c.tool !== 'get_invoices' || Object.keys(c.args).join() === 'number') && !faults.some((f) => f.kind === 'tool_down')));
        if (pick) spec = { kind, tool: pick.tool, via: ALTERNATIVES[pick.tool]!.tool };
        break;
      case 'stale':
        break;
    }
    if (spec === undefined) continue;
    if (pick) used.add(`${pick.tool}#${pick.n}`);
    faults.push(spec);
  }
  return faults;
}

/** Tools the agent sees: the reference's, the platform's, the alternatives of down tools, and `distractors` look-alikes. */
export function visibleTools(actions: readonly Action[], scenario: Scenario, distractors: number): string[] {
  const names = new Set<string>(['refresh_token', 'wait']);
  for (const a of actions) if (a.type === 'tool') names.add(a.tool);
  for (const f of scenario.faults) if (f.kind === 'tool_down') names.add(f.via);
  const used = [...names];
  const score = (t: string): number => Math.max(...used.map((u) => sharedPrefix(t, u)));
  const rest = apiTools.map((t) => t.name).filter((t) => !names.has(t)).sort((a, b) => score(b) - score(a) || (a < b ? -1 : 1));
  for (const t of rest.slice(0, distractors)) names.add(t);
  return apiTools.map((t) => t.name).filter((t) => names.has(t));
}

function sharedPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

export const INSTRUCTIONS =
  'You act for the user on a small company\'s back-office APIs (CRM, billing, inventory, shipping, tickets, calendar, mail). Take ids from tool outputs, amounts are integer cents, times are ISO-8601. Follow the operating notes (policy) for service errors. When the user asks a question, finish with the answer.';

/** `api-workflows/<name>@1` from a task type's definition. */
export function defineApiTemplate(def: TaskTypeDef): RegisteredTemplate<ApiParams> {
  const solutions = new WeakMap<object, Action[]>();
  const solve = (params: ApiParams): Action[] => {
    let actions = solutions.get(params);
    if (actions === undefined) {
      const run = runReference(params, def);
      if (run === undefined) throw new DriverError(`the reference solver of ${def.name} could not finish`);
      actions = run.actions;
      solutions.set(params, actions);
    }
    return actions;
  };
  return defineTemplate<ApiParams>({
    domain: DOMAIN,
    name: def.name,
    version: VERSION,
    taskType: def.taskType,
    description: def.description,
    levels: def.levels,
    heldout: def.heldout,
    params: paramsSchema as unknown as z.ZodType<ApiParams>,
    sample(rng, _level, spec) {
      for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
        const world = rng.pick(WORLD_SEEDS);
        const sampled = def.sample(rng, spec, worldOf(world));
        if (sampled === undefined) continue;
        const ambiguous = Number(spec.ambiguity ?? 0);
        const withheld = sampled.vague.slice(0, ambiguous);
        const user: UserFacts = { type: def.taskType, bank: def.heldout ? 'heldout' : 'train', slots: sampled.slots, withheld, confirmToken: sampled.confirmToken };
        const confirm = (spec.confirm as string[] | undefined) ?? [];
        const base = { world, goal: sampled.goal, patches: sampled.patches ?? [], scenario: { faults: sampled.faults ?? [], events: sampled.events ?? [] }, confirm, user };
        const clean = runReference(base, def);
        if (clean === undefined) continue;
        const planned = planFaults(rng, (spec.faults as FaultKindName[] | undefined) ?? [], Number(spec.faultCount ?? 0), clean.actions, clean.outputs);
        const scenario: Scenario = { faults: [...base.scenario.faults, ...planned], events: base.scenario.events };
        const full = runReference({ ...base, scenario }, def);
        if (full === undefined || full.answer !== clean.answer) continue;
        const mentions = def.mentions?.(sampled.goal, clean.outputs) ?? [];
        return { ...base, scenario, visible: visibleTools(full.actions, scenario, Number(spec.distractors ?? 0)), mentions };
      }
      throw new DriverError(`${def.name}: no task found in ${ATTEMPTS} attempts for level spec ${JSON.stringify(spec)}`);
    },
    build(params) {
      const actions = solve(params);
      const answer = actions.at(-1)?.type === 'finish' ? (actions.at(-1) as { answer?: string }).answer : undefined;
      const tools = actions.filter((a) => a.type === 'tool').length;
      return {
        instructions: INSTRUCTIONS,
        initialState: { world: params.world, patches: params.patches, scenario: params.scenario },
        budget: { steps: actions.length * 2 + 8, consecutiveErrors: 6 },
        constraints: { allowedTools: params.visible, ...(params.confirm.length > 0 ? { confirmTools: params.confirm } : {}) },
        acceptance: { finalState: false, ...(answer !== undefined ? { answer } : {}) },
        user: { ...params.user, referenceCalls: tools, mentions: params.mentions },
        tags: [def.taskType, ...new Set(params.scenario.faults.map((f) => `fault:${f.kind}`)), ...(params.scenario.events.length > 0 ? ['event'] : []), ...(params.user.withheld.length > 0 ? ['ambiguous'] : [])],
      };
    },
    solve: (params) => solve(params),
  });
}

/** Money as the user says it: 1234.5 EUR for 123450 cents. */
export function money(cents: number, currency: string): string {
  return `${(cents / 100).toFixed(2)} ${currency}`;
}
