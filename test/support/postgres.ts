/**
 * The PostgreSQL server the tests use: `ENVHARNESS_TEST_PG` (a URL of a database the tests may create
 * databases in), set by `.ci/run` after it starts a throwaway cluster. Without it the PostgreSQL tests skip.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The admin URL, or undefined when no test server is configured. */
export const PG_TEST_URL: string | undefined = process.env.ENVHARNESS_TEST_PG || undefined;

/** Why the PostgreSQL tests skipped, and how to run them. */
export const PG_SKIP_MESSAGE =
  'PostgreSQL tests skipped: ENVHARNESS_TEST_PG is not set. Run them with a throwaway cluster: ' +
  'D=$(mktemp -d) && export ENVHARNESS_TEST_PG=$(.ci/postgres.sh start $D) && npx vitest run src/storage/postgres; .ci/postgres.sh stop $D';

/** A new, empty database on the test server (dropped by `drop`), and URLs of fresh schemas in it. */
export interface TestDatabase {
  url: string;
  /** A URL naming a schema not used before in this database. */
  schemaUrl(): string;
  drop(): Promise<void>;
}

export async function createTestDatabase(prefix = 'envh'): Promise<TestDatabase> {
  if (PG_TEST_URL === undefined) throw new Error(PG_SKIP_MESSAGE);
  // Random names: test files run in parallel against the same server and must not share a database.
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_TEST_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(PG_TEST_URL);
  url.pathname = `/${name}`;
  let schemas = 0;
  return {
    url: url.toString(),
    schemaUrl() {
      const u = new URL(url.toString());
      u.searchParams.set('schema', `s${++schemas}`);
      return u.toString();
    },
    async drop() {
      const c = new pg.Client({ connectionString: PG_TEST_URL });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
