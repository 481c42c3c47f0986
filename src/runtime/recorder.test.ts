import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EnvHarnessError, canonicalize, isEnvHarnessError } from '../core/index.js';
import type { EpisodeRecord, Store, Transition } from '../core/index.js';
import { createSqliteStore } from '../storage/sqlite/index.js';
import { createEpisode, createMemoryRecorder, createStoreRecorder, verifyReplay } from './index.js';
import { createInventoryDomain, instantiate, makeInventoryTask, restockTemplate } from './testing/index.js';
import { systemClock } from '../cli/clock.js';

const inventory = createInventoryDomain();

/** A store double that logs calls and can hold commits open or fail them. */
function fakeStore() {
  const log: string[] = [];
  const transitions: Transition[] = [];
  const episodes = new Map<string, EpisodeRecord>();
  let hold: Promise<void> | undefined;
  let fail: Error | undefined;
  const store: Pick<Store, 'appendTransitions'> = {
    async appendTransitions(batch, options) {
      const records = options?.episodes ?? [];
      log.push(`append ${batch.length}` + records.map((r) => ` +${r.status}`).join(''));
      if (hold !== undefined) await hold;
      if (fail !== undefined) throw fail;
      transitions.push(...batch);
      for (const record of records) episodes.set(record.id, record);
    },
  };
  return {
    store,
    log,
    transitions,
    episodes,
    holdCommits(): () => void {
      let release!: () => void;
      hold = new Promise((r) => (release = r));
      return () => {
        hold = undefined;
        release();
      };
    },
    failWith(error: Error) {
      fail = error;
    },
  };
}

function transition(episodeId: string, step: number): Transition {
  return {
    episodeId,
    step,
    action: { type: 'message', text: `m${step}` },
    observation: { kind: 'message' },
    reward: 0,
    terminated: false,
    truncated: false,
    feedback: [],
    info: { step, outcome: 0, shaping: 0, stateHash: 'h' },
  };
}

function makeRecord(id: string): EpisodeRecord {
  const at = '2026-01-02T03:04:05.000Z';
  return { id, taskId: 't1', seed: 1, status: 'terminated', steps: 1, reward: 0, outcome: 0, excludeFromStats: false, createdAt: at, updatedAt: at };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('memory recorder', () => {
  it('keeps records and transitions per episode', () => {
    const recorder = createMemoryRecorder();
    const task = makeInventoryTask();
    const episode = createEpisode(inventory, task, { recorder, runId: 'run-1', agent: 'oracle' });
    episode.reset({ seed: 1 });
    for (const action of task.spec.solution) episode.step(action);
    const [record] = recorder.episodes();
    expect(record).toMatchObject({ id: episode.id, taskId: task.id, seed: 1, status: 'terminated', steps: 4, reward: 1, outcome: 1, endReason: 'finished', runId: 'run-1', agent: 'oracle' });
    expect(recorder.transitions(episode.id!).map((t) => t.step)).toEqual([1, 2, 3, 4]);
    expect(recorder.transitions(episode.id!).map((t) => t.action)).toEqual(task.spec.solution);
  });

  it('stamps records with the injected clock', () => {
    const recorder = createMemoryRecorder();
    let now = Date.UTC(2026, 0, 2, 3, 4, 5);
    const episode = createEpisode(inventory, makeInventoryTask(), { recorder, clock: () => now });
    episode.reset({ seed: 1 });
    now += 1500;
    episode.step({ type: 'finish' });
    expect(recorder.episodes()[0]).toMatchObject({ createdAt: '2026-01-02T03:04:05.000Z', updatedAt: '2026-01-02T03:04:06.500Z' });
  });
});

describe('store recorder', () => {
  it('group-commits every maxBatch transitions, and the rest on flush', async () => {
    const fake = fakeStore();
    const recorder = createStoreRecorder(fake.store, { maxBatch: 3, maxDelayMs: 10_000 });
    for (let step = 1; step <= 7; step++) recorder.record(transition('e1', step));
    await new Promise((r) => setImmediate(r));
    expect(fake.log).toEqual(['append 3', 'append 3']);
    expect(recorder.pending).toBe(1);
    await recorder.flush();
    expect(fake.log).toEqual(['append 3', 'append 3', 'append 1']);
    expect(fake.transitions.map((t) => t.step)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('group-commits every maxBatch episode records too: episodes recorded as their inputs fill commits without transitions', async () => {
    const fake = fakeStore();
    const recorder = createStoreRecorder({ ...fake.store, ordered: true }, { maxBatch: 4, maxDelayMs: 10_000 });
    const task = makeInventoryTask();
    const ids: string[] = [];
    // A loop that never yields: without a bound, every record would wait for the flush at the end.
    for (let i = 0; i < 5; i++) {
      const episode = createEpisode(inventory, task, { recorder, recordAs: 'inputs', episodeId: () => `in-${i}` });
      episode.reset({ seed: i });
      for (const action of task.spec.solution) episode.step(action);
      ids.push(episode.id!);
    }
    // Handed over while the loop ran: the first four episodes' records (begin and end of each merged), no transitions.
    expect(fake.log).toEqual(['append 0 +terminated +terminated +terminated +terminated']);
    expect(recorder.pending).toBe(1);
    await recorder.flush();
    expect(fake.log).toEqual(['append 0 +terminated +terminated +terminated +terminated', 'append 0 +terminated']);
    expect(fake.transitions).toEqual([]);
    expect([...fake.episodes.keys()]).toEqual(ids);
    expect([...fake.episodes.values()].every((e) => e.inputs !== undefined && e.status === 'terminated')).toBe(true);
  });

  it('commits after maxDelayMs without a flush', async () => {
    vi.useFakeTimers();
    const fake = fakeStore();
    const recorder = createStoreRecorder(fake.store, { maxBatch: 100, maxDelayMs: 20 });
    recorder.record(transition('e1', 1));
    recorder.record(transition('e1', 2));
    await vi.advanceTimersByTimeAsync(19);
    expect(fake.log).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(fake.log).toEqual(['append 2']);
  });

  it('resolves flush only once the store has committed', async () => {
    const fake = fakeStore();
    const recorder = createStoreRecorder(fake.store);
    const release = fake.holdCommits();
    recorder.record(transition('e1', 1));
    let durable = false;
    const flushed = recorder.flush().then(() => (durable = true));
    await new Promise((r) => setImmediate(r));
    expect(durable).toBe(false);
    release();
    await flushed;
    expect(durable).toBe(true);
    expect(fake.transitions).toHaveLength(1);
  });

  it('merges flushes asked for in the same tick into one commit', async () => {
    const fake = fakeStore();
    const recorder = createStoreRecorder(fake.store, { maxBatch: 1000 });
    const flushes: Promise<void>[] = [];
    for (let step = 1; step <= 5; step++) {
      recorder.record(transition('e1', step));
      flushes.push(recorder.flush());
    }
    await Promise.all(flushes);
    expect(fake.log).toEqual(['append 5']);
  });

  it('writes the episode record with its transitions, in one transaction', async () => {
    const fake = fakeStore();
    const recorder = createStoreRecorder(fake.store);
    const task = makeInventoryTask();
    const episode = createEpisode(inventory, task, { recorder });
    episode.reset({ seed: 1 });
    for (const action of task.spec.solution) episode.step(action);
    await episode.flush();
    expect(fake.log).toEqual(['append 4 +terminated']);
    expect(fake.episodes.get(episode.id!)).toMatchObject({ status: 'terminated', steps: 4, outcome: 1 });
  });

  it('makes the first failure sticky, without unhandled rejections', async () => {
    const fake = fakeStore();
    const recorder = createStoreRecorder(fake.store);
    fake.failWith(new Error('disk full'));
    recorder.record(transition('e1', 1));
    const first = await recorder.flush().catch((e: unknown) => e);
    expect(isEnvHarnessError(first, 'STORE_FAILED')).toBe(true);
    expect((first as EnvHarnessError).message).toContain('disk full');
    recorder.record(transition('e1', 2));
    expect(isEnvHarnessError(await recorder.flush().catch((e: unknown) => e), 'STORE_FAILED')).toBe(true);
  });

  it('hands commits to an ordered target as they start, without waiting for the previous one', async () => {
    const fake = fakeStore();
    const recorder = createStoreRecorder({ ...fake.store, ordered: true }, { maxBatch: 2, maxDelayMs: 10_000 });
    const release = fake.holdCommits();
    for (let step = 1; step <= 6; step++) recorder.record(transition('e1', step));
    // Handed over during record(), while the first commit is still held.
    expect(fake.log).toEqual(['append 2', 'append 2', 'append 2']);
    let durable = false;
    const flushed = recorder.flush().then(() => (durable = true));
    await new Promise((r) => setImmediate(r));
    expect(durable).toBe(false);
    release();
    await flushed;
    expect(fake.transitions.map((t) => t.step)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('with an ordered target, a flush after a failed commit rejects, and nothing more is handed over', async () => {
    const fake = fakeStore();
    const recorder = createStoreRecorder({ ...fake.store, ordered: true }, { maxBatch: 1, maxDelayMs: 10_000 });
    fake.failWith(new Error('disk full'));
    recorder.record(transition('e1', 1));
    await expect(recorder.flush()).rejects.toMatchObject({ code: 'STORE_FAILED' });
    recorder.record(transition('e1', 2));
    await expect(recorder.flush()).rejects.toMatchObject({ code: 'STORE_FAILED' });
    expect(fake.log).toEqual(['append 1']);
  });

  it('records through a SQLite writer thread; the stored episodes replay exactly', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'envharness-recorder-'));
    const store = createSqliteStore(join(dir, 'writer.db'), { now: systemClock });
    try {
      const recorder = createStoreRecorder(store.openTransitionWriter(), { maxBatch: 3 });
      const tasks = [1, 2, 3, 4].map((level) => instantiate(restockTemplate, level, 9));
      const ids: string[] = [];
      for (const [i, task] of tasks.entries()) {
        const episode = createEpisode(inventory, task, { recorder });
        episode.reset({ seed: i });
        for (const action of [{ type: 'tool', tool: 'list_items', args: {} }, ...task.spec.solution]) if (episode.status === 'running') episode.step(action);
        ids.push(episode.id!);
      }
      await recorder.flush();
      for (const [i, id] of ids.entries()) {
        const stored = await store.listTransitions(id);
        expect(stored.length).toBeGreaterThan(0);
        expect(await store.getEpisode(id)).toMatchObject({ steps: stored.length, status: 'terminated' });
        expect(verifyReplay(inventory, tasks[i]!, i, stored)).toEqual([]);
      }
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('passes a duplicate step through as STORE_CONFLICT', async () => {
    const store = createSqliteStore(':memory:', { now: systemClock });
    try {
      const recorder = createStoreRecorder(store);
      recorder.record(transition('e1', 1));
      recorder.record(transition('e1', 1));
      await expect(recorder.flush()).rejects.toMatchObject({ code: 'STORE_CONFLICT' });
      expect(await store.listTransitions('e1')).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('stages transitions as they are recorded, with the rules of appendTransitions (in-thread and writer thread)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'envharness-recorder-'));
    const store = createSqliteStore(join(dir, 'staged.db'), { now: systemClock });
    try {
      for (const [name, target] of [['store', store], ['writer', store.openTransitionWriter()]] as const) {
        expect(typeof target.stage).toBe('function');
        // Serialised at record time: a later change to the object is not what is stored.
        const ok = createStoreRecorder(target, { maxBatch: 2, maxDelayMs: 10_000 });
        const first = transition(`${name}-a`, 1);
        ok.record(first);
        first.reward = 99;
        ok.record(transition(`${name}-a`, 2));
        ok.record(transition(`${name}-b`, 1));
        await ok.flush();
        expect(ok.commits).toBe(2);
        expect((await store.listTransitions(`${name}-a`)).map((t) => [t.step, t.reward])).toEqual([[1, 0], [2, 0]]);
        expect(canonicalize(await store.listTransitions(`${name}-b`))).toBe(canonicalize([transition(`${name}-b`, 1)]));
        // A duplicate step: STORE_CONFLICT naming it, nothing of that commit written.
        const dup = createStoreRecorder(target, { maxBatch: 100, maxDelayMs: 10_000 });
        dup.record(transition(`${name}-c`, 1));
        dup.record(transition(`${name}-a`, 2));
        await expect(dup.flush()).rejects.toMatchObject({ code: 'STORE_CONFLICT', details: { episodeId: `${name}-a`, step: 2 } });
        expect(await store.listTransitions(`${name}-c`)).toEqual([]);
        // A transition with no canonical form fails its whole commit (STORE_FAILED naming the member), sticky.
        const bad = createStoreRecorder(name === 'store' ? store : store.openTransitionWriter(), { maxBatch: 100, maxDelayMs: 10_000 });
        bad.record(transition(`${name}-d`, 1));
        bad.record({ ...transition(`${name}-d`, 2), reward: NaN });
        bad.end({ ...makeRecord(`${name}-d`), steps: 2 });
        await expect(bad.flush()).rejects.toMatchObject({ code: 'STORE_FAILED', message: expect.stringMatching(/\/reward/) });
        await expect(bad.flush()).rejects.toMatchObject({ code: 'STORE_FAILED' });
        expect(await store.listTransitions(`${name}-d`)).toEqual([]);
        expect(await store.getEpisode(`${name}-d`)).toBeUndefined();
      }
      // A replaced appendTransitions (a wrapper, a fault) is what a recorder calls: staging never bypasses it.
      const writer = store.openTransitionWriter();
      const calls: number[] = [];
      const through = writer.appendTransitions;
      writer.appendTransitions = (transitions, options) => {
        calls.push(transitions.length);
        return through(transitions, options);
      };
      expect(writer.stage?.()).toBeUndefined();
      const wrapped = createStoreRecorder(writer, { maxBatch: 100, maxDelayMs: 10_000 });
      wrapped.record(transition('wrapped', 1));
      wrapped.record(transition('wrapped', 2));
      await wrapped.flush();
      expect(calls).toEqual([2]);
      expect(await store.listTransitions('wrapped')).toHaveLength(2);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('surfaces a failed end-of-episode commit on episode.flush()', async () => {
    const fake = fakeStore();
    fake.failWith(new Error('read-only file system'));
    const episode = createEpisode(inventory, makeInventoryTask(), { recorder: createStoreRecorder(fake.store) });
    episode.reset({ seed: 1 });
    episode.step({ type: 'finish' });
    await expect(episode.flush()).rejects.toMatchObject({ code: 'STORE_FAILED' });
  });

  it('refuses records after close', async () => {
    const recorder = createStoreRecorder(fakeStore().store);
    await recorder.close();
    expect(() => recorder.record(transition('e1', 1))).toThrow(EnvHarnessError);
  });

  it('rejects bad options', () => {
    expect(() => createStoreRecorder(fakeStore().store, { maxBatch: 0 })).toThrow(/maxBatch/);
    expect(() => createStoreRecorder(fakeStore().store, { maxDelayMs: -1 })).toThrow(/maxDelayMs/);
  });

  it('records to SQLite, and the stored episode replays exactly', async () => {
    const store = createSqliteStore(':memory:', { now: systemClock });
    try {
      const recorder = createStoreRecorder(store, { maxBatch: 4 });
      const tasks = [1, 2, 3, 4].map((level) => instantiate(restockTemplate, level, 9));
      const ids: Array<[string, number]> = [];
      for (const [i, task] of tasks.entries()) {
        const episode = createEpisode(inventory, task, { recorder });
        episode.reset({ seed: i });
        const actions = [{ type: 'tool', tool: 'list_items', args: {} }, ...task.spec.solution];
        for (const action of actions) if (episode.status === 'running') episode.step(action);
        ids.push([episode.id!, i]);
      }
      await recorder.flush();
      for (const [[id, seed], task] of ids.map((x, i) => [x, tasks[i]!] as const)) {
        const stored = await store.listTransitions(id);
        expect(stored.length).toBeGreaterThan(0);
        expect((await store.getEpisode(id))?.steps).toBe(stored.length);
        expect(verifyReplay(inventory, task, seed, stored)).toEqual([]);
        expect(canonicalize(stored)).toBe(canonicalize(JSON.parse(canonicalize(stored))));
      }
    } finally {
      await store.close();
    }
  });
});

describe('an ended episode and its pending flush', () => {
  it('is not kept alive by the flush it is waiting on (a loop that never yields must not hold every episode it ran)', async () => {
    // V8's collector, reachable from a test: the flag, then `gc` from a fresh context.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const recorder = { begin: () => undefined, record: () => undefined, end: () => undefined, flush: () => held };
    const task = makeInventoryTask();
    const refs: Array<WeakRef<object>> = [];
    const run = () => {
      const episode = createEpisode(inventory, task, { recorder });
      episode.reset({ seed: 1 });
      for (const action of task.spec.solution) episode.step(action);
      expect(episode.status).toBe('terminated');
      refs.push(new WeakRef(episode));
    };
    for (let i = 0; i < 3; i++) run();
    // The flushes are still pending: a callback on them that held its episode would keep all three alive.
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    expect(refs.filter((ref) => ref.deref() !== undefined)).toHaveLength(0);
    release();
  });
});
