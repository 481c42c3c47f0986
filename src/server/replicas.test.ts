import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinDomains } from '../builtins.js';
import { createHarness, type Action, type Harness, type StoredTask } from '../index.js';
import { createTestDatabase, PG_SKIP_MESSAGE, PG_TEST_URL, type TestDatabase } from '../../test/support/postgres.js';
import { CurriculumSync } from './curriculum-sync.js';
import { createServer, type EnvHarnessServer } from './index.js';
import { isReplicaStore } from './replicas.js';
import { systemClock } from '../cli/clock.js';

const TOKEN = 'replica-unit-token-0123456789';

if (PG_TEST_URL === undefined) {
  describe('replicas on one store', () => {
    it.skip(PG_SKIP_MESSAGE, () => undefined);
  });
} else {
  let db: TestDatabase;
  let storeUrl: string;
  const harnesses: Harness[] = [];
  const servers: Array<{ server: EnvHarnessServer; url: string }> = [];
  let task: StoredTask;

  beforeAll(async () => {
    db = await createTestDatabase('envh_replica_unit');
    const url = db.schemaUrl();
    storeUrl = url;
    for (let i = 0; i < 2; i++) {
      const harness = await createHarness({ clock: systemClock, store: url, domains: builtinDomains() });
      await harness.initialize({ seed: 1 });
      // A dynamic pool, so that a curriculum has slices (the second replica loads it at initialize).
      if (i === 0) await harness.generate({ templates: [{ id: 'math/chain-sum@1' }], levels: [1, 2], count: 12, seed: 1, split: 'dynamic' }, { workers: 1 });
      // Shipped regression sets install on first use; this test takes its episode's task from them.
      if (i === 0) await harness.installRegressionSets();
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

    it('one curriculum: changes sent to either replica are applied once, in log order, everywhere; replaying the log gives the same state', async () => {
      const a = servers[0]!;
      const b = servers[1]!;
      const state = async (base: string) => JSON.parse((await call(base, 'GET', '/v1/curriculum', TOKEN)).body) as Record<string, unknown>;
      expect((await call(a.url, 'PUT', '/v1/curriculum', TOKEN, { strategy: 'threshold' })).status).toBe(200);
      const initial = await state(b.url);
      expect(initial).toMatchObject({ active: true, strategy: 'threshold' });
      const slices = harnesses[0]!.dynamicSlices().map((s) => `${s.domain}/${s.taskType}`);
      for (let round = 0; round < 6; round++) {
        const results = slices.flatMap((slice, k) => Array.from({ length: 8 }, (_, n) => ({ slice, level: 1, success: (n + k + round) % 3 === 0 ? 0 : 1 })));
        const target = round % 2 === 0 ? b : a;
        const path = round % 3 === 2 ? '/v1/curriculum/distribution' : '/v1/curriculum/adjust';
        const r = await call(target.url, 'POST', path, TOKEN, { results });
        expect(r.status, r.body).toBe(200);
      }
      // A refused change (results for a slice the curriculum does not have) is refused on the replica that got it.
      const bad = await call(a.url, 'POST', '/v1/curriculum/adjust', TOKEN, { results: [{ slice: 'nope/none', level: 1, success: 1 }] });
      const sa = await state(a.url);
      const sb = await state(b.url);
      expect(sb).toEqual(sa);
      // The results moved the statistics (so the equality above is not two untouched curricula).
      expect(sa.stats).not.toEqual(initial.stats);
      // A fresh harness replaying the log from the start reaches the same curriculum.
      const fresh = await createHarness({ clock: systemClock, store: storeUrl, domains: builtinDomains() });
      try {
        await fresh.initialize({ seed: 1 });
        if (!isReplicaStore(fresh.store)) throw new Error('expected a replica store');
        await new CurriculumSync(fresh, fresh.store.curriculumLog('replay')).catchUp();
        const c = fresh.activeCurriculum!;
        expect({ strategy: c.strategy, levels: c.levels(), weights: c.weights(), stats: c.stats() }).toEqual({ strategy: sa.strategy, levels: sa.levels, weights: sa.weights, stats: sa.stats });
      } finally {
        await fresh.close();
      }
      // Lag: a change made on A reaches B's sampling state through B's poller, without a request to B.
      const before = JSON.stringify(harnesses[1]!.activeCurriculum!.stats());
      const t0 = performance.now();
      await call(a.url, 'POST', '/v1/curriculum/adjust', TOKEN, { results: slices.map((slice) => ({ slice, level: 1, success: 1 })) });
      const sent = performance.now();
      while (JSON.stringify(harnesses[1]!.activeCurriculum!.stats()) === before) {
        if (performance.now() - t0 > 5_000) throw new Error('the change never reached replica B');
        await new Promise((r) => setTimeout(r, 2));
      }
      console.info(`curriculum lag: applied on B ${(performance.now() - sent).toFixed(0)} ms after A answered (poll interval 100 ms); refused change: ${bad.status}`);
    });
  });
}
