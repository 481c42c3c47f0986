import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import type { Task } from '../core/index.js';
import { retailTemplates } from '../domains/retail/index.js';
import { clearanceTemplate, restockTemplate } from '../runtime/testing/index.js';
import { instantiateTask } from './instantiate.js';
import { FAST_CHECKED_KEYS, isPlainValidTask, taskSchema, taskSpecSchema } from './task-schema.js';
import { addTemplate, templates } from './testing/templates.js';

const tasks: Task[] = [];
for (const template of [...retailTemplates, restockTemplate, clearanceTemplate, addTemplate] as const) {
  for (let level = 1; level <= template.levels.length; level++) tasks.push(instantiateTask(template as typeof addTemplate, { level, seed: level, index: 0 }));
}

/** A deep copy with one value replaced at a path (or a key added or removed). */
function mutate(task: Task, path: readonly (string | number)[], change: { set?: unknown; remove?: boolean }): unknown {
  const copy = structuredClone(task) as unknown as Record<string | number, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (change.remove) delete node[last];
  else node[last] = change.set;
  return copy;
}

/** Every path into a value (objects and arrays), so mutations can land anywhere. */
function paths(value: unknown, prefix: Array<string | number> = [], out: Array<Array<string | number>> = []): Array<Array<string | number>> {
  if (typeof value !== 'object' || value === null) return out;
  for (const key of Object.keys(value)) {
    const path = [...prefix, Array.isArray(value) ? Number(key) : key];
    out.push(path);
    paths((value as Record<string, unknown>)[key], path, out);
  }
  return out;
}

const oddValues = [undefined, null, '', ' ', 'x', -1, 0, 1.5, Number.NaN, Infinity, 2 ** 60, true, [], {}, [undefined], new Date(0), { extra: 1 }, Object.create(null)];

describe('isPlainValidTask (the schema gate\'s fast path)', () => {
  it('accepts generated tasks of every template and level (so the fast path is taken)', () => {
    for (const task of tasks) expect(isPlainValidTask(task), task.template).toBe(true);
  });

  test.prop([fc.nat(), fc.nat(), fc.nat({ max: oddValues.length }), fc.boolean(), fc.string({ maxLength: 6 })], { numRuns: 3000 })(
    'never accepts what zod rejects: any one value replaced, removed or added anywhere in a task',
    (which, where, what, remove, newKey) => {
      const task = tasks[which % tasks.length]!;
      const all = paths(task);
      const path = all[where % all.length]!;
      const objects = [[], ...all].filter((p) => {
        let node: unknown = task;
        for (const key of p) node = (node as Record<string | number, unknown>)[key];
        return typeof node === 'object' && node !== null;
      });
      const candidate =
        what === oddValues.length
          ? mutate(task, [...objects[where % objects.length]!, newKey || 'k'], { set: 1 })
          : mutate(task, path, remove ? { remove: true } : { set: oddValues[what] });
      if (isPlainValidTask(candidate)) expect(taskSchema.safeParse(candidate).success).toBe(true);
    },
  );

  test.prop([fc.nat(), fc.nat(), fc.string({ maxLength: 6 }), fc.constantFrom<unknown>(1, undefined, 'x', Number.NaN, { extra: 1 })], { numRuns: 500 })(
    'gives zod\'s verdict on a task with a non-enumerable member added to any of its objects (both ignore it)',
    (which, where, key, value) => {
      const task = structuredClone(tasks[which % tasks.length]!) as unknown as Record<string, unknown>;
      const objects = [[], ...paths(task)]
        .map((p) => p.reduce<unknown>((node, k) => (node as Record<string | number, unknown>)[k], task))
        .filter((node): node is object => typeof node === 'object' && node !== null && !Array.isArray(node));
      Object.defineProperty(objects[where % objects.length]!, key || 'k', { value, enumerable: false });
      expect(isPlainValidTask(task)).toBe(taskSchema.safeParse(task).success);
    },
  );

  it('gives zod\'s verdict on task ids one character or one length away from a digest, and on budgets of every count', () => {
    const valid = tasks[0]!;
    const ids = [valid.id.toUpperCase(), `${valid.id.slice(0, 63)}g`, `${valid.id.slice(0, 63)}/`, `${valid.id.slice(0, 63)}:`, `${valid.id.slice(0, 63)}\``, valid.id.slice(1), `${valid.id}0`, `${valid.id}\n`, 'a'.repeat(64), '0'.repeat(64)];
    for (const id of ids) {
      const task = mutate(valid, ['id'], { set: id });
      expect(isPlainValidTask(task), id).toBe(taskSchema.safeParse(task).success);
    }
    for (const key of ['steps', 'tokens', 'timeMs', 'toolCalls', 'consecutiveErrors']) {
      for (const value of [0, 3, -1, 1.5, '3', null]) {
        const task = mutate(valid, ['spec', 'budget', key], { set: value });
        expect(isPlainValidTask(task), `${key}: ${String(value)}`).toBe(taskSchema.safeParse(task).success);
      }
    }
  });

  it('leaves planted bad tasks to zod, so their verdicts and messages are unchanged', () => {
    const valid = tasks[0]!;
    const bad = [
      mutate(valid, ['spec', 'instructions'], { set: '   ' }),
      mutate(valid, ['spec', 'solution'], { set: [] }),
      mutate(valid, ['id'], { set: 'not a digest' }),
      mutate(valid, ['spec', 'acceptance', 'extra'], { set: true }),
      mutate(valid, ['params'], { set: { n: Number.NaN } }),
      mutate(valid, ['spec', 'solution', 0], { set: { type: 'tool', tool: 'x' } }),
      mutate(valid, ['spec', 'acceptance', 'outputs'], { set: new Array(2) }),
    ];
    for (const task of bad) {
      expect(isPlainValidTask(task)).toBe(false);
      expect(taskSchema.safeParse(task).success).toBe(false);
    }
    // Templates that plant bad tasks (see testing/templates.ts) are rejected as before.
    expect(templates.length).toBeGreaterThan(0);
  });

  it('knows exactly the keys of the zod schema\'s strict objects', () => {
    expect([...FAST_CHECKED_KEYS.task].sort()).toEqual(Object.keys(taskSchema.shape).sort());
    expect([...FAST_CHECKED_KEYS.spec].sort()).toEqual(Object.keys(taskSpecSchema.shape).sort());
    expect([...FAST_CHECKED_KEYS.acceptance].sort()).toEqual(Object.keys(taskSpecSchema.shape.acceptance.shape).sort());
    expect([...FAST_CHECKED_KEYS.budget].sort()).toEqual(Object.keys(taskSpecSchema.shape.budget.shape).sort());
    expect([...FAST_CHECKED_KEYS.origin].sort()).toEqual(Object.keys(taskSchema.shape.origin.shape).sort());
    expect([...FAST_CHECKED_KEYS.constraints].sort()).toEqual(Object.keys(taskSpecSchema.shape.constraints.unwrap().shape).sort());
    expect([...FAST_CHECKED_KEYS.faults].sort()).toEqual(Object.keys(taskSpecSchema.shape.faults.unwrap().shape).sort());
    expect([...FAST_CHECKED_KEYS.faultRule].sort()).toEqual(Object.keys(taskSpecSchema.shape.faults.unwrap().shape.rules.element.shape).sort());
  });
});
