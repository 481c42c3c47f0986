/**
 * T5, HTTP part: 1,000 fast-check fuzzed step bodies over a real loopback socket. 0 crashes, 0 5xx; every
 * 4xx is problem+json whose `pointer` resolves in the input and changes nothing; every 2xx error names a
 * pointer that resolves in the action.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolvesIn } from '../../src/index.js';
import { createClient, startTestServer, type TestServer } from '../../src/server/testing/fixture.js';

const RUNS = Number(process.env.ENVHARNESS_FUZZ_RUNS ?? 1000);

let t: TestServer;
let client: ReturnType<typeof createClient>;
beforeAll(async () => {
  t = await startTestServer();
  client = createClient(t.port, { sockets: 1 });
}, 60_000);
afterAll(async () => {
  client?.close();
  await t?.close();
});

const items = fc.constantFrom('widget-1', 'gadget-2', 'bolt-3', 'nope', '', 'widget-1\u0000', '../etc/passwd');
const validAction = fc.oneof(
  fc.record({ type: fc.constant('tool'), tool: fc.constant('get_stock'), args: fc.record({ item: items }) }),
  fc.record({ type: fc.constant('tool'), tool: fc.constantFrom('add_stock', 'remove_stock'), args: fc.record({ item: items, quantity: fc.integer({ min: -3, max: 9 }) }) }),
  fc.record({ type: fc.constant('tool'), tool: fc.constant('list_items'), args: fc.record({ prefix: fc.string() }, { requiredKeys: [] }) }),
  fc.record({ type: fc.constant('message'), text: fc.string() }),
  fc.record({ type: fc.constant('finish'), answer: fc.string() }, { requiredKeys: ['type'] }),
);

/** A valid action with one thing broken, the ways LLMs and clients break them. */
const mutatedAction = fc.tuple(validAction, fc.nat(9), fc.jsonValue(), fc.string()).map(([action, how, junk, name]) => {
  const a: Record<string, unknown> = { ...action };
  const keys = Object.keys(a);
  const key = keys[how % keys.length]!;
  switch (how) {
    case 0:
      delete a[key];
      return a;
    case 1:
      a[key] = junk;
      return a;
    case 2:
      a[name || 'extra'] = junk;
      return a;
    case 3:
      if ('args' in a) a['args'] = JSON.stringify(a['args']);
      return a;
    case 4:
      if ('args' in a) a['args'] = [a['args']];
      return a;
    case 5:
      a['type'] = name;
      return a;
    case 6:
      return junk;
    case 7:
      a['usage'] = { inputTokens: junk };
      return a;
    default:
      return a;
  }
});

const deep = (depth: number) => `{"action":{"type":"tool","tool":"get_stock","args":{"item":${'['.repeat(depth)}1${']'.repeat(depth)}}}}`;

/** Raw request bodies: envelopes around (mutated) actions, and byte-level breakage. */
const bodyArb: fc.Arbitrary<Buffer> = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(fc.oneof(validAction, mutatedAction), fc.option(fc.oneof(fc.integer({ min: -2, max: 5 }), fc.jsonValue()), { nil: undefined })).map(([action, expectedStep]) => Buffer.from(JSON.stringify(expectedStep === undefined ? { action } : { action, expectedStep }))) },
  { weight: 2, arbitrary: fc.tuple(fc.oneof(validAction, mutatedAction), fc.string(), fc.jsonValue()).map(([action, key, junk]) => Buffer.from(JSON.stringify({ action, [key || 'x']: junk }))) },
  { weight: 2, arbitrary: fc.tuple(validAction, fc.nat()).map(([action, cut]) => { const text = JSON.stringify({ action }); return Buffer.from(text.slice(0, cut % text.length)); }) },
  { weight: 1, arbitrary: fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v) ?? 'null')) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary' }).map((s) => Buffer.from(s)) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.concat([Buffer.from('{"action":{"type":"message","text":"'), Buffer.from(b), Buffer.from('"}}')])) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      deep(10), deep(40), deep(100), deep(10_000),
      '{"action":{"type":"finish"},"action":{"type":"tool","tool":"get_stock","args":{"item":"widget-1"}}}',
      '{"__proto__":{"polluted":true},"action":{"type":"finish"}}',
      '{"action":{"type":"tool","tool":"get_stock","args":{"__proto__":{"polluted":true},"item":"widget-1"}}}',
      '{"action":{"type":"tool","tool":"add_stock","args":{"item":"widget-1","quantity":9007199254740993}}}',
      '{"action":{"type":"tool","tool":"get_stock","args":"{\\"item\\":\\"widget-1\\"}"}}',
      '{"action":{"type":"tool","tool":"get_stock","args":null}}',
      '{"action":{"type":"tool","tool":"get_stock","args":[]}}',
      '{"action":"[]"}', '{"action":null}', '{"action":42}', '{}', '[]', 'null', '', ' ', '{', '{"action":NaN}',
      '{"action":{"type":"tool","tool":"get_stock","args":{"item":"widget-1"}}\n}', '\ufeff{"action":{"type":"finish"}}',
      '{"action":{"type":"message","text":"\\ud800"}}', '{"action":{"type":"tool","tool":"get_stock","args":{"\\udc00":1}}}',
    ).map((s) => Buffer.from(s)),
  },
);

/** The input as the server reads it: WHATWG UTF-8 decoding (a BOM is dropped, bad bytes become U+FFFD). */
function parse(bytes: Buffer): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(new TextDecoder().decode(bytes)) };
  } catch {
    return { ok: false };
  }
}

describe('T5: fuzzed step bodies over HTTP', () => {
  it(`${RUNS} cases: no 5xx, every 4xx names a resolvable pointer and changes nothing`, async () => {
    const created = await client.request({ path: '/v1/episodes', token: t.token, body: { taskId: t.tasks.endless, seed: 1 } });
    const ep = { id: created.json.episode.id as string, token: created.json.token as string };
    const server = () => t.server.episodes.authorize(ep.id, ep.token)!;
    const latencies: number[] = [];
    const tally = { ok: 0, okWithError: 0, rejected: 0, resets: 0 };
    await fc.assert(
      fc.asyncProperty(bodyArb, async (bytes) => {
        const before = { steps: server().episode!.steps, hash: server().episode!.stateHash(), attempt: server().attempt };
        const res = await client.request({ path: `/v1/episodes/${ep.id}/step`, token: ep.token, body: bytes });
        latencies.push(res.ms);
        expect(res.status, res.text).toBeLessThan(500);
        const input = parse(bytes);
        if (res.status === 200) {
          tally.ok++;
          expect(input.ok).toBe(true);
          const error = res.json.observation.error;
          if (error?.pointer !== undefined) {
            tally.okWithError++;
            expect(resolvesIn((input as { value: { action: unknown } }).value.action, error.pointer), `${error.pointer} in ${bytes.toString().slice(0, 200)}`).toBe(true);
          }
          if (res.json.terminated || res.json.truncated) {
            tally.resets++;
            const reset = await client.request({ path: `/v1/episodes/${ep.id}/reset`, token: ep.token, body: { seed: tally.resets } });
            expect(reset.status).toBe(200);
          }
          return;
        }
        tally.rejected++;
        expect(res.headers['content-type']).toBe('application/problem+json');
        expect(typeof res.json.code).toBe('string');
        expect(typeof res.json.pointer, res.text).toBe('string');
        if (input.ok) expect(resolvesIn(input.value, res.json.pointer), `${res.json.pointer} in ${bytes.toString().slice(0, 200)}`).toBe(true);
        else expect(res.json.pointer).toBe('');
        const after = { steps: server().episode!.steps, hash: server().episode!.stateHash(), attempt: server().attempt };
        expect(after).toEqual(before);
      }),
      { numRuns: RUNS, seed: 20260511, endOnFailure: true },
    );
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(tally.ok + tally.rejected).toBe(RUNS);
    expect(tally.ok).toBeGreaterThan(RUNS / 10);
    expect(tally.rejected).toBeGreaterThan(RUNS / 10);
    // Every acknowledged step is in the store, in order, without gaps.
    const stored = await t.harness.store.listTransitions(server().episode!.id!);
    expect(stored.map((x) => x.step)).toEqual(Array.from({ length: server().episode!.steps }, (_, i) => i + 1));
    latencies.sort((a, b) => a - b);
    const p99 = latencies[Math.floor(latencies.length * 0.99)]!;
    console.log(`T5 HTTP: ${RUNS} cases, ${JSON.stringify(tally)}, p50 ${latencies[latencies.length >> 1]!.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms`);
    expect(p99).toBeLessThanOrEqual(Number(process.env.ENVHARNESS_FUZZ_P99_MS ?? 50));
  }, 300_000);
});
