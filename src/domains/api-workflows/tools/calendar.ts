/** Calendar tools: events in UTC, working hours in each staff member's local time zone. */
import { z } from 'zod';
import type { ApiState } from '../state.js';
import { serve } from '../service.js';
import { getRecord, insertRecord, listWhere } from '../state.js';
import { addMinutes, TIME_ZONES, utcText, type WorldRecord } from '../world.js';
import { id, invalid, isoDate, isoTime, keyArg, notFound, ok, refused } from './common.js';

const duration = z.number().int().refine((m) => m % 15 === 0 && m >= 15 && m <= 240, 'must be 15-240 minutes in steps of 15');

/** `iso` as canonical UTC text (YYYY-MM-DDTHH:MM:00Z). */
export function toUtc(iso: string): string {
  return utcText(Date.parse(iso));
}

/** Events of a staff member overlapping [start, end). */
function overlapping(state: ApiState, staffId: string, start: string, end: string): WorldRecord[] {
  const mine = [...listWhere(state, 'events', 'staff_id', staffId), ...listWhere(state, 'events', 'attendee', staffId)];
  return mine.filter((e, i) => String(e.start) < end && String(e.end) > start && mine.indexOf(e) === i).sort((a, b) => (a.id < b.id ? -1 : 1));
}

/** Free slot starts (UTC, 30-minute grid) of a staff member on a local date. */
export function freeSlots(state: ApiState, staff: WorldRecord, date: string, minutes: number): string[] {
  const offset = TIME_ZONES[String(staff.timezone)] ?? 0;
  const open = addMinutes(`${date}T${staff.work_start}:00Z`, -offset);
  const close = addMinutes(`${date}T${staff.work_end}:00Z`, -offset);
  // Busy intervals of that window once, in epoch minutes; the slot loop is then arithmetic.
  const events = overlapping(state, staff.id, open, close);
  const starts: number[] = [];
  const ends: number[] = [];
  for (const e of events) {
    starts.push(Date.parse(String(e.start)) / 60_000);
    ends.push(Date.parse(String(e.end)) / 60_000);
  }
  const first = Date.parse(open) / 60_000;
  const last = Date.parse(close) / 60_000;
  const slots: string[] = [];
  for (let t = first; t + minutes <= last; t += 30) {
    let free = true;
    for (let i = 0; i < starts.length; i++) {
      if (starts[i]! < t + minutes && ends[i]! > t) {
        free = false;
        break;
      }
    }
    if (free) slots.push(utcText(t * 60_000));
  }
  return slots;
}

export const calendarTools = [
  serve({
    name: 'list_events',
    service: 'calendar',
    effect: 'read',
    description: 'A staff member\'s events on a UTC date (start/end in UTC).',
    args: z.strictObject({ staff_id: id('stf'), date: isoDate }),
    run(state, args) {
      if (getRecord(state, 'staff', args.staff_id) === undefined) return notFound('staff member', args.staff_id);
      return ok({ items: overlapping(state, args.staff_id, `${args.date}T00:00:00Z`, `${args.date}T23:59:59Z`) as never });
    },
  }),
  serve({
    name: 'find_free_slots',
    service: 'calendar',
    effect: 'read',
    description: 'Free start times (UTC, every 30 minutes) of one staff member on a date in their local time zone, within their working hours, for a meeting of duration_minutes.',
    args: z.strictObject({ staff_id: id('stf'), date: isoDate, duration_minutes: duration }),
    run(state, args) {
      const staff = getRecord(state, 'staff', args.staff_id);
      if (staff === undefined) return notFound('staff member', args.staff_id);
      return ok({ staff_id: staff.id, timezone: String(staff.timezone), slots: freeSlots(state, staff, args.date, args.duration_minutes) });
    },
  }),
  serve({
    name: 'create_event',
    service: 'calendar',
    effect: 'write',
    description: 'Book a meeting for a staff member (and optionally one attendee, also staff) at start (ISO-8601 with zone) for duration_minutes. Refused on a clash.',
    args: z.strictObject({ staff_id: id('stf'), start: isoTime, duration_minutes: duration, title: z.string().min(1).max(80), attendee_id: id('stf').optional(), idempotency_key: keyArg }),
    run(state, args) {
      const staff = getRecord(state, 'staff', args.staff_id);
      if (staff === undefined) return notFound('staff member', args.staff_id);
      if (args.attendee_id !== undefined && getRecord(state, 'staff', args.attendee_id) === undefined) return notFound('staff member', args.attendee_id);
      if (!Number.isFinite(Date.parse(args.start))) return invalid('start', `start ${args.start} is not a valid date-time`);
      const start = toUtc(args.start);
      const end = addMinutes(start, args.duration_minutes);
      for (const who of [args.staff_id, args.attendee_id]) {
        if (who !== undefined && overlapping(state, who, start, end).length > 0) return refused(`${who} already has an event between ${start} and ${end}`);
      }
      return ok(insertRecord(state, 'events', { staff_id: args.staff_id, title: args.title, start, end, attendee: args.attendee_id ?? null }));
    },
  }),
];
