/** The service layer every api-workflows tool runs through: clock, auth, faults, idempotency, events, recovery. */
import type { ZodType } from 'zod';
import { canonicalize, type Feedback, type JsonObject, type JsonValue, type Tool, type ToolOutcome } from '../../core/index.js';
import type { FaultRecord, FaultSpec } from './scenario.js';
import { getRecord, putRecord, type ApiState, type Session } from './state.js';
import { idOf, TABLES, type Table, type WorldRecord } from './world.js';

export type Service = 'crm' | 'billing' | 'inventory' | 'shipping' | 'tickets' | 'calendar' | 'mail' | 'platform';

/** An api-workflows tool before the service layer wraps it. */
export interface ApiToolDef<A extends JsonObject = JsonObject> {
  name: string;
  service: Service;
  description: string;
  effect: 'read' | 'write';
  args: ZodType<A>;
  /** A deprecated tool still answers, with a notice naming its replacement. */
  deprecatedBy?: string;
  /** Records (`table/id`) a write acts on: a write on a record last served stale is a stale write. */
  targets?(args: A): string[];
  run(state: ApiState, args: A, call: CallContext): ToolOutcome;
}

/** What a tool body may ask of the service layer. */
export interface CallContext {
  /** A record as this read serves it: from a lagging replica when the scenario says so and `consistent` is not set. */
  read(table: Table, id: string, consistent?: boolean): WorldRecord | undefined;
  /** Marks a response as served by a lagging replica (adds `replica_lag_s`). */
  lag(): number | undefined;
}

/** Fields that make two new records of a side-effect table the same effect. */
export const EFFECT_SIGNATURE: Partial<Record<Table, readonly string[]>> = {
  payments: ['invoice_id', 'amount_cents'],
  outbox: ['to', 'subject'],
  tickets: ['customer_id', 'subject'],
  shipments: ['customer_id', 'sku', 'quantity'],
  events: ['staff_id', 'start'],
  invoices: ['customer_id', 'amount_cents'],
};

export function signatureOf(table: Table, record: WorldRecord): string | undefined {
  const fields = EFFECT_SIGNATURE[table];
  return fields === undefined ? undefined : `${table}:${fields.map((f) => String(record[f])).join('|')}`;
}

/** The error body of a service fault: the call reached the tool layer (ok), the service answered with an HTTP error. */
export function serviceError(status: number, code: string, message: string, extra: JsonObject = {}): ToolOutcome {
  return { ok: true, output: { error: { status, code, message, ...extra } } };
}

const without = (args: JsonObject, key: string): JsonObject => {
  const copy: JsonObject = { ...args };
  delete copy[key];
  return copy;
};

/** Wraps a definition into a core tool whose calls go through the service layer. */
export function serve<A extends JsonObject>(def: ApiToolDef<A>): Tool<ApiState, A> {
  return {
    name: def.name,
    description: def.deprecatedBy === undefined ? def.description : `DEPRECATED (use ${def.deprecatedBy}). ${def.description}`,
    effect: def.effect,
    args: def.args,
    run: (state, args) => callTool(def, state, args),
  };
}

/**
 * The `CallContext` of the call in progress. Tool calls are synchronous and never nest (a tool body calls
 * no other tool), so one instance serves every call: `callTool` resets it before running the body, and
 * no closure or context object is built per call.
 */
class CallScope implements CallContext {
  state!: ApiState;
  stale: (FaultSpec & { kind: 'stale' }) | undefined;
  tick = 0;
  lagged: number | undefined;

  read(table: Table, id: string, consistent?: boolean): WorldRecord | undefined {
    const s = this.state.session;
    const k = `${table}/${id}`;
    const change = s.changedAt.get(k);
    const stale = this.stale;
    if (stale !== undefined && consistent !== true && change !== undefined && this.tick - change.at < stale.lag) {
      this.lagged = Math.max(this.lagged ?? 0, stale.lag - (this.tick - change.at));
      s.staleServed.add(k);
      return change.previous ?? undefined;
    }
    s.staleServed.delete(k);
    return getRecord(this.state, table, id);
  }

  lag(): number | undefined {
    return this.lagged;
  }
}
const scope = new CallScope();

/** Records an injected fault (with its feedback) and passes its outcome through. */
function inject(def: ApiToolDef<any>, s: Session, tick: number, n: number, spec: FaultSpec, outcome: ToolOutcome, key?: string): ToolOutcome {
  const record: FaultRecord = { kind: spec.kind, tool: def.name, service: def.service, at: tick, recovery: 'ignored' };
  if (key !== undefined) record.key = key;
  s.faults.push(record);
  const output = outcome.ok ? outcome.output : null;
  const error = output !== null && typeof output === 'object' && !Array.isArray(output) ? (output.error as JsonObject | undefined) : undefined;
  s.feedback.push({ code: 'FAULT_INJECTED', message: `injected ${spec.kind.replace('_', ' ')} on ${def.name}`, ref: spec.kind, details: { tool: def.name, call: n, at: tick, status: (error?.status as number | undefined) ?? null } });
  return outcome;
}

/** The canonical text of a write's arguments without its idempotency key (what a replayed key must match). */
const argsTextOf = (args: JsonObject): string => canonicalize(without(args, 'idempotency_key'));

const timedOut = (name: string): ToolOutcome => serviceError(504, 'gateway_timeout', `the request to ${name} timed out after 30 s; it may or may not have been applied`);

function callTool<A extends JsonObject>(def: ApiToolDef<A>, state: ApiState, args: A): ToolOutcome {
  const s = state.session;
  s.feedback = [];
  const tick = ++s.clock;
  const n = (s.calls.get(def.name) ?? 0) + 1;
  s.calls.set(def.name, n);
  const faults = state.scenario.faults;

  trackRecovery(def, state, args, tick);

  // One pass over the (few) fault specs: the first of each kind that applies to this call, in scenario order.
  let auth: FaultSpec | undefined;
  let down: FaultSpec | undefined;
  let timeout: (FaultSpec & { kind: 'timeout' }) | undefined;
  let stale: (FaultSpec & { kind: 'stale' }) | undefined;
  let partial: FaultSpec | undefined;
  let replacementDown = false;
  for (const f of faults) {
    switch (f.kind) {
      case 'auth_expired':
        auth ??= f;
        break;
      case 'tool_down':
        if (f.tool === def.name) down ??= f;
        if (f.tool === def.deprecatedBy) replacementDown = true;
        break;
      case 'timeout':
        if (f.tool === def.name && f.call === n) timeout ??= f;
        break;
      case 'stale':
        if (f.tool === def.name) stale ??= f;
        break;
      case 'partial':
        if (f.tool === def.name && f.call === n) partial ??= f;
        break;
    }
  }

  if (def.name !== 'refresh_token' && auth !== undefined && auth.kind === 'auth_expired' && tick >= auth.at && !s.refreshed) {
    return inject(def, s, tick, n, auth, serviceError(401, 'token_expired', 'the access token has expired; renew it with refresh_token and retry'));
  }
  if (down !== undefined) {
    const outcome = serviceError(503, 'service_unavailable', `${def.name} is down for maintenance for the rest of the day`);
    for (const f of s.faults) if (f.kind === 'tool_down' && f.tool === def.name) return outcome;
    return inject(def, s, tick, n, down, outcome);
  }
  const until = s.limitedUntil.get(def.service);
  if (until !== undefined && tick < until) {
    s.feedback.push({ code: 'POLICY_VIOLATION', message: `${def.name} was called ${until - tick} s before the retry_after of the ${def.service} service ran out`, severity: 'medium', ref: 'retry_after_ignored', details: { tool: def.name, service: def.service, retry_after: until - tick } });
    for (const f of s.faults) {
      if (f.kind === 'rate_limit' && f.key === def.service && f.recovery !== 'handled') {
        f.key = `${def.service}!early`;
        break;
      }
    }
    return serviceError(429, 'rate_limited', `too many requests to ${def.service}; retry after ${until - tick} s`, { retry_after: until - tick });
  }
  for (const spec of faults) {
    if (spec.kind === 'rate_limit' && spec.tool === def.name && spec.call === n) {
      s.limitedUntil.set(def.service, tick + spec.retry_after);
      return inject(def, s, tick, n, spec, serviceError(429, 'rate_limited', `too many requests to ${def.service}; retry after ${spec.retry_after} s`, { retry_after: spec.retry_after }), def.service);
    }
    if (spec.kind === 'transient' && spec.tool === def.name && spec.call === n) {
      return inject(def, s, tick, n, spec, serviceError(503, 'upstream_error', `${def.service} answered 503 (transient upstream error); nothing was changed`));
    }
    if (spec.kind === 'schema_drift' && spec.tool === def.name && args[spec.from] !== undefined) {
      return inject(def, s, tick, n, spec, serviceError(400, 'field_renamed', `API v2: field "${spec.from}" of ${def.name} was renamed to "${spec.to}"; send "${spec.to}" instead`, { renamed_from: spec.from, renamed_to: spec.to }));
    }
  }
  const key = def.effect === 'write' && typeof args.idempotency_key === 'string' ? args.idempotency_key : undefined;
  // The canonical argument text, computed at most once and only when a key, a timeout or a stale read needs it.
  let text: string | undefined;
  if (key !== undefined) {
    const seen = s.idempotency.get(key);
    if (seen !== undefined) {
      if (seen.tool !== def.name || seen.args !== (text ??= argsTextOf(args))) {
        return { ok: false, error: { code: 'PRECONDITION_FAILED', message: `idempotency_key "${key}" was already used for a different request (${seen.tool}); use a new key for a new request` } };
      }
      return { ok: true, output: { ...(seen.output as JsonObject), idempotent_replay: true } };
    }
  }
  if (def.effect === 'write' && def.targets !== undefined) {
    for (const target of def.targets(args)) {
      if (s.staleServed.has(target)) {
        s.feedback.push({ code: 'POLICY_VIOLATION', message: `${def.name} acts on ${target}, last read from a lagging replica (stale); re-read it with consistent: true first`, severity: 'high', ref: 'stale_write', details: { tool: def.name, record: target } });
      }
    }
  }
  if (timeout !== undefined && !timeout.applied) {
    return inject(def, s, tick, n, timeout, timedOut(def.name), `${key ?? ''}#${(text ??= argsTextOf(args))}`);
  }
  const seqBefore = def.effect === 'write' ? { ...state.seq } : undefined;
  scope.state = state;
  scope.stale = stale;
  scope.tick = tick;
  scope.lagged = undefined;
  const result = def.run(state, args, scope);
  const lagged = scope.lagged;
  if (!result.ok) return result;
  let output = result.output as JsonObject;
  if (lagged !== undefined) {
    output = { ...output, replica_lag_s: lagged };
    if (stale !== undefined) inject(def, s, tick, n, stale, { ok: true, output: null }, (text ??= argsTextOf(args)));
  }
  if (def.deprecatedBy !== undefined) {
    output = { ...output, deprecation: `${def.name} is deprecated and will be removed; use ${def.deprecatedBy}` };
    // Falling back to the old endpoint while its replacement is down is the right call, not a violation.
    if (!replacementDown) s.feedback.push({ code: 'POLICY_VIOLATION', message: `${def.name} is deprecated (use ${def.deprecatedBy})`, severity: 'low', ref: 'deprecated_tool', details: { tool: def.name, use: def.deprecatedBy } });
  }
  if (seqBefore !== undefined) noteEffects(state, seqBefore);
  if (key !== undefined) s.idempotency.set(key, { tool: def.name, args: (text ??= argsTextOf(args)), output });
  applyEvents(state, tick);
  if (timeout !== undefined) {
    return inject(def, s, tick, n, timeout, timedOut(def.name), `${key ?? ''}#${(text ??= argsTextOf(args))}`);
  }
  if (partial !== undefined && Array.isArray(output.items) && output.items.length > 1) {
    const items = output.items as JsonValue[];
    return inject(def, s, tick, n, partial, { ok: true, output: { ...output, items: items.slice(0, Math.ceil(items.length / 2)), next_cursor: null, partial: true, error: { status: 206, code: 'partial_content', message: 'the page was cut short by an upstream timeout; request the same page again' } } }, canonicalize(without(args, 'page_size')));
  }
  return { ok: true, output };
}

/** Side effects created by the call: a second record with the same signature is a duplicated side effect. */
function noteEffects(state: ApiState, before: Record<Table, number>): void {
  const s = state.session;
  for (const table of TABLES) {
    for (let seq = before[table]; seq < state.seq[table]; seq++) {
      const record = getRecord(state, table, idOf(table, seq));
      if (record === undefined) continue;
      const signature = signatureOf(table, record);
      if (signature === undefined) continue;
      const first = s.effects.get(signature);
      if (first !== undefined) {
        s.feedback.push({ code: 'POLICY_VIOLATION', message: `${table}/${record.id} repeats the side effect of ${first} (a retried write applied twice)`, severity: 'high', ref: 'duplicate_side_effect', details: { record: `${table}/${record.id}`, duplicate_of: first } });
      } else {
        s.effects.set(signature, `${table}/${record.id}`);
      }
    }
  }
}

/** World events due by second `tick`, in scenario order. */
function applyEvents(state: ApiState, tick: number): void {
  const s = state.session;
  const events = state.scenario.events;
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!;
    if (s.eventsDone.has(i) || event.at > tick) continue;
    s.eventsDone.add(i);
    const current = getRecord(state, event.table as Table, event.id);
    if (current !== undefined) putRecord(state, event.table as Table, { ...current, ...event.set } as WorldRecord);
  }
}

/** Marks earlier faults noticed or handled by this call (before the call's own faults are drawn). */
function trackRecovery<A extends JsonObject>(def: ApiToolDef<A>, state: ApiState, args: A, tick: number): void {
  const s = state.session;
  for (const f of s.faults) {
    if (f.recovery === 'handled') continue;
    let handled = false;
    switch (f.kind) {
      case 'transient':
      case 'auth_expired':
        // Handled by the next call of the same tool that gets through (checked after the call: see below).
        if (f.kind === 'auth_expired' && def.name === 'refresh_token') f.recovery = 'noticed';
        break;
      case 'rate_limit': {
        const [service, early] = (f.key ?? '').split('!');
        if (def.service === service && tick >= (s.limitedUntil.get(service!) ?? 0)) {
          if (early === 'early') f.recovery = 'noticed';
          else handled = true;
        }
        break;
      }
      case 'timeout': {
        const [key] = (f.key ?? '').split('#');
        const blind = (f.key ?? '').endsWith('!blind');
        if (def.name === f.tool && !blind) {
          if (key !== '' && args.idempotency_key === key) handled = true;
          else f.key = `${f.key ?? ''}!blind`;
        } else if (def.effect === 'read' && def.service === f.service && !blind) {
          handled = true;
        }
        break;
      }
      case 'partial':
        if (def.name === f.tool && canonicalize(without(args, 'page_size')) === f.key) handled = true;
        break;
      case 'stale':
        if (def.name === f.tool && args.consistent === true) handled = true;
        break;
      case 'schema_drift': {
        const spec = state.scenario.faults.find((x) => x.kind === 'schema_drift' && x.tool === f.tool);
        if (def.name === f.tool && spec?.kind === 'schema_drift' && args[spec.to] !== undefined && args[spec.from] === undefined) handled = true;
        break;
      }
      case 'tool_down': {
        const spec = state.scenario.faults.find((x) => x.kind === 'tool_down' && x.tool === f.tool);
        if (spec?.kind === 'tool_down' && def.name === spec.via) handled = true;
        else if (def.name !== f.tool) f.recovery = 'noticed';
        break;
      }
    }
    if (f.kind === 'transient' && def.name === f.tool) handled = true;
    if (f.kind === 'auth_expired' && f.recovery === 'noticed' && def.name !== 'refresh_token') handled = true;
    if (handled) {
      f.recovery = 'handled';
      s.feedback.push({ code: 'RECOVERED', message: `recovered from the ${f.kind.replace('_', ' ')} on ${f.tool}`, ref: f.kind, details: { tool: f.tool, at: f.at, by: def.name } });
    }
  }
}

