/** The CLI's gate hook module (src/builtins.ts `createGateHooks`): what its worker threads decide is what the main thread decides. */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { builtinDomains, createGateHooks, isBuiltinDomain, templates } from '../../builtins.js';
import type { RegisteredTemplate, Task } from '../../core/index.js';
import { createCandidatePlan, instantiateCandidates, unpackChunk } from '../../generation/candidates.js';
import { checkTaskGates } from '../../generation/index.js';
import run from '../../generation/worker.js';
import { createDomainGateHooks } from '../../runtime/index.js';

const BUILTINS = fileURLToPath(new URL('../../builtins.ts', import.meta.url));
// The built-in templates are registered ones (each carries its id and source digest).
const builtinTemplates = templates as RegisteredTemplate<any>[];
const GATES = { schema: true, oracle: true, nonTrivial: true };

describe('built-in gate hooks for worker threads', () => {
  it('a worker running them gives the verdicts the harness gives on the main thread (retail and math)', async () => {
    const chosen = ['retail/cancel', 'retail/exchange', 'math/chain-sum'].map((id) => builtinTemplates.find((t) => t.id.startsWith(`${id}@`))!);
    const job = {
      setupKey: 'builtin-hooks',
      modules: [BUILTINS],
      templates: chosen.map((t) => ({ id: t.id, sourceDigest: t.sourceDigest })),
      seed: 11,
      weights: chosen.map(() => 1),
      levels: [1, 2, 3],
      signatures: false,
      gates: GATES,
      hookModule: BUILTINS,
      start: 0,
      end: 60,
    };
    const reply = await run(job);
    expect(reply.ok).toBe(true);
    // Tasks come back as their bodies, and verdicts that all passed as one shared object: restore both.
    const chunk = unpackChunk((reply as Extract<typeof reply, { ok: true }>).chunk);
    // The main thread's hooks, as TaskGenerator builds them: one createDomainGateHooks per domain.
    const domains = new Map(builtinDomains().map((d) => [d.name, createDomainGateHooks(d)]));
    const main = { oracle: (t: Task) => domains.get(t.domain)!.oracle(t), nonTrivial: (t: Task) => domains.get(t.domain)!.nonTrivial(t) };
    const plan = createCandidatePlan({ seed: 11, templates: chosen, weights: chosen.map(() => 1), levels: [1, 2, 3], signatures: false });
    const local = instantiateCandidates(plan, 0, 60);
    expect(chunk.results.map((r) => r.task?.id)).toEqual(local.results.map((r) => r.task?.id));
    const expected = local.results.map((r) => (r.task === undefined ? undefined : checkTaskGates(r.task, GATES, main)));
    expect(chunk.verdicts).toEqual(expected);
    // The retail tasks really played their gates (a verdict per hook), not only the schema check.
    expect(expected.filter((v) => v?.oracle !== undefined && v.nonTrivial !== undefined).length).toBeGreaterThan(30);
  });

  it('rejects a retail task whose reference solution is cut short, and passes a task of a domain it does not know', () => {
    const hooks = createGateHooks();
    const cancel = builtinTemplates.find((t) => t.id.startsWith('retail/cancel@'))!;
    const plan = createCandidatePlan({ seed: 5, templates: [cancel], weights: [1], levels: [1], signatures: false });
    const task = instantiateCandidates(plan, 0, 1).results[0]!.task!;
    expect(hooks.oracle(task)).toEqual({ ok: true });
    const cut = { ...task, spec: { ...task.spec, solution: task.spec.solution.slice(0, 1) } };
    expect(hooks.oracle(cut)).toMatchObject({ ok: false });
    const stranger = { id: 'x', domain: 'arith', spec: {} } as unknown as Task;
    expect(hooks.oracle(stranger)).toEqual({ ok: true });
    expect(hooks.nonTrivial(stranger)).toEqual({ ok: true });
    expect(isBuiltinDomain('retail')).toBe(true);
    expect(isBuiltinDomain('arith')).toBe(false);
  });
});
