/** A hook module for worker tests: the QA checker, plus an oracle that throws or rejects on some task ids. */
import type { GateVerdict, Task } from '../../core/index.js';
import type { GateHooks } from '../gates.js';
import { createQaGateHooks } from './qa-checker.js';

/** Called once per batch in each worker thread (`GenerateBatchDeps.hookModule`). */
export function createGateHooks(): GateHooks {
  const qa = createQaGateHooks();
  return {
    oracle(task: Task): GateVerdict {
      if (task.id.startsWith('0')) throw new Error(`planted failure on ${task.id}`);
      if (task.id.startsWith('1')) return { ok: false, reason: 'planted rejection' };
      return qa.oracle(task);
    },
    nonTrivial: qa.nonTrivial,
  };
}
