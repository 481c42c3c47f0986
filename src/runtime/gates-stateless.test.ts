import { describe, expect, it } from 'vitest';
import { computeTaskId, type Task } from '../core/index.js';
import { instantiateTask } from '../generation/index.js';
import { math as mathDomain, mathTemplates } from '../domains/math/index.js';
import { createNonTrivialGate, createOracleGate } from './gates.js';

describe('simulator gates on stateless questions', () => {
  const played = { oracle: createOracleGate(mathDomain, { shortcut: false }), nonTrivial: createNonTrivialGate(mathDomain, { shortcut: false }) };
  const fast = { oracle: createOracleGate(mathDomain), nonTrivial: createNonTrivialGate(mathDomain) };

  it('give the verdicts of the played episodes for every math template, level and many seeds', () => {
    let checked = 0;
    for (const template of mathTemplates) {
      for (let level = 1; level <= template.levels.length; level++) {
        for (let seed = 0; seed < 40; seed++) {
          const task = instantiateTask(template, { level, seed, index: seed });
          expect(fast.oracle(task)).toEqual(played.oracle(task));
          expect(fast.nonTrivial(task)).toEqual(played.nonTrivial(task));
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(100);
  });

  it('play the episode when the reference answer is wrong, and so give its exact failure', () => {
    const good = instantiateTask(mathTemplates[0]!, { level: 2, seed: 3, index: 0 });
    const { id: _id, ...rest } = good;
    const body = { ...rest, spec: { ...good.spec, solution: [{ type: 'finish' as const, answer: 'not the answer' }] } };
    const wrong: Task = { ...body, id: computeTaskId(body) };
    const verdict = fast.oracle(wrong);
    expect(verdict.ok).toBe(false);
    expect(verdict).toEqual(played.oracle(wrong));
    // A task whose empty trajectory would already pass (no answer to check) is played, and refused.
    const open = { ...rest, spec: { ...good.spec, acceptance: { finalState: false } } };
    const trivial: Task = { ...open, id: computeTaskId(open) };
    expect(fast.nonTrivial(trivial)).toEqual(played.nonTrivial(trivial));
    expect(fast.nonTrivial(trivial).ok).toBe(false);
  });
});
