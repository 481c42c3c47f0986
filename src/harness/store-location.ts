/** A store from a location string (`postgres://...`, `sqlite:<path>`, a path, `:memory:`), each driver loaded on first use. */
import { EnvHarnessError, type Store } from '../core/index.js';
import type { Clock } from './clock.js';

/**
 * Opens a store from a location string: `postgres://...` (or `postgresql://`), `sqlite:<path>`, `<path>`
 * or `:memory:`. Each driver is loaded here, on first use (dynamic import), so that importing `envharness`
 * loads no native module or PostgreSQL driver; pass a `Store` object (`createSqliteStore` from
 * `envharness/sqlite`, `createPostgresStore` from `envharness/postgres`) to choose the adapter yourself.
 */
export async function openStore(location = 'sqlite:.envharness/envharness.db', options: { clock: Clock }): Promise<Store> {
  if (location.startsWith('postgres://') || location.startsWith('postgresql://')) {
    // Loaded only when asked for, so SQLite users never load the PostgreSQL driver.
    const { createPostgresStore } = await import('../storage/postgres/index.js');
    return createPostgresStore(location);
  }
  // A scheme this build does not know is refused, never taken as a file name (`mysql://...` would
  // make a SQLite file named `mysql:`). One letter before the colon is a Windows drive, not a scheme.
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]+):/.exec(location)?.[1];
  if (scheme !== undefined && scheme !== 'sqlite' && location !== ':memory:') {
    throw new EnvHarnessError('CONFIG_INVALID', `unknown store scheme "${scheme}:" in ${location.split('@').pop()}; use sqlite:<path>, a file path, :memory:, or postgres://user@host:port/db`, { details: { pointer: '/store' } });
  }
  const path = location.startsWith('sqlite:') ? location.slice('sqlite:'.length) : location;
  if (path === '') throw new EnvHarnessError('CONFIG_INVALID', 'store location is empty; use sqlite:<path> or :memory:');
  const { createSqliteStore } = await import('../storage/sqlite/index.js');
  return createSqliteStore(path, { now: options.clock });
}
