/** The regression split's freeze: refusing writes to it, the lockfile that hash-locks it, and checks against one. */
import { EnvHarnessError, REGRESSION_FROZEN_META, type Domain, type Store } from '../core/index.js';
import { buildLockfile, checkLockfile, parseLockfile, type LockCheck, type Lockfile } from './lockfile.js';

/**
 * The frozen state of a store's regression split. Frozen unless unfrozen deliberately: a store whose
 * domains ship sets not installed yet counts as frozen too (installing them freezes it), so a refusal
 * needs no install and changes nothing.
 */
export class RegressionSplit {
  constructor(
    private readonly store: Store,
    private readonly domains: ReadonlyMap<string, Domain<any>>,
  ) {}

  /** Whether writes to the regression split are refused. */
  async isFrozen(): Promise<boolean> {
    const frozen = await this.store.getMeta(REGRESSION_FROZEN_META);
    return frozen === true || (frozen !== false && [...this.domains.values()].some((d) => d.regressionSet !== undefined));
  }

  /** SPLIT_FROZEN when the regression split is frozen: writes to it are refused and change nothing. */
  async refuseFrozen(pointer: string): Promise<void> {
    if (!(await this.isFrozen())) return;
    throw new EnvHarnessError(
      'SPLIT_FROZEN',
      'the regression split is frozen (the shipped set is hash-locked when installed); generate into dynamic or heldout, or unfreeze deliberately with `envharness split unfreeze` and re-freeze with `envharness split freeze`',
      { details: { pointer } },
    );
  }

  /** Freezes the split as it is now and returns its lockfile. */
  async lock(): Promise<Lockfile> {
    const lock = await buildLockfile(this.store);
    await this.store.applyWrites([
      { op: 'setMeta', key: REGRESSION_FROZEN_META, value: true },
      { op: 'setMeta', key: 'split.regression.lock', value: { digest: lock.digest, count: lock.count } },
    ]);
    return lock;
  }

  async unfreeze(): Promise<void> {
    await this.store.setMeta(REGRESSION_FROZEN_META, false);
  }

  /** Checks the split against a lockfile's text. */
  async verify(lockfileText: string, source?: string): Promise<LockCheck> {
    return checkLockfile(this.store, parseLockfile(lockfileText, source));
  }
}
