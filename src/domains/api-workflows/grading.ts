/** Grading of api-workflows: goal reached, no duplicated side effects, no stray writes; per-step feedback; the outcome report. */
import { type AcceptanceCheck, type Feedback, type JsonObject, type Task } from '../../core/index.js';
import { signatureOf } from './service.js';
import { changesOf, forkApiState, getRecord, hashApiState, putRecord, recordDigest, type ApiState } from './state.js';
import { SIDE_EFFECT_TABLES, type Table, type WorldRecord } from './world.js';

/** Fields that must match for a created record to count as the reference's (the rest is free text or generated). */
const CREATED_KEYS: Readonly<Record<Table, readonly string[]>> = {
  payments: ['invoice_id', 'amount_cents', 'status'],
  outbox: ['to'],
  tickets: ['customer_id', 'subject', 'priority', 'status', 'assignee'],
  shipments: ['customer_id', 'sku', 'quantity', 'status'],
  events: ['staff_id', 'start', 'end', 'attendee'],
  invoices: ['customer_id', 'amount_cents', 'currency', 'due_date', 'status'],
  customers: ['email'],
  staff: ['email'],
  products: ['name'],
};

/** The state with every scenario event applied, as if the clock ran on (an event the agent outran still happens). */
function settled(state: ApiState): ApiState {
  const pending = state.scenario.events.filter((_e, i) => !state.session.eventsDone.has(i));
  if (pending.length === 0) return state;
  const copy = forkApiState(state);
  for (const event of pending) {
    const current = getRecord(copy, event.table as Table, event.id);
    if (current !== undefined) putRecord(copy, event.table as Table, { ...current, ...event.set } as WorldRecord);
  }
  return copy;
}

interface Comparison {
  missing: string[];
  duplicates: string[];
  stray: string[];
}

const isNew = (state: ApiState, table: Table, id: string): boolean => !state.world.byId[table].has(id);

function mentionsOk(record: WorldRecord, mentions: readonly string[]): boolean {
  const text = `${String(record.subject ?? '')} ${String(record.body ?? '')}`.toLowerCase();
  return mentions.every((m) => text.includes(m.toLowerCase()));
}

function matches(table: Table, a: WorldRecord, b: WorldRecord, mentions: readonly string[]): boolean {
  if (!CREATED_KEYS[table].every((k) => (a[k] ?? null) === (b[k] ?? null))) return false;
  return table !== 'outbox' || mentionsOk(a, mentions);
}

// The acceptance checks and the report all compare the same final states: compare once per (state, hash, reference).
const compared = new WeakMap<ApiState, { hash: string; reference: ApiState; task: Task; result: Comparison; events: number }>();

/** Compares the agent's world with the reference's: what is missing, duplicated, or changed without being asked. */
export function compareWorlds(agentState: ApiState, referenceState: ApiState, task: Task): Comparison {
  const hash = hashApiState(agentState);
  const hit = compared.get(agentState);
  if (hit !== undefined && hit.hash === hash && hit.reference === referenceState && hit.task === task && agentState.session.eventsDone.size === hit.events) return hit.result;
  const result = compareFresh(agentState, referenceState, task);
  compared.set(agentState, { hash, reference: referenceState, task, result, events: agentState.session.eventsDone.size });
  return result;
}

/**
 * Whether two versions of a record have the same canonical JSON, by their memoised digests: the agent's
 * records were digested when the runtime hashed its state, the reference's once per task.
 */
const sameRecord = (a: WorldRecord | null, b: WorldRecord | null): boolean => a === b || (a !== null && b !== null && recordDigest(a) === recordDigest(b));

// A task's reference state is prepared once and compared with every episode's: its settled changes are kept per state.
const referenceChanges = new WeakMap<ApiState, { hash: string; events: number; changes: Map<string, WorldRecord | null> }>();

function settledChangesOf(referenceState: ApiState): Map<string, WorldRecord | null> {
  const hash = hashApiState(referenceState);
  const events = referenceState.session.eventsDone.size;
  const hit = referenceChanges.get(referenceState);
  if (hit !== undefined && hit.hash === hash && hit.events === events) return hit.changes;
  const changes = changesOf(settled(referenceState));
  referenceChanges.set(referenceState, { hash, events, changes });
  return changes;
}

/** A changed record of a state, split out of its `table/id` key once. */
interface Change {
  key: string;
  table: Table;
  id: string;
  record: WorldRecord | null;
}

function changeList(changes: ReadonlyMap<string, WorldRecord | null>): Change[] {
  const out: Change[] = [];
  for (const [key, record] of changes) {
    const slash = key.indexOf('/');
    out.push({ key, table: key.slice(0, slash) as Table, id: key.slice(slash + 1), record });
  }
  return out;
}

function compareFresh(agentState: ApiState, referenceState: ApiState, task: Task): Comparison {
  const mentions = ((task.spec.user as JsonObject | undefined)?.mentions as string[] | undefined) ?? [];
  const agent = changesOf(settled(agentState));
  const reference = settledChangesOf(referenceState);
  const out: Comparison = { missing: [], duplicates: [], stray: [] };
  // Created records per table, in the order the tables first appear; `used` marks the ones matched to the reference's.
  const createdAgent = new Map<Table, Change[]>();
  const existing = new Set<string>();
  for (const change of changeList(agent)) {
    if (change.record !== null && isNew(agentState, change.table, change.id)) {
      const list = createdAgent.get(change.table);
      if (list === undefined) createdAgent.set(change.table, [change]);
      else list.push(change);
    } else existing.add(change.key);
  }
  const used = new Set<string>();
  for (const change of changeList(reference)) {
    const record = change.record;
    if (record !== null && isNew(referenceState, change.table, change.id)) {
      let hit: Change | undefined;
      for (const c of createdAgent.get(change.table) ?? []) {
        if (!used.has(c.key) && matches(change.table, c.record!, record, mentions)) {
          hit = c;
          break;
        }
      }
      if (hit === undefined) out.missing.push(change.key);
      else used.add(hit.key);
    } else existing.add(change.key);
  }
  for (const key of [...existing].sort()) {
    const slash = key.indexOf('/');
    const base = agentState.world.byId[key.slice(0, slash) as Table].get(key.slice(slash + 1)) ?? null;
    const a = agent.has(key) ? agent.get(key)! : base;
    const r = reference.has(key) ? reference.get(key)! : base;
    if (!sameRecord(a, r)) (reference.has(key) ? out.missing : out.stray).push(key);
  }
  for (const [table, list] of createdAgent) {
    const sideEffect = SIDE_EFFECT_TABLES.includes(table);
    const signatures = list.map((c) => signatureOf(table, c.record!));
    for (let i = 0; i < list.length; i++) {
      const key = list[i]!.key;
      if (used.has(key)) continue;
      const signature = signatures[i];
      let twin = false;
      if (signature !== undefined) for (let j = 0; j < list.length && !twin; j++) twin = j !== i && signatures[j] === signature;
      if (sideEffect && twin) out.duplicates.push(key);
      else out.stray.push(key);
    }
  }
  return out;
}

/** The acceptance checks: each names one way to fail, so the outcome says which part failed. */
export const apiAcceptanceChecks: readonly AcceptanceCheck<ApiState>[] = [
  {
    id: 'goal',
    check: ({ state, referenceState, task }) => {
      const { missing } = compareWorlds(state, referenceState, task);
      return missing.length === 0 ? undefined : `the goal is not reached: ${missing.slice(0, 5).join(', ')} ${missing.length === 1 ? 'differs' : 'differ'} from the expected result`;
    },
  },
  {
    id: 'no_duplicate_side_effects',
    check: ({ state, referenceState, task }) => {
      const { duplicates } = compareWorlds(state, referenceState, task);
      return duplicates.length === 0 ? undefined : `duplicated side effects (a retried write applied twice): ${duplicates.join(', ')}`;
    },
  },
  {
    id: 'no_stray_writes',
    check: ({ state, referenceState, task }) => {
      const { stray } = compareWorlds(state, referenceState, task);
      return stray.length === 0 ? undefined : `changes nobody asked for: ${stray.slice(0, 5).join(', ')}`;
    },
  },
];

/** Per-step feedback: what the service layer noted during the call (faults, recoveries, violations). */
export function apiFeedback(ctx: { state: ApiState }): Feedback[] {
  const s = ctx.state.session;
  if (s.feedback.length === 0) return [];
  const out = s.feedback;
  s.feedback = [];
  return out;
}

/** The outcome report: goal, duplicates, recovery per injected fault, efficiency against the reference's calls. */
export function apiReport(ctx: { state: ApiState; referenceState: ApiState; task: Task; trace: readonly { action: { type: string } }[] }): JsonObject {
  const cmp = compareWorlds(ctx.state, ctx.referenceState, ctx.task);
  const calls = ctx.trace.filter((t) => t.action.type === 'tool').length;
  const referenceCalls = Number((ctx.task.spec.user as JsonObject | undefined)?.referenceCalls ?? 0);
  const faults = ctx.state.session.faults.map((f) => ({ kind: f.kind, tool: f.tool, at: f.at, recovery: f.recovery }));
  return {
    goal: cmp.missing.length === 0,
    duplicates: cmp.duplicates.length,
    strayWrites: cmp.stray.length,
    faults,
    handled: faults.filter((f) => f.recovery === 'handled').length,
    calls,
    referenceCalls,
    efficiency: calls === 0 ? 0 : Math.min(1, Math.round((referenceCalls / calls) * 1000) / 1000),
  };
}
