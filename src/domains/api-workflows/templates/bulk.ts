/** bulk-update: reassign every matching ticket over paginated search results (pages 1 → 4, an event mid-way). */
import type { JsonObject } from '../../../core/index.js';
import type { EventSpec, FaultSpec } from '../scenario.js';
import { PAGE_SIZE } from '../tools/index.js';
import { indexOf } from '../worlds.js';
import { defineApiTemplate } from './common.js';

export const bulkTemplate = defineApiTemplate({
  name: 'bulk-update',
  taskType: 'bulk',
  description: 'A staff member is on leave: reassign all their open (and at high levels pending) tickets to a colleague, page by page; at level 5 a ticket is moved by someone else mid-way and a lagging replica hides it.',
  levels: [
    { names: 0, pages: [1, 1], statuses: ['open'], priority: 'high', recheck: 0, distractors: 0, faults: [], faultCount: 0 },
    { names: 0, pages: [2, 2], statuses: ['open'], recheck: 0, distractors: 3, faults: ['transient', 'partial'], faultCount: 1 },
    { names: 1, pages: [2, 3], statuses: ['open'], recheck: 0, distractors: 8, faults: ['transient', 'partial'], faultCount: 1 },
    { names: 1, pages: [2, 3], statuses: ['open', 'pending'], recheck: 0, distractors: 14, faults: ['partial', 'rate_limit', 'auth_expired'], faultCount: 3 },
    { names: 1, pages: [3, 4], statuses: ['open', 'pending'], recheck: 1, distractors: 99, faults: ['partial', 'rate_limit', 'transient', 'auth_expired'], faultCount: 2 },
  ],
  sample(rng, spec, world) {
    const [lo, hi] = spec.pages as [number, number];
    const statuses = spec.statuses as string[];
    const priority = spec.priority as string | undefined;
    const from = rng.pick(world.tables.staff);
    const to = rng.pick(world.tables.staff.filter((s) => s.id !== from.id));
    if (world.tables.staff.filter((s) => s.name === from.name || s.name === to.name).length !== 2) return undefined;
    const mine = indexOf(world).ticketsAssigned.get(from.id) ?? [];
    const pages = statuses.map((s) => Math.max(1, Math.ceil(mine.filter((t) => t.status === s && (priority === undefined || t.priority === priority)).length / PAGE_SIZE)));
    const total = pages.reduce((a, b) => a + b, 0);
    if (total < lo || total > hi || mine.filter((t) => statuses.includes(String(t.status))).length === 0) return undefined;
    const goal: JsonObject = { from: from.id, to: to.id, from_name: String(from.name), to_name: String(to.name), statuses, names: Number(spec.names), recheck: Number(spec.recheck), ...(priority ? { priority } : {}) };
    const events: EventSpec[] = [];
    const faults: FaultSpec[] = [];
    if (Number(spec.recheck) === 1) {
      // Someone else takes one of the later tickets right after the searches; the replica lags behind.
      const targets = mine.filter((t) => statuses.includes(String(t.status)));
      const moved = targets[targets.length - 1]!;
      const third = world.tables.staff.find((s) => s.id !== from.id && s.id !== to.id)!;
      events.push({ at: 2 * Number(spec.names) + total + 1, kind: 'ticket_reassigned', table: 'tickets', id: moved.id, set: { assignee: third.id } });
      faults.push({ kind: 'stale', tool: 'get_ticket', lag: 30 });
    }
    return { goal, events, faults, slots: { ask: Number(spec.names) === 0 ? 'bulk.ids' : Number(spec.recheck) === 1 ? 'bulk.recheck' : 'bulk.names', which: `${statuses.join(' and ')}${priority ? ` ${priority}-priority` : ''}`, from_name: String(from.name), to_name: String(to.name), from_id: from.id, to_id: to.id }, vague: [], confirmToken: '' };
  },
  drive(goal, d) {
    let from = goal.from as string;
    let to = goal.to as string;
    if (Number(goal.names) === 1) {
      from = (d.call('list_staff', { name: goal.from_name as string }).items as JsonObject[]).find((s) => s.id === goal.from)!.id as string;
      to = (d.call('list_staff', { name: goal.to_name as string }).items as JsonObject[]).find((s) => s.id === goal.to)!.id as string;
    }
    const tickets: JsonObject[] = [];
    for (const status of goal.statuses as string[]) tickets.push(...d.all('search_tickets', { assignee: from, status, ...(goal.priority ? { priority: goal.priority as string } : {}) }));
    for (const ticket of tickets) {
      if (Number(goal.recheck) === 1 && d.call('get_ticket', { ticket_id: ticket.id as string }).assignee !== from) continue;
      d.call('update_ticket', { ticket_id: ticket.id as string, assignee: to, idempotency_key: d.key() });
    }
  },
});
