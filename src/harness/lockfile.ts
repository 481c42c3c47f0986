/** The regression split's lockfile (`envharness.lock.json`): the frozen task ids users commit. */
import { digest, EnvHarnessError, type Store } from '../core/index.js';

export interface Lockfile {
  format: 'envharness.lock/1';
  split: 'regression';
  /** sha256 over the sorted ids. */
  digest: string;
  count: number;
  templates: string[];
  tasks: string[];
}

export interface LockCheck {
  ok: boolean;
  expected: { digest: string; count: number };
  actual: { digest: string; count: number };
  /** In the store but not in the lockfile. */
  added: string[];
  /** In the lockfile but not in the store's active regression split. */
  missing: string[];
}

/** The lockfile content for the store's current active regression split. */
export async function buildLockfile(store: Store): Promise<Lockfile> {
  const entries = await store.listTaskIndex({ split: 'regression', status: 'active' });
  const tasks = entries.map((e) => e.id).sort();
  const templates = [...new Set(entries.map((e) => e.template))].sort();
  return { format: 'envharness.lock/1', split: 'regression', digest: digest(tasks), count: tasks.length, templates, tasks };
}

/** Parses and checks a lockfile's text; the digest must match its ids. */
export function parseLockfile(text: string, source = 'envharness.lock.json'): Lockfile {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new EnvHarnessError('IMPORT_INVALID', `${source} is not JSON: ${(error as Error).message}`, { cause: error });
  }
  const lock = value as Partial<Lockfile>;
  if (lock === null || typeof lock !== 'object' || lock.format !== 'envharness.lock/1') {
    throw new EnvHarnessError('IMPORT_INVALID', `${source}: expected "format": "envharness.lock/1"`, { details: { pointer: '/format' } });
  }
  if (!Array.isArray(lock.tasks) || !lock.tasks.every((t) => typeof t === 'string' && /^[0-9a-f]{64}$/.test(t))) {
    throw new EnvHarnessError('IMPORT_INVALID', `${source}: "tasks" must be a list of sha256 task ids`, { details: { pointer: '/tasks' } });
  }
  const sorted = [...lock.tasks].sort();
  if (digest(sorted) !== lock.digest) {
    throw new EnvHarnessError('LOCKFILE_MISMATCH', `${source} was edited by hand: its digest does not match its task ids; re-run \`envharness split freeze\``, {
      details: { pointer: '/digest' },
    });
  }
  return lock as Lockfile;
}

/** Compares the store's active regression split with a lockfile. */
export async function checkLockfile(store: Store, lock: Lockfile): Promise<LockCheck> {
  const current = await buildLockfile(store);
  const want = new Set(lock.tasks);
  const have = new Set(current.tasks);
  const added = current.tasks.filter((id) => !want.has(id));
  const missing = lock.tasks.filter((id) => !have.has(id)).sort();
  return {
    ok: added.length === 0 && missing.length === 0,
    expected: { digest: lock.digest, count: lock.count },
    actual: { digest: current.digest, count: current.count },
    added,
    missing,
  };
}

export function formatLockfile(lock: Lockfile): string {
  // Pretty, with sorted ids, so diffs in review are readable; the digest is over the ids only.
  return `${JSON.stringify(lock, null, 2)}\n`;
}
