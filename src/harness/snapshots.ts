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
} from '../core/index.js';

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

/**
 * Exports a snapshot and the pool it describes as JSON Lines, each line canonical JSON:
 * a header, the batches, their generation logs, the tasks (in seq order), the review audit, and a
 * trailer with the sha256 of all lines before it. The file's bytes depend only on the store's content.
 */
export async function exportSnapshot(store: Store, snapshot: Snapshot): Promise<string> {
  const lines: string[] = [];
  lines.push(canonicalize({ kind: 'header', format: EXPORT_FORMAT, snapshot }));
  const batches = await store.listBatches();
  for (const manifest of batches) lines.push(canonicalize({ kind: 'batch', manifest }));
  for (const manifest of batches) {
    for (const entry of await store.listGenerationLog({ batchId: manifest.id })) lines.push(canonicalize({ kind: 'log', entry }));
  }
  const reviewIds = new Set((await store.listReviews()).map((r) => r.taskId));
  let afterSeq = 0;
  for (;;) {
    const page = await store.listTasks({ afterSeq, limit: 5000 });
    if (page.length === 0) break;
    for (const task of page) lines.push(canonicalize({ kind: 'task', task: stripStatus(task), review: reviewIds.has(task.id) }));
    afterSeq = page[page.length - 1]!.seq;
  }
  for (const decision of await store.listReviewAudit()) lines.push(canonicalize({ kind: 'review', decision }));
  const body = lines.join('\n');
  return `${body}\n${canonicalize({ kind: 'trailer', lines: lines.length, sha256: sha256(body) })}\n`;
}

// Status is derived on import from the review trail, so the file states each fact once.
function stripStatus(task: StoredTask): Omit<StoredTask, 'status'> {
  const { status: _status, ...rest } = task;
  return rest;
}

interface ParsedExport {
  snapshot: Snapshot;
  batches: BatchManifest[];
  log: GenerationLogEntry[];
  tasks: Array<{ task: Omit<StoredTask, 'status'>; review: boolean }>;
  decisions: ReviewDecision[];
}

/** Parses and verifies an export file (trailer digest, snapshot id); throws IMPORT_INVALID or SNAPSHOT_MISMATCH. */
export function parseExport(text: string, source = 'snapshot file'): ParsedExport {
  const raw = text.endsWith('\n') ? text.slice(0, -1) : text;
  const all = raw.split('\n');
  const trailerLine = all.pop();
  const parse = (line: string | undefined, n: number): Record<string, unknown> => {
    try {
      const v = JSON.parse(line ?? '') as unknown;
      if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error('not an object');
      return v as Record<string, unknown>;
    } catch (error) {
      throw new EnvHarnessError('IMPORT_INVALID', `${source}: line ${n} is not a JSON object`, { cause: error, details: { line: n } });
    }
  };
  const trailer = parse(trailerLine, all.length + 1);
  if (trailer.kind !== 'trailer' || trailer.lines !== all.length) {
    throw new EnvHarnessError('IMPORT_INVALID', `${source}: missing or wrong trailer (is the file truncated?)`, { details: { line: all.length + 1 } });
  }
  if (sha256(all.join('\n')) !== trailer.sha256) {
    throw new EnvHarnessError('SNAPSHOT_MISMATCH', `${source}: content does not match its sha256 trailer; the file was changed or corrupted`);
  }
  const header = parse(all[0], 1);
  if (header.kind !== 'header' || header.format !== EXPORT_FORMAT) {
    throw new EnvHarnessError('IMPORT_INVALID', `${source}: expected a header line with format ${EXPORT_FORMAT}`, { details: { line: 1 } });
  }
  const snapshot = header.snapshot as Snapshot;
  if (snapshotId(snapshotBody(snapshot)) !== snapshot.id) {
    throw new EnvHarnessError('SNAPSHOT_MISMATCH', `${source}: snapshot ${String(snapshot.id).slice(0, 12)} does not hash to its id`);
  }
  const out: ParsedExport = { snapshot, batches: [], log: [], tasks: [], decisions: [] };
  for (let i = 1; i < all.length; i++) {
    const line = parse(all[i], i + 1);
    switch (line.kind) {
      case 'batch':
        out.batches.push(line.manifest as BatchManifest);
        break;
      case 'log':
        out.log.push(line.entry as GenerationLogEntry);
        break;
      case 'task':
        out.tasks.push({ task: line.task as Omit<StoredTask, 'status'>, review: line.review === true });
        break;
      case 'review':
        out.decisions.push(line.decision as ReviewDecision);
        break;
      default:
        throw new EnvHarnessError('IMPORT_INVALID', `${source}: line ${i + 1} has unknown kind ${JSON.stringify(line.kind)}`, { details: { line: i + 1 } });
    }
  }
  return out;
}

/**
 * Imports an export into a store that does not hold its batches yet: batches in order (so tasks get
 * the same seq), then the review trail replayed (so statuses match), then the snapshot record.
 */
export async function importExport(store: Store, parsed: ParsedExport): Promise<Snapshot> {
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
  for (const manifest of parsed.batches) {
    if (existing.has(manifest.id)) continue;
    const tasks = (tasksByBatch.get(manifest.id) ?? []).sort((a, b) => a.task.seq - b.task.seq);
    await store.saveBatch(
      {
        manifest,
        tasks: tasks.map(({ task }) => {
          const { split: _s, batchId: _b, seq: _q, ...plain } = task;
          return plain;
        }),
        log: logByBatch.get(manifest.id) ?? [],
      },
      { review: tasks.filter((t) => t.review).map((t) => t.task.id) },
    );
  }
  for (const decision of parsed.decisions) await store.decideReview(decision);
  await store.saveSnapshot(parsed.snapshot);
  return parsed.snapshot;
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
