/** The ORS surface's edges on a real listener (the wire format itself: clients/python/tests/trainers/test_ors.py). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../testing/fixture.js';

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer({ server: { ors: { prefix: '/' } } });
}, 120_000);
afterAll(async () => t?.close());

describe('ORS surface at the root (--ors-prefix /, where the SDK client looks)', () => {
  it('answers ORS paths and leaves API v1 and OpenEnv paths to their handlers', async () => {
    const key = { 'x-api-key': t.token };
    expect(await (await fetch(`${t.url}/health`, { headers: key })).json()).toEqual({ status: 'ok' });
    expect(await (await fetch(`${t.url}/list_environments`, { headers: key })).json()).toContain('inventory');
    const v1 = await fetch(`${t.url}/v1/health`, { headers: { authorization: `Bearer ${t.token}` } });
    expect(v1.status).toBe(200);
    expect(await v1.json()).not.toEqual({ status: 'ok' });
    expect(await (await fetch(`${t.url}/openenv/health`, { headers: { authorization: `Bearer ${t.token}` } })).json()).toEqual({ status: 'healthy' });
    // Not an ORS path (no such domain): API v1's 404, a problem document.
    const other = await fetch(`${t.url}/nosuchenv/tools`, { headers: { authorization: `Bearer ${t.token}` } });
    expect(other.status).toBe(404);
    expect(other.headers.get('content-type')).toContain('problem+json');
    expect((await fetch(`${t.url}/health`)).status).toBe(401);
  });

  it('ends a long tool result in chunk events of at most 4096 characters, then end', async () => {
    const key = { 'x-api-key': t.token, 'content-type': 'application/json' };
    const sid = 'long-result';
    const created = await fetch(`${t.url}/create`, { method: 'POST', headers: { ...key, 'x-session-id': sid }, body: JSON.stringify({ env_name: 'inventory', task_spec: { task_id: t.tasks.endless, seed: 1 } }) });
    expect(created.status).toBe(200);
    // An unknown tool is an agent mistake whose error names the tool: a long name makes a long result.
    const res = await fetch(`${t.url}/inventory/call`, { method: 'POST', headers: { ...key, 'x-session-id': sid }, body: JSON.stringify({ name: `no_such_tool_${'x'.repeat(6000)}`, input: {} }) });
    const text = await res.text();
    const events = text.split('\r\n\r\n').filter((e) => e !== '').map((e) => {
      const [event, data] = e.split('\r\n');
      return { event: event!.slice('event: '.length), data: data!.slice('data: '.length) };
    });
    expect(events[0]!.event).toBe('task_id');
    expect(events.at(-1)!.event).toBe('end');
    const body = events.slice(1);
    expect(body.length).toBeGreaterThan(1);
    expect(body.slice(0, -1).every((e) => e.event === 'chunk' && e.data.length === 4096)).toBe(true);
    const result = JSON.parse(body.map((e) => e.data).join(''));
    expect(result.ok).toBe(true);
    expect(result.output.metadata.step).toBe(1);
  });
});
