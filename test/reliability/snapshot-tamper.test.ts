/**
 * T16 (snapshot part), issue 14 §2: a changed export never imports under its original id. Each tamper
 * class below re-computes every hash an attacker can (the trailer always; then task ids, manifest
 * digests, batch ids, pool digests in turn), and import must name the first record that no longer
 * hashes to what it claims, with the store left byte-for-byte as it was.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { canonicalize, computeTaskId, digest, isEnvHarnessError, type JsonValue } from '../../src/core/index.js';
import { math } from '../../src/domains/math/index.js';
import { createHarness, type Harness } from '../../src/harness/harness.js';
import { snapshotBody, snapshotId } from '../../src/harness/snapshots.js';
import { dumpSqlite } from './sqlite-dump.js';

const dir = mkdtempSync(join(tmpdir(), 'envharness-tamper-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const clock = () => '2026-01-01T00:00:00.000Z';

async function fresh(): Promise<{ h: Harness; file: string }> {
  const file = join(dir, `t${n++}.db`);
  const h = await createHarness({ store: file, domains: [math], clock });
  await h.initialize({ seed: 7 });
  return { h, file };
}

type Line = Record<string, any>;
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

/** The lines of an export without its trailer, and a writer that adds a freshly computed trailer. */
function linesOf(text: string): Line[] {
  return text.trimEnd().split('\n').slice(0, -1).map((l) => JSON.parse(l) as Line);
}
function withTrailer(lines: ReadonlyArray<Line | string>): string {
  const body = lines.map((l) => (typeof l === 'string' ? l : canonicalize(l as JsonValue))).join('\n');
  return `${body}\n${canonicalize({ kind: 'trailer', lines: lines.length, sha256: sha(body) })}\n`;
}

const original = await (async () => {
  const { h } = await fresh();
  await h.generate({ templates: [{ id: 'math/chain-sum@1' }], levels: [1, 2], count: 40, seed: 1, split: 'regression' });
  await h.generate({ templates: [{ id: 'math/chain-sum@1' }], levels: [1, 2], count: 80, seed: 2, split: 'dynamic', reviewShare: 0.3 });
  const pending = await h.pendingReviews();
  await h.decideReview(pending[0]!.taskId, 'approved', 'bob', '');
  const { text, snapshot } = await h.exportSnapshot();
  await h.close();
  return { text, id: snapshot.id };
})();

/** Changes the first dynamic task's instructions; `depth` says how many hashes up the chain are re-computed. */
function tamperChain(depth: 0 | 1 | 2 | 3 | 4 | 5): { text: string; taskLine: number; batchLine: number } {
  const lines = linesOf(original.text);
  const taskLine = lines.findIndex((l) => l.kind === 'task' && l.task.split === 'dynamic' && !l.review);
  const entry = lines[taskLine]!;
  const oldId = entry.task.id as string;
  entry.task.spec = { ...entry.task.spec, instructions: `${entry.task.spec.instructions} (and wire the refund elsewhere)` };
  const batchIndex = lines.findIndex((l) => l.kind === 'batch' && l.manifest.id === entry.task.batchId);
  if (depth >= 1) {
    const { split: _s, batchId: _b, seq: _q, ...plain } = entry.task;
    entry.task.id = computeTaskId(plain);
    for (const l of lines) if (l.kind === 'log' && l.entry.taskId === oldId) l.entry.taskId = entry.task.id;
  }
  const manifest = lines[batchIndex]!.manifest;
  const oldBatch = manifest.id as string;
  if (depth >= 2) manifest.digest = digest(lines.filter((l) => l.kind === 'task' && l.task.batchId === oldBatch).map((l) => l.task.id));
  if (depth >= 3) {
    const { id: _id, ...body } = manifest;
    manifest.id = digest(body);
    for (const l of lines) {
      if (l.kind === 'task' && l.task.batchId === oldBatch) l.task.batchId = manifest.id;
      if (l.kind === 'log' && l.entry.batchId === oldBatch) l.entry.batchId = manifest.id;
    }
  }
  const snapshot = lines[0]!.snapshot;
  if (depth >= 4) {
    const active = lines.filter((l) => l.kind === 'task' && l.task.split === 'dynamic' && (!l.review || lines.some((d) => d.kind === 'review' && d.decision.taskId === l.task.id && d.decision.decision === 'approved')));
    const ids = active.map((l) => l.task.id as string).sort();
    snapshot.pool.dynamic = { digest: digest(ids), count: ids.length };
  }
  if (depth >= 5) snapshot.id = snapshotId(snapshotBody(snapshot));
  return { text: withTrailer(lines), taskLine: taskLine + 1, batchLine: batchIndex + 1 };
}

async function expectRefused(text: string, code: 'SNAPSHOT_MISMATCH' | 'IMPORT_INVALID', line?: number, pointer?: string): Promise<void> {
  const { h, file } = await fresh();
  const before = dumpSqlite(file);
  let caught: unknown;
  try {
    await h.importSnapshot(text, 'tampered.jsonl');
  } catch (error) {
    caught = error;
  }
  expect(isEnvHarnessError(caught, code), String(caught)).toBe(true);
  const details = (caught as { details?: { line?: number; pointer?: string } }).details ?? {};
  if (line !== undefined) expect(details.line).toBe(line);
  if (pointer !== undefined) expect(details.pointer).toBe(pointer);
  expect(dumpSqlite(file)).toBe(before);
  await h.close();
}

describe('T16: tampered snapshots', () => {
  it('the untouched export imports (the baseline the tampering starts from)', async () => {
    const { h } = await fresh();
    expect((await h.importSnapshot(original.text)).id).toBe(original.id);
    await h.close();
  });

  it('a changed task (trailer re-computed) is refused at the task line', async () => {
    const t = tamperChain(0);
    await expectRefused(t.text, 'SNAPSHOT_MISMATCH', t.taskLine, '/task/id');
  });

  it('... with its id re-computed: refused at its batch, whose digest no longer matches', async () => {
    const t = tamperChain(1);
    await expectRefused(t.text, 'SNAPSHOT_MISMATCH', t.batchLine, '/manifest/digest');
  });

  it('... and the manifest digest re-computed: refused at the batch, which no longer hashes to its id', async () => {
    const t = tamperChain(2);
    await expectRefused(t.text, 'SNAPSHOT_MISMATCH', t.batchLine, '/manifest/id');
  });

  it('... and the batch id re-computed: refused at the header, whose pool digest no longer matches', async () => {
    const t = tamperChain(3);
    await expectRefused(t.text, 'SNAPSHOT_MISMATCH', 1, '/snapshot/pool/dynamic');
  });

  it('... and the pool re-computed: refused at the header, which no longer hashes to its id', async () => {
    const t = tamperChain(4);
    await expectRefused(t.text, 'SNAPSHOT_MISMATCH', 1, '/snapshot/id');
  });

  it('... and every hash re-computed: it imports, but only as a different snapshot', async () => {
    const { h } = await fresh();
    const imported = await h.importSnapshot(tamperChain(5).text);
    expect(imported.id).not.toBe(original.id);
    await h.close();
  });

  it('a task whose spec was removed is IMPORT_INVALID at its line, not a crash in the next train', async () => {
    const lines = linesOf(original.text);
    const i = lines.findIndex((l) => l.kind === 'task');
    delete lines[i]!.task.spec;
    await expectRefused(withTrailer(lines), 'IMPORT_INVALID', i + 1, '/task');
  });

  it('a dropped task line is refused at its batch', async () => {
    const lines = linesOf(original.text);
    const i = lines.findIndex((l) => l.kind === 'task');
    const batch = lines.findIndex((l) => l.kind === 'batch' && l.manifest.id === lines[i]!.task.batchId);
    lines.splice(i, 1);
    await expectRefused(withTrailer(lines), 'SNAPSHOT_MISMATCH', batch + 1, '/manifest/digest');
  });

  it('a duplicated task line is IMPORT_INVALID', async () => {
    const lines = linesOf(original.text);
    const i = lines.findIndex((l) => l.kind === 'task');
    lines.splice(i + 1, 0, structuredClone(lines[i]!));
    await expectRefused(withTrailer(lines), 'IMPORT_INVALID', i + 2);
  });

  it('a flipped review decision is refused at the header (the pool it makes is not the named one)', async () => {
    const lines = linesOf(original.text);
    const i = lines.findIndex((l) => l.kind === 'review');
    lines[i]!.decision.decision = 'rejected';
    await expectRefused(withTrailer(lines), 'SNAPSHOT_MISMATCH', 1);
  });

  it('a null manifest is IMPORT_INVALID', async () => {
    const lines = linesOf(original.text);
    const i = lines.findIndex((l) => l.kind === 'batch');
    lines[i]!.manifest = null;
    await expectRefused(withTrailer(lines), 'IMPORT_INVALID', i + 1, '/manifest');
  });

  it('a header nested 20k deep is IMPORT_INVALID (no stack overflow)', async () => {
    const lines: Array<Line | string> = linesOf(original.text);
    lines[0] = `{"kind":"header","format":"envharness.export/1","snapshot":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
    await expectRefused(withTrailer(lines), 'IMPORT_INVALID', 1);
  });

  it('a changed byte without a re-computed trailer is refused; so is a truncated file', async () => {
    await expectRefused(original.text.replace('"level":2', '"level":3'), 'SNAPSHOT_MISMATCH');
    await expectRefused(original.text.split('\n').slice(0, 10).join('\n'), 'IMPORT_INVALID');
  });
});
