/** A harness records its training and evaluation episodes as their inputs and reads their transitions back by replay. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createAgent } from '../agents/index.js';
import { builtinDomains } from '../builtins.js';
import { canonicalize, type Store } from '../core/index.js';
import { createHarness, openStore, type Harness } from './harness.js';

const dir = mkdtempSync(join(tmpdir(), 'envharness-record-inputs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const clock = () => '2026-01-01T00:00:00.000Z';

/** A harness on a fresh SQLite file that trained the same run: the rule-based agent on retail, evaluations on the shipped regression set included. */
async function trained(file: string, recordAs?: 'inputs' | 'transitions'): Promise<{ harness: Harness; runId: string }> {
  const harness = await createHarness({ store: join(dir, file), domains: builtinDomains(), clock, ...(recordAs !== undefined ? { recordAs } : {}) });
  await harness.initialize({ seed: 3 });
  const templates = harness.registry.list().filter((t) => t.domain === 'retail').slice(0, 4).map((t) => ({ id: t.id }));
  await harness.generate({ templates, levels: [1, 2, 3], count: 60, seed: 1, split: 'dynamic' });
  const summary = await harness.train({ agent: createAgent('rule-based', { seed: 5 }), episodes: 40, seed: 9, evalEvery: 20, evalTasks: 6, dynamics: { shaping: { REDUNDANT_CALL: -0.1 } } });
  return { harness, runId: summary.runId };
}

async function episodesOf(store: Store, runId: string) {
  return store.listEpisodes({ runId });
}

describe('a harness recording episodes as their inputs', { timeout: 120_000 }, () => {
  it('stores no transition rows, and reads back the transitions a run recorded as transitions stored, byte for byte', async () => {
    const logged = await trained('inputs.db');
    const full = await trained('transitions.db', 'transitions');
    try {
      const records = await episodesOf(logged.harness.store, logged.runId);
      const fullRecords = await episodesOf(full.harness.store, full.runId);
      expect(records.length).toBeGreaterThanOrEqual(40);
      expect(records.map((r) => r.id)).toEqual(fullRecords.map((r) => r.id));
      const raw = await openStore(join(dir, 'inputs.db'), { clock });
      try {
        for (const [i, record] of records.entries()) {
          expect(record.inputs, record.id).toBeDefined();
          expect(fullRecords[i]!.inputs).toBeUndefined();
          const { inputs: _, ...rest } = record;
          expect(canonicalize(rest)).toBe(canonicalize(fullRecords[i]));
          const transitions = await logged.harness.store.listTransitions(record.id);
          expect(transitions).toHaveLength(record.steps);
          expect(canonicalize(transitions)).toBe(canonicalize(await full.harness.store.listTransitions(record.id)));
          // The file itself holds no transition of it: only the harness's view replays them.
          expect(await raw.listTransitions(record.id)).toEqual([]);
        }
      } finally {
        await raw.close();
      }
    } finally {
      await logged.harness.close();
      await full.harness.close();
    }
  });

  it('reads them after the store is reopened, and names what is missing when it cannot replay', async () => {
    const { harness, runId } = await trained('reopened.db');
    const [record] = await episodesOf(harness.store, runId);
    const before = canonicalize(await harness.store.listTransitions(record!.id));
    await harness.close();
    const again = await createHarness({ store: join(dir, 'reopened.db'), domains: builtinDomains(), clock });
    try {
      expect(canonicalize(await again.store.listTransitions(record!.id))).toBe(before);
    } finally {
      await again.close();
    }
    const bare = await createHarness({ store: join(dir, 'reopened.db'), domains: [], clock });
    try {
      await expect(bare.store.listTransitions(record!.id)).rejects.toMatchObject({ code: 'DOMAIN_NOT_FOUND', message: expect.stringContaining('retail') });
    } finally {
      await bare.close();
    }
  });

  it('refuses a recordAs it does not know', async () => {
    await expect(createHarness({ store: ':memory:', clock, recordAs: 'both' as never })).rejects.toMatchObject({ code: 'CONFIG_INVALID', details: { pointer: '/recordAs' } });
  });
});
