import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeStore, rejection } from '../../../test/conformance/store.js';
import { makeBatch, makeEpisode, makeTask, makeTransition } from '../../../test/conformance/store-fixtures.js';
import { createTestDatabase, PG_SKIP_MESSAGE, PG_TEST_URL, type TestDatabase } from '../../../test/support/postgres.js';
import { createPostgresStore, SCHEMA_VERSION, type PostgresStore } from './index.js';
import { MIGRATIONS, migrate } from './schema.js';
import { generateBatch } from '../../generation/batch.js';
import { createTemplateRegistry } from '../../generation/registry.js';
import { createGateHooks as plantedHooks } from '../../generation/testing/planted-hooks.js';
import { templates as testTemplates } from '../../generation/testing/templates.js';

if (PG_TEST_URL === undefined) {
  describe('postgres store', () => {
    it.skip(PG_SKIP_MESSAGE, () => undefined);
  });
  console.info(PG_SKIP_MESSAGE);
} else {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('envh_store');
  });
  afterAll(async () => {
    await db?.drop();
  });

  describeStore('postgres', async () => createPostgresStore(db.schemaUrl()));

  describe('postgres store: opening and migrations', () => {
    it('reports its kind, a location without credentials, and the current schema version', async () => {
      const url = new URL(db.schemaUrl());
      url.password = 'secret-password';
      const store = await createPostgresStore(url.toString());
      try {
        expect(store.kind).toBe('postgres');
        expect(store.location).not.toContain('secret-password');
        expect(store.location).toContain(`schema=${url.searchParams.get('schema')}`);
        const info = await store.getInfo();
        expect(info.schemaVersion).toBe(SCHEMA_VERSION);
        expect(info.synchronousCommit).toBe('on');
      } finally {
        await store.close();
      }
    });

    it('migrates once when several replicas open the same schema at the same time', async () => {
      const url = db.schemaUrl();
      const stores = await Promise.all(Array.from({ length: 4 }, () => createPostgresStore(url)));
      try {
        const client = new pg.Client({ connectionString: db.url });
        await client.connect();
        const schema = new URL(url).searchParams.get('schema');
        const rows = (await client.query(`SELECT version FROM ${schema}.envharness_migrations ORDER BY version`)).rows;
        await client.end();
        expect(rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
      } finally {
        await Promise.all(stores.map((s) => s.close()));
      }
    });

    it('refuses a schema newer than this version, and a failing migration leaves the schema at a whole version', async () => {
      const url = db.schemaUrl();
      const schema = new URL(url).searchParams.get('schema')!;
      (await createPostgresStore(url)).close();
      const pool = new pg.Pool({ connectionString: db.url });
      const client = await pool.connect();
      try {
        const bad = [...MIGRATIONS, { version: SCHEMA_VERSION + 1, description: 'adds a table, then fails', sql: 'CREATE TABLE extra (x int); SELECT 1/0;' }];
        await expect(migrate(client, schema, 'test', bad)).rejects.toMatchObject({ code: 'STORE_FAILED', details: { operation: 'migrate' } });
        const extra = await client.query(`SELECT to_regclass('${schema}.extra') AS t`);
        expect(extra.rows[0].t).toBeNull();
        await client.query(`INSERT INTO ${schema}.envharness_migrations (version, description) VALUES ($1, 'from the future')`, [SCHEMA_VERSION + 5]);
      } finally {
        client.release();
        await pool.end();
      }
      await expect(createPostgresStore(url)).rejects.toMatchObject({ code: 'STORE_FAILED', details: { operation: 'open', schemaVersion: SCHEMA_VERSION + 5 } });
    });

    it('upgrades a version-4 schema: real gate rejections read back with the Problem the gates give them now', async () => {
      const registry = createTemplateRegistry(testTemplates);
      const batch = await generateBatch(
        { templates: testTemplates.map((t) => ({ id: t.id })), levels: [1], count: 400, seed: 7, split: 'dynamic' },
        { registry, hooks: plantedHooks() },
      );
      const rejected = batch.log.filter((e) => !e.accepted);
      expect(new Set(rejected.map((e) => e.problem?.code)).size).toBeGreaterThanOrEqual(6);
      const url = db.schemaUrl();
      const schema = new URL(url).searchParams.get('schema')!;
      const pool = new pg.Pool({ connectionString: db.url });
      const client = await pool.connect();
      try {
        expect(await migrate(client, schema, 'test', MIGRATIONS.slice(0, 4))).toEqual([1, 2, 3, 4]);
        // As version 4 wrote a log: the rejections' reasons and details, no code or pointer.
        await client.query(`INSERT INTO ${schema}.batches (id, split, manifest) VALUES ($1, 'dynamic', $2)`, [batch.manifest.id, JSON.stringify(batch.manifest)]);
        for (const e of rejected) {
          await client.query(
            `INSERT INTO ${schema}.generation_log (batch_id, idx, task_id, template, level, accepted, gate, reason, details) VALUES ($1, $2, $3, $4, $5, false, $6, $7, $8)`,
            [batch.manifest.id, e.index, e.taskId, e.template, e.level, e.gate, e.reason, e.details === undefined ? null : JSON.stringify(e.details)],
          );
        }
      } finally {
        client.release();
        await pool.end();
      }
      const store = await createPostgresStore(url);
      try {
        expect((await store.getInfo()).schemaVersion).toBe(SCHEMA_VERSION);
        expect(await store.listGenerationLog({ accepted: false })).toEqual(rejected.map((e) => ({ ...e, batchId: batch.manifest.id })));
      } finally {
        await store.close();
      }
    });

    it('refuses bad URLs and schema names with CONFIG_INVALID, and an unreachable server with STORE_FAILED', async () => {
      await expect(createPostgresStore('mysql://x@127.0.0.1/db')).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
      await expect(createPostgresStore(`${db.url}?schema=Bad-Name`)).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
      const error = await rejection(createPostgresStore('postgres://nobody:pw@127.0.0.1:1/none'));
      expect(error.code).toBe('STORE_FAILED');
      expect(error.message).not.toContain(':pw@');
    });
  });

  describe('postgres store: concurrent writers', () => {
    let a: PostgresStore;
    let b: PostgresStore;
    beforeAll(async () => {
      const url = db.schemaUrl();
      a = await createPostgresStore(url);
      b = await createPostgresStore(url);
    });
    afterAll(async () => {
      await a.close();
      await b.close();
    });

    it('two workers saving the same batch at the same time both succeed, and it is stored once', async () => {
      const batch = makeBatch([makeTask(101), makeTask(102), makeTask(103)]);
      await Promise.all([a.saveBatch(batch), b.saveBatch(batch), a.saveBatch(batch)]);
      expect((await a.listTasks({ batchId: batch.manifest.id })).map((t) => t.id)).toEqual(batch.tasks.map((t) => t.id));
      expect(await b.listGenerationLog({ batchId: batch.manifest.id })).toEqual(batch.log);
    });

    it('two workers importing the same tasks at the same time both succeed', async () => {
      const rows = [makeTask(201), makeTask(202)].map((t, i) => ({ ...t, split: 'dynamic' as const, status: 'active' as const, batchId: 'imp', seq: 10_000 + i }));
      await Promise.all([a.putTasks(rows), b.putTasks(rows)]);
      expect(await a.listTasks({ batchId: 'imp' })).toEqual(rows);
    });

    it('group-commits concurrent appends, and a refused call fails alone', async () => {
      const before = a.transitionCommits;
      const calls = Array.from({ length: 50 }, (_, i) => a.appendTransitions([makeTransition(`gc-${i}`, 0), makeTransition(`gc-${i}`, 1)], { episodes: [{ ...makeEpisode(`gc-${i}`, 't'), steps: 2 }] }));
      await a.appendTransitions([makeTransition('gc-dup', 0)]);
      const dup = a.appendTransitions([makeTransition('gc-ok', 0)]).then(() => a.appendTransitions([makeTransition('gc-dup', 0)]));
      const results = await Promise.allSettled([...calls, dup]);
      expect(results.slice(0, 50).every((r) => r.status === 'fulfilled')).toBe(true);
      expect(results[50]).toMatchObject({ status: 'rejected', reason: { code: 'STORE_CONFLICT', details: { episodeId: 'gc-dup', step: 0 } } });
      expect(a.transitionCommits - before).toBeLessThan(50);
      for (let i = 0; i < 50; i++) {
        expect((await b.listTransitions(`gc-${i}`)).map((t) => t.step)).toEqual([0, 1]);
        expect((await b.getEpisode(`gc-${i}`))?.steps).toBe(2);
      }
      expect(await b.listTransitions('gc-ok')).toHaveLength(1);
    });

    it('writes bodies and ids with backslashes, tabs, newlines and non-ASCII text byte for byte (COPY escaping)', async () => {
      const awkward = 'back\\slash \\N tab\t new\nline cr\r quote" \u00e9\u{1f600} \\\\.';
      const id = 'ep-\\copy\t1';
      const transitions = [0, 1, 2].map((step) => {
        const t = makeTransition(id, step);
        return { ...t, info: { ...t.info, note: awkward.repeat(step + 1) } };
      });
      await a.appendTransitions(transitions);
      expect(await b.listTransitions(id)).toEqual(transitions);
    });

    it('two stores writing the same step: exactly one wins, the other gets STORE_CONFLICT', async () => {
      const results = await Promise.allSettled([a.appendTransitions([makeTransition('race', 0)]), b.appendTransitions([makeTransition('race', 0)])]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(results.find((r) => r.status === 'rejected')).toMatchObject({ reason: { code: 'STORE_CONFLICT' } });
      expect(await a.listTransitions('race')).toHaveLength(1);
    });
  });
}
