import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { Batch, GenerationLogEntry, LogFilter } from '../../core/index.js';
import { makeBatch, makeTask } from '../../../test/conformance/store-fixtures.js';
import { generateBatch } from '../../generation/batch.js';
import { createTemplateRegistry } from '../../generation/registry.js';
import { createGateHooks as plantedHooks } from '../../generation/testing/planted-hooks.js';
import { templates as testTemplates } from '../../generation/testing/templates.js';
import { MIGRATIONS, migrate, SCHEMA_VERSION } from './schema.js';
import { createSqliteStore } from './sqlite-store.js';
import { systemClock } from '../../cli/clock.js';

const dirs: string[] = [];
function tempFile(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'envharness-genlog-'));
  dirs.push(dir);
  return join(dir, name);
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** What listGenerationLog must return for `filter`: the logs in batch order, each in (index, position) order, filtered. */
function expected(batches: readonly Batch[], filter: LogFilter): GenerationLogEntry[] {
  const all = batches.flatMap((b) =>
    b.log
      .map((entry, position) => ({ entry, position }))
      .sort((x, y) => x.entry.index - y.entry.index || x.position - y.position)
      .map((x) => x.entry),
  );
  const kept = all.filter(
    (e) =>
      (filter.batchId === undefined || e.batchId === filter.batchId) &&
      (filter.accepted === undefined || e.accepted === filter.accepted) &&
      (filter.gate === undefined || e.gate === filter.gate),
  );
  return filter.limit === undefined ? kept : kept.slice(0, filter.limit);
}

/** A batch whose log has what the compact form must still give back exactly. */
function awkwardBatch(): Batch {
  const tasks = [makeTask(11), makeTask(12), makeTask(13), makeTask(14), makeTask(15)];
  const batch = makeBatch(tasks, { seed: 3 });
  const id = batch.manifest.id;
  const accepted = (i: number, index: number): GenerationLogEntry => ({
    batchId: id,
    index,
    taskId: tasks[i]!.id,
    template: tasks[i]!.template,
    level: tasks[i]!.level,
    accepted: true,
  });
  const rejected = (index: number, gate: 'schema' | 'oracle'): GenerationLogEntry => ({
    batchId: id,
    index,
    taskId: `rejected-${index}`,
    template: 'test/lookup@1',
    level: 2,
    accepted: false,
    gate,
    reason: `candidate ${index} failed`,
  });
  const log: GenerationLogEntry[] = [
    accepted(0, 0),
    accepted(1, 1),
    rejected(2, 'schema'),
    accepted(2, 3),
    { ...accepted(3, 4), details: { note: 'accepted with details' } }, // cannot be held by the summary
    rejected(4, 'oracle'),
    accepted(4, 9), // a gap in candidate indices
    rejected(9, 'schema'), // the same index twice: position decides
    rejected(7, 'oracle'), // logged after a later index
  ];
  return { ...batch, log };
}

const FILTERS = (batches: readonly Batch[]): LogFilter[] => [
  {},
  { accepted: true },
  { accepted: false },
  { gate: 'schema' },
  { gate: 'oracle', accepted: false },
  { batchId: batches[1]!.manifest.id },
  { batchId: batches[1]!.manifest.id, accepted: true },
  { limit: 3 },
  { limit: 0 },
];

describe('sqlite store: compact generation log', () => {
  it('gives back every entry of every batch exactly, in order, under every filter', async () => {
    const store = createSqliteStore(tempFile('log.db'), { now: systemClock });
    const batches = [makeBatch([makeTask(1), makeTask(2), makeTask(3)]), awkwardBatch(), makeBatch([makeTask(21)], { seed: 9, withRejection: false })];
    for (const b of batches) await store.saveBatch(b);
    for (const filter of FILTERS(batches)) expect(await store.listGenerationLog(filter), JSON.stringify(filter)).toEqual(expected(batches, filter));
    await store.close();
  });

  it('writes one summary row per batch with per-gate counts and a row per rejection (plus entries it cannot hold)', async () => {
    const file = tempFile('rows.db');
    const store = createSqliteStore(file, { now: systemClock });
    const batch = awkwardBatch();
    await store.saveBatch(batch);
    await store.close();
    const db = new BetterSqlite3(file, { readonly: true });
    const summary = db.prepare('SELECT candidates, accepted, rejected FROM generation_summary').all();
    expect(summary).toEqual([{ candidates: 9, accepted: 5, rejected: '{"oracle":2,"schema":2}' }]);
    // 4 rejections + the accepted entry with details.
    expect(db.prepare('SELECT count(*) FROM generation_entries').pluck().get()).toBe(5);
    db.close();
  });

  it('upgrades a version-2 store: the old per-candidate rows list exactly as before', async () => {
    const file = tempFile('v2.db');
    const batches = [makeBatch([makeTask(1), makeTask(2)]), awkwardBatch()];
    // Written as version 2 wrote them: the batch, its tasks, one generation_log row per entry, in log order.
    const db = new BetterSqlite3(file);
    db.pragma('journal_mode = WAL');
    expect(migrate(db, MIGRATIONS.slice(0, 2))).toEqual([1, 2]);
    db.transaction(() => {
      for (const b of batches) {
        db.prepare('INSERT INTO batches (id, split, manifest) VALUES (?, ?, ?)').run(b.manifest.id, b.manifest.split, JSON.stringify(b.manifest));
        const log = db.prepare(
          'INSERT INTO generation_log (batch_id, idx, task_id, template, level, accepted, gate, reason, details) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
        );
        for (const e of b.log) {
          log.run(e.batchId, e.index, e.taskId, e.template, e.level, e.accepted ? 1 : 0, e.gate ?? null, e.reason ?? null, e.details === undefined ? null : JSON.stringify(e.details));
        }
      }
    })();
    expect(migrate(db, MIGRATIONS.slice(0, 3))).toEqual([3]);
    db.close();
    const store = createSqliteStore(file, { now: systemClock });
    // Opening applies versions 4 and 5: the old rejections read back with the code their gate gives such a reason.
    const coded = batches.map((b) => ({
      ...b,
      log: b.log.map((e) => (e.accepted ? e : { ...e, problem: { code: { oracle: 'ORACLE_FAILED', schema: 'TASK_SCHEMA', near_duplicate: 'NEAR_DUPLICATE' }[e.gate as string], message: e.reason! } })),
    })) as Batch[];
    for (const filter of FILTERS(batches)) expect(await store.listGenerationLog(filter), JSON.stringify(filter)).toEqual(expected(coded, filter));
    // New batches after the upgrade are listed after the old ones.
    const later = makeBatch([makeTask(31)], { seed: 5 });
    await store.saveBatch(later);
    expect(await store.listGenerationLog()).toEqual(expected([...coded, later], {}));
    await store.close();
  });

  it('upgrades a version-3 store: real gate rejections read back with the Problem the gates give them now', async () => {
    // A real batch with a rejection of each kind: instantiation, schema, exact and near duplicates, oracle
    // (rejected, and a hook that throws) and non-triviality.
    const registry = createTemplateRegistry(testTemplates);
    const batch = await generateBatch(
      { templates: testTemplates.map((t) => ({ id: t.id })), levels: [1], count: 400, seed: 7, split: 'dynamic' },
      { registry, hooks: plantedHooks() },
    );
    const rejected = batch.log.filter((e) => !e.accepted);
    const codes = new Set(rejected.map((e) => e.problem?.code));
    for (const code of ['INSTANTIATE_FAILED', 'TASK_SCHEMA', 'DUPLICATE_IN_BATCH', 'ORACLE_FAILED', 'GATE_ERROR', 'TRIVIAL']) expect(codes, code).toContain(code);
    expect(rejected.every((e) => e.problem !== undefined && e.problem.message === e.reason)).toBe(true);
    expect(rejected.some((e) => e.problem?.pointer !== undefined)).toBe(true);
    // Written as version 3 wrote a log: every entry a full row of generation_entries, without code or pointer.
    const file = tempFile('v3.db');
    const db = new BetterSqlite3(file);
    db.pragma('journal_mode = WAL');
    expect(migrate(db, MIGRATIONS.slice(0, 3))).toEqual([1, 2, 3]);
    db.transaction(() => {
      const seq = Number(db.prepare('INSERT INTO batches (id, split, manifest) VALUES (?, ?, ?)').run(batch.manifest.id, 'dynamic', JSON.stringify(batch.manifest)).lastInsertRowid);
      const insert = db.prepare(
        'INSERT INTO generation_entries (batch_seq, ordinal, idx, task_id, template, level, accepted, gate, reason, details) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      );
      batch.log.forEach((e, ordinal) => {
        insert.run(seq, ordinal, e.index, e.taskId, e.template, e.level, e.accepted ? 1 : 0, e.gate ?? null, e.reason ?? null, e.details === undefined ? null : JSON.stringify(e.details));
      });
    })();
    db.close();
    const store = createSqliteStore(file, { now: systemClock });
    expect((await store.getInfo()).schemaVersion).toBe(SCHEMA_VERSION);
    expect(await store.listGenerationLog({ accepted: false })).toEqual(rejected.map((e) => ({ ...e, batchId: batch.manifest.id })));
    await store.close();
  });
});
