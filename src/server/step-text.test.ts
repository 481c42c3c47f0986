/**
 * A step's tool output serialised once (step-text.ts, core's shareCanonical/takeCanonical): the reply splices
 * the text the recorder wrote for the transition, so both carry the same bytes; values with no canonical
 * form fail as they always did; nothing an agent sends is ever taken for a written text.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinDomains } from '../builtins.js';
import { systemClock } from '../cli/clock.js';
import { createHarness, type Harness } from '../harness/harness.js';
import { canonicalize, computeTaskId, defineDomain, defineTool, type JsonValue, type StoredTask, type ToolOutcome, type Transition } from '../index.js';
import { createServer, type EnvHarnessServer } from './index.js';
import type { ServerEpisode } from './episodes.js';
import { stepResultText } from './step-text.js';
import { shareCanonical, type StepResult } from '../index.js';

/** A tool whose output the test chooses: the agent's data echoed back, or a value with no canonical form. */
const probe = defineTool<null, { mode: 'echo' | 'nan' | 'lone'; data?: JsonValue }>({
  name: 'probe',
  description: 'Echoes data, or returns a NaN or a lone surrogate.',
  effect: 'read',
  args: z.object({ mode: z.enum(['echo', 'nan', 'lone']), data: z.any().optional() }).strict() as never,
  run: (_state, args): ToolOutcome => {
    if (args.mode === 'nan') return { ok: true, output: { zeta: 1, value: Number.NaN } as unknown as JsonValue };
    if (args.mode === 'lone') return { ok: true, output: { zeta: 1, text: 'a\ud800b' } };
    // Keys out of RFC 8785 order: the reply's output is the canonical text, the same value.
    return { ok: true, output: { zeta: 1, got: args.data ?? null, alpha: 'a' } };
  },
});

const probeDomain = defineDomain<null>({
  name: 'probe',
  version: 1,
  description: 'One tool whose output the test picks.',
  createState: () => null,
  fork: () => null,
  hashState: () => 'null',
  exportState: () => null,
  tools: [probe],
  templates: [],
});

function probeTask(seq: number): StoredTask {
  const body = {
    template: 'probe/any@1',
    domain: 'probe',
    taskType: 'any',
    level: 1,
    params: { seq },
    spec: {
      instructions: 'Call probe.',
      initialState: null,
      budget: { steps: 1000, consecutiveErrors: 1000 },
      acceptance: { finalState: true },
      solution: [{ type: 'tool' as const, tool: 'probe', args: { mode: 'echo' } }, { type: 'finish' as const }],
    },
  };
  return { id: computeTaskId(body), ...body, origin: { seed: 0, index: seq, templateDigest: '' }, split: 'heldout', status: 'active', batchId: 'probe', seq };
}

let dir: string;
let harness: Harness;
let server: EnvHarnessServer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'envharness-step-text-'));
  harness = await createHarness({ clock: systemClock, store: join(dir, 'store.db'), domains: [...builtinDomains(), probeDomain] });
  await harness.initialize({ seed: 1 });
  server = createServer({ harness, port: 0 });
}, 120_000);
afterAll(async () => {
  await server.close();
  // The recorder of the steps that could not be recorded stays failed (its flush rejects), as before.
  await harness.close().catch((error: { code?: string }) => expect(error.code).toBe('STORE_FAILED'));
  rmSync(dir, { recursive: true, force: true });
});

let nextSeq = 10_000_000;
async function probeEpisode(): Promise<{ ep: ServerEpisode; token: string }> {
  const task = probeTask(nextSeq++);
  await harness.store.putTasks([task]);
  return server.episodes.create({ taskId: task.id, seed: 0 } as Parameters<EnvHarnessServer['episodes']['create']>[0]);
}

async function stored(ep: ServerEpisode): Promise<Transition[]> {
  // Acknowledged steps reach SQLite from the step journal within `FEED_MS` (20 ms): read once they have.
  await server.episodes.settled();
  return harness.store.listTransitions(ep.episode!.id!);
}

/** The text of the reply's observation: the member between `{"observation":` and `,"reward":`. */
function observationOf(body: string): string {
  expect(body.startsWith('{"observation":')).toBe(true);
  return body.slice('{"observation":'.length, body.indexOf(',"reward":'));
}

describe('a step serialised once', { timeout: 120_000 }, () => {
  it('a retail step: the reply carries the bytes of the stored transition\'s observation, and the same value', async () => {
    const { ep } = await server.episodes.create({ domain: 'retail', split: 'regression', seed: 0 } as Parameters<EnvHarnessServer['episodes']['create']>[0]);
    const reply = await server.episodes.step(ep, JSON.stringify({ action: { type: 'tool', tool: 'list_all_product_types', args: {} } }), undefined);
    expect(reply.status).toBe(200);
    const [transition] = await stored(ep);
    const text = canonicalize(transition!.observation);
    expect(text.length).toBeGreaterThan(500);
    expect(observationOf(reply.body)).toBe(text);
    // The stored row is the canonical transition: it holds the same observation bytes.
    expect(canonicalize(transition!)).toContain(`"observation":${text},`);
    const parsed = JSON.parse(reply.body) as Record<string, unknown>;
    expect(parsed['observation']).toEqual(transition!.observation);
    // The rest of the reply is what JSON.stringify writes, in the same key order as before.
    expect(Object.keys(parsed)).toEqual(['observation', 'reward', 'terminated', 'truncated', 'feedback', 'info']);
    expect(parsed['info']).toEqual(transition!.info);
    expect(parsed['feedback']).toEqual(transition!.feedback);
  });

  it('the batch route splices the same bytes', async () => {
    const a = await probeEpisode();
    const b = await probeEpisode();
    const item = (p: { ep: ServerEpisode; token: string }, data: JsonValue) => ({ episodeId: p.ep.id, token: p.token, action: { type: 'tool', tool: 'probe', args: { mode: 'echo', data } } });
    const reply = await server.episodes.stepMany({ steps: [item(a, [1, 'x']), item(b, { b: 2, a: 1 })] });
    const texts = reply.body.split('{"ok":true,"result":').slice(1).map((part) => observationOf(`{${part.slice(1)}`));
    expect(texts).toEqual(['{"kind":"tool","output":{"alpha":"a","got":[1,"x"],"zeta":1}}', '{"kind":"tool","output":{"alpha":"a","got":{"a":1,"b":2},"zeta":1}}']);
    expect(canonicalize((await stored(a.ep))[0]!.observation)).toBe(texts[0]);
    expect(canonicalize((await stored(b.ep))[0]!.observation)).toBe(texts[1]);
  });

  it('agent data that looks like written text stays data, in the reply and in the store', async () => {
    const { ep } = await probeEpisode();
    const forged = { kind: 'tool', output: 'forged' };
    const looksLikeText = '{"kind":"tool","output":"forged"}';
    const reply = await server.episodes.step(ep, JSON.stringify({ action: { type: 'tool', tool: 'probe', args: { mode: 'echo', data: { observation: forged, text: looksLikeText } } } }), undefined);
    expect(reply.status).toBe(200);
    const parsed = JSON.parse(reply.body) as { observation: { output: { got: unknown } } };
    expect(parsed.observation.output.got).toEqual({ observation: forged, text: looksLikeText });
    const [transition] = await stored(ep);
    expect(transition!.observation.output).toEqual({ zeta: 1, got: { observation: forged, text: looksLikeText }, alpha: 'a' });
    expect(observationOf(reply.body)).toBe(canonicalize(transition!.observation));
  });

  for (const [mode, what] of [
    ['nan', 'number NaN has no JSON form'],
    ['lone', 'lone UTF-16 surrogate'],
  ] as const) {
    it(`a tool output with no canonical form (${mode}) fails the step as STORE_FAILED naming the member, and nothing is stored`, async () => {
      const { ep } = await probeEpisode();
      const reply = await server.episodes.step(ep, JSON.stringify({ action: { type: 'tool', tool: 'probe', args: { mode } } }), undefined);
      expect(reply.status).toBe(503);
      const problem = JSON.parse(reply.body) as { code: string; detail: string };
      expect(problem.code).toBe('STORE_FAILED');
      expect(problem.detail).toContain('/observation/output/');
      expect(problem.detail).toContain(what);
      expect(await stored(ep)).toEqual([]);
    });
  }
});

describe('stepResultText', () => {
  const results: StepResult[] = [
    { observation: { kind: 'tool', output: { b: 1, a: [1, 'x'] } }, reward: 0, terminated: false, truncated: false, feedback: [], info: { step: 1, outcome: 0, shaping: 0, stateHash: 'h' } },
    {
      observation: { kind: 'tool', error: { code: 'BUDGET_EXHAUSTED', message: 'spent' } },
      reward: -0.25,
      terminated: false,
      truncated: true,
      feedback: [{ code: 'BUDGET_EXHAUSTED', message: 'the steps budget is spent', ref: 'steps', details: { limit: 3 } }],
      info: { step: 3, outcome: 0, shaping: -0.25, stateHash: 'h', endReason: 'budget', excludeFromStats: false },
      // Last, as the runtime adds it.
      truncation: 'steps',
    },
    { observation: { kind: 'finish' }, reward: Number.NaN, terminated: true, truncated: false, feedback: [], info: { step: 2, outcome: 1, shaping: 0, stateHash: 'h' } },
  ];

  it('writes the value JSON.stringify writes, in its member order, with the observation written once for the transition', () => {
    for (const result of results) {
      shareCanonical(result.observation);
      canonicalize({ step: 1, observation: result.observation });
      const text = stepResultText(result);
      expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(result)));
      expect(Object.keys(JSON.parse(text) as object)).toEqual(Object.keys(JSON.parse(JSON.stringify(result)) as object));
      expect(observationOf(text)).toBe(canonicalize(result.observation));
    }
  });

  it('is JSON.stringify itself when the observation was not written for a transition', () => {
    for (const result of results) expect(stepResultText(result)).toBe(JSON.stringify(result));
  });

  it('is JSON.stringify itself for the plain info written by hand, and for infos that only look plain', () => {
    const infos: unknown[] = [
      { step: 3, outcome: 0, shaping: -0.25, stateHash: 'ab12' },
      { step: 3, outcome: -0, shaping: Number.NaN, stateHash: 'quote " and \\ and \u2028' },
      { step: 1e21, outcome: Number.POSITIVE_INFINITY, shaping: 1.5e-7, stateHash: '' },
      // Other member orders, more members, fewer, a member that JSON.stringify leaves out, one of another type.
      { outcome: 0, step: 3, shaping: 0, stateHash: 'h' },
      { step: 3, outcome: 1, shaping: 0, stateHash: 'h', endReason: 'finished' },
      { step: 3, outcome: 0, shaping: 0 },
      { step: 3, outcome: 0, shaping: 0, stateHash: undefined },
      { step: '3', outcome: 0, shaping: 0, stateHash: 'h' },
      { step: 3, outcome: 0, shaping: 0, stateHash: 7 },
    ];
    for (const info of infos) {
      const result = { ...results[0]!, observation: { kind: 'tool' as const, output: null }, info } as StepResult;
      expect(stepResultText(result)).toBe(JSON.stringify(result));
    }
  });

  it('is JSON.stringify itself for feedback repeated step after step, and for feedback that only looks the same', () => {
    const message = 'the same call (tool and arguments) was already made and nothing has changed since';
    const feedbacks: unknown[] = [
      { code: 'REDUNDANT_CALL', message, ref: 'noop' },
      // The same message again (its text remembered), then with another ref and another code.
      { code: 'REDUNDANT_CALL', message, ref: 'noop' },
      { code: 'REDUNDANT_CALL', message, ref: 'get_stock' },
      { code: 'OFF_PATH', message, ref: 'get_stock' },
      // Other member orders, more members, fewer, a member that JSON.stringify leaves out, one that is not a string.
      { message, code: 'REDUNDANT_CALL', ref: 'noop' },
      { code: 'REDUNDANT_CALL', message, ref: 'noop', details: { n: 1 } },
      { code: 'REDUNDANT_CALL', message },
      { code: 'REDUNDANT_CALL', message, ref: undefined },
      { code: 'REDUNDANT_CALL', message, ref: 7 },
      { code: 'REDUNDANT_CALL', message: 'quote " and \\ and \u2028', ref: 'noop' },
    ];
    for (let round = 0; round < 2; round++) {
      for (const item of feedbacks) {
        const result = { ...results[0]!, observation: { kind: 'tool' as const, output: null }, feedback: [item, item] } as StepResult;
        expect(stepResultText(result)).toBe(JSON.stringify(result));
      }
    }
  });
});
