import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { canonicalize, defineTemplate, digest, EnvHarnessError, GENERATOR_VERSION } from '../core/index.js';
import type { BatchRequest, Task } from '../core/index.js';
import { fileURLToPath } from 'node:url';
import { chooseWorkers, generateBatch, isSelectedForReview } from './batch.js';
import { loadDeclarativeTemplates } from './declarative.js';
import { MinHashIndex } from './minhash.js';
import { createTemplateRegistry } from './registry.js';
import { createGateHooks as createPlantedHooks } from './testing/planted-hooks.js';
import { createQaGateHooks } from './testing/qa-checker.js';
import { addTemplate, templates } from './testing/templates.js';

const arithmetic = loadDeclarativeTemplates(readFileSync(new URL('../../examples/templates/arithmetic.yaml', import.meta.url), 'utf8'), 'yaml');
const registry = createTemplateRegistry([...templates, ...arithmetic]);
const hooks = createQaGateHooks();
/** A hook module whose oracle throws on some tasks and rejects others. */
const PLANTED_HOOKS = fileURLToPath(new URL('./testing/planted-hooks.ts', import.meta.url));

const base: BatchRequest = { templates: [{ id: 'testing/add' }], levels: [2, 3], count: 300, seed: 42, split: 'dynamic' };

async function rejectsWith(promise: Promise<unknown>, code: string): Promise<EnvHarnessError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(EnvHarnessError);
    expect((error as EnvHarnessError).code).toBe(code);
    return error as EnvHarnessError;
  }
  throw new Error(`expected ${code}`);
}

describe('generateBatch', () => {
  it('rejects every planted bad task at the right gate, logs why, and accepts the good ones', async () => {
    const regression = await generateBatch(
      { templates: [{ id: 'testing/multiply' }], levels: [1], count: 40, seed: 7, split: 'regression' },
      { registry, hooks },
    );
    const regressionIndex = new MinHashIndex();
    for (const task of regression.tasks) regressionIndex.add(task);
    // The store already holds whatever candidate 0 becomes.
    let stored: string | undefined;

    const batch = await generateBatch(
      {
        templates: [
          { id: 'testing/add', weight: 3 },
          { id: 'testing/multiply' },
          { id: 'testing/tiny' },
          { id: 'testing/story' },
          { id: 'planted/empty-instructions', weight: 0.5 },
          { id: 'planted/unsolvable', weight: 0.5 },
          { id: 'planted/trivial', weight: 0.5 },
          { id: 'planted/bad-params', weight: 0.5 },
        ],
        levels: [1],
        count: 800,
        seed: 7,
        split: 'dynamic',
      },
      {
        registry,
        hooks,
        regressionIndex,
        existingIds: (ids) => {
          stored ??= ids[0];
          return new Set(ids.filter((id) => id === stored));
        },
      },
    );

    const gatesOf = (template: string): Set<string | undefined> =>
      new Set(batch.log.filter((e) => e.template === template).map((e) => (e.accepted ? 'accepted' : e.gate)));
    expect(gatesOf('planted/empty-instructions@1')).toEqual(new Set(['schema']));
    expect(gatesOf('planted/bad-params@1')).toEqual(new Set(['schema']));
    expect(gatesOf('planted/unsolvable@1')).toEqual(new Set(['oracle']));
    expect(gatesOf('planted/trivial@1')).toEqual(new Set(['non_trivial']));
    expect(gatesOf('testing/tiny@1')).toEqual(new Set(['accepted', 'exact_duplicate']));
    expect(gatesOf('testing/story@1')).toEqual(new Set(['accepted', 'exact_duplicate', 'near_duplicate']));
    expect(gatesOf('testing/multiply@1')).toEqual(new Set(['accepted', 'exact_duplicate', 'leakage']));
    expect(gatesOf('testing/add@1')).toEqual(new Set(['accepted', 'exact_duplicate']));

    const reasons = (gate: string): string[] => batch.log.filter((e) => e.gate === gate).map((e) => e.reason!);
    expect(reasons('schema')).toContain('spec.instructions: must not be empty');
    expect(reasons('schema').some((r) => r.startsWith('could not instantiate: template planted/bad-params@1 level 1 sampled invalid params at /params/b'))).toBe(true);
    expect(reasons('oracle')[0]).toMatch(/^reference solution answers "\d+" but acceptance.answer is "-?\d+"$/);
    expect(reasons('non_trivial')[0]).toBe('the empty trajectory passes');
    expect(reasons('near_duplicate')[0]).toMatch(/^near duplicate of candidate \d+ \(task [0-9a-f]{64}\): estimated Jaccard/);
    expect(reasons('leakage').some((r) => r.startsWith('leaks regression task'))).toBe(true);
    expect(batch.log[0]).toMatchObject({ accepted: false, gate: 'exact_duplicate', reason: 'this task is already in the store' });
    expect(batch.log.find((e) => e.gate === 'schema' && e.reason!.includes('bad-params'))!.details).toEqual({ pointer: '/params/b' });

    // Every accepted task is in the log as accepted, in index order, and the counts add up.
    expect(batch.log.map((e) => e.index)).toEqual(Array.from({ length: 800 }, (_, i) => i));
    expect(batch.log.filter((e) => e.accepted).map((e) => e.taskId)).toEqual(batch.tasks.map((t) => t.id));
    expect(batch.log.every((e) => e.batchId === batch.manifest.id)).toBe(true);
    const gates = Object.fromEntries(batch.manifest.gates.map((g) => [g.gate, g.rejected]));
    expect(Object.values(gates).reduce((a, b) => a + b, 0)).toBe(batch.manifest.rejected);
    expect(batch.manifest.accepted + batch.manifest.rejected).toBe(800);
    expect(batch.manifest.accepted).toBeGreaterThan(100);
  });

  it('writes a manifest that records how the batch was made', async () => {
    const batch = await generateBatch({ ...base, labels: { purpose: 'test' }, reviewShare: 0.25 }, { registry, hooks });
    const { manifest } = batch;
    const { id, ...body } = manifest;
    expect(id).toBe(digest(body));
    expect(manifest.digest).toBe(digest(batch.tasks.map((t) => t.id)));
    expect(manifest).toMatchObject({
      generatorVersion: GENERATOR_VERSION,
      templates: [{ id: 'testing/add@1', version: 1, sourceDigest: addTemplate.sourceDigest, weight: 1, taskType: 'arithmetic' }],
      seed: 42,
      split: 'dynamic',
      levels: [2, 3],
      parameterRanges: { 'testing/add@1': { '2': { max: 99 }, '3': { max: 999 } } },
      requested: 300,
      nearDuplicateThreshold: 0.9,
      reviewShare: 0.25,
      labels: { purpose: 'test' },
    });
    expect(manifest.counts.byType).toEqual({ arithmetic: manifest.accepted });
    expect(Object.keys(manifest.counts.byLevel)).toEqual(['2', '3']);
    expect(manifest.gates.find((g) => g.gate === 'leakage')).toMatchObject({ enabled: false, checked: 0 });
    expect(JSON.stringify(manifest)).not.toMatch(/20\d\d-\d\d-\d\dT/);

    expect(batch.review).toEqual(batch.tasks.map((t) => t.id).filter((t) => isSelectedForReview(t, 0.25)));
    expect(batch.review.length).toBeGreaterThan(0.15 * manifest.accepted);
    expect(batch.review.length).toBeLessThan(0.35 * manifest.accepted);
  });

  it('gives the same manifest digest for the same inputs, and a different one when seed, levels or template version change', async () => {
    const id = async (request: BatchRequest, reg = registry): Promise<string> => (await generateBatch(request, { registry: reg, hooks })).manifest.id;
    const reference = await id(base);
    expect(await id(base)).toBe(reference);
    expect(await id({ ...base, seed: 43 })).not.toBe(reference);
    expect(await id({ ...base, levels: [3, 2] })).not.toBe(reference);
    expect(await id({ ...base, levels: [2] })).not.toBe(reference);
    expect(await id({ ...base, labels: { run: 'x' } })).not.toBe(reference);

    const addV2 = defineTemplate({ ...addTemplate, version: 2, build: (p: { a: number; b: number }) => ({ ...addTemplate.build(p, undefined as never), instructions: `Add ${p.a} and ${p.b}.` }) });
    const withV2 = createTemplateRegistry([...templates, addV2]);
    const v1 = await generateBatch({ ...base, templates: [{ id: 'testing/add@1' }] }, { registry: withV2, hooks });
    const v2 = await generateBatch(base, { registry: withV2, hooks });
    expect(v1.manifest.id).toBe(reference);
    expect(v2.manifest.templates[0]!.id).toBe('testing/add@2');
    expect(v2.manifest.id).not.toBe(reference);
  });

  it('draws each template only at the requested levels it declares', async () => {
    const batch = await generateBatch({ ...base, templates: [{ id: 'testing/add' }, { id: 'testing/story' }], levels: [1, 3] }, { registry });
    expect(new Set(batch.log.filter((e) => e.template === 'testing/story@1').map((e) => e.level))).toEqual(new Set([1]));
    expect(new Set(batch.log.filter((e) => e.template === 'testing/add@1').map((e) => e.level))).toEqual(new Set([1, 3]));
    expect(Object.keys(batch.manifest.parameterRanges['testing/story@1']!)).toEqual(['1']);
    expect(Object.keys(batch.manifest.parameterRanges['testing/add@1']!)).toEqual(['1', '3']);
  });

  it('accepts the stored ids as a set or an async lookup, with the same result', async () => {
    const first = await generateBatch(base, { registry, hooks });
    const stored = new Set(first.tasks.slice(0, 50).map((t) => t.id));
    const withSet = await generateBatch(base, { registry, hooks, existingIds: stored });
    const withLookup = await generateBatch(base, { registry, hooks, existingIds: async (ids) => new Set(ids.filter((i) => stored.has(i))) });
    expect(withLookup).toEqual(withSet);
    expect(withSet.manifest.accepted).toBe(first.manifest.accepted - 50);
  });

  it('reports progress up to the total', async () => {
    const calls: Array<[number, number]> = [];
    await generateBatch({ ...base, count: 5000 }, { registry, workers: 1, onProgress: (d, t) => calls.push([d, t]) });
    expect(calls.at(-1)).toEqual([5000, 5000]);
    expect(calls.map(([d]) => d)).toEqual([...calls.map(([d]) => d)].sort((a, b) => a - b));
  });

  it('leaves a core to the calling thread when it picks the worker count itself', () => {
    const some = templates.filter((t) => t.id.startsWith('testing/add'));
    const modules = ['templates.js'];
    // [cores, workers]: the calling thread gates and stores, so it keeps one core; one core means no workers.
    for (const [cores, workers] of [[1, 0], [2, 1], [4, 3], [9, 8], [32, 8]] as const) {
      expect(chooseWorkers(undefined, 45_000, some, modules, cores)).toBe(workers);
    }
    expect(chooseWorkers(undefined, 4_999, some, modules, 4)).toBe(0);
    expect(chooseWorkers(undefined, 45_000, some, [], 4)).toBe(0); // code templates and nothing to load them from
    // An explicit count is kept (1: the calling thread), as long as each thread gets 256 candidates.
    expect(chooseWorkers(1, 45_000, some, modules, 4)).toBe(0);
    expect(chooseWorkers(3, 45_000, some, modules, 2)).toBe(3);
    expect(chooseWorkers(3, 300, some, modules, 4)).toBe(2);
  });

  it('refuses caller mistakes with the pointer of the bad field', async () => {
    await rejectsWith(generateBatch({ ...base, templates: [{ id: 'testing/nope' }] }, { registry }), 'TEMPLATE_NOT_FOUND');
    await rejectsWith(generateBatch({ ...base, templates: [{ id: 'testing/add@9' }] }, { registry }), 'VERSION_NOT_FOUND');
    const level = await rejectsWith(generateBatch({ ...base, levels: [4, 5] }, { registry }), 'PARAMS_INVALID');
    expect(level.details?.pointer).toBe('/templates/0/id');
    expect(level.message).toContain('declares levels 1..3, none of the requested levels [4, 5]');
    await rejectsWith(generateBatch({ ...base, levels: [0] }, { registry }), 'PARAMS_INVALID');
    const weight = await rejectsWith(generateBatch({ ...base, templates: [{ id: 'testing/add', weight: -1 }] }, { registry }), 'PARAMS_INVALID');
    expect(weight.details?.pointer).toBe('/templates/0/weight');
    const twice = await rejectsWith(generateBatch({ ...base, templates: [{ id: 'testing/add' }, { id: 'testing/add@1' }] }, { registry }), 'PARAMS_INVALID');
    expect(twice.details?.pointer).toBe('/templates/1/id');
    const split = await rejectsWith(generateBatch({ ...base, split: 'train' as never }, { registry }), 'PARAMS_INVALID');
    expect(split.details?.pointer).toBe('/split');
    await rejectsWith(generateBatch(base, { registry, workers: 2 }), 'CONFIG_INVALID');
  });

  // Code templates in workers are compared in test/determinism (child processes under tsx): vitest
  // transpiles function sources differently from tsx, and the source digest sees function text.
  it('gives byte-identical batches with 1 and 2 worker threads', async () => {
    const request: BatchRequest = {
      templates: [{ id: 'arith/sum', weight: 2 }, { id: 'arith/word-problem' }, { id: 'arith/remainder', weight: 0.5 }],
      levels: [1, 2],
      count: 1000,
      seed: 5,
      split: 'dynamic',
      reviewShare: 0.1,
    };
    const single = await generateBatch(request, { registry, hooks, workers: 1 });
    const threaded = await generateBatch(request, { registry, hooks, workers: 2 });
    expect(single.manifest.accepted).toBeGreaterThan(500);
    // Byte-identical content: a task from a worker is parsed from its stored body, so its keys come in
    // canonical order (as read back from a store); the stored bodies themselves are the same strings.
    expect(canonicalize(threaded)).toBe(canonicalize(single));
    expect(threaded.taskBodies).toEqual(single.taskBodies);
    expect(single.taskBodies).toEqual(single.tasks.map(({ id, template, domain, taskType, level, params, spec, origin }) => canonicalize({ id, template, domain, taskType, level, params, spec, origin })));
  }, 60_000);

  it('gives the same batch when it has more chunks than are sent ahead to the threads', async () => {
    // 3,000 candidates on 2 threads: 12 chunks of 256, twice the 6 sent ahead of the one being gated.
    const request: BatchRequest = { templates: [{ id: 'arith/sum' }, { id: 'arith/remainder' }], levels: [1, 2, 3], count: 3000, seed: 9, split: 'dynamic' };
    const single = await generateBatch(request, { registry, hooks, workers: 1 });
    const progress: number[] = [];
    const threaded = await generateBatch(request, { registry, hooks, workers: 2, onProgress: (done) => progress.push(done) });
    expect(progress).toEqual(Array.from({ length: 12 }, (_, k) => Math.min(3000, (k + 1) * 256)));
    expect(canonicalize(threaded)).toBe(canonicalize(single));
    expect(threaded.taskBodies).toEqual(single.taskBodies);
  }, 60_000);

  it('runs the schema check and the hooks in the workers when given a hook module, with the same batch', async () => {
    const request: BatchRequest = {
      templates: [{ id: 'arith/sum', weight: 2 }, { id: 'arith/word-problem' }, { id: 'arith/remainder', weight: 0.5 }],
      levels: [1, 2],
      count: 1000,
      seed: 6,
      split: 'dynamic',
    };
    // A rejecting and a throwing oracle on some tasks: rejections must come out the same from either thread.
    const planted = createPlantedHooks();
    const single = await generateBatch(request, { registry, hooks: planted, workers: 1 });
    let mainThreadCalls = 0;
    const counted = {
      oracle: (task: Task) => (mainThreadCalls++, planted.oracle!(task)),
      nonTrivial: (task: Task) => (mainThreadCalls++, planted.nonTrivial!(task)),
    };
    const threaded = await generateBatch(request, { registry, hooks: counted, workers: 2, hookModule: PLANTED_HOOKS });
    expect(mainThreadCalls).toBe(0);
    // Every gate ran in the workers: the tasks are still bodies, and the store's rows say what the tasks will.
    const rows = threaded.taskRows!;
    expect(rows.map((r) => r.body)).toEqual(single.taskBodies);
    expect(rows.map(({ id, template, domain, taskType, level }) => ({ id, template, domain, taskType, level }))).toEqual(
      single.tasks.map(({ id, template, domain, taskType, level }) => ({ id, template, domain, taskType, level })),
    );
    expect(threaded.tasks).toEqual(single.tasks);
    // Once read, the tasks may change: the rows are withdrawn so that a store reads the tasks.
    expect(threaded.taskRows).toBeUndefined();
    expect(single.manifest.gates.find((g) => g.gate === 'oracle')!.rejected).toBeGreaterThan(50);
    expect(single.log.some((e) => e.reason?.startsWith('oracle check failed to run: planted failure'))).toBe(true);
    expect(canonicalize(threaded)).toBe(canonicalize(single));
    expect(threaded.taskBodies).toEqual(single.taskBodies);
  }, 60_000);

  it('fails with CONFIG_INVALID when the hook module has no createGateHooks', async () => {
    const request: BatchRequest = { templates: [{ id: 'arith/sum' }], levels: [1], count: 600, seed: 1, split: 'dynamic' };
    const error = await rejectsWith(generateBatch(request, { registry, hooks, workers: 2, hookModule: fileURLToPath(new URL('./candidates.ts', import.meta.url)) }), 'CONFIG_INVALID');
    expect(error.message).toContain('does not export `createGateHooks`');
  }, 60_000);
});
