/** A harness's snapshots: build and save the environment version, find one by prefix, restore, export and import. */
import { createRng, EnvHarnessError, type RngState, type Snapshot, type Split, type Store } from '../core/index.js';
import type { TemplateRegistry } from '../generation/index.js';
import type { Clock } from './clock.js';
import { curriculumFrom, type Sampling } from './sampling.js';
import { buildSnapshotBody, diffSnapshots, exportSnapshot, importExport, parseExport, snapshotId, type SnapshotDiff } from './snapshots.js';

/** The snapshot verbs over one store and the harness's sampling state (which restoring replaces). */
export class SnapshotBook {
  constructor(
    private readonly store: Store,
    private readonly registry: TemplateRegistry,
    private readonly sampling: Sampling,
    private readonly clock: Clock,
    /** Reloads the draw pool after a restore. */
    private readonly reloadPool: () => Promise<void>,
  ) {}

  /** The complete environment version now, saved; its id is the digest of its body. */
  async snapshot(options: { label?: string } = {}): Promise<Snapshot> {
    const snapshot = await this.build(options);
    const existing = await this.store.getSnapshot(snapshot.id);
    if (existing !== undefined) return existing;
    await this.store.saveSnapshot(snapshot);
    return snapshot;
  }

  /** The snapshot of the environment now, not saved (for callers that save it with other writes). */
  async build(options: { label?: string } = {}): Promise<Snapshot> {
    const s = this.sampling;
    if (s.curriculum) s.syncCurriculumState();
    const body = await buildSnapshotBody({
      store: this.store,
      templates: this.registry.list().map((t) => ({ id: t.id, sourceDigest: t.sourceDigest })),
      curriculum: s.curriculumState,
      rng: { sampler: s.sampler.getState() },
      config: { seed: s.seed, config: s.config },
    });
    return { ...body, id: snapshotId(body), createdAt: this.clock(), ...(options.label ? { label: options.label } : {}) };
  }

  /** A snapshot by id or unique id prefix. */
  async get(idOrPrefix: string): Promise<Snapshot> {
    const exact = await this.store.getSnapshot(idOrPrefix);
    if (exact !== undefined) return exact;
    const matches = (await this.store.listSnapshots()).filter((s) => s.id.startsWith(idOrPrefix));
    if (matches.length === 1) return matches[0]!;
    throw new EnvHarnessError(
      'SNAPSHOT_NOT_FOUND',
      matches.length === 0 ? `no snapshot ${idOrPrefix}; see \`envharness snapshot list\`` : `snapshot prefix ${idOrPrefix} is ambiguous (${matches.length} match); give more characters`,
      { details: { id: idOrPrefix } },
    );
  }

  /**
   * Restores a snapshot of this store: sampler state, curriculum state and config. The pool must be
   * the snapshot's (same membership digests); otherwise SNAPSHOT_MISMATCH says which split differs.
   */
  async restore(idOrPrefix: string): Promise<Snapshot> {
    const snap = await this.get(idOrPrefix);
    this.checkTemplates(snap);
    const now = await buildSnapshotBody({ store: this.store, templates: [], curriculum: null, rng: {}, config: {} });
    const differing = (Object.keys(snap.pool) as Split[]).filter((s) => snap.pool[s].digest !== now.pool[s].digest);
    if (differing.length > 0) {
      throw new EnvHarnessError(
        'SNAPSHOT_MISMATCH',
        `the pool has changed since snapshot ${snap.id.slice(0, 12)} (splits: ${differing.join(', ')}); import the snapshot's export into a fresh store to go back to it`,
        { details: { splits: differing } },
      );
    }
    await this.adopt(snap);
    return snap;
  }

  /** The snapshot and its pool as one JSONL file (text); the file's sha256 depends only on content. */
  async export(idOrPrefix?: string): Promise<{ snapshot: Snapshot; text: string }> {
    const snap = idOrPrefix === undefined ? await this.snapshot() : await this.get(idOrPrefix);
    return { snapshot: snap, text: await exportSnapshot(this.store, snap) };
  }

  /** Imports an export file into this store and restores it. */
  async import(text: string, source?: string): Promise<Snapshot> {
    // Everything is checked before anything is written, and everything is written in one transaction:
    // a refused or failed import leaves the store as it was.
    const parsed = parseExport(text, source);
    this.checkTemplates(parsed.snapshot);
    const snapshot = await importExport(this.store, parsed, [{ op: 'setMeta', key: 'rng.sampler', value: [...samplerOf(parsed.snapshot)] }]);
    await this.adopt(snapshot, true);
    return snapshot;
  }

  async diff(a: string, b: string): Promise<SnapshotDiff> {
    return diffSnapshots(await this.get(a), await this.get(b));
  }

  /** SNAPSHOT_MISMATCH unless every template version the snapshot names is registered. */
  private checkTemplates(snap: Snapshot): void {
    const known = new Map(this.registry.list().map((t) => [t.id, t.sourceDigest]));
    const missing = snap.templates.filter((t) => known.get(t.id) !== t.sourceDigest);
    if (missing.length > 0) {
      throw new EnvHarnessError(
        'SNAPSHOT_MISMATCH',
        `snapshot ${snap.id.slice(0, 12)} needs template versions this harness does not have: ${missing.map((t) => t.id).join(', ')}`,
        { details: { templates: missing.map((t) => t.id) } },
      );
    }
  }

  /**
   * Takes over a snapshot's state in memory; its one write (`rng.sampler`) is skipped when the caller
   * already wrote it in its own transaction (`written`).
   */
  private async adopt(snap: Snapshot, written = false): Promise<void> {
    // Everything that can throw comes before the in-memory state changes.
    const curriculum = curriculumFrom(snap.curriculum);
    const sampler = samplerOf(snap);
    if (!written) await this.store.setMeta('rng.sampler', [...sampler]);
    this.sampling.adopt(snap, sampler, curriculum);
    await this.reloadPool();
  }
}

/** The sampler state a snapshot restores (what `rng.sampler` is set to). */
function samplerOf(snap: Snapshot): RngState {
  const seed = (snap.config as { seed?: number }).seed ?? 0;
  return createRng(snap.rng.sampler ?? [seed, 'sampler']).getState();
}
