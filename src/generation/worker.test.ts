import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { instantiateCandidates, createCandidatePlan, openChunk, packChunk, unpackChunk } from './candidates.js';
import type { CandidateChunk, PackedChunk } from './candidates.js';
import { loadDeclarativeTemplates } from './declarative.js';
import { addTemplate } from './testing/templates.js';
import { transferableSymbol, valueSymbol } from 'piscina';
import run, { transferring } from './worker.js';
import type { WorkerJob } from './worker.js';

// The worker's entry is a plain function: these tests call it in-process (no thread start-up).
const MODULE = fileURLToPath(new URL('./testing/templates.ts', import.meta.url));
const [sum] = loadDeclarativeTemplates(
  'templates: [{ kind: question_answer, domain: arith, name: sum, version: 1, taskType: addition, levels: [{ a: [0, 9] }], instructions: "{a}+1?", answer: "{a + 1}" }]',
  'yaml',
);

function job(overrides: Partial<WorkerJob>): WorkerJob {
  return {
    setupKey: JSON.stringify(overrides),
    modules: [MODULE],
    templates: [{ id: addTemplate.id, sourceDigest: addTemplate.sourceDigest }],
    seed: 1,
    weights: [1],
    levels: [1, 2],
    signatures: true,
    start: 10,
    end: 20,
    ...overrides,
  };
}

describe('worker entry', () => {
  it('instantiates a candidate range exactly as the main thread does', async () => {
    const reply = await run(job({}));
    const plan = createCandidatePlan({ seed: 1, templates: [addTemplate], weights: [1], levels: [1, 2], signatures: true });
    expect(reply.ok).toBe(true);
    const chunk = (reply as { chunk: PackedChunk }).chunk;
    // Tasks travel as their stored bodies only, and come back deep-equal.
    expect(openChunk(chunk).results.every((r) => r.task === undefined && typeof r.body === 'string')).toBe(true);
    expect(unpackChunk(chunk)).toEqual(instantiateCandidates(plan, 10, 20));
  });

  it('packs a chunk into flat values and opens it unchanged: failed candidates, verdicts, bodies', () => {
    const rejected = { schema: { ok: false as const, reason: 'spec.instructions: must not be empty', problem: { code: 'TASK_SCHEMA' as const, message: 'x' } } };
    const chunk: CandidateChunk = {
      start: 40,
      results: [
        { index: 40, template: 'a@1', level: 2, body: '{"id":"1"}' },
        { index: 41, template: 'b@1', level: 1, error: { message: 'boom', pointer: '/params' } },
        { index: 42, template: 'a@1', level: 3, body: '{"id":"2"}' },
        { index: 43, template: 'b@1', level: 1, error: { message: 'again' } },
      ],
      signatures: new Uint32Array(4 * 64).map((_, i) => i * 7),
      verdicts: [undefined, undefined, rejected, undefined],
      passed: { schema: { ok: true } },
    };
    expect(openChunk(packChunk(chunk))).toEqual(chunk);
    const one: CandidateChunk = { start: 41, results: [chunk.results[1]!, chunk.results[2]!] };
    expect(openChunk(packChunk(one))).toEqual(one);
    const none: CandidateChunk = { start: 41, results: [chunk.results[1]!] };
    expect(openChunk(packChunk(none))).toEqual(none);
    expect(() => openChunk({ ...packChunk(chunk), bodies: '{}' })).toThrow(/bodies of 2 characters, 20 announced/);
    // Each body is a slice of the one string, at the ends `picks` gives.
    const packed = packChunk(chunk);
    expect(packed.bodies).toBe('{"id":"1"}{"id":"2"}');
    const swapped = new Int32Array(packed.picks);
    swapped[2] = 0; // the body of position 0 now ends where it starts
    expect(() => openChunk({ ...packed, picks: swapped })).toThrow(/candidate 40 has neither a body nor an error/);
  });

  it("the threads' entry gives the same reply, with the chunk's typed arrays listed for transfer", async () => {
    const moved = (await transferring(job({}))) as unknown as Record<symbol, unknown>;
    const reply = moved[valueSymbol] as { ok: true; chunk: PackedChunk };
    expect(reply).toEqual(await run(job({})));
    expect(moved[transferableSymbol]).toEqual([reply.chunk.picks.buffer, reply.chunk.signatures!.buffer]);
  });

  it('rebuilds declarative templates from their definition, without modules', async () => {
    const reply = await run(job({ modules: [], templates: [{ id: sum!.id, sourceDigest: sum!.sourceDigest, definition: sum!.definition }], levels: [1] }));
    const plan = createCandidatePlan({ seed: 1, templates: [sum!], weights: [1], levels: [1], signatures: true });
    expect(reply.ok).toBe(true);
    expect(unpackChunk((reply as { chunk: PackedChunk }).chunk)).toEqual(instantiateCandidates(plan, 10, 20));
  });

  it('refuses a template whose source digest differs from the registry', async () => {
    const reply = await run(job({ templates: [{ id: addTemplate.id, sourceDigest: 'f'.repeat(64) }] }));
    expect(reply).toMatchObject({ ok: false, error: { code: 'CONFIG_INVALID', message: expect.stringContaining('worker loaded a different testing/add@1') } });
  });

  it('names a template no module exports, and a module without `templates`', async () => {
    expect(await run(job({ templates: [{ id: 'testing/elsewhere@1', sourceDigest: 'x' }] }))).toMatchObject({
      ok: false,
      error: { code: 'CONFIG_INVALID', message: expect.stringContaining('template testing/elsewhere@1 is not exported by any of the template modules') },
    });
    expect(await run(job({ modules: [fileURLToPath(new URL('./candidates.ts', import.meta.url))] }))).toMatchObject({
      ok: false,
      error: { code: 'CONFIG_INVALID', message: expect.stringContaining('does not export `templates`') },
    });
  });
});
