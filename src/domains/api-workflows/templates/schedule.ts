/** schedule: book the earliest slot two people are both free, across time zones and existing events. */
import type { JsonObject } from '../../../core/index.js';
import { buildState } from '../worlds.js';
import { freeSlots } from '../tools/index.js';
import { WEEK_DAYS, type WorldRecord } from '../world.js';
import { defineApiTemplate } from './common.js';

const TITLES = ['quarterly review', 'onboarding call', 'incident retro', 'pricing sync'];

export const scheduleTemplate = defineApiTemplate({
  name: 'schedule',
  taskType: 'schedule',
  description: 'Book a meeting at the earliest start (30-minute grid, UTC) when the organiser, and at higher levels a colleague in another time zone, are both free within working hours.',
  levels: [
    { people: 1, names: 0, zones: 'any', duration: 30, distractors: 0, faults: [], faultCount: 0, ambiguity: 0 },
    { people: 1, names: 1, zones: 'any', duration: 60, distractors: 3, faults: ['transient'], faultCount: 1, ambiguity: 0 },
    { people: 2, names: 0, zones: 'same', duration: 30, distractors: 8, faults: ['transient', 'rate_limit', 'auth_expired'], faultCount: 2, ambiguity: 0 },
    { people: 2, names: 1, zones: 'different', duration: 60, distractors: 14, faults: ['rate_limit', 'timeout', 'auth_expired'], faultCount: 2, ambiguity: 0 },
    { people: 2, names: 1, zones: 'different', duration: 90, distractors: 99, faults: ['rate_limit', 'timeout', 'auth_expired', 'transient'], faultCount: 2, ambiguity: 1 },
  ],
  sample(rng, spec, world) {
    const organiser = rng.pick(world.tables.staff);
    const people = Number(spec.people);
    const zones = spec.zones as string;
    let other: WorldRecord | undefined;
    if (people === 2) {
      const pool = world.tables.staff.filter((s) => s.id !== organiser.id && (zones === 'any' || (zones === 'same') === (s.timezone === organiser.timezone)));
      if (pool.length === 0) return undefined;
      other = rng.pick(pool);
    }
    if (world.tables.staff.filter((s) => s.name === organiser.name || s.name === other?.name).length !== people) return undefined;
    const date = rng.pick(WEEK_DAYS);
    const duration = Number(spec.duration);
    const state = buildState(world.seed, [], { faults: [], events: [] });
    const mine = freeSlots(state, organiser, date, duration);
    const slots = other === undefined ? mine : mine.filter((t) => freeSlots(state, other!, date, duration).includes(t));
    if (slots.length === 0) return undefined;
    const title = rng.pick(TITLES);
    const goal: JsonObject = { organiser: organiser.id, organiser_name: String(organiser.name), date, duration, title, names: Number(spec.names), ...(other ? { other: other.id, other_name: String(other.name) } : {}) };
    return { goal, slots: { ask: `schedule.${people}${Number(spec.names) === 1 ? 'n' : ''}`, organiser_name: String(organiser.name), organiser_id: organiser.id, other_name: String(other?.name ?? ''), other_id: other?.id ?? '', date, duration: String(duration), title }, vague: ['date'], confirmToken: '' };
  },
  drive(goal, d) {
    const find = (name: string, id: string): string => (Number(goal.names) === 1 ? ((d.call('list_staff', { name }).items as JsonObject[]).find((s) => s.id === id)!.id as string) : id);
    const organiser = find(goal.organiser_name as string, goal.organiser as string);
    const other = goal.other === undefined ? undefined : find(goal.other_name as string, goal.other as string);
    const duration = Number(goal.duration);
    let slots = d.call('find_free_slots', { staff_id: organiser, date: goal.date as string, duration_minutes: duration }).slots as string[];
    if (other !== undefined) {
      const theirs = new Set(d.call('find_free_slots', { staff_id: other, date: goal.date as string, duration_minutes: duration }).slots as string[]);
      slots = slots.filter((t) => theirs.has(t));
    }
    d.call('create_event', { staff_id: organiser, start: slots[0]!, duration_minutes: duration, title: goal.title as string, ...(other ? { attendee_id: other } : {}), idempotency_key: d.key() });
  },
});
