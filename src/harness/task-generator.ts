/** Batches through the gates into the store: the generation part of the harness, with its split index and gate hooks. */
import { type BatchRequest, type Domain, type Split, type Store, type Task } from '../core/index.js';
import { generateBatch, MinHashIndex, type GeneratedBatch, type TemplateRegistry } from '../generation/index.js';
import { createDomainGateHooks } from '../runtime/index.js';
import { SplitIndex } from './split-index.js';

/** How a batch is generated (see `Harness.generate`). */
export interface GenerateOptions {
  workers?: number;
  onProgress?: (done: number, total: number) => void;
  /** Modules exporting `templates`, for worker threads. */
  templateModules?: string[];
  /**
   * A module exporting `createGateHooks()` (e.g. `() => createDomainGateHooks(retail)`): worker threads
   * then run the oracle and non-triviality gates themselves instead of the calling thread.
   */
  hookModule?: string;
  /**
   * The pool base: ids of the stored batches this batch deduplicates against (exact and near duplicates),
   * instead of every stored task of its split. With a base the batch depends only on the request and the
   * base, not on what else was stored meanwhile (refill jobs finishing in any order; docs/design/021-replicas.md).
   */
  base?: readonly string[];
}

type GateHooks = ReturnType<typeof createDomainGateHooks>;

/**
 * Generates batches against what the store holds. Its state is derived from the store: the split
 * index is brought up to date on every batch, and the gate hooks depend only on the domain.
 */
export class TaskGenerator {
  private readonly splits: SplitIndex;
  private readonly gates = new Map<string, GateHooks>();

  constructor(
    private readonly store: Store,
    private readonly registry: TemplateRegistry,
    private readonly domains: ReadonlyMap<string, Domain<any>>,
  ) {
    this.splits = new SplitIndex(store);
  }

  /** Generates a batch and stores it (no frozen-split check: the caller's). */
  async generate(request: BatchRequest, options: GenerateOptions = {}): Promise<GeneratedBatch> {
    for (const t of request.templates) this.registry.get(t.id);
    const regression = await this.splits.of('regression');
    const base = options.base !== undefined ? await this.indexBase(request.split, options.base) : undefined;
    const pool = base?.index ?? (request.split === 'regression' ? regression : await this.splits.of(request.split));
    const generated = await generateBatch(request, {
      registry: this.registry,
      hooks: { oracle: (task) => this.gateFor('oracle', task), nonTrivial: (task) => this.gateFor('nonTrivial', task) },
      // Exact duplicates: with a base, only the base's ids (a second run of the same job gives the same batch).
      existingIds: base !== undefined ? (ids) => new Set(ids.filter((id) => base.known.has(id))) : (ids) => this.store.findExistingTaskIds(ids),
      poolIndex: pool,
      regressionIndex: request.split === 'regression' ? undefined : regression,
      workers: options.workers,
      templateModules: options.templateModules,
      ...(options.hookModule === undefined ? {} : { hookModule: options.hookModule }),
      onProgress: options.onProgress,
    });
    await this.store.saveBatch(generated, { review: generated.review });
    // The batch's rows are its accepted tasks in order (read from `taskRows`, which is there only while `tasks` was not read).
    const signatures = generated.signatures;
    const rows = generated.taskRows;
    if (base === undefined && signatures !== undefined && rows !== undefined) {
      await this.splits.addSaved(request.split, generated.manifest.id, rows.map((row) => row.id), signatures);
    }
    // Taken in or not, the caller's batch does not keep them (512 bytes a task).
    delete generated.signatures;
    return generated;
  }

  /** The index of a fixed base: only the base batches' tasks, added in id order (independent of store order). */
  private async indexBase(split: Split, base: readonly string[]): Promise<{ index: MinHashIndex; known: Set<string> }> {
    const tasks = [];
    for (const batchId of new Set(base)) tasks.push(...(await this.store.listTasks({ split, batchId })));
    tasks.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const index = new MinHashIndex();
    for (const task of tasks) index.add(task);
    return { index, known: new Set(tasks.map((t) => t.id)) };
  }

  private gateFor(kind: 'oracle' | 'nonTrivial', task: Task): { ok: true } | { ok: false; reason: string } {
    const domain = this.domains.get(task.domain);
    if (domain === undefined) return { ok: true };
    let gates = this.gates.get(domain.name);
    if (gates === undefined) {
      gates = createDomainGateHooks(domain);
      this.gates.set(domain.name, gates);
    }
    return gates[kind](task);
  }
}
