/** Child process of the determinism must-show: generates one fixed batch and prints its digests and environment. */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createTemplateRegistry, generateBatch, loadDeclarativeTemplates } from '../../src/generation/index.js';
import { createQaGateHooks } from '../../src/generation/testing/qa-checker.js';
import { templates } from '../../src/generation/testing/templates.js';
import { buildSnapshotBody, exportSnapshot, snapshotId } from '../../src/harness/snapshots.js';
import { createSqliteStore } from '../../src/storage/sqlite/index.js';
import { systemClock } from '../../src/cli/clock.js';

const workers = Number(process.argv[2] ?? '1');
/** T13's fifth factor: SQLite returns unordered rows reversed, so any reliance on row order shows in the export. */
const reverseUnorderedSelects = process.argv[3] === 'reverse';
const templateModule = new URL('../../src/generation/testing/templates.ts', import.meta.url).pathname;
const arithmetic = loadDeclarativeTemplates(readFileSync(new URL('../../examples/templates/arithmetic.yaml', import.meta.url), 'utf8'), 'yaml');
const registry = createTemplateRegistry([...templates, ...arithmetic]);

const batch = await generateBatch(
  {
    templates: [
      { id: 'testing/add', weight: 2 },
      { id: 'testing/multiply' },
      { id: 'arith/sum', weight: 2 },
      { id: 'arith/word-problem' },
      { id: 'arith/remainder', weight: 0.5 },
      { id: 'arith/extremes', weight: 0.5 },
      { id: 'planted/unsolvable', weight: 0.2 },
    ],
    levels: [1, 2],
    count: 3_000,
    seed: 20_240_601,
    split: 'dynamic',
    reviewShare: 0.1,
    labels: { purpose: 'determinism' },
  },
  { registry, hooks: createQaGateHooks(), workers, templateModules: [templateModule] },
);

// The batch through the store and out again as a snapshot export: SQL row order must not show either.
const store = createSqliteStore(':memory:', { now: systemClock, reverseUnorderedSelects });
await store.saveBatch(batch, { review: batch.review });
const body = await buildSnapshotBody({ store, templates: registry.list().map((t) => ({ id: t.id, sourceDigest: t.sourceDigest })), curriculum: null, rng: {}, config: {} });
const exported = await exportSnapshot(store, { ...body, id: snapshotId(body), createdAt: '2026-01-01T00:00:00.000Z' });
const reversed = reverseUnorderedSelects; // (the setting the store was opened with)
await store.close();

process.stdout.write(
  JSON.stringify({
    manifestId: batch.manifest.id,
    exportSha256: createHash('sha256').update(exported).digest('hex'),
    reverseUnorderedSelects: reversed,
    batchSha256: createHash('sha256').update(JSON.stringify(batch)).digest('hex'),
    accepted: batch.manifest.accepted,
    environment: {
      workers,
      timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      locale: Intl.NumberFormat().resolvedOptions().locale,
      v8Flags: process.execArgv.filter((a) => a.startsWith('--random-seed')),
    },
  }) + '\n',
);
