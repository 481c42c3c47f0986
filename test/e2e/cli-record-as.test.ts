/**
 * `--record-as`: `train` stores each episode as its inputs by default, and every reader of the CLI (export,
 * episode state) gives what the same run recorded as transitions gives.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/cli/clock.js';
import { EXIT_CODES } from '../../src/cli/exit-codes.js';
import { cliRunner } from '../../src/cli/testing.js';
import { openStore } from '../../src/harness/harness.js';

const dir = mkdtempSync(join(tmpdir(), 'envharness-record-as-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Trains the rule-based agent on `domain` into a fresh store, recorded as `recordAs` (the default when undefined). */
async function train(name: string, recordAs?: string, domain = 'retail') {
  const store = join(dir, `${name}.db`);
  const run = cliRunner(store);
  const flags = recordAs === undefined ? [] : ['--record-as', recordAs];
  const trained = await run(...flags, '--json', 'train', '--domain', domain, '--agent', 'rule-based', '--episodes', '12', '--eval-every', '0', '--per-level', '2', '--no-report', '--agent-state', join(dir, `${name}.json`));
  expect(trained.code, trained.err).toBe(0);
  return { store, run, runId: JSON.parse(trained.out).runId as string };
}

describe('envharness --record-as', { timeout: 120_000 }, () => {
  it('records train episodes as their inputs by default; export and episode state read them as a transitions recording', async () => {
    const logged = await train('inputs');
    const full = await train('transitions', 'transitions');
    expect(logged.runId).toBe(full.runId);
    const raw = await openStore(logged.store, { clock: systemClock });
    const rawFull = await openStore(full.store, { clock: systemClock });
    try {
      const episodes = await raw.listEpisodes({ runId: logged.runId });
      expect(episodes.length).toBe(12);
      for (const e of episodes) {
        expect(e.inputs, e.id).toBeDefined();
        expect(await raw.listTransitions(e.id)).toEqual([]);
        expect((await rawFull.listTransitions(e.id)).length).toBe(e.steps);
      }
      for (const what of ['transitions', 'chat']) {
        const files = [logged, full].map((t, i) => join(dir, `${what}-${i}.jsonl`));
        for (const [i, t] of [logged, full].entries()) {
          const exported = await t.run('export', '--run', t.runId, '--what', what, '--format', 'jsonl', '--out', files[i]!);
          expect(exported.code, exported.err).toBe(0);
        }
        const [a, b] = files.map((f) => readFileSync(f, 'utf8'));
        expect(a!.split('\n').length).toBeGreaterThan(12);
        expect(a).toBe(b);
      }
      const id = episodes[episodes.length - 1]!.id;
      const states = await Promise.all([logged, full].map((t) => t.run('episode', 'state', '--episode', id)));
      expect(states[0]!.code, states[0]!.err).toBe(0);
      expect(states[0]!.out).toBe(states[1]!.out);
    } finally {
      await raw.close();
      await rawFull.close();
    }
  });

  it("exports the state of an episode of a domain without a state format of its own (api-workflows) by replaying its record", async () => {
    const logged = await train('api-inputs', undefined, 'api-workflows');
    const full = await train('api-transitions', 'transitions', 'api-workflows');
    const id = `${logged.runId}:11`;
    const states = await Promise.all([logged, full].map((t) => t.run('episode', 'state', '--episode', id, '--format', 'json')));
    expect(states[0]!.code, states[0]!.err).toBe(0);
    expect(states[1]!.code, states[1]!.err).toBe(0);
    expect(Object.keys(JSON.parse(states[0]!.out) as object).length).toBeGreaterThan(0);
    expect(states[0]!.out).toBe(states[1]!.out);
  });

  it('refuses a value it does not know, naming the option, and writes nothing', async () => {
    const store = join(dir, 'refused.db');
    const refused = await cliRunner(store)('--record-as', 'everything', 'train', '--episodes', '2', '--no-report');
    expect(refused.code).toBe(EXIT_CODES.CONFIG_INVALID);
    expect(refused.err).toContain('--record-as');
    const opened = await openStore(store, { clock: systemClock });
    try {
      expect(await opened.listRuns()).toEqual([]);
    } finally {
      await opened.close();
    }
  });
});
