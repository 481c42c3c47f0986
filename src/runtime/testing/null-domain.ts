/** `null`: a domain with no state and one tool that does nothing, to measure the framework's own cost per step. */
import { z } from 'zod';
import { computeTaskId, defineDomain, defineTool } from '../../core/index.js';
import type { Budget, Domain, Task } from '../../core/index.js';

const noop = defineTool<null, Record<string, never>>({
  name: 'noop',
  description: 'Does nothing and returns null.',
  effect: 'read',
  args: z.object({}).strict(),
  run: () => ({ ok: true, output: null }),
});

/** Creates the null domain: state `null`, one read tool `noop`, no policy, no user, no templates. */
export function createNullDomain(): Domain<null> {
  return defineDomain<null>({
    name: 'null',
    version: 1,
    description: 'No state, one tool that does nothing.',
    createState: () => null,
    fork: () => null,
    hashState: () => 'null',
    exportState: () => null,
    tools: [noop],
    templates: [],
  });
}

/** A null-domain task whose reference solution is `noop` then `finish`. */
export function createNullTask(budget: Budget = { steps: 1_000_000, consecutiveErrors: 1_000_000 }): Task {
  const body = {
    template: 'null/noop@1',
    domain: 'null',
    taskType: 'noop',
    level: 1,
    params: null,
    spec: {
      instructions: 'Call noop, then finish.',
      initialState: null,
      budget,
      acceptance: { finalState: true },
      solution: [{ type: 'tool' as const, tool: 'noop', args: {} }, { type: 'finish' as const }],
    },
  };
  return { id: computeTaskId(body), ...body, origin: { seed: 0, index: 0, templateDigest: '' } };
}
