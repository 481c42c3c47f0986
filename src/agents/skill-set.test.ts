// The generic skill set's fills on a made-up shop (no domain's code): list loops, picks by the user's words and recency, names, asks, array ids.
import { describe, expect, it } from 'vitest';
import type { Action, JsonValue, Observation, StepResult, ToolSpec } from '../core/index.js';
import { genericSkills, type SkillTracker } from './skill-set.js';

const str = (description: string) => ({ type: 'string', description });
const tool = (name: string, effect: 'read' | 'write', props: Record<string, JsonValue>, description = name): ToolSpec => ({
  name,
  description,
  effect,
  parameters: { type: 'object', properties: props, required: Object.keys(props) },
});
const ids = { type: 'array', items: { type: 'string' } };
const tools: ToolSpec[] = [
  tool('find_client_by_name_postcode', 'read', { first_name: str("First name, e.g. 'Ann'."), last_name: str("Last name, e.g. 'Lee'."), postcode: str("Postcode, e.g. '12345'.") }),
  tool('get_client', 'read', { client_id: str('Client id.') }),
  tool('get_parcel', 'read', { parcel_id: str('Parcel id.') }),
  tool('swap_parcel_goods', 'write', { parcel_id: str('Parcel id.'), good_ids: ids, new_good_ids: ids }, 'Swap goods of a parcel'),
];

const result = (observation: Partial<Observation>): StepResult => ({
  observation: { kind: 'tool', ...observation },
  reward: 0,
  terminated: false,
  truncated: false,
  feedback: [],
  info: { step: 0, outcome: 0, shaping: 0 } as StepResult['info'],
});

function start(text: string): SkillTracker {
  return genericSkills.start({ kind: 'reset', text, tools });
}
function call(t: SkillTracker, macro: string, output: JsonValue): Action {
  const action = t.expand(macro);
  t.observe(macro, action, result({ output }));
  return action;
}

const client = { name: 'Ann Lee', parcels: ['P-1', 'P-2', 'P-3'] };
const parcel = (id: string, good: string, goods: Array<[string, string]>) => ({ parcel_id: id, goods: goods.map(([good_id, label]) => ({ good_id, label })), note: good });

describe('generic@4 fills', () => {
  it('asks for several facts a producer needs in one question, then fills them in turn from "name is X Y"', () => {
    const t = start('hi, i need help with a parcel');
    expect(t.options()).toContain('ask:first_name+last_name+postcode');
    expect(t.expand('ask:first_name+last_name+postcode')).toEqual({ type: 'message', text: 'Could you tell me your first name, last name and postcode?' });
    const ask = t.expand('ask:first_name+last_name+postcode');
    t.observe('ask:first_name+last_name+postcode', ask, result({ kind: 'message', text: 'my name is Ann Lee, postcode 40238' }));
    expect(t.expand('call:find_client_by_name_postcode:nnn')).toEqual({ type: 'tool', tool: 'find_client_by_name_postcode', args: { first_name: 'Ann', last_name: 'Lee', postcode: '40238' } });
  });

  it('looks through a list output one read at a time, and acts on the element whose words the user said', () => {
    const t2 = start('please swap the Red Kettle in my parcel');
    t2.observe('x', { type: 'tool', tool: 'get_client', args: { client_id: 'c1' } }, result({ output: client }));
    expect(t2.expand('call:get_parcel:o')).toEqual({ type: 'tool', tool: 'get_parcel', args: { parcel_id: 'P-1' } });
    call(t2, 'call:get_parcel:o', parcel('P-1', 'x', [['g1', 'Blue Mug']]));
    // The first parcel was read: the next element of the list is on offer.
    expect(t2.expand('call:get_parcel:o')).toEqual({ type: 'tool', tool: 'get_parcel', args: { parcel_id: 'P-2' } });
    call(t2, 'call:get_parcel:o', parcel('P-2', 'x', [['g2', 'Red Kettle'], ['g3', 'Green Towel']]));
    call(t2, 'call:get_parcel:o', parcel('P-3', 'x', [['g4', 'Black Kettle']]));
    // Every parcel read: no more get_parcel; the swap is about P-2 (it holds "red" and "kettle"), and its named good.
    expect(t2.options().some((m) => m.startsWith('call:get_parcel'))).toBe(false);
    const swap = t2.options().find((m) => m.startsWith('call:swap_parcel_goods'));
    expect(swap === undefined ? undefined : (t2.expand(swap) as { args: Record<string, JsonValue> }).args['parcel_id']).toBe('P-2');
  });

  it('takes a new_ id from outside the object the call is about, never the old one', () => {
    const t = start('swap the Red Kettle in parcel P-2 for the steel kettle');
    t.observe('x', { type: 'tool', tool: 'get_parcel', args: { parcel_id: 'P-2' } }, result({ output: parcel('P-2', 'x', [['g2', 'Red Kettle'], ['g3', 'Green Towel']]) }));
    t.observe('y', { type: 'tool', tool: 'get_client', args: { client_id: 'c1' } }, result({ output: { variants: [{ good_id: 'g2', label: 'red' }, { good_id: 'g7', label: 'steel' }, { good_id: 'g8', label: 'white' }] } }));
    const macro = t.options().find((m) => m.startsWith('call:swap_parcel_goods'))!;
    expect((t.expand(macro) as { args: Record<string, JsonValue> }).args).toMatchObject({ parcel_id: 'P-2', good_ids: ['g2'], new_good_ids: ['g7'] });
  });

  it('picks the last element of a list when the user asks for the latest one', () => {
    const latest = start('what is in my most recent parcel?');
    latest.observe('x', { type: 'tool', tool: 'get_client', args: { client_id: 'c1' } }, result({ output: client }));
    expect(latest.expand('call:get_parcel:o')).toEqual({ type: 'tool', tool: 'get_parcel', args: { parcel_id: 'P-3' } });
    const plain = start('what is in my parcel?');
    plain.observe('x', { type: 'tool', tool: 'get_client', args: { client_id: 'c1' } }, result({ output: client }));
    expect(plain.expand('call:get_parcel:o')).toEqual({ type: 'tool', tool: 'get_parcel', args: { parcel_id: 'P-1' } });
  });
});
