/** The embedded SQLite `Store` (better-sqlite3, WAL): the only module that imports the SQLite driver. */
export { createSqliteStore, SqliteStore, type SqliteStoreInfo, type SqliteStoreOptions } from './sqlite-store.js';
export { SCHEMA_VERSION } from './schema.js';
export type { TransitionWriter } from './sqlite-store.js';
