/** Snapshots: build the environment version, export it as one file, import it into a fresh store. */
import {
  canonicalize,
  digest,
  EnvHarnessError,
  sha256,
  SPLITS,
  type BatchManifest,
  type GenerationLogEntry,
  type JsonValue,
  type ReviewDecision,
  type RngState,
  type Snapshot,
  type SnapshotBody,
  type Split,
  type Store,
  type StoredTask,
  type StoreWrite,
  type Task,
  computeTaskId,
  depthExceeds,
} from '../core/index.js';
import { checkTaskSchema } from '../generation/index.js';

export const EXPORT_FORMAT = 'envharness.export/1';

/** The pool part of a snapshot: per split, a digest over the sorted active ids, and the high-water seq. */
export async function poolMembership(store: Store): Promise<{ pool: SnapshotBody['pool']; maxSeq: number }> {
  const entries = await store.listTaskIndex({ status: 'active' });
  const bySplit: Record<Split, string[]> = { regression: [], dynamic: [], heldout: [] };
  let maxSeq = 0;
  for (const e of entries) {
    bySplit[e.split].push(e.id);
    if (e.seq > maxSeq) maxSeq = e.seq;
  }
  const pool = {} as SnapshotBody['pool'];
  for (const split of SPLITS) {
    const ids = bySplit[split].sort();
    pool[split] = { digest: digest(ids), count: ids.length };
  }
  return { pool, maxSeq };
}

export function snapshotId(body: SnapshotBody): string {
  return digest(body);
}

/** The body fields of a snapshot (what its id covers). */
export function snapshotBody(snapshot: Snapshot): SnapshotBody {
  const { format, templates, pool, curriculum, rng, config } = snapshot;
  return { format, templates, pool, curriculum, rng, config };
}

export interface BuildSnapshotInput {
  store: Store;
  templates: Array<{ id: string; sourceDigest: string }>;
  curriculum: JsonValue;
  rng: Record<string, RngState>;
  config: JsonValue;
}

export async function buildSnapshotBody(input: BuildSnapshotInput): Promise<SnapshotBody> {
  const { pool, maxSeq } = await poolMembership(input.store);
  const templates = [...input.templates].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return {
    format: 'envharness.snapshot/1',
    templates,
    pool,
    curriculum: input.curriculum,
    rng: input.rng,
    config: { ...(asObject(input.config)), poolMaxSeq: maxSeq },
  };
}

function asObject(value: JsonValue): Record<string, JsonValue> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : { value };
}

/** Limits on an export file (docs/errors.md): bigger or deeper input is IMPORT_INVALID before anything recursive runs. */
export const EXPORT_LIMITS = {
  /** Bytes of one line (one task, manifest or header). */
  maxLineBytes: 16 * 1024 * 1024,
  /** Nesting depth of any line's JSON (objects and arrays). */
  maxDepth: 64,
  /** Lines of a file. */
  maxLines: 5_000_000,
} as const;

/**
 * Exports a snapshot and the pool it describes as JSON Lines, each line canonical JSON:
 * a header, the batches, their generation logs, the tasks (in seq order), the review audit, and a
 * trailer with the sha256 of all lines before it. The file's bytes depend only on the store's content.
 * Everything is read in one read transaction (`Store.readPool`); a snapshot that records `poolMaxSeq`
 * exports only the tasks (and their batches) stored by then, so tasks generated meanwhile never make
 * two exports of one snapshot differ. If that content does not hash to the snapshot's pool (a review
 * was decided since), the export is refused with SNAPSHOT_MISMATCH rather than written wrong.
 */
export async function exportSnapshot(store: Store, snapshot: Snapshot): Promise<string> {
  const content = await store.readPool();
  const maxSeq = poolMaxSeqOf(snapshot);
  const late = maxSeq === undefined ? new Set<string>() : lateBatches(content.batches, content.tasks, maxSeq);
  const tasks = content.tasks.filter((t) => !late.has(t.batchId));
  const kept = new Set(tasks.map((t) => t.id));
  const batches = content.batches.filter((b) => !late.has(b.id));
  const pool = poolOf(tasks.filter((t) => t.status === 'active'));
  const differing = SPLITS.filter((split) => pool[split].digest !== snapshot.pool[split].digest);
  if (differing.length > 0) {
    throw new EnvHarnessError(
      'SNAPSHOT_MISMATCH',
      `snapshot ${snapshot.id.slice(0, 12)}: the pool has changed since it was taken (splits: ${differing.join(', ')}); export a new snapshot (\`envharness snapshot export\` without an id)`,
      { details: { splits: differing } },
    );
  }
  const lines: string[] = [];
  lines.push(canonicalize({ kind: 'header', format: EXPORT_FORMAT, snapshot }));
  for (const manifest of batches) lines.push(canonicalize({ kind: 'batch', manifest }));
  for (const entry of content.log) if (!late.has(entry.batchId)) lines.push(canonicalize({ kind: 'log', entry }));
  const reviewIds = new Set(content.reviews.map((r) => r.taskId));
  for (const task of tasks) lines.push(canonicalize({ kind: 'task', task: stripStatus(task), review: reviewIds.has(task.id) }));
  for (const decision of content.audit) if (kept.has(decision.taskId)) lines.push(canonicalize({ kind: 'review', decision }));
  const body = lines.join('\n');
  return `${body}\n${canonicalize({ kind: 'trailer', lines: lines.length, sha256: sha256(body) })}\n`;
}

/**
 * The batches an export of the snapshot leaves out: every batch saved (in save order) after the last one
 * known to predate the snapshot, i.e. the last with a task at or below its high-water seq (the highest seq
 * of an active task then). Whether a batch without such a task (no accepted task, or only tasks awaiting
 * review: neither changes a pool digest) was saved before or after the snapshot cannot be told, so after
 * the last known one it is always left out, and before it always kept: two exports of one snapshot agree
 * whatever was saved between them.
 */
function lateBatches(batches: readonly BatchManifest[], tasks: readonly StoredTask[], maxSeq: number): Set<string> {
  const early = new Set<string>();
  for (const t of tasks) if (t.seq <= maxSeq) early.add(t.batchId);
  let last = -1;
  batches.forEach((b, i) => {
    if (early.has(b.id)) last = i;
  });
  return new Set(batches.slice(last + 1).map((b) => b.id));
}

function poolMaxSeqOf(snapshot: Snapshot): number | undefined {
  const config = snapshot.config as { poolMaxSeq?: unknown } | null;
  return config !== null && typeof config === 'object' && Number.isSafeInteger(config.poolMaxSeq) ? (config.poolMaxSeq as number) : undefined;
}

/** Per split, the digest over the sorted ids and the count (what a snapshot's `pool` holds). */
function poolOf(active: ReadonlyArray<{ id: string; split: Split }>): SnapshotBody['pool'] {
  const bySplit: Record<Split, string[]> = { regression: [], dynamic: [], heldout: [] };
  for (const t of active) bySplit[t.split].push(t.id);
  const pool = {} as SnapshotBody['pool'];
  for (const split of SPLITS) {
    const ids = bySplit[split].sort();
    pool[split] = { digest: digest(ids), count: ids.length };
  }
  return pool;
}

// Status is derived on import from the review trail, so the file states each fact once.
function stripStatus(task: StoredTask): Omit<StoredTask, 'status'> {
  const { status: _status, ...rest } = task;
  return rest;
}

export interface ParsedExport {
  snapshot: Snapshot;
  batches: BatchManifest[];
  log: GenerationLogEntry[];
  tasks: Array<{ task: Omit<StoredTask, 'status'>; review: boolean }>;
  decisions: ReviewDecision[];
}

/**
 * Parses an export file and verifies that it is what it claims to be, so a changed file can never
 * import under its original id: every task id is recomputed from the task's content and its shape
 * validated, every batch's id and task digest recomputed from the manifest and its tasks, the pool
 * digests recomputed from the tasks and the review trail, and the snapshot id from the snapshot.
 * Throws IMPORT_INVALID for a malformed file (naming the line and field) and SNAPSHOT_MISMATCH for a
 * well-formed one whose content does not hash to what it names (naming the first bad record).
 */
export function parseExport(text: string, source = 'snapshot file'): ParsedExport {
  const raw = text.endsWith('\n') ? text.slice(0, -1) : text;
  const all = raw.split('\n');
  if (all.length > EXPORT_LIMITS.maxLines) {
    throw new EnvHarnessError('IMPORT_INVALID', `${source}: ${all.length} lines is more than the limit of ${EXPORT_LIMITS.maxLines}`, { details: { line: EXPORT_LIMITS.maxLines + 1 } });
  }
  const trailerLine = all.pop();
  const trailer = parseLine(trailerLine, all.length + 1, source);
  if (trailer.kind !== 'trailer' || trailer.lines !== all.length) {
    throw new EnvHarnessError('IMPORT_INVALID', `${source}: missing or wrong trailer (is the file truncated?)`, { details: { line: all.length + 1 } });
  }
  if (sha256(all.join('\n')) !== trailer.sha256) {
    throw new EnvHarnessError('SNAPSHOT_MISMATCH', `${source}: content does not match its sha256 trailer; the file was changed or corrupted`, { details: { line: all.length + 1 } });
  }
  const header = parseLine(all[0], 1, source);
  if (header.kind !== 'header' || header.format !== EXPORT_FORMAT) {
    throw new EnvHarnessError('IMPORT_INVALID', `${source}: expected a header line with format ${EXPORT_FORMAT}`, { details: { line: 1 } });
  }
  const snapshot = checkSnapshotShape(header.snapshot, source);
  if (snapshotId(snapshotBody(snapshot)) !== snapshot.id) {
    throw new EnvHarnessError('SNAPSHOT_MISMATCH', `${source}: line 1: snapshot ${String(snapshot.id).slice(0, 12)} does not hash to its id`, { details: { line: 1, pointer: '/snapshot/id' } });
  }
  const out: ParsedExport = { snapshot, batches: [], log: [], tasks: [], decisions: [] };
  const lineOfBatch = new Map<string, number>();
  const lineOfTask = new Map<string, number>();
  for (let i = 1; i < all.length; i++) {
    const n = i + 1;
    const line = parseLine(all[i], n, source);
    switch (line.kind) {
      case 'batch': {
        const manifest = requireObject(line.manifest, source, n, '/manifest') as unknown as BatchManifest;
        requireString(manifest.id, source, n, '/manifest/id');
        requireString(manifest.digest, source, n, '/manifest/digest');
        if (!SPLITS.includes(manifest.split)) invalid(source, n, '/manifest/split', `one of ${SPLITS.join(', ')}`);
        const { id, ...body } = manifest;
        if (digest(body as unknown as JsonValue) !== id) mismatch(source, n, '/manifest/id', `batch ${id.slice(0, 12)} does not hash to its id`);
        if (lineOfBatch.has(id)) invalid(source, n, '/manifest/id', 'a batch id not seen before in the file');
        lineOfBatch.set(id, n);
        out.batches.push(manifest);
        break;
      }
      case 'log': {
        const entry = requireObject(line.entry, source, n, '/entry') as unknown as GenerationLogEntry;
        requireString(entry.batchId, source, n, '/entry/batchId');
        if (!lineOfBatch.has(entry.batchId)) invalid(source, n, '/entry/batchId', 'the id of a batch listed above it');
        out.log.push(entry);
        break;
      }
      case 'task': {
        const task = requireObject(line.task, source, n, '/task') as unknown as Omit<StoredTask, 'status'>;
        const { split, batchId, seq, ...plain } = task;
        const verdict = checkTaskSchema(plain);
        if (!verdict.ok) invalid(source, n, '/task', `a valid task (${verdict.reason ?? 'schema'})`);
        if (!SPLITS.includes(split)) invalid(source, n, '/task/split', `one of ${SPLITS.join(', ')}`);
        if (!Number.isSafeInteger(seq) || seq < 1) invalid(source, n, '/task/seq', 'a positive integer');
        requireString(batchId, source, n, '/task/batchId');
        if (!lineOfBatch.has(batchId)) invalid(source, n, '/task/batchId', 'the id of a batch listed above it');
        const expected = computeTaskId(plain as Task);
        if (expected !== task.id) mismatch(source, n, '/task/id', `task ${String(task.id).slice(0, 12)} does not hash to its id (its content hashes to ${expected.slice(0, 12)})`);
        if (lineOfTask.has(task.id)) invalid(source, n, '/task/id', 'a task id not seen before in the file');
        const previous = out.tasks[out.tasks.length - 1];
        if (previous !== undefined && previous.task.seq >= seq) invalid(source, n, '/task/seq', 'tasks in increasing seq order');
        lineOfTask.set(task.id, n);
        out.tasks.push({ task, review: line.review === true });
        break;
      }
      case 'review': {
        const decision = requireObject(line.decision, source, n, '/decision') as unknown as ReviewDecision;
        requireString(decision.taskId, source, n, '/decision/taskId');
        if (decision.decision !== 'approved' && decision.decision !== 'rejected') invalid(source, n, '/decision/decision', '"approved" or "rejected"');
        for (const key of ['reviewer', 'note', 'at'] as const) requireString(decision[key], source, n, `/decision/${key}`);
        const taskLine = lineOfTask.get(decision.taskId);
        if (taskLine === undefined) invalid(source, n, '/decision/taskId', 'the id of a task listed above it');
        out.decisions.push(decision);
        break;
      }
      default:
        throw new EnvHarnessError('IMPORT_INVALID', `${source}: line ${n} has unknown kind ${JSON.stringify(line.kind)}`, { details: { line: n, pointer: '/kind' } });
    }
  }
  // Each batch's manifest names its tasks: their number and the digest over their ids in generation order.
  const byBatch = new Map<string, string[]>();
  for (const { task } of out.tasks) {
    const ids = byBatch.get(task.batchId) ?? [];
    ids.push(task.id);
    byBatch.set(task.batchId, ids);
  }
  for (const manifest of out.batches) {
    const ids = byBatch.get(manifest.id) ?? [];
    if (ids.length !== manifest.accepted || digest(ids) !== manifest.digest) {
      mismatch(source, lineOfBatch.get(manifest.id)!, '/manifest/digest', `batch ${manifest.id.slice(0, 12)} names ${manifest.accepted} tasks with digest ${manifest.digest.slice(0, 12)}, but the file holds ${ids.length} with digest ${digest(ids).slice(0, 12)}`);
    }
  }
  // The pool the snapshot names is the tasks' statuses after the review trail.
  const status = new Map<string, 'active' | 'pending_review' | 'rejected'>();
  for (const { task, review } of out.tasks) status.set(task.id, review ? 'pending_review' : 'active');
  const reviewable = new Set(out.tasks.filter((t) => t.review).map((t) => t.task.id));
  for (const d of out.decisions) {
    if (reviewable.has(d.taskId)) status.set(d.taskId, d.decision === 'approved' ? 'active' : 'rejected');
  }
  const pool = poolOf(out.tasks.map((t) => t.task).filter((t) => status.get(t.id) === 'active'));
  const differing = SPLITS.filter((split) => pool[split].digest !== snapshot.pool[split].digest || pool[split].count !== snapshot.pool[split].count);
  if (differing.length > 0) {
    mismatch(source, 1, `/snapshot/pool/${differing[0]}`, `the tasks in the file do not make the pool snapshot ${snapshot.id.slice(0, 12)} names (splits: ${differing.join(', ')})`);
  }
  return out;
}

function parseLine(line: string | undefined, n: number, source: string): Record<string, unknown> {
  if (line !== undefined && line.length > EXPORT_LIMITS.maxLineBytes) {
    throw new EnvHarnessError('IMPORT_INVALID', `${source}: line ${n} is longer than the limit of ${EXPORT_LIMITS.maxLineBytes} bytes`, { details: { line: n } });
  }
  let value: unknown;
  try {
    value = JSON.parse(line ?? '') as unknown;
  } catch (error) {
    throw new EnvHarnessError('IMPORT_INVALID', `${source}: line ${n} is not a JSON object`, { cause: error, details: { line: n } });
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new EnvHarnessError('IMPORT_INVALID', `${source}: line ${n} is not a JSON object`, { details: { line: n } });
  }
  if (depthExceeds(value, EXPORT_LIMITS.maxDepth)) {
    throw new EnvHarnessError('IMPORT_INVALID', `${source}: line ${n} is nested deeper than the limit of ${EXPORT_LIMITS.maxDepth} levels`, { details: { line: n } });
  }
  return value as Record<string, unknown>;
}

function checkSnapshotShape(value: unknown, source: string): Snapshot {
  const snapshot = requireObject(value, source, 1, '/snapshot') as unknown as Snapshot;
  requireString(snapshot.id, source, 1, '/snapshot/id');
  if (snapshot.format !== 'envharness.snapshot/1') invalid(source, 1, '/snapshot/format', '"envharness.snapshot/1"');
  if (!Array.isArray(snapshot.templates) || !snapshot.templates.every((t) => t !== null && typeof t === 'object' && typeof t.id === 'string' && typeof t.sourceDigest === 'string')) {
    invalid(source, 1, '/snapshot/templates', 'a list of { id, sourceDigest }');
  }
  const pool = requireObject(snapshot.pool, source, 1, '/snapshot/pool') as Record<string, unknown>;
  for (const split of SPLITS) {
    const p = requireObject(pool[split], source, 1, `/snapshot/pool/${split}`) as { digest?: unknown; count?: unknown };
    requireString(p.digest, source, 1, `/snapshot/pool/${split}/digest`);
    if (!Number.isSafeInteger(p.count)) invalid(source, 1, `/snapshot/pool/${split}/count`, 'an integer');
  }
  requireObject(snapshot.rng, source, 1, '/snapshot/rng');
  return snapshot;
}

function requireObject(value: unknown, source: string, line: number, pointer: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) invalid(source, line, pointer, 'an object');
  return value as Record<string, unknown>;
}

function requireString(value: unknown, source: string, line: number, pointer: string): void {
  if (typeof value !== 'string') invalid(source, line, pointer, 'a string');
}

function invalid(source: string, line: number, pointer: string, expected: string): never {
  throw new EnvHarnessError('IMPORT_INVALID', `${source}: line ${line}: ${pointer} must be ${expected}`, { details: { line, pointer } });
}

function mismatch(source: string, line: number, pointer: string, what: string): never {
  throw new EnvHarnessError('SNAPSHOT_MISMATCH', `${source}: line ${line}: ${what}; the file was changed after export`, { details: { line, pointer } });
}

/**
 * The writes that import an export into `store`, and the pool the store will hold afterwards: batches
 * it lacks in file order (so tasks get the same seq), the review decisions about their tasks, and the
 * snapshot record. Nothing is written here: `Store.applyWrites` applies the list in one transaction.
 */
export async function planImport(store: Store, parsed: ParsedExport): Promise<{ writes: StoreWrite[]; pool: SnapshotBody['pool'] }> {
  const existing = new Set((await store.listBatches()).map((b) => b.id));
  const tasksByBatch = new Map<string, ParsedExport['tasks']>();
  for (const t of parsed.tasks) {
    const list = tasksByBatch.get(t.task.batchId) ?? [];
    list.push(t);
    tasksByBatch.set(t.task.batchId, list);
  }
  const logByBatch = new Map<string, GenerationLogEntry[]>();
  for (const e of parsed.log) {
    const list = logByBatch.get(e.batchId) ?? [];
    list.push(e);
    logByBatch.set(e.batchId, list);
  }
  // The pool afterwards: the store's tasks now, plus the new batches' tasks, after the new decisions.
  const after = new Map<string, { split: Split; status: string }>();
  for (const e of await store.listTaskIndex()) after.set(e.id, { split: e.split, status: e.status });
  const writes: StoreWrite[] = [];
  const imported = new Set<string>();
  for (const manifest of parsed.batches) {
    if (existing.has(manifest.id)) continue;
    const tasks = tasksByBatch.get(manifest.id) ?? [];
    for (const { task, review } of tasks) {
      imported.add(task.id);
      if (!after.has(task.id)) after.set(task.id, { split: manifest.split, status: review ? 'pending_review' : 'active' });
    }
    writes.push({
      op: 'saveBatch',
      batch: {
        manifest,
        tasks: tasks.map(({ task }) => {
          const { split: _s, batchId: _b, seq: _q, ...plain } = task;
          return plain;
        }),
        log: logByBatch.get(manifest.id) ?? [],
      },
      review: tasks.filter((t) => t.review).map((t) => t.task.id),
    });
  }
  // Decisions about tasks already stored were imported with them before (or are the store's own).
  for (const decision of parsed.decisions) {
    if (!imported.has(decision.taskId)) continue;
    writes.push({ op: 'decideReview', decision });
    const entry = after.get(decision.taskId);
    if (entry) entry.status = decision.decision === 'approved' ? 'active' : 'rejected';
  }
  writes.push({ op: 'saveSnapshot', snapshot: parsed.snapshot });
  const active = [...after].filter(([, e]) => e.status === 'active').map(([id, e]) => ({ id, split: e.split }));
  return { writes, pool: poolOf(active) };
}

/**
 * Imports an export into a store in one transaction (with `also`, more writes in the same one): if the
 * store would not then hold the snapshot's pool (it holds other tasks), SNAPSHOT_MISMATCH and nothing is
 * written; if any write fails, nothing is written either.
 */
export async function importExport(store: Store, parsed: ParsedExport, also: readonly StoreWrite[] = []): Promise<Snapshot> {
  const { writes, pool } = await planImport(store, parsed);
  const snap = parsed.snapshot;
  const differing = SPLITS.filter((split) => pool[split].digest !== snap.pool[split].digest);
  if (differing.length > 0) {
    throw new EnvHarnessError(
      'SNAPSHOT_MISMATCH',
      `snapshot ${snap.id.slice(0, 12)} cannot be restored here: this store holds other tasks (splits: ${differing.join(', ')}); import it into a fresh store (--store)`,
      { details: { splits: differing } },
    );
  }
  await store.applyWrites([...writes, ...also]);
  return snap;
}

export interface SnapshotDiff {
  templates: { added: string[]; removed: string[]; changed: string[] };
  pool: Record<Split, { from: number; to: number; same: boolean }>;
  curriculumChanged: boolean;
  rngChanged: string[];
  configChanged: boolean;
}

export function diffSnapshots(a: Snapshot, b: Snapshot): SnapshotDiff {
  const ta = new Map(a.templates.map((t) => [t.id, t.sourceDigest]));
  const tb = new Map(b.templates.map((t) => [t.id, t.sourceDigest]));
  const pool = {} as SnapshotDiff['pool'];
  for (const split of SPLITS) {
    pool[split] = { from: a.pool[split].count, to: b.pool[split].count, same: a.pool[split].digest === b.pool[split].digest };
  }
  const rngKeys = [...new Set([...Object.keys(a.rng), ...Object.keys(b.rng)])].sort();
  return {
    templates: {
      added: [...tb.keys()].filter((id) => !ta.has(id)).sort(),
      removed: [...ta.keys()].filter((id) => !tb.has(id)).sort(),
      changed: [...ta.keys()].filter((id) => tb.has(id) && tb.get(id) !== ta.get(id)).sort(),
    },
    pool,
    curriculumChanged: canonicalize(a.curriculum) !== canonicalize(b.curriculum),
    rngChanged: rngKeys.filter((k) => canonicalize(a.rng[k] ?? null) !== canonicalize(b.rng[k] ?? null)),
    configChanged: canonicalize(a.config) !== canonicalize(b.config),
  };
}
