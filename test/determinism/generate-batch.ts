/** Child process of the determinism must-show: generates one fixed batch and prints its digests and environment. */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createTemplateRegistry, generateBatch, loadDeclarativeTemplates } from '../../src/generation/index.js';
import { createQaGateHooks } from '../../src/generation/testing/qa-checker.js';
import { templates } from '../../src/generation/testing/templates.js';

const workers = Number(process.argv[2] ?? '1');
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

process.stdout.write(
  JSON.stringify({
    manifestId: batch.manifest.id,
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
