/** The PostgreSQL `Store` (`pg`): the only module that imports the PostgreSQL driver. */
export { createPostgresStore, PostgresStore, DEFAULT_SCHEMA, type PostgresStoreInfo, type PostgresStoreOptions } from './postgres-store.js';
export { SCHEMA_VERSION } from './schema.js';
