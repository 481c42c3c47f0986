/** A tiny question/answer checker standing in for the runtime in generation tests: oracle and non-triviality hooks. */
import type { Action, GateVerdict, Task } from '../../core/index.js';
import type { GateHooks } from '../gates.js';

/** Lower-case, commas stripped, whitespace collapsed (the default output normalisation of domains). */
function normalize(text: string): string {
  return text.toLowerCase().replace(/,/g, '').replace(/\s+/g, ' ').trim();
}

/** Whether a trajectory solves a question/answer task: its first `finish` answers `acceptance.answer`. */
export function solvesQuestion(task: Task, actions: readonly Action[]): boolean {
  const expected = task.spec.acceptance.answer;
  if (expected === undefined) return false;
  const finish = actions.find((a) => a.type === 'finish');
  const answer = finish?.type === 'finish' ? (finish.answer ?? '') : '';
  return normalize(answer) === normalize(expected);
}

/** Gate hooks for question/answer tasks: the reference solution must pass; empty and random answers must fail. */
export function createQaGateHooks(): Required<GateHooks> {
  return {
    oracle(task: Task): GateVerdict {
      if (task.spec.acceptance.answer === undefined) return { ok: false, reason: 'task has no acceptance.answer to check' };
      if (solvesQuestion(task, task.spec.solution)) return { ok: true };
      const finish = task.spec.solution.find((a) => a.type === 'finish');
      const given = finish?.type === 'finish' ? JSON.stringify(finish.answer ?? '') : 'no finish action';
      return { ok: false, reason: `reference solution answers ${given} but acceptance.answer is ${JSON.stringify(task.spec.acceptance.answer)}` };
    },
    nonTrivial(task: Task): GateVerdict {
      if (solvesQuestion(task, [])) return { ok: false, reason: 'the empty trajectory passes' };
      // Derived from the id, so the "random" answer is reproducible and never numeric.
      const guess = `guess-${task.id.slice(0, 8)}`;
      if (solvesQuestion(task, [{ type: 'message', text: 'hello' }, { type: 'finish', answer: guess }])) {
        return { ok: false, reason: `a random trajectory passes (answer ${guess})` };
      }
      return { ok: true };
    },
  };
}
