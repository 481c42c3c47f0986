/**
 * The Store conformance suite: every Store implementation (SQLite now, PostgreSQL later) runs it.
 * `factory` must return a new, empty store on every call; the suite closes each store it opens.
 * @example
 * describeStore('sqlite :memory:', async () => createSqliteStore(':memory:'));
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canonicalize, isEnvHarnessError, type EnvHarnessError, type JsonValue, type StoredTask, type Task, type TaskFilter, type Store, type Split, type StagedTransitions } from '../../src/core/index.js';
import {
  AWKWARD,
  makeBatch,
  makeEpisode,
  makeRun,
  makeRunEvent,
  makeSnapshot,
  makeTask,
  makeTransition,
} from './store-fixtures.js';

export function describeStore(name: string, factory: () => Promise<Store>): void {
  describe(`Store conformance: ${name}`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await factory();
    });
    afterEach(async () => {
      await store.close();
    });

    /** Tasks as the store should hold them after saveBatch, seq aside. */
    function stored(tasks: readonly Task[], split: Split, batchId: string, status: StoredTask['status'] = 'active') {
      return tasks.map((t) => ({ ...t, split, status, batchId, seq: expect.any(Number) as unknown as number }));
    }

    describe('identity', () => {
      it('names its kind and location', () => {
        expect(typeof store.kind).toBe('string');
        expect(store.kind.length).toBeGreaterThan(0);
        expect(typeof store.location).toBe('string');
      });
    });

    describe('batches and tasks', () => {
      it('round-trips a batch manifest, its tasks and its log', async () => {
        const tasks = [makeTask(1), makeTask(2), makeTask(3)];
        const batch = makeBatch(tasks, { split: 'regression' });
        await store.saveBatch(batch);

        expect(await store.getBatch(batch.manifest.id)).toEqual(batch.manifest);
        expect(await store.listBatches()).toEqual([batch.manifest]);
        expect(await store.listGenerationLog()).toEqual(batch.log);
        for (const task of tasks) {
          expect(await store.getTask(task.id)).toEqual({ ...task, split: 'regression', status: 'active', batchId: batch.manifest.id, seq: expect.any(Number) });
        }
        expect(await store.listTasks()).toEqual(stored(tasks, 'regression', batch.manifest.id));
      });

      it('keeps unicode, control characters and extreme numbers exactly', async () => {
        const task = makeTask(9);
        await store.saveBatch(makeBatch([task]));
        const back = await store.getTask(task.id);
        expect(back?.spec.instructions).toBe(task.spec.instructions);
        expect(back?.spec.instructions).toContain(AWKWARD.text);
        expect(back?.params).toEqual(task.params);
        expect((back?.params as { amounts: number[] }).amounts).toEqual(AWKWARD.numbers);
        expect(back?.spec.initialState).toEqual({ orders: [{ id: 'o9', total: 9_007_199_254_740_991, lines: [1, 2.5, -3] }] });
      });

      it('returns undefined for unknown ids', async () => {
        expect(await store.getBatch('nope')).toBeUndefined();
        expect(await store.getTask('nope')).toBeUndefined();
        expect(await store.listBatches()).toEqual([]);
        expect(await store.listTasks()).toEqual([]);
        expect(await store.countTasks()).toBe(0);
      });

      it('gives tasks increasing seq in save order, across batches', async () => {
        const first = makeBatch([makeTask(1), makeTask(2)]);
        const second = makeBatch([makeTask(3), makeTask(4)], { seed: 8 });
        await store.saveBatch(first);
        await store.saveBatch(second);
        const seqs = (await store.listTasks()).map((t) => t.seq);
        expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
        expect(new Set(seqs).size).toBe(4);
        expect((await store.listTasks()).map((t) => t.id)).toEqual([1, 2, 3, 4].map((n) => makeTask(n).id));
        expect((await store.listBatches()).map((m) => m.id)).toEqual([first.manifest.id, second.manifest.id]);
      });

      it('filters the generation log by batch, acceptance and gate, in (batch, index) order', async () => {
        const first = makeBatch([makeTask(1), makeTask(2)]);
        const second = makeBatch([makeTask(3)], { seed: 8 });
        await store.saveBatch(first);
        await store.saveBatch(second);
        expect(await store.listGenerationLog()).toEqual([...first.log, ...second.log]);
        expect(await store.listGenerationLog({ batchId: second.manifest.id })).toEqual(second.log);
        expect(await store.listGenerationLog({ accepted: false })).toEqual([first.log[2], second.log[1]]);
        expect(await store.listGenerationLog({ accepted: true })).toEqual([first.log[0], first.log[1], second.log[0]]);
        expect(await store.listGenerationLog({ gate: 'near_duplicate' })).toEqual([first.log[2], second.log[1]]);
        expect(await store.listGenerationLog({ gate: 'oracle' })).toEqual([]);
        expect(await store.listGenerationLog({ limit: 2 })).toEqual(first.log.slice(0, 2));
        expect(await store.listGenerationLog({ batchId: first.manifest.id, accepted: false, gate: 'near_duplicate' })).toEqual([first.log[2]]);
      });

      it('saving the same batch twice is a no-op', async () => {
        const batch = makeBatch([makeTask(1), makeTask(2)]);
        await store.saveBatch(batch);
        await store.saveBatch(batch);
        expect(await store.countTasks()).toBe(2);
        expect(await store.listBatches()).toHaveLength(1);
        expect(await store.listGenerationLog()).toHaveLength(3);
      });

      it('refuses a batch with a task that is already stored, and writes nothing of it', async () => {
        await store.saveBatch(makeBatch([makeTask(1)]));
        const clash = makeBatch([makeTask(2), makeTask(1)], { seed: 8 });
        const error = await rejection(store.saveBatch(clash));
        expect(error.code).toBe('STORE_CONFLICT');
        expect(error.details).toMatchObject({ taskId: makeTask(1).id });
        expect(await store.getBatch(clash.manifest.id)).toBeUndefined();
        expect(await store.getTask(makeTask(2).id)).toBeUndefined();
        expect(await store.listGenerationLog({ batchId: clash.manifest.id })).toEqual([]);
        expect(await store.countTasks()).toBe(1);
      });

      it("writes the bodies a generated batch carries as they are, and not those naming other tasks", async () => {
        const body = (t: Task, params: JsonValue = t.params) =>
          canonicalize({ id: t.id, template: t.template, domain: t.domain, taskType: t.taskType, level: t.level, params, spec: t.spec, origin: t.origin });
        const [a, b, c, d] = [makeTask(1), makeTask(2), makeTask(3), makeTask(4)];
        // A marked body (its params changed) shows the store kept the given string instead of serialising the task.
        const carried = makeBatch([a, b]);
        carried.taskBodies = [body(a, { marked: true }), body(b)];
        await store.saveBatch(carried);
        expect((await store.getTask(a.id))?.params).toEqual({ marked: true });
        expect(await store.getTask(b.id)).toMatchObject(b);
        // Bodies out of order name other tasks: each task is serialised instead.
        const swapped = makeBatch([c, d], { seed: 8 });
        swapped.taskBodies = [body(d), body(c)];
        await store.saveBatch(swapped);
        expect(await store.listTasks({ batchId: swapped.manifest.id })).toEqual(stored([c, d], 'dynamic', swapped.manifest.id));
      });

      it('refuses review ids that are not tasks of the batch, and writes nothing', async () => {
        const batch = makeBatch([makeTask(1)]);
        const error = await rejection(store.saveBatch(batch, { review: [makeTask(2).id] }));
        expect(isEnvHarnessError(error)).toBe(true);
        expect(await store.getBatch(batch.manifest.id)).toBeUndefined();
        expect(await store.countTasks()).toBe(0);
      });
    });

    describe('findExistingTaskIds', () => {
      it('returns exactly the stored ids, whatever their split or status', async () => {
        const [a, b, c, d] = [makeTask(1), makeTask(2), makeTask(3), makeTask(4)];
        await store.saveBatch(makeBatch([a, b], { split: 'regression' }));
        await store.saveBatch(makeBatch([c], { split: 'heldout' }), { review: [c.id] });
        expect(await store.findExistingTaskIds([])).toEqual(new Set());
        expect(await store.findExistingTaskIds([d.id, a.id, 'x', c.id, a.id])).toEqual(new Set([a.id, c.id]));
        expect(await store.findExistingTaskIds([b.id])).toEqual(new Set([b.id]));
      });

      it('answers 10k ids quickly', async () => {
        const tasks = Array.from({ length: 2_000 }, (_, i) => makeTask(i));
        await store.saveBatch(makeBatch(tasks));
        const ids = [...tasks.map((t) => t.id), ...Array.from({ length: 8_000 }, (_, i) => `missing-${i}`)];
        const t0 = performance.now();
        const found = await store.findExistingTaskIds(ids);
        const ms = performance.now() - t0;
        expect(found.size).toBe(2_000);
        expect(ms).toBeLessThan(2_000);
      });
    });

    describe('task filters', () => {
      const tasks = [
        makeTask(1, { template: 'test/a@1', taskType: 'lookup', level: 1 }),
        makeTask(2, { template: 'test/a@1', taskType: 'lookup', level: 2 }),
        makeTask(3, { template: 'test/b@1', taskType: 'refund', level: 1 }),
        makeTask(4, { template: 'test/b@1', taskType: 'refund', level: 3 }),
        makeTask(5, { template: 'test/a@2', taskType: 'lookup', level: 2 }),
        makeTask(6, { template: 'test/b@1', taskType: 'refund', level: 2 }),
      ];
      const regression = makeBatch(tasks.slice(0, 2), { split: 'regression' });
      const dynamic = makeBatch(tasks.slice(2, 5), { split: 'dynamic' });
      const heldout = makeBatch(tasks.slice(5), { split: 'heldout' });

      beforeEach(async () => {
        await store.saveBatch(regression);
        await store.saveBatch(dynamic, { review: [tasks[3]!.id] });
        await store.saveBatch(heldout);
      });

      const ids = (list: Array<{ id: string }>) => list.map((t) => t.id);
      const pick = (...ns: number[]) => ns.map((n) => tasks[n - 1]!.id);

      const cases: Array<[string, TaskFilter, number[]]> = [
        ['no filter', {}, [1, 2, 3, 4, 5, 6]],
        ['split', { split: 'dynamic' }, [3, 4, 5]],
        ['status', { status: 'pending_review' }, [4]],
        ['status active', { status: 'active' }, [1, 2, 3, 5, 6]],
        ['template', { template: 'test/b@1' }, [3, 4, 6]],
        ['taskType', { taskType: 'lookup' }, [1, 2, 5]],
        ['level', { level: 2 }, [2, 5, 6]],
        ['batchId', { batchId: dynamic.manifest.id }, [3, 4, 5]],
        ['limit', { limit: 2 }, [1, 2]],
        ['limit 0', { limit: 0 }, []],
        ['combined', { split: 'dynamic', status: 'active', taskType: 'refund' }, [3]],
        ['combined with level', { template: 'test/a@1', level: 2 }, [2]],
        ['no match', { split: 'heldout', taskType: 'lookup' }, []],
      ];

      for (const [label, filter, expected] of cases) {
        it(`honours ${label} in listTasks, listTaskIndex and countTasks`, async () => {
          expect(ids(await store.listTasks(filter))).toEqual(pick(...expected));
          expect(ids(await store.listTaskIndex(filter))).toEqual(pick(...expected));
          expect(await store.countTasks(filter)).toBe(expected.length);
        });
      }

      it('honours afterSeq, alone and with other fields', async () => {
        const all = await store.listTasks();
        expect(ids(await store.listTasks({ afterSeq: all[2]!.seq }))).toEqual(pick(4, 5, 6));
        expect(ids(await store.listTasks({ afterSeq: all[2]!.seq, taskType: 'refund' }))).toEqual(pick(4, 6));
        expect(await store.countTasks({ afterSeq: all[2]!.seq, taskType: 'refund' })).toBe(2);
        expect(ids(await store.listTaskIndex({ afterSeq: all[5]!.seq }))).toEqual([]);
      });

      it('pages through everything with afterSeq + limit, without gaps or repeats', async () => {
        const seen: string[] = [];
        let afterSeq: number | undefined;
        for (;;) {
          const page = await store.listTaskIndex(afterSeq === undefined ? { limit: 4 } : { limit: 4, afterSeq });
          if (page.length === 0) break;
          seen.push(...ids(page));
          afterSeq = page[page.length - 1]!.seq;
        }
        expect(seen).toEqual(pick(1, 2, 3, 4, 5, 6));
      });

      it('returns the index columns matching the full tasks', async () => {
        const full = await store.listTasks();
        const index = await store.listTaskIndex();
        expect(index).toEqual(
          full.map((t) => ({
            id: t.id,
            seq: t.seq,
            template: t.template,
            domain: t.domain,
            taskType: t.taskType,
            level: t.level,
            split: t.split,
            status: t.status,
          })),
        );
      });
    });

    describe('putTasks', () => {
      function asStored(task: Task, seq: number, overrides: Partial<StoredTask> = {}): StoredTask {
        return { ...task, split: 'regression', status: 'active', batchId: 'imported-batch', seq, ...overrides };
      }

      it('imports tasks as they are, keeping seq, split, status and batch', async () => {
        const rows = [asStored(makeTask(1), 10), asStored(makeTask(2), 20, { split: 'heldout', status: 'rejected' })];
        await store.putTasks(rows);
        expect(await store.listTasks()).toEqual(rows);
        expect(await store.getTask(makeTask(2).id)).toEqual(rows[1]);
      });

      it('is idempotent for identical rows', async () => {
        const rows = [asStored(makeTask(1), 10), asStored(makeTask(2), 11)];
        await store.putTasks(rows);
        await store.putTasks(rows);
        await store.putTasks([rows[1]!]);
        expect(await store.listTasks()).toEqual(rows);
      });

      it('refuses a row that conflicts with a stored one, and writes nothing of the call', async () => {
        await store.putTasks([asStored(makeTask(1), 10)]);
        const error = await rejection(store.putTasks([asStored(makeTask(2), 11), asStored(makeTask(1), 10, { status: 'rejected' })]));
        expect(error.code).toBe('IMPORT_INVALID');
        expect(await store.getTask(makeTask(2).id)).toBeUndefined();
        expect((await store.getTask(makeTask(1).id))?.status).toBe('active');
      });

      it('refuses a seq already held by another task', async () => {
        await store.putTasks([asStored(makeTask(1), 10)]);
        const error = await rejection(store.putTasks([asStored(makeTask(2), 10)]));
        expect(error.code).toBe('IMPORT_INVALID');
        expect(await store.countTasks()).toBe(1);
      });

      it('refuses a task whose id does not match its content', async () => {
        const forged = { ...asStored(makeTask(1), 10), id: makeTask(2).id };
        const error = await rejection(store.putTasks([forged]));
        expect(error.code).toBe('IMPORT_INVALID');
        expect(await store.countTasks()).toBe(0);
      });

      it('continues seq after the imported tasks', async () => {
        await store.putTasks([asStored(makeTask(1), 100)]);
        await store.saveBatch(makeBatch([makeTask(2)]));
        const [first, second] = await store.listTasks();
        expect(first!.seq).toBe(100);
        expect(second!.seq).toBeGreaterThan(100);
      });

      it('puts imported pending_review tasks in the review queue', async () => {
        const row = asStored(makeTask(1), 5, { status: 'pending_review' });
        await store.putTasks([row]);
        expect(await store.listReviews('pending')).toEqual([{ taskId: row.id, batchId: 'imported-batch', status: 'pending' }]);
      });
    });

    describe('taskWatermark', () => {
      it('counts task rows and changes on every task write, and nothing else', async (context) => {
        if (store.taskWatermark === undefined) return context.skip();
        const mark = () => store.taskWatermark!();
        expect(await mark()).toEqual({ rows: 0, changes: 0 });
        const tasks = [makeTask(1), makeTask(2), makeTask(3)];
        await store.saveBatch(makeBatch(tasks), { review: [tasks[1]!.id] });
        expect(await mark()).toEqual({ rows: 3, changes: 0 });
        await store.saveBatch(makeBatch(tasks), { review: [tasks[1]!.id] });
        await store.setMeta('k', 1);
        await store.appendTransitions([makeTransition('e1', 0)], { episodes: [makeEpisode('e1', makeTask(1).id, { steps: 1 })] });
        expect(await mark()).toEqual({ rows: 3, changes: 0 });
        await store.putTasks([{ ...makeTask(4), split: 'heldout', status: 'active', batchId: 'imported', seq: 0 }]);
        await store.putTasks([{ ...makeTask(4), split: 'heldout', status: 'active', batchId: 'imported', seq: 0 }]);
        expect(await mark()).toEqual({ rows: 4, changes: 0 });
        await store.decideReview({ taskId: tasks[1]!.id, decision: 'approved', reviewer: 'r', note: '', at: '2026-01-01T00:00:00.000Z' });
        expect(await mark()).toEqual({ rows: 4, changes: 1 });
        await rejection(store.applyWrites([{ op: 'saveBatch', batch: makeBatch([makeTask(5)]) }, { op: 'setMeta', key: 'k', value: Number.NaN }]));
        expect(await mark()).toEqual({ rows: 4, changes: 1 });
        await store.applyWrites([{ op: 'saveBatch', batch: makeBatch([makeTask(5)]), review: [makeTask(5).id] }, { op: 'decideReview', decision: { taskId: makeTask(5).id, decision: 'rejected', reviewer: 'r', note: '', at: '2026-01-01T00:00:00.000Z' } }]);
        expect(await mark()).toEqual({ rows: 5, changes: 2 });
        expect((await mark()).rows).toBe(await store.countTasks());
      });
    });

    describe('review', () => {
      const tasks = [makeTask(1), makeTask(2), makeTask(3)];
      const batch = makeBatch(tasks);

      beforeEach(async () => {
        await store.saveBatch(batch, { review: [tasks[0]!.id, tasks[2]!.id] });
      });

      it('starts sampled tasks pending and out of the active pool', async () => {
        expect(await store.listReviews()).toEqual([
          { taskId: tasks[0]!.id, batchId: batch.manifest.id, status: 'pending' },
          { taskId: tasks[2]!.id, batchId: batch.manifest.id, status: 'pending' },
        ]);
        expect((await store.getTask(tasks[0]!.id))?.status).toBe('pending_review');
        expect((await store.getTask(tasks[1]!.id))?.status).toBe('active');
        expect((await store.listTasks({ status: 'active' })).map((t) => t.id)).toEqual([tasks[1]!.id]);
      });

      it('approves into the pool and rejects out of it, with an audit trail', async () => {
        const approved = await store.decideReview({ taskId: tasks[0]!.id, decision: 'approved', reviewer: 'ana', note: 'fine ✓', at: '2026-01-03T00:00:00.000Z' });
        expect(approved).toEqual({ taskId: tasks[0]!.id, batchId: batch.manifest.id, status: 'approved', reviewer: 'ana', note: 'fine ✓', decidedAt: '2026-01-03T00:00:00.000Z' });
        const rejected = await store.decideReview({ taskId: tasks[2]!.id, decision: 'rejected', reviewer: 'bo', note: 'ambiguous', at: '2026-01-03T00:01:00.000Z' });
        expect(rejected.status).toBe('rejected');

        expect((await store.getTask(tasks[0]!.id))?.status).toBe('active');
        expect((await store.getTask(tasks[2]!.id))?.status).toBe('rejected');
        expect((await store.listTasks({ status: 'active' })).map((t) => t.id)).toEqual([tasks[0]!.id, tasks[1]!.id]);
        expect(await store.listReviews('pending')).toEqual([]);
        expect((await store.listReviews('approved')).map((r) => r.taskId)).toEqual([tasks[0]!.id]);
        expect(await store.listReviews('rejected')).toEqual([rejected]);
        expect(await store.listReviewAudit()).toEqual([
          { taskId: tasks[0]!.id, decision: 'approved', reviewer: 'ana', note: 'fine ✓', at: '2026-01-03T00:00:00.000Z' },
          { taskId: tasks[2]!.id, decision: 'rejected', reviewer: 'bo', note: 'ambiguous', at: '2026-01-03T00:01:00.000Z' },
        ]);
      });

      it('appends a changed decision to the trail and applies the latest', async () => {
        const id = tasks[0]!.id;
        await store.decideReview({ taskId: id, decision: 'approved', reviewer: 'ana', note: '', at: '2026-01-03T00:00:00.000Z' });
        await store.decideReview({ taskId: id, decision: 'rejected', reviewer: 'bo', note: 'leaks the answer', at: '2026-01-04T00:00:00.000Z' });
        expect((await store.listReviewAudit(id)).map((d) => d.decision)).toEqual(['approved', 'rejected']);
        expect(await store.listReviewAudit(tasks[2]!.id)).toEqual([]);
        expect((await store.getTask(id))?.status).toBe('rejected');
        expect((await store.listReviews()).find((r) => r.taskId === id)).toMatchObject({ status: 'rejected', reviewer: 'bo' });
      });

      it('refuses a decision about a task that is not in the review queue', async () => {
        for (const taskId of ['unknown-task', tasks[1]!.id]) {
          const error = await rejection(store.decideReview({ taskId, decision: 'approved', reviewer: 'ana', note: '', at: '2026-01-03T00:00:00.000Z' }));
          expect(error.code).toBe('REVIEW_NOT_FOUND');
        }
        expect(await store.listReviewAudit()).toEqual([]);
      });
    });

    describe('episodes and transitions', () => {
      it('round-trips and updates an episode in place', async () => {
        const episode = makeEpisode('ep-1', 'task-1', { runId: 'run-1' });
        await store.saveEpisode(episode);
        expect(await store.getEpisode('ep-1')).toEqual(episode);
        const done = { ...episode, status: 'terminated' as const, steps: 3, reward: 1, outcome: 1, endReason: 'finished' as const, updatedAt: '2026-01-02T03:05:00.000Z' };
        await store.saveEpisode(done);
        expect(await store.getEpisode('ep-1')).toEqual(done);
        expect(await store.listEpisodes()).toEqual([done]);
        expect(await store.getEpisode('nope')).toBeUndefined();
      });

      it('keeps the inputs of an episode recorded as its inputs, through appendTransitions and a staged call alike', async () => {
        const running = makeEpisode('ep-in', 'task-1', { runId: 'run-1' });
        const inputs = {
          actions: [{ type: 'tool' as const, tool: 'get_order', args: { id: '#W1', note: 'é\u2028😀' } }, { type: 'invalid' as const, input: { type: 'dance' } }, { type: 'finish' as const }],
          stateHash: 'a'.repeat(64),
          dynamics: { shaping: { REDUNDANT_CALL: -0.25 }, budget: { steps: 3 } },
        };
        const ended = { ...running, status: 'terminated' as const, steps: 3, reward: 0.5, outcome: 1, inputs };
        await store.appendTransitions([], { episodes: [running] });
        expect((await store.getEpisode('ep-in'))?.inputs).toBeUndefined();
        await store.appendTransitions([], { episodes: [ended] });
        expect(await store.getEpisode('ep-in')).toEqual(ended);
        expect(await store.listEpisodes({ runId: 'run-1' })).toEqual([ended]);
        expect(await store.listTransitions('ep-in')).toEqual([]);
        const staged = (store as { stage?(): StagedTransitions | undefined }).stage?.();
        if (staged !== undefined) {
          const other = { ...ended, id: 'ep-in-2' };
          await staged.commit([other]);
          expect(await store.getEpisode('ep-in-2')).toEqual(other);
        }
      });

      it('lists episodes in first-save order, filtered by run and task', async () => {
        const a = makeEpisode('ep-a', 'task-1', { runId: 'run-1' });
        const b = makeEpisode('ep-b', 'task-2', { runId: 'run-1' });
        const c = makeEpisode('ep-c', 'task-1');
        for (const e of [a, b, c]) await store.saveEpisode(e);
        await store.saveEpisode({ ...a, steps: 5 });
        expect((await store.listEpisodes()).map((e) => e.id)).toEqual(['ep-a', 'ep-b', 'ep-c']);
        expect((await store.listEpisodes({ runId: 'run-1' })).map((e) => e.id)).toEqual(['ep-a', 'ep-b']);
        expect((await store.listEpisodes({ taskId: 'task-1' })).map((e) => e.id)).toEqual(['ep-a', 'ep-c']);
        expect((await store.listEpisodes({ runId: 'run-1', taskId: 'task-2' })).map((e) => e.id)).toEqual(['ep-b']);
        expect((await store.listEpisodes({ limit: 1 })).map((e) => e.id)).toEqual(['ep-a']);
        expect(await store.listEpisodes({ runId: 'run-2' })).toEqual([]);
      });

      it('round-trips transitions in step order', async () => {
        const ts = [0, 1, 2].map((s) => makeTransition('ep-1', s));
        const withUnicode = { ...makeTransition('ep-1', 3), observation: { kind: 'message' as const, text: AWKWARD.text }, reward: 1e-9 };
        await store.appendTransitions([ts[2]!, ts[0]!]);
        await store.appendTransitions([ts[1]!, withUnicode]);
        await store.appendTransitions([]);
        expect(await store.listTransitions('ep-1')).toEqual([...ts, withUnicode]);
        expect(await store.listTransitions('other')).toEqual([]);
      });

      it('refuses a step that is already stored, and writes none of that call', async () => {
        await store.appendTransitions([makeTransition('ep-1', 0), makeTransition('ep-1', 1)]);
        const error = await rejection(store.appendTransitions([makeTransition('ep-2', 0), makeTransition('ep-1', 2), makeTransition('ep-1', 1)]));
        expect(error.code).toBe('STORE_CONFLICT');
        expect(error.details).toMatchObject({ episodeId: 'ep-1', step: 1 });
        expect(error.message).toContain('ep-1');
        expect((await store.listTransitions('ep-1')).map((t) => t.step)).toEqual([0, 1]);
        expect(await store.listTransitions('ep-2')).toEqual([]);
      });

      it('refuses a step repeated within one call, and writes none of it', async () => {
        const error = await rejection(store.appendTransitions([makeTransition('ep-1', 0), makeTransition('ep-1', 1), makeTransition('ep-1', 0)]));
        expect(error.details).toMatchObject({ episodeId: 'ep-1', step: 0 });
        expect(await store.listTransitions('ep-1')).toEqual([]);
        // The refused call leaves the store usable.
        await store.appendTransitions([makeTransition('ep-1', 0)]);
        expect(await store.listTransitions('ep-1')).toHaveLength(1);
      });
    });

    describe('episodes and transitions: keys and index columns', () => {
      it('a refused call leaves nothing that misfiles later transitions, of that episode or another', async () => {
        // The refused call is the first write for ep-x: whatever per-episode state it created must be gone.
        const refused = await rejection(store.appendTransitions([makeTransition('ep-x', 0), makeTransition('ep-x', 0)]));
        expect(refused.details).toMatchObject({ conflict: 'duplicate_step', episodeId: 'ep-x', step: 0 });
        await store.appendTransitions([makeTransition('ep-y', 0)]);
        await store.appendTransitions([makeTransition('ep-x', 0), makeTransition('ep-x', 1)]);
        await store.appendTransitions([makeTransition('ep-y', 1)]);
        expect(await store.listTransitions('ep-x')).toEqual([makeTransition('ep-x', 0), makeTransition('ep-x', 1)]);
        expect(await store.listTransitions('ep-y')).toEqual([makeTransition('ep-y', 0), makeTransition('ep-y', 1)]);
        const again = await rejection(store.appendTransitions([makeTransition('ep-y', 2), makeTransition('ep-x', 1)]));
        expect(again.details).toMatchObject({ conflict: 'duplicate_step', episodeId: 'ep-x', step: 1 });
        expect(await store.listTransitions('ep-y')).toHaveLength(2);
      });

      it('keeps many interleaved episodes apart, each in step order', async () => {
        const ids = Array.from({ length: 12 }, (_, i) => `ep-${(i * 7919).toString(16)}-${i}`);
        for (let step = 0; step < 5; step++) {
          // Reverse every other round, so that write order differs from both id order and step order.
          const round = step % 2 === 0 ? ids : [...ids].reverse();
          await store.appendTransitions(round.map((id) => makeTransition(id, step)));
        }
        for (const id of ids) expect(await store.listTransitions(id)).toEqual([0, 1, 2, 3, 4].map((s) => makeTransition(id, s)));
      });

      it('moves an episode between runs and tasks when it is saved again with other ones', async () => {
        const episode = makeEpisode('ep-move', 'task-1', { runId: 'run-1' });
        await store.saveEpisode(makeEpisode('ep-other', 'task-1', { runId: 'run-1' }));
        await store.saveEpisode(episode);
        await store.appendTransitions([makeTransition('ep-move', 0)], { episodes: [{ ...episode, steps: 1 }] });
        const ids = async (filter: { runId?: string; taskId?: string }) => (await store.listEpisodes(filter)).map((e) => e.id);
        // One indexed field at a time, each through both ways of saving.
        const otherRun = { ...episode, steps: 1, runId: 'run-2' };
        await store.appendTransitions([], { episodes: [otherRun] });
        expect(await ids({ runId: 'run-1' })).toEqual(['ep-other']);
        expect(await ids({ runId: 'run-2' })).toEqual(['ep-move']);
        const otherTask = { ...otherRun, taskId: 'task-2' };
        await store.saveEpisode(otherTask);
        expect(await ids({ taskId: 'task-1' })).toEqual(['ep-other']);
        expect(await ids({ taskId: 'task-2' })).toEqual(['ep-move']);
        const recreated = { ...otherTask, createdAt: '2026-01-02T03:04:06.000Z' };
        await store.saveEpisode(recreated);
        expect(await store.getEpisode('ep-move')).toEqual(recreated);
        const { runId: _dropped, ...withoutRun } = recreated;
        await store.appendTransitions([], { episodes: [withoutRun] });
        expect(await ids({ runId: 'run-2' })).toEqual([]);
        expect(await store.getEpisode('ep-move')).toEqual(withoutRun);
        const backInRun = { ...withoutRun, runId: 'run-1', steps: 1 };
        await store.saveEpisode(backInRun);
        expect(await ids({ runId: 'run-1' })).toEqual(['ep-other', 'ep-move']);
        expect(await store.listEpisodes()).toEqual([makeEpisode('ep-other', 'task-1', { runId: 'run-1' }), backInRun]);
      });
    });

    describe('snapshots', () => {
      it('round-trips snapshots and lists them in save order', async () => {
        const a = makeSnapshot('first');
        const b = makeSnapshot('second');
        await store.saveSnapshot(a);
        await store.saveSnapshot(b);
        expect(await store.getSnapshot(a.id)).toEqual(a);
        expect(await store.listSnapshots()).toEqual([a, b]);
        expect(await store.getSnapshot('nope')).toBeUndefined();
      });

      it('keeps one record per id when a snapshot is saved again', async () => {
        const a = makeSnapshot('first');
        await store.saveSnapshot(a);
        await store.saveSnapshot(a);
        expect(await store.listSnapshots()).toEqual([a]);
      });
    });

    describe('runs', () => {
      it('round-trips and updates runs, listed in first-save order', async () => {
        const a = makeRun('run-a');
        const b = makeRun('run-b', { kind: 'eval' });
        await store.saveRun(a);
        await store.saveRun(b);
        const finished = { ...a, status: 'finished' as const, snapshotEnd: 'bb'.repeat(32), summary: { passAt: [1, 0.5] }, updatedAt: '2026-01-02T04:00:00.000Z' };
        await store.saveRun(finished);
        expect(await store.getRun('run-a')).toEqual(finished);
        expect(await store.listRuns()).toEqual([finished, b]);
        expect(await store.getRun('nope')).toBeUndefined();
      });

      it('appends run events and lists them by seq, optionally by kind', async () => {
        const events = [makeRunEvent('run-a', 2, 'guard'), makeRunEvent('run-a', 0), makeRunEvent('run-a', 1, 'metrics', { text: AWKWARD.text })];
        await store.appendRunEvents(events);
        await store.appendRunEvents([makeRunEvent('run-b', 0)]);
        await store.appendRunEvents([]);
        expect(await store.listRunEvents('run-a')).toEqual([events[1], events[2], events[0]]);
        expect(await store.listRunEvents('run-a', 'metrics')).toEqual([events[1], events[2]]);
        expect(await store.listRunEvents('run-c')).toEqual([]);
      });

      it('refuses a duplicate event seq, and writes none of that call', async () => {
        await store.appendRunEvents([makeRunEvent('run-a', 0)]);
        const error = await rejection(store.appendRunEvents([makeRunEvent('run-a', 1), makeRunEvent('run-a', 0)]));
        expect(error.code).toBe('STORE_CONFLICT');
        expect((await store.listRunEvents('run-a')).map((e) => e.seq)).toEqual([0]);
      });
    });

    describe('meta', () => {
      it('returns undefined for a missing key and overwrites on set', async () => {
        expect(await store.getMeta('k')).toBeUndefined();
        await store.setMeta('k', { a: [1, 'two', null, true], text: AWKWARD.text, big: Number.MAX_SAFE_INTEGER });
        expect(await store.getMeta('k')).toEqual({ a: [1, 'two', null, true], text: AWKWARD.text, big: Number.MAX_SAFE_INTEGER });
        await store.setMeta('k', 'replaced');
        expect(await store.getMeta('k')).toBe('replaced');
        await store.setMeta('nothing', null);
        expect(await store.getMeta('nothing')).toBeNull();
        await store.setMeta('n', 0);
        expect(await store.getMeta('n')).toBe(0);
      });
    });

    describe('applyWrites', () => {
      it('applies every write in order, in one call; later writes see earlier ones', async () => {
        const tasks = [makeTask(1), makeTask(2)];
        const batch = makeBatch(tasks);
        const decision = { taskId: tasks[0]!.id, decision: 'approved' as const, reviewer: 'r', note: '', at: '2026-01-02T00:00:00.000Z' };
        await store.applyWrites([
          { op: 'saveBatch', batch, review: [tasks[0]!.id] },
          { op: 'decideReview', decision },
          { op: 'saveSnapshot', snapshot: makeSnapshot('a') },
          { op: 'saveRun', run: makeRun('run-a') },
          { op: 'appendRunEvents', events: [makeRunEvent('run-a', 0)] },
          { op: 'saveEpisode', episode: makeEpisode('ep-1', tasks[1]!.id) },
          { op: 'setMeta', key: 'k', value: [1, 2] },
          { op: 'setMeta', key: 'k', value: 'last wins' },
        ]);
        expect(await store.getBatch(batch.manifest.id)).toEqual(batch.manifest);
        expect((await store.getTask(tasks[0]!.id))?.status).toBe('active');
        expect(await store.listReviewAudit()).toEqual([decision]);
        expect((await store.listSnapshots()).map((x) => x.id)).toEqual([makeSnapshot('a').id]);
        expect((await store.getRun('run-a'))?.id).toBe('run-a');
        expect(await store.listRunEvents('run-a')).toEqual([makeRunEvent('run-a', 0)]);
        expect(await store.getEpisode('ep-1')).toEqual(makeEpisode('ep-1', tasks[1]!.id));
        expect(await store.getMeta('k')).toBe('last wins');
      });

      it('discards episodes with their transitions and a run tail of events; the same ids can be written again', async () => {
        const a = makeEpisode('run-a:0', 'task-1', { runId: 'run-a' });
        const b = makeEpisode('run-a:1', 'task-1', { runId: 'run-a' });
        await store.appendTransitions([makeTransition('run-a:0', 0), makeTransition('run-a:1', 0), makeTransition('run-a:1', 1)], { episodes: [a, b] });
        await store.appendRunEvents([0, 1, 2, 3].map((s) => makeRunEvent('run-a', s)));
        await store.appendRunEvents([makeRunEvent('run-b', 2)]);
        await store.applyWrites([
          { op: 'discardEpisodes', ids: ['run-a:1', 'never-stored'] },
          { op: 'discardRunEvents', runId: 'run-a', fromSeq: 2 },
        ]);
        expect((await store.listEpisodes({ runId: 'run-a' })).map((e) => e.id)).toEqual(['run-a:0']);
        expect(await store.getEpisode('run-a:1')).toBeUndefined();
        expect(await store.listTransitions('run-a:1')).toEqual([]);
        expect(await store.listTransitions('run-a:0')).toEqual([makeTransition('run-a:0', 0)]);
        expect((await store.listRunEvents('run-a')).map((e) => e.seq)).toEqual([0, 1]);
        expect((await store.listRunEvents('run-b')).map((e) => e.seq)).toEqual([2]);
        // A rerun writes the same steps and events again (no duplicate is left behind to refuse them).
        await store.appendTransitions([makeTransition('run-a:1', 0), makeTransition('run-a:1', 1)], { episodes: [b] });
        await store.appendRunEvents([makeRunEvent('run-a', 2)]);
        expect(await store.listTransitions('run-a:1')).toEqual([makeTransition('run-a:1', 0), makeTransition('run-a:1', 1)]);
        expect((await store.listEpisodes({ runId: 'run-a' })).map((e) => e.id)).toEqual(['run-a:0', 'run-a:1']);
        await store.applyWrites([{ op: 'discardEpisodes', ids: [] }]);
        expect(await store.listEpisodes({ runId: 'run-a' })).toHaveLength(2);
      });

      it('writes nothing at all when any write fails, and names the failing write', async () => {
        await store.saveBatch(makeBatch([makeTask(1)]));
        await store.appendRunEvents([makeRunEvent('run-a', 0)]);
        await store.setMeta('k', 'before');
        const before = await logicalDump(store, ['k', 'new']);
        const failing: Array<{ writes: Parameters<Store['applyWrites']>[0]; code: string; index: number }> = [
          {
            writes: [
              { op: 'saveBatch', batch: makeBatch([makeTask(2), makeTask(3)], { seed: 5 }) },
              { op: 'setMeta', key: 'new', value: 1 },
              { op: 'saveBatch', batch: makeBatch([makeTask(4), makeTask(1)], { seed: 6 }) },
            ],
            code: 'STORE_CONFLICT',
            index: 2,
          },
          {
            writes: [
              { op: 'setMeta', key: 'k', value: 'after' },
              { op: 'decideReview', decision: { taskId: makeTask(1).id, decision: 'approved', reviewer: 'r', note: '', at: 'x' } },
            ],
            code: 'REVIEW_NOT_FOUND',
            index: 1,
          },
          {
            writes: [
              { op: 'saveRun', run: makeRun('run-b') },
              { op: 'appendRunEvents', events: [makeRunEvent('run-b', 0)] },
              { op: 'appendRunEvents', events: [makeRunEvent('run-a', 0)] },
            ],
            code: 'STORE_CONFLICT',
            index: 2,
          },
          {
            writes: [
              { op: 'saveSnapshot', snapshot: makeSnapshot('b') },
              { op: 'saveBatch', batch: makeBatch([makeTask(7)], { seed: 9 }), review: [makeTask(8).id] },
            ],
            code: 'PARAMS_INVALID',
            index: 1,
          },
        ];
        for (const { writes, code, index } of failing) {
          const error = await rejection(store.applyWrites(writes));
          expect(error.code).toBe(code);
          expect(error.details).toMatchObject({ write: index });
          expect(await logicalDump(store, ['k', 'new'])).toBe(before);
        }
      });

      it('accepts an empty list', async () => {
        const before = await logicalDump(store, []);
        await store.applyWrites([]);
        expect(await logicalDump(store, [])).toBe(before);
      });
    });

    describe('readPool', () => {
      it('returns what the list methods return, in their order', async () => {
        const first = makeBatch([makeTask(1), makeTask(2)]);
        const second = makeBatch([makeTask(3)], { seed: 4, split: 'regression' });
        await store.saveBatch(first, { review: [makeTask(2).id] });
        await store.saveBatch(second);
        await store.decideReview({ taskId: makeTask(2).id, decision: 'rejected', reviewer: 'r', note: 'n', at: '2026-01-01T00:00:00.000Z' });
        expect(await store.readPool()).toEqual({
          batches: await store.listBatches(),
          log: await store.listGenerationLog(),
          tasks: await store.listTasks(),
          reviews: await store.listReviews(),
          audit: await store.listReviewAudit(),
        });
      });
    });

    describe('recover', () => {
      const now = '2026-03-03T00:00:00.000Z';
      it('brings a running episode record in line with its stored transitions', async () => {
        const ep = makeEpisode('ep-lag', 'task-x');
        await store.saveEpisode(ep);
        const transitions = [0, 1, 2].map((i) => ({ ...makeTransition('ep-lag', i), reward: 0.25 * (i + 1) }));
        await store.appendTransitions(transitions);
        const report = await store.recover({ isLive: () => true, now });
        expect(report.episodes).toEqual([{ id: 'ep-lag', steps: { from: ep.steps, to: 3 }, status: { from: 'running', to: 'running' } }]);
        const repaired = await store.getEpisode('ep-lag');
        expect(repaired).toMatchObject({ steps: 3, status: 'running', updatedAt: now, reward: 1.5 });
        expect((await store.recover({ isLive: () => true, now })).episodes).toEqual([]);
      });

      it('ends an episode whose last stored transition terminated it', async () => {
        await store.saveEpisode(makeEpisode('ep-end', 'task-x'));
        const last = { ...makeTransition('ep-end', 1), terminated: true, info: { ...makeTransition('ep-end', 1).info, outcome: 1, endReason: 'finished' as const } };
        await store.appendTransitions([makeTransition('ep-end', 0), last]);
        const report = await store.recover({ isLive: () => true, now });
        expect(report.episodes[0]?.status).toEqual({ from: 'running', to: 'terminated' });
        expect(await store.getEpisode('ep-end')).toMatchObject({ status: 'terminated', steps: 2, outcome: 1, endReason: 'finished' });
      });

      it('leaves episodes that agree with their transitions, or are ahead of them, alone', async () => {
        await store.appendTransitions([makeTransition('ep-ok', 0)], { episodes: [makeEpisode('ep-ok', 't', { steps: 1 })] });
        await store.saveEpisode(makeEpisode('ep-ahead', 't', { steps: 5 }));
        const before = await logicalDump(store, []);
        expect(await store.recover({ isLive: () => false, now })).toEqual({ episodes: [], runs: [] });
        expect(await logicalDump(store, [])).toBe(before);
      });

      it('marks running runs without a live owner interrupted, with their last event', async () => {
        await store.saveRun(makeRun('run-dead', { status: 'running' }));
        await store.saveRun(makeRun('run-live', { status: 'running' }));
        await store.saveRun(makeRun('run-done', { status: 'finished' }));
        await store.saveRun(makeRun('run-empty', { status: 'running' }));
        await store.appendRunEvents([makeRunEvent('run-dead', 0), makeRunEvent('run-dead', 1, 'update')]);
        const report = await store.recover({ isLive: (run) => run.id === 'run-live', now });
        expect(report.runs).toEqual([
          { id: 'run-dead', lastEventSeq: 1, lastEventKind: 'update' },
          { id: 'run-empty', lastEventSeq: -1 },
        ]);
        expect(await store.getRun('run-dead')).toMatchObject({ status: 'interrupted', updatedAt: now, interrupted: { lastEventSeq: 1, lastEventKind: 'update', at: now } });
        expect((await store.getRun('run-live'))?.status).toBe('running');
        expect((await store.getRun('run-done'))?.status).toBe('finished');
        expect((await store.recover({ isLive: (run) => run.id === 'run-live', now })).runs).toEqual([]);
      });
    });

    describe('close', () => {
      it('can be called twice, and later calls fail with STORE_FAILED', async () => {
        await store.setMeta('k', 1);
        await store.close();
        await store.close();
        const error = await rejection(store.getMeta('k'));
        expect(error.code).toBe('STORE_FAILED');
        expect((await rejection(store.setMeta('k', 2))).code).toBe('STORE_FAILED');
      });
    });
  });
}

/**
 * Everything a store holds that the API can read, as one canonical string: equal strings mean equal
 * contents (used to show that a failed write changed nothing). `metaKeys` are the meta keys to include.
 */
export async function logicalDump(store: Store, metaKeys: readonly string[]): Promise<string> {
  const episodes = await store.listEpisodes();
  const runs = await store.listRuns();
  const meta: Record<string, unknown> = {};
  for (const key of metaKeys) meta[key] = (await store.getMeta(key)) ?? '<absent>';
  return canonicalize({
    batches: await store.listBatches(),
    log: await store.listGenerationLog(),
    tasks: await store.listTasks(),
    reviews: await store.listReviews(),
    audit: await store.listReviewAudit(),
    episodes,
    transitions: await Promise.all(episodes.map((e) => store.listTransitions(e.id))),
    snapshots: await store.listSnapshots(),
    runs,
    events: await Promise.all(runs.map((r) => store.listRunEvents(r.id))),
    meta,
  } as unknown as JsonValue);
}

/** The EnvHarnessError a promise rejects with (fails the test if it resolves or throws something else). */
export async function rejection(promise: Promise<unknown>): Promise<EnvHarnessError> {
  try {
    await promise;
  } catch (error) {
    if (isEnvHarnessError(error)) return error;
    throw new Error(`expected an EnvHarnessError, got ${String(error)}`, { cause: error });
  }
  throw new Error('expected the call to fail, but it succeeded');
}
