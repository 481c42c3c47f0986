/** Installing the domains' shipped regression sets: per domain, when a command first needs it, from the build's data or by generating. */
import { digest, EnvHarnessError, type BatchRequest, type Domain, type Store } from '../core/index.js';
import type { GeneratedBatch, TemplateRegistry } from '../generation/index.js';
import { readRegressionSet } from './prebuilt.js';

/** What the installer needs of the harness. */
export interface RegressionHost {
  store: Store;
  registry: TemplateRegistry;
  domains: ReadonlyMap<string, Domain<any>>;
  /** Generates a batch through every gate and stores it (the frozen-split check is the installer's to skip). */
  generate(request: BatchRequest): Promise<GeneratedBatch>;
  /** Stores a batch that was checked already (a shipped one) and adds its active tasks to the pool. */
  save(batch: GeneratedBatch): Promise<void>;
  /** Freezes the regression split and records its lock (Harness.freezeRegression). */
  freeze(): Promise<void>;
}

/** The installer of one harness: `install(domains)` makes sure their shipped sets are in the store. */
export interface RegressionInstaller {
  /**
   * Installs the shipped regression set of each of `domains` (default: every registered one) that the
   * store lacks, and freezes the split if it installed any. Returns the domains it installed.
   */
  install(domains?: readonly string[]): Promise<InstalledSet[]>;
}

/** A regression set the installer put into the store, and where it came from. */
export interface InstalledSet {
  domain: string;
  source: 'shipped' | 'generated';
  /** Its batches as stored (what the build writes to `dist/prebuilt`). */
  batches: GeneratedBatch[];
}

/**
 * Creates the installer. A store gets a domain's set the first time a command uses the domain (generating
 * into it, evaluating or training on it, drawing from its regression split) or the split as a whole
 * (freeze, unfreeze, verify, review), never before: a command on one domain does not install another's.
 * A set comes from the build's data (`dist/prebuilt`, checked record by record, src/harness/prebuilt.ts)
 * when that was made by the template versions registered now, else it is generated; either way its
 * digest must be the one the domain pins, and the split is frozen once it is in. The check runs at
 * installation only; afterwards the store's own lock governs (`split verify`, `doctor`).
 */
export function createRegressionInstaller(host: RegressionHost, options: { prebuilt?: string | undefined } = {}): RegressionInstaller {
  // Domains known to be installed in this store (checked once per harness), and one install at a time.
  const present = new Set<string>();
  let queue: Promise<unknown> = Promise.resolve();

  async function installNow(names: readonly string[]): Promise<InstalledSet[]> {
    const wanted = names.filter((name) => !present.has(name) && host.domains.get(name)?.regressionSet !== undefined);
    if (wanted.length === 0) return [];
    const stored = await host.store.listTaskIndex({ split: 'regression' });
    const installed: InstalledSet[] = [];
    try {
      for (const name of wanted) {
        const recipe = host.domains.get(name)!.regressionSet!;
        if (stored.some((e) => e.domain === name)) {
          present.add(name);
          continue;
        }
        const shipped = readRegressionSet(options.prebuilt, name, host.registry);
        if (shipped !== undefined) {
          // The pinned digest is checked before anything is written: a consistent but different file is refused too.
          const ids = shipped.flatMap((b) => b.tasks.filter((t) => !b.review.includes(t.id)).map((t) => t.id)).sort();
          if (digest(ids) !== recipe.digest) {
            throw new EnvHarnessError(
              'LOCKFILE_MISMATCH',
              `the shipped ${name} regression set (${ids.length} tasks, digest ${digest(ids).slice(0, 12)}) is not the one the domain pins (digest ${recipe.digest.slice(0, 12)}); reinstall the package`,
              { details: { domain: name } },
            );
          }
          for (const batch of shipped) await host.save(batch);
        }
        const batches = shipped ?? [];
        if (shipped === undefined) for (const request of recipe.batches) batches.push(await host.generate({ ...request, split: 'regression' }));
        const ids = (await host.store.listTaskIndex({ split: 'regression', status: 'active' }))
          .filter((e) => e.domain === name)
          .map((e) => e.id)
          .sort();
        if (digest(ids) !== recipe.digest) {
          throw new EnvHarnessError(
            'LOCKFILE_MISMATCH',
            `the ${name} regression set ${shipped !== undefined ? 'shipped with this build' : 'generated here'} (${ids.length} tasks, digest ${digest(ids).slice(0, 12)}) is not the one the domain pins (digest ${recipe.digest.slice(0, 12)}): ${shipped !== undefined ? 'the build is inconsistent; reinstall the package' : 'generation is not reproducing on this machine; report it with `envharness doctor`'}`,
            { details: { domain: name } },
          );
        }
        present.add(name);
        installed.push({ domain: name, source: shipped !== undefined ? 'shipped' : 'generated', batches });
      }
    } finally {
      // What did install is frozen even when a later domain's set is refused.
      if (installed.length > 0) await host.freeze();
    }
    return installed;
  }

  return {
    install(domains) {
      const run = queue.then(() => installNow(domains ?? [...host.domains.keys()]));
      queue = run.catch(() => undefined);
      return run;
    },
  };
}
