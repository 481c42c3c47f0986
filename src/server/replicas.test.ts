import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinDomains, createHarness, type Action, type Harness, type StoredTask } from '../index.js';
import { createTestDatabase, PG_SKIP_MESSAGE, PG_TEST_URL, type TestDatabase } from '../../test/support/postgres.js';
import { createServer, type EnvHarnessServer } from './index.js';

const TOKEN = 'replica-unit-token-0123456789';

if (PG_TEST_URL === undefined) {
  describe('replicas on one store', () => {
    it.skip(PG_SKIP_MESSAGE, () => undefined);
  });
} else {
  let db: TestDatabase;
  const harnesses: Harness[] = [];
  const servers: Array<{ server: EnvHarnessServer; url: string }> = [];
  let task: StoredTask;

  beforeAll(async () => {
    db = await createTestDatabase('envh_replica_unit');
    const url = db.schemaUrl();
    for (let i = 0; i < 2; i++) {
      const harness = await createHarness({ store: url, domains: builtinDomains() });
      if (i === 0) await harness.initialize({ seed: 1 });
      harnesses.push(harness);
      const server = createServer({ harness, token: TOKEN, port: 0 });
      servers.push({ server, url: (await server.listen()).url });
    }
    task = (await harnesses[0]!.store.listTasks({ split: 'regression' })).find((t) => (t.spec.solution?.length ?? 0) >= 4)!;
  }, 120_000);
  afterAll(async () => {
    for (const { server } of servers) await server.close();
    for (const h of harnesses) await h.close();
    await db?.drop();
  });

  const call = async (base: string, method: string, path: string, token: string, body?: unknown, headers: Record<string, string> = {}) => {
    const r = await fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    return { status: r.status, body: await r.text(), replayed: r.headers.get('idempotent-replayed') };
  };

  describe('replicas on one store', () => {
    it('a step on the other replica takes the episode over, rebuilt from its transitions; the first notices and rebuilds too', async () => {
      const a = servers[0]!;
      const b = servers[1]!;
      const actions = task.spec.solution as Action[];
      const created = JSON.parse((await call(a.url, 'POST', '/v1/episodes', TOKEN, { taskId: task.id, seed: 7 })).body) as { episode: { id: string }; token: string };
      const { id } = created.episode;
      const step = (base: string, k: number, key?: string) => call(base, 'POST', `/v1/episodes/${id}/step`, created.token, { action: actions[k - 1], expectedStep: k }, key === undefined ? {} : { 'idempotency-key': key });

      const s1 = await step(a.url, 1, 'k1');
      const s2 = await step(a.url, 2, 'k2');
      expect([s1.status, s2.status]).toEqual([200, 200]);
      // B has never seen the episode: it takes it over at step 2 and applies step 3 on the rebuilt state.
      const s3 = await step(b.url, 3, 'k3');
      expect(s3.status, s3.body).toBe(200);
      expect(JSON.parse(s3.body).info.step).toBe(3);
      // A's copy is stale now (B holds a newer epoch): A drops it, rebuilds three steps and applies step 4.
      const s4 = await step(a.url, 4, 'k4');
      expect(s4.status, s4.body).toBe(200);
      // A retried key on the other replica: the original reply, byte for byte, and nothing applied.
      const again = await step(b.url, 2, 'k2');
      expect(again).toEqual({ status: 200, body: s2.body, replayed: 'true' });
      // Same key, other body: refused, on any replica.
      const other = await call(b.url, 'POST', `/v1/episodes/${id}/step`, created.token, { action: actions[0], expectedStep: 2 }, { 'idempotency-key': 'k2' });
      expect(other.status).toBe(422);
      const stored = await harnesses[1]!.store.listTransitions(`${id}:1`);
      expect(stored.map((t) => t.step)).toEqual([1, 2, 3, 4]);
      expect(stored.map((t) => t.info.stateHash)).toEqual([s1, s2, s3, s4].map((s) => JSON.parse(s.body).info.stateHash));
      // The token is the capability on both; a wrong one is the same 404 on both.
      expect((await call(b.url, 'GET', `/v1/episodes/${id}`, created.token)).status).toBe(200);
      expect((await call(b.url, 'GET', `/v1/episodes/${id}`, 'ehe_not_the_token_0000000000000')).status).toBe(404);
      // Closed on one replica: gone on the other.
      expect((await call(b.url, 'DELETE', `/v1/episodes/${id}`, created.token)).status).toBe(200);
      expect((await call(a.url, 'GET', `/v1/episodes/${id}`, created.token)).status).toBe(404);
    });
  });
}
