/**
 * Export round trip: tasks, episodes and transitions written as JSONL and Parquet (through the CLI) read
 * back equal to the store's rows; trajectories in chat format are valid OpenAI-style messages.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EpisodeRecord, Store, StoredTask, Transition } from '../../src/core/index.js';
import { main } from '../../src/cli/main.js';
import type { Io } from '../../src/cli/output.js';
import {
  episodeFromRow,
  EXPORT_COLUMNS,
  exportRows,
  taskFromRow,
  transitionFromRow,
  type TrajectoryMessage,
  type ExportKind,
} from '../../src/report/index.js';
import { makeMathRun } from '../../src/report/testing/math-run.js';
import { math } from '../../src/domains/math/index.js';
import { replayingStore } from '../../src/harness/replaying-store.js';
import { createSqliteStore } from '../../src/storage/sqlite/index.js';
import { makeEpisode, makeRun, makeTask, makeTransition } from '../conformance/store-fixtures.js';
import { systemClock } from '../../src/cli/clock.js';

const dir = mkdtempSync(join(tmpdir(), 'envharness-export-'));
const db = join(dir, 'math.db');
let runId = '';
let store: Store;

beforeAll(async () => {
  const { harness, summary } = await makeMathRun(dir, { strategy: 'learnability', episodes: 120, evalEvery: 60 });
  runId = summary.runId;
  await harness.close();
  // The run recorded its episodes as their inputs: the expected transitions are the replays a harness reads.
  store = replayingStore(await createSqliteStore(db, { now: systemClock }), new Map([[math.name, math]]));
}, 60_000);

afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function cli(args: string[], path = db): Promise<{ code: number; out: string }> {
  const out: string[] = [];
  const io: Io = { out: (s) => out.push(s), err: (s) => out.push(s), isTTY: false };
  const code = await main(['node', 'envharness', '--store', path, ...args], io);
  return { code, out: out.join('\n') };
}

/** Exports through the CLI in both formats and reads both files back as plain objects. */
async function roundTrip(what: ExportKind, extra: string[] = [], path = db): Promise<{ jsonl: Array<Record<string, unknown>>; parquet: Array<Record<string, unknown>>; file: string }> {
  const jsonlFile = join(dir, `${what}-${path === db ? 'math' : 'awkward'}.jsonl`);
  const parquetFile = join(dir, `${what}-${path === db ? 'math' : 'awkward'}.parquet`);
  expect((await cli(['export', ...extra, '--what', what, '--format', 'jsonl', '--out', jsonlFile], path)).code).toBe(0);
  expect((await cli(['export', ...extra, '--what', what, '--out', parquetFile], path)).code).toBe(0);
  const text = readFileSync(jsonlFile, 'utf8');
  const jsonl = text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
  const bytes = readFileSync(parquetFile);
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  const parquet = (await parquetReadObjects({ file })) as Array<Record<string, unknown>>;
  return { jsonl, parquet, file: parquetFile };
}

async function runTasks(s: Store, id: string): Promise<StoredTask[]> {
  const ids = [...new Set((await s.listEpisodes({ runId: id })).map((e) => e.taskId))];
  const tasks = await Promise.all(ids.map((t) => s.getTask(t)));
  return (tasks.filter(Boolean) as StoredTask[]).sort((a, b) => a.seq - b.seq);
}

async function runTransitions(s: Store, id: string): Promise<Transition[]> {
  const out: Transition[] = [];
  for (const e of await s.listEpisodes({ runId: id })) out.push(...(await s.listTransitions(e.id)));
  return out;
}

describe('export round trip', () => {
  it('tasks: JSONL and Parquet read back equal to the store rows', async () => {
    const { jsonl, parquet, file } = await roundTrip('tasks', ['--run', runId]);
    const expected = await runTasks(store, runId);
    expect(expected.length).toBeGreaterThan(20);
    expect(jsonl.map(taskFromRow)).toEqual(expected);
    expect(parquet.map(taskFromRow)).toEqual(expected);
    // Columns exactly as documented, in order, with plain Parquet types only.
    const bytes = readFileSync(file);
    const schema = parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)).schema;
    expect(schema.slice(1).map((s) => s.name)).toEqual(EXPORT_COLUMNS.tasks.map((c) => c.name));
    for (const element of schema.slice(1)) {
      expect(element.num_children ?? 0).toBe(0);
      expect(['BYTE_ARRAY', 'INT32', 'INT64', 'DOUBLE', 'BOOLEAN']).toContain(element.type);
      if (element.type === 'BYTE_ARRAY') expect(element.converted_type).toBe('UTF8');
    }
    expect(Object.keys(jsonl[0]!)).toEqual(EXPORT_COLUMNS.tasks.map((c) => c.name));
  });

  it('tasks of a whole split', async () => {
    const { jsonl, parquet } = await roundTrip('tasks', ['--split', 'regression']);
    const expected = await store.listTasks({ split: 'regression' });
    expect(jsonl.map(taskFromRow)).toEqual(expected);
    expect(parquet.map(taskFromRow)).toEqual(expected);
  });

  it('episodes: JSONL and Parquet read back equal to the store rows, with slice, level and phase', async () => {
    const { jsonl, parquet } = await roundTrip('episodes', ['--run', runId]);
    // The export's episode columns are the record's, without the recorded inputs (the transitions export has the actions).
    const expected = (await store.listEpisodes({ runId })).map(({ inputs, ...record }) => (expect(inputs).toBeDefined(), record));
    expect(jsonl.map(episodeFromRow)).toEqual(expected);
    expect(parquet.map(episodeFromRow)).toEqual(expected);
    // 120 training episodes plus two regression evaluations of the whole set.
    expect(jsonl.filter((r) => r.phase === 'train')).toHaveLength(120);
    expect(jsonl.filter((r) => r.phase === 'eval').length).toBe(expected.length - 120);
    expect(jsonl[0]).toMatchObject({ slice: expect.stringMatching(/^math\//), level: expect.any(Number) });
    expect(typeof parquet[0]!.seed).toBe('bigint');
  });

  it('transitions: JSONL and Parquet read back equal to the store rows', async () => {
    const { jsonl, parquet } = await roundTrip('transitions', ['--run', runId]);
    const expected = await runTransitions(store, runId);
    expect(expected.length).toBeGreaterThan(120);
    expect(jsonl.map(transitionFromRow)).toEqual(expected);
    expect(parquet.map(transitionFromRow)).toEqual(expected);
    expect(jsonl.some((r) => r.feedback_codes === 'INVALID_ACTION' && r.tool === 'calculator')).toBe(true);
  });

  it('keeps awkward text and numbers exactly (unicode, NUL, U+2028, 2^53 - 1, uint32 seeds)', async () => {
    const path = join(dir, 'awkward.db');
    const s = await createSqliteStore(path, { now: systemClock });
    const tasks = [1, 2, 3].map((i) => ({ ...makeTask(i), split: 'dynamic' as const, status: 'active' as const, batchId: 'b'.repeat(64), seq: i }));
    await s.putTasks(tasks);
    await s.saveRun(makeRun('train-awkward'));
    const episodes: EpisodeRecord[] = tasks.map((t, i) => makeEpisode(`train-awkward:${i}`, t.id, { runId: 'train-awkward', status: 'terminated', steps: 2, endReason: 'finished', reward: 0.1 + i, outcome: i % 2 }));
    for (const e of episodes) await s.saveEpisode(e);
    await s.appendTransitions(episodes.flatMap((e) => [makeTransition(e.id, 1), { ...makeTransition(e.id, 2), truncated: true, truncation: 'steps' as const, faults: [{ kind: 'timeout' as const, tool: 'get_order_details', call: 1 }] }]));
    const expectedTasks = await runTasks(s, 'train-awkward');
    const expectedEpisodes = await s.listEpisodes({ runId: 'train-awkward' });
    const expectedTransitions = await runTransitions(s, 'train-awkward');
    await s.close();
    for (const [what, decode, expected] of [
      ['tasks', taskFromRow, expectedTasks],
      ['episodes', episodeFromRow, expectedEpisodes],
      ['transitions', transitionFromRow, expectedTransitions],
    ] as const) {
      const { jsonl, parquet } = await roundTrip(what, ['--run', 'train-awkward'], path);
      expect(jsonl.map(decode as (r: Record<string, unknown>) => unknown), what).toEqual(expected);
      expect(parquet.map(decode as (r: Record<string, unknown>) => unknown), what).toEqual(expected);
    }
  });
});

describe('chat-format trajectories', () => {
  it('are OpenAI-style messages with tool calls, in JSONL as arrays and in Parquet as JSON text', async () => {
    const { jsonl, parquet } = await roundTrip('chat', ['--run', runId]);
    const episodes = await store.listEpisodes({ runId });
    expect(jsonl).toHaveLength(episodes.length);
    for (const row of jsonl) {
      const messages = row.messages as TrajectoryMessage[];
      expect(messages[0]).toMatchObject({ role: 'user', content: expect.stringMatching(/^(What is|How many times)/) });
      const last = messages[messages.length - 1]!;
      expect(last.role).toBe('assistant');
      expect(row.success).toBe((row.outcome as number) >= 1);
      // Every tool call is answered by a tool message with its id.
      messages.forEach((m, i) => {
        if (m.role === 'assistant' && m.tool_calls) {
          expect(messages[i + 1]).toMatchObject({ role: 'tool', tool_call_id: m.tool_calls[0]!.id });
          expect(() => JSON.parse(m.tool_calls![0]!.function.arguments)).not.toThrow();
        }
      });
      expect(row.tools).toEqual([]);
    }
    const withTool = jsonl.find((r) => (r.messages as TrajectoryMessage[]).some((m) => m.role === 'tool'))!;
    const toolMessage = (withTool.messages as TrajectoryMessage[]).find((m) => m.role === 'tool') as { content: string };
    expect(JSON.parse(toolMessage.content)).toMatchObject({ error: { code: 'INVALID_ACTION' } });
    // A successful episode ends with the right answer.
    const solved = jsonl.find((r) => r.success === true)!;
    const task = await store.getTask(solved.task_id as string);
    expect((solved.messages as TrajectoryMessage[]).at(-1)).toEqual({ role: 'assistant', content: task!.spec.acceptance.answer });
    // Parquet holds the same messages as JSON text.
    expect(parquet.map((r) => JSON.parse(r.messages as string))).toEqual(jsonl.map((r) => r.messages));
  });

  it('docs/export.md documents every column of every kind', () => {
    const docs = readFileSync(join(process.cwd(), 'docs', 'export.md'), 'utf8');
    for (const [what, columns] of Object.entries(EXPORT_COLUMNS)) {
      const section = docs.slice(docs.indexOf(`### ${what}`));
      for (const c of columns) expect(section, `${what}.${c.name}`).toContain(`| \`${c.name}\` |`);
    }
  });

  it('exportRows refuses an unknown kind and an unknown run', async () => {
    await expect(exportRows(store, { what: 'nope' as ExportKind })).rejects.toMatchObject({ code: 'PARAMS_INVALID' });
    await expect(exportRows(store, { what: 'episodes', runId: 'train-missing' })).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
    expect((await cli(['export', '--what', 'tasks', '--format', 'csv', '--out', join(dir, 'x.csv')])).code).toBe(2);
  });
});
