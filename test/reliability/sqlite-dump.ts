/** Test support: a full logical dump of an SQLite database file (every row of every table), for "nothing changed" checks. */
import BetterSqlite3 from 'better-sqlite3';

/**
 * Every row of every table of the database at `file`, in primary-key order, as one string: two dumps are
 * equal exactly when the stored data is. (Triggers a test adds to inject failures are schema, not data.)
 */
export function dumpSqlite(file: string): string {
  const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  try {
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
      .pluck()
      .all() as string[];
    const parts: string[] = [];
    for (const table of tables) {
      const rows = db.prepare(`SELECT * FROM "${table}" ORDER BY rowid`).raw().all();
      parts.push(`${table}\n${rows.map((r) => JSON.stringify(r)).join('\n')}`);
    }
    return parts.join('\n\n');
  } finally {
    db.close();
  }
}

/**
 * Makes every INSERT (or UPDATE) into `table` of the database at `file` fail with an SQLite error from
 * then on, seen by every connection (a real failure inside the writer's transaction); returns the undo.
 */
export function failWritesTo(file: string, table: string, options: { on?: 'INSERT' | 'UPDATE'; when?: string } = {}): () => void {
  const on = options.on ?? 'INSERT';
  const db = new BetterSqlite3(file);
  const name = `inject_fail_${table}_${on.toLowerCase()}`;
  const when = options.when === undefined ? '' : ` WHEN ${options.when}`;
  db.exec(`CREATE TRIGGER "${name}" BEFORE ${on} ON "${table}"${when} BEGIN SELECT RAISE(ABORT, 'injected failure on ${table}'); END`);
  db.close();
  return () => {
    const undo = new BetterSqlite3(file);
    undo.exec(`DROP TRIGGER IF EXISTS "${name}"`);
    undo.close();
  };
}
