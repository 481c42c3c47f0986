/** A task's scenario: the seeded faults the services inject and the world events that happen on their own. */
import { z } from 'zod';
import type { Table } from './world.js';

const tool = z.string().regex(/^[a-z][a-z0-9_]*$/);
const call = z.number().int().min(1).max(50);

/** One injected fault, keyed by the n-th call of a tool (or a second of the clock): reproducible from the task alone. */
export const faultSpecSchema = z.discriminatedUnion('kind', [
  /** 503 on call `call` of `tool`; a retry succeeds. */
  z.strictObject({ kind: z.literal('transient'), tool, call }),
  /** 504 on call `call` of a write: `applied` says whether the write happened before the response was lost. */
  z.strictObject({ kind: z.literal('timeout'), tool, call, applied: z.boolean() }),
  /** 429 on call `call`: the tool's service refuses every call for `retry_after` seconds. */
  z.strictObject({ kind: z.literal('rate_limit'), tool, call, retry_after: z.number().int().min(1).max(10) }),
  /** Call `call` of a list tool returns half a page and no next cursor (206, marked partial). */
  z.strictObject({ kind: z.literal('partial'), tool, call }),
  /** Reads of `tool` come from a replica lagging `lag` seconds unless `consistent: true` is passed. */
  z.strictObject({ kind: z.literal('stale'), tool, lag: z.number().int().min(1).max(60) }),
  /** API v2 renamed argument `from` to `to` on `tool`: calls using `from` get 400 naming the new field. */
  z.strictObject({ kind: z.literal('schema_drift'), tool, from: z.string(), to: z.string() }),
  /** From second `at` every call gets 401 until `refresh_token` is called. */
  z.strictObject({ kind: z.literal('auth_expired'), at: z.number().int().min(1).max(50) }),
  /** `tool` answers 503 for the whole episode; `via` reaches the same data or effect. */
  z.strictObject({ kind: z.literal('tool_down'), tool, via: tool }),
]);
export type FaultSpec = z.infer<typeof faultSpecSchema>;
export type FaultKindName = FaultSpec['kind'];
export const FAULT_KINDS: readonly FaultKindName[] = ['transient', 'timeout', 'rate_limit', 'partial', 'stale', 'schema_drift', 'auth_expired', 'tool_down'];

/** A change the world makes on its own at second `at` (e.g. a payment settles). */
export const eventSpecSchema = z.strictObject({
  at: z.number().int().min(1).max(60),
  kind: z.enum(['payment_settles', 'shipment_delayed', 'ticket_reassigned', 'invoice_paid']),
  table: z.enum(['invoices', 'payments', 'shipments', 'tickets']),
  id: z.string(),
  set: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
});
export type EventSpec = z.infer<typeof eventSpecSchema> & { table: Table };

export const scenarioSchema = z.strictObject({
  faults: z.array(faultSpecSchema).max(16),
  events: z.array(eventSpecSchema).max(8),
});
export type Scenario = z.infer<typeof scenarioSchema>;

export const NO_SCENARIO: Scenario = { faults: [], events: [] };

/** How the agent dealt with one injected fault. */
export type Recovery = 'handled' | 'noticed' | 'ignored';

/** One injected fault as it happened in an episode. */
export interface FaultRecord {
  kind: FaultKindName;
  tool: string;
  service: string;
  /** Second of the clock when it was injected. */
  at: number;
  recovery: Recovery;
  /** Idempotency key and canonical args of a timed-out write; cursor of a partial page. */
  key?: string;
}
