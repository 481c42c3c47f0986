/** Run ids: `<kind>-<n>`, a per-store counter, so ids depend on the store's content only (never the clock). */
import type { Store } from '../core/index.js';

/** Hands out run ids; the ids it handed out stay reserved for its lifetime (one harness). */
export class RunIds {
  private readonly reserved = new Set<string>();

  constructor(private readonly store: Store) {}

  /** The next free `<kind>-<n>` of the store, in the order the runs were made. */
  async next(kind: string): Promise<string> {
    const taken = new Set([...(await this.store.listRuns()).map((r) => r.id), ...this.reserved]);
    let n = [...taken].filter((id) => id.startsWith(`${kind}-`)).length + 1;
    while (taken.has(`${kind}-${n}`)) n++;
    // Reserved until the process ends: two runs started together in one harness never share an id.
    this.reserved.add(`${kind}-${n}`);
    return `${kind}-${n}`;
  }
}
