/** Task ids and seeds from core's byte writer against the RFC 8785 reference writer. */
import { hash } from 'node:crypto';
import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { createRng } from './rng.js';
import { reference, validJson, wellFormed } from './testing/rfc8785.js';
import { computeTaskId, fastRng, fastTaskId, rngFor, taskIdAndBody } from './hashing.js';

const sha = (text: string): string => hash('sha256', text, 'hex');

describe('generation hashing against the RFC 8785 reference', () => {
  test.prop([validJson, validJson, fc.integer({ min: 0, max: 9 }), wellFormed])(
    'task ids and seeds from the byte writer equal the reference',
    (params, spec, level, name) => {
      const task = { template: `t/${name}@1`, domain: name, taskType: name, level, params: params as never, spec: spec as never };
      const expected = sha(reference({ domain: name, level, params, spec, taskType: name, template: `t/${name}@1` }));
      expect(fastTaskId(task)).toBe(expected);
      expect(computeTaskId(task as never)).toBe(expected);
      // A task whose params and spec share an object (retail's user goal): the remembered copy is exact.
      const shared = { ...task, spec: { goal: params, again: params } as never };
      expect(fastTaskId(shared)).toBe(sha(reference({ ...shared })));
      expect(rngFor(level, name, 7).nextUint32()).toBe(createRng([level, name, 7]).nextUint32());
      expect(fastRng([name, level]).nextUint32()).toBe(createRng([name, level]).nextUint32());
    },
  );

  test.prop([validJson, validJson, fc.integer({ min: 0, max: 9 }), wellFormed, fc.integer(), fc.nat()])(
    "a task's id and stored body from one writing equal the reference's id and canonical body",
    (params, spec, level, name, seed, index) => {
      const origin = { seed, index, templateDigest: name };
      const task = { template: `t/${name}@1`, domain: name, taskType: name, level, params: params as never, spec: spec as never, origin };
      const id = sha(reference({ domain: name, level, params, spec, taskType: name, template: `t/${name}@1` }));
      expect(taskIdAndBody(task)).toEqual({ id, body: reference({ id, template: task.template, domain: name, taskType: name, level, params, spec, origin }) });
      // Params and spec sharing an object: the remembered copy is spliced like the rest.
      const shared = { ...task, spec: { goal: params, again: params } as never };
      const sharedId = sha(reference({ domain: name, level, params, spec: shared.spec, taskType: name, template: `t/${name}@1` }));
      expect(taskIdAndBody(shared).body).toBe(reference({ ...shared, id: sharedId }));
    },
  );
});
