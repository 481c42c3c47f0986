import { describe, expect, it } from 'vitest';
import { computeTaskId, createRng, defineTemplate, EnvHarnessError } from '../core/index.js';
import { instantiateTask } from './instantiate.js';
import { addTemplate, badParamsTemplate, storyTemplate } from './testing/templates.js';

describe('instantiateTask', () => {
  it('is deterministic: the same seed, level and index give a deep-equal task', () => {
    const a = instantiateTask(addTemplate, { level: 2, seed: 42, index: 7 });
    const b = instantiateTask(addTemplate, { level: 2, seed: 42, index: 7 });
    expect(a).toEqual(b);
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
  });

  it('writes the spec as { ...built, solution }: the built members in order, then the solution; an own __proto__ stays a member', () => {
    const task = instantiateTask(addTemplate, { level: 2, seed: 3, index: 1 });
    expect(Object.keys(task.spec)).toEqual(['instructions', 'initialState', 'budget', 'acceptance', 'solution']);
    const withProto = defineTemplate({
      ...addTemplate,
      name: 'add-proto',
      build: (p) => ({ ...addTemplate.build(p, undefined as never), ...(JSON.parse('{"__proto__": {"polluted": true}}') as object) }),
    });
    const spec = instantiateTask(withProto, { level: 1, seed: 3, index: 1 }).spec as unknown as Record<string, unknown>;
    expect(Object.getPrototypeOf(spec)).toBe(Object.prototype);
    expect(Object.keys(spec)).toEqual(['instructions', 'initialState', 'budget', 'acceptance', '__proto__', 'solution']);
    expect(spec['polluted']).toBeUndefined();
  });

  it('gives different tasks for different indexes and seeds', () => {
    const ids = new Set<string>();
    for (let index = 0; index < 50; index++) ids.add(instantiateTask(addTemplate, { level: 3, seed: 1, index }).id);
    expect(ids.size).toBe(50);
    expect(instantiateTask(addTemplate, { level: 3, seed: 2, index: 0 }).id).not.toBe(instantiateTask(addTemplate, { level: 3, seed: 1, index: 0 }).id);
  });

  it('draws params from createRng([seed, template.id, index]) and identifies the task by computeTaskId', () => {
    const task = instantiateTask(addTemplate, { level: 3, seed: 5, index: 11 });
    const rng = createRng([5, addTemplate.id, 11]);
    expect(task.params).toEqual({ a: rng.int(0, 999), b: rng.int(0, 999) });
    expect(task.id).toBe(computeTaskId(task));
    expect(task).toMatchObject({
      template: 'testing/add@1',
      domain: 'testing',
      taskType: 'arithmetic',
      level: 3,
      origin: { seed: 5, index: 11, templateDigest: addTemplate.sourceDigest },
    });
    expect(task.spec.solution).toEqual([{ type: 'finish', answer: task.spec.acceptance.answer }]);
  });

  it('keeps the id independent of the origin (two seeds, same content, same id)', () => {
    const byId = new Map<string, number>();
    for (let seed = 0; seed < 200; seed++) {
      const task = instantiateTask(storyTemplate, { level: 1, seed, index: 0 });
      byId.set(task.id, (byId.get(task.id) ?? 0) + 1);
    }
    expect(byId.size).toBe(6);
  });

  it('rejects a level out of range with PARAMS_INVALID naming the valid range', () => {
    for (const level of [0, 4, 1.5]) {
      const error = (() => {
        try {
          instantiateTask(addTemplate, { level, seed: 1, index: 0 });
        } catch (e) {
          return e as EnvHarnessError;
        }
        throw new Error('no error');
      })();
      expect(error.code).toBe('PARAMS_INVALID');
      expect(error.message).toContain('valid levels are 1..3');
      expect(error.details?.pointer).toBe('/level');
    }
  });

  it('rejects sampled params the schema refuses, with a JSON pointer', () => {
    try {
      instantiateTask(badParamsTemplate, { level: 1, seed: 1, index: 0 });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(EnvHarnessError);
      expect((error as EnvHarnessError).code).toBe('PARAMS_INVALID');
      expect((error as EnvHarnessError).details?.pointer).toBe('/params/b');
    }
  });

  it('rejects a non-integer seed and a negative index', () => {
    expect(() => instantiateTask(addTemplate, { level: 1, seed: 0.5, index: 0 })).toThrow(/seed/);
    expect(() => instantiateTask(addTemplate, { level: 1, seed: 1, index: -1 })).toThrow(/index/);
  });
});
