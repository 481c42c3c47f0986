/** The SQLite schema as an ordered list of migrations, tracked in `PRAGMA user_version`. */
import type { Database } from 'better-sqlite3';
import { EnvHarnessError } from '../../core/index.js';

/** One schema step. `version` numbers are 1, 2, 3... in order; a step never changes once released. */
export interface Migration {
  version: number;
  description: string;
  sql: string;
}

/** `PRAGMA application_id` of EnvHarness databases ('EnvH'), so that `file` and we can recognise them. */
export const APPLICATION_ID = 0x456e7648;

/**
 * Conventions: every table is STRICT; JSON columns (`body`, `manifest`, `details`, `data`, `value`) hold
 * RFC 8785 canonical JSON of the whole record; `seq` is the insertion order (the rowid where it can be).
 * Indexes on (a, b) also serve `ORDER BY seq`, because SQLite keeps the rowid as the last index column.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'initial schema: tasks, batches, generation log, reviews, episodes, transitions, snapshots, runs, meta',
    sql: `
      CREATE TABLE meta (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
      ) STRICT;

      CREATE TABLE batches (
        seq      INTEGER PRIMARY KEY,
        id       TEXT NOT NULL UNIQUE,
        split    TEXT NOT NULL,
        manifest TEXT NOT NULL
      ) STRICT;

      CREATE TABLE tasks (
        seq       INTEGER PRIMARY KEY,
        id        TEXT NOT NULL UNIQUE,
        template  TEXT NOT NULL,
        domain    TEXT NOT NULL,
        task_type TEXT NOT NULL,
        level     INTEGER NOT NULL,
        split     TEXT NOT NULL CHECK (split IN ('regression', 'dynamic', 'heldout')),
        status    TEXT NOT NULL CHECK (status IN ('active', 'pending_review', 'rejected')),
        batch_id  TEXT NOT NULL,
        body      TEXT NOT NULL
      ) STRICT;
      CREATE INDEX tasks_by_split_status ON tasks (split, status);
      CREATE INDEX tasks_by_status ON tasks (status);
      CREATE INDEX tasks_by_template_level ON tasks (template, level);
      CREATE INDEX tasks_by_type_level ON tasks (task_type, level);
      CREATE INDEX tasks_by_batch ON tasks (batch_id);

      -- One line per candidate; ordered by (batch seq, idx, rowid).
      CREATE TABLE generation_log (
        seq      INTEGER PRIMARY KEY,
        batch_id TEXT NOT NULL REFERENCES batches (id),
        idx      INTEGER NOT NULL,
        task_id  TEXT NOT NULL,
        template TEXT NOT NULL,
        level    INTEGER NOT NULL,
        accepted INTEGER NOT NULL CHECK (accepted IN (0, 1)),
        gate     TEXT,
        reason   TEXT,
        details  TEXT
      ) STRICT;
      CREATE INDEX generation_log_by_batch ON generation_log (batch_id, idx);

      CREATE TABLE reviews (
        task_id    TEXT PRIMARY KEY REFERENCES tasks (id),
        batch_id   TEXT NOT NULL,
        status     TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'rejected')),
        reviewer   TEXT,
        note       TEXT,
        decided_at TEXT
      ) STRICT;
      CREATE INDEX reviews_by_status ON reviews (status);

      CREATE TABLE review_audit (
        seq      INTEGER PRIMARY KEY,
        task_id  TEXT NOT NULL REFERENCES reviews (task_id),
        decision TEXT NOT NULL CHECK (decision IN ('approved', 'rejected')),
        reviewer TEXT NOT NULL,
        note     TEXT NOT NULL,
        at       TEXT NOT NULL
      ) STRICT;
      CREATE INDEX review_audit_by_task ON review_audit (task_id);

      CREATE TABLE episodes (
        seq        INTEGER PRIMARY KEY,
        id         TEXT NOT NULL UNIQUE,
        task_id    TEXT NOT NULL,
        run_id     TEXT,
        status     TEXT NOT NULL,
        steps      INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        body       TEXT NOT NULL
      ) STRICT;
      CREATE INDEX episodes_by_run ON episodes (run_id);
      CREATE INDEX episodes_by_task ON episodes (task_id);

      -- The primary key refuses a second write of the same step at any isolation level.
      CREATE TABLE transitions (
        episode_id TEXT NOT NULL,
        step       INTEGER NOT NULL,
        body       TEXT NOT NULL,
        PRIMARY KEY (episode_id, step)
      ) STRICT;

      CREATE TABLE snapshots (
        seq        INTEGER PRIMARY KEY,
        id         TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL,
        body       TEXT NOT NULL
      ) STRICT;

      CREATE TABLE runs (
        seq            INTEGER PRIMARY KEY,
        id             TEXT NOT NULL UNIQUE,
        kind           TEXT NOT NULL,
        status         TEXT NOT NULL,
        snapshot_start TEXT NOT NULL,
        created_at     TEXT NOT NULL,
        updated_at     TEXT NOT NULL,
        body           TEXT NOT NULL
      ) STRICT;

      CREATE TABLE run_events (
        run_id TEXT NOT NULL,
        seq    INTEGER NOT NULL,
        kind   TEXT NOT NULL,
        data   TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
      ) STRICT;
      CREATE INDEX run_events_by_kind ON run_events (run_id, kind, seq);

      PRAGMA application_id = ${APPLICATION_ID};
    `,
  },
  {
    version: 2,
    description: 'transitions clustered in write order: episode_keys, and transitions keyed by (episode_seq, step)',
    // Version 1 keyed transitions by (episode_id, step): hash-like episode ids put each concurrent episode's
    // index entry on its own leaf page, so a group commit of N episodes wrote ~N index pages. Now each
    // episode id gets an integer at its first transition (neighbouring for episodes that start together),
    // rows are appended in write order (seq), and the small (episode_seq, step) index still refuses a
    // duplicate step at any isolation level. Every row is kept, with its seq = its old rowid.
    sql: `
      CREATE TABLE episode_keys (
        seq INTEGER PRIMARY KEY,
        id  TEXT NOT NULL UNIQUE
      ) STRICT;
      INSERT INTO episode_keys (id)
        SELECT episode_id FROM transitions GROUP BY episode_id ORDER BY min(rowid);

      CREATE TABLE transitions_v2 (
        seq         INTEGER PRIMARY KEY,
        episode_seq INTEGER NOT NULL REFERENCES episode_keys (seq),
        step        INTEGER NOT NULL,
        body        TEXT NOT NULL
      ) STRICT;
      INSERT INTO transitions_v2 (seq, episode_seq, step, body)
        SELECT t.rowid, k.seq, t.step, t.body FROM transitions t JOIN episode_keys k ON k.id = t.episode_id ORDER BY t.rowid;
      DROP TABLE transitions;
      ALTER TABLE transitions_v2 RENAME TO transitions;
      -- The unique index refuses a second write of the same step at any isolation level.
      CREATE UNIQUE INDEX transitions_by_episode ON transitions (episode_seq, step);
    `,
  },
  {
    version: 3,
    description: 'compact generation log (a summary row per batch plus a row per rejection); task indexes no query uses dropped',
    // Version 2 wrote one generation_log row per candidate: most of a batch's write cost for accepted tasks
    // whose row repeats what the task row says. Now a batch has one generation_summary row (candidates,
    // per-gate rejection counts, accepted entries as runs over its task rows) and generation_entries holds
    // rejections and any entry the summary cannot hold. Old rows all move to generation_entries, with
    // their position in their batch's log as ordinal, so listGenerationLog returns the same entries in the
    // same order. tasks_by_template_level and tasks_by_type_level served no query of the pool path.
    sql: `
      CREATE TABLE generation_summary (
        batch_seq     INTEGER PRIMARY KEY REFERENCES batches (seq),
        candidates    INTEGER NOT NULL,
        accepted      INTEGER NOT NULL,
        rejected      TEXT NOT NULL,
        accepted_runs TEXT NOT NULL
      ) STRICT;
      CREATE TABLE generation_entries (
        seq       INTEGER PRIMARY KEY,
        batch_seq INTEGER NOT NULL REFERENCES batches (seq),
        ordinal   INTEGER NOT NULL,
        idx       INTEGER NOT NULL,
        task_id   TEXT NOT NULL,
        template  TEXT NOT NULL,
        level     INTEGER NOT NULL,
        accepted  INTEGER NOT NULL CHECK (accepted IN (0, 1)),
        gate      TEXT,
        reason    TEXT,
        details   TEXT
      ) STRICT;
      INSERT INTO generation_entries (seq, batch_seq, ordinal, idx, task_id, template, level, accepted, gate, reason, details)
        SELECT g.seq, b.seq, row_number() OVER (PARTITION BY g.batch_id ORDER BY g.seq) - 1,
               g.idx, g.task_id, g.template, g.level, g.accepted, g.gate, g.reason, g.details
        FROM generation_log g JOIN batches b ON b.id = g.batch_id ORDER BY g.seq;
      DROP TABLE generation_log;
      CREATE INDEX generation_entries_by_batch ON generation_entries (batch_seq, idx, ordinal);
      DROP INDEX tasks_by_template_level;
      DROP INDEX tasks_by_type_level;
    `,
  },
  {
    version: 4,
    description: "gate rejections as Problems: each rejection's code and pointer (its message is the reason)",
    // Rows written before hold a reason only: their code is what this version's gates give that reason
    // (the texts are the gate runner's own), their pointer the schema gate's details.pointer (or, for a
    // template check, its first problem's pointer).
    sql: `
      ALTER TABLE generation_entries ADD COLUMN code TEXT;
      ALTER TABLE generation_entries ADD COLUMN pointer TEXT;
      UPDATE generation_entries SET
        code = CASE gate
          WHEN 'schema' THEN CASE
            WHEN reason LIKE 'could not instantiate:%' THEN 'INSTANTIATE_FAILED'
            WHEN reason LIKE 'template % check:%' THEN 'TEMPLATE_CHECK'
            ELSE 'TASK_SCHEMA' END
          WHEN 'exact_duplicate' THEN CASE
            WHEN reason LIKE 'same task id as candidate%' THEN 'DUPLICATE_IN_BATCH'
            WHEN reason = 'this task is already in the store' THEN 'ALREADY_STORED'
            ELSE 'ALREADY_IN_POOL' END
          WHEN 'near_duplicate' THEN 'NEAR_DUPLICATE'
          WHEN 'leakage' THEN 'LEAKS_REGRESSION'
          WHEN 'oracle' THEN CASE WHEN reason LIKE 'oracle check failed to run:%' THEN 'GATE_ERROR' ELSE 'ORACLE_FAILED' END
          WHEN 'non_trivial' THEN CASE WHEN reason LIKE 'non_trivial check failed to run:%' THEN 'GATE_ERROR' ELSE 'TRIVIAL' END
          ELSE 'GATE_ERROR' END,
        pointer = CASE WHEN gate = 'schema' AND json_valid(details) THEN coalesce(json_extract(details, '$.pointer'), json_extract(details, '$.problems[0].pointer')) END
      WHERE accepted = 0 AND reason IS NOT NULL;
    `,
  },
  {
    version: 5,
    description: 'task watermark: the number of task rows and a count of their updates and deletions',
    // A draw syncs its pool with the store first. Reading this one row tells it whether anything changed
    // (by any connection or process), instead of re-reading the index and the review audit per draw.
    // Inserts add to `rows` once per write (writeBatch, writeTasks): a per-row trigger cost 2-5 µs per task
    // row, about half of the insert itself. Updates and deletions are rare and counted by triggers.
    sql: `
      CREATE TABLE task_watermark (
        id      INTEGER PRIMARY KEY CHECK (id = 0),
        rows    INTEGER NOT NULL,
        changes INTEGER NOT NULL
      ) STRICT;
      INSERT INTO task_watermark (id, rows, changes) SELECT 0, count(*), 0 FROM tasks;
      CREATE TRIGGER tasks_watermark_update AFTER UPDATE ON tasks BEGIN
        UPDATE task_watermark SET changes = changes + 1 WHERE id = 0;
      END;
      CREATE TRIGGER tasks_watermark_delete AFTER DELETE ON tasks BEGIN
        UPDATE task_watermark SET rows = rows - 1, changes = changes + 1 WHERE id = 0;
      END;
    `,
  },
  {
    version: 6,
    description: 'segment keys: an episode gets an episode_keys row per 64 steps, (id, segment) unique, and transitions are re-keyed by it',
    // Version 2 gave each episode one key, so a long episode's (episode_seq, step) index entries spread over
    // leaf pages of their own and a commit of N running episodes wrote about one index page per episode.
    // Now the key is of (id, step / 64): running episodes' current segments all have recent keys, and their
    // entries share the index's last pages; (segment key, step) is still unique, so a duplicate step is
    // refused at any isolation level. Every row is kept with its seq and re-keyed by its segment (64 is
    // SEGMENT_STEPS in transitions.ts); keys are given in first-write order. Keys left with no transitions
    // (deleted episodes) are not carried over: an episode's next transition makes a new one.
    // The new tables reference each other until the renames, so no foreign key ever points at a dropped table.
    sql: `
      CREATE TABLE episode_keys_v6 (
        seq     INTEGER PRIMARY KEY,
        id      TEXT NOT NULL,
        segment INTEGER NOT NULL,
        UNIQUE (id, segment)
      ) STRICT;
      INSERT INTO episode_keys_v6 (id, segment)
        SELECT k.id, t.step / 64 FROM transitions t JOIN episode_keys k ON k.seq = t.episode_seq
        GROUP BY k.id, t.step / 64 ORDER BY min(t.seq);
      CREATE TABLE transitions_v6 (
        seq         INTEGER PRIMARY KEY,
        episode_seq INTEGER NOT NULL REFERENCES episode_keys_v6 (seq),
        step        INTEGER NOT NULL,
        body        TEXT NOT NULL
      ) STRICT;
      INSERT INTO transitions_v6 (seq, episode_seq, step, body)
        SELECT t.seq, n.seq, t.step, t.body FROM transitions t
          JOIN episode_keys k ON k.seq = t.episode_seq
          JOIN episode_keys_v6 n ON n.id = k.id AND n.segment = t.step / 64
        ORDER BY t.seq;
      DROP TABLE transitions;
      DROP TABLE episode_keys;
      ALTER TABLE episode_keys_v6 RENAME TO episode_keys;
      ALTER TABLE transitions_v6 RENAME TO transitions;
      -- The unique index refuses a second write of the same step at any isolation level.
      CREATE UNIQUE INDEX transitions_by_episode ON transitions (episode_seq, step);
    `,
  },
  {
    version: 7,
    description: 'tasks name their batch by an integer key (batch_keys) instead of the 64-character batch id',
    // Until now each task row and its tasks_by_batch entry held the batch id, 64 characters of hex: ~130
    // bytes a task, written to the WAL and again by the checkpoint. Now a batch id gets an integer the first
    // time a task names it (a task's batch need not be a stored batch: putTasks imports), and the row and
    // index hold that. Keys are given in the order of each batch's first task; rows keep their seq. Giving
    // a row its key changes no task, so the watermark's update trigger is off while the rows are keyed.
    sql: `
      CREATE TABLE batch_keys (
        seq INTEGER PRIMARY KEY,
        id  TEXT NOT NULL UNIQUE
      ) STRICT;
      INSERT INTO batch_keys (id) SELECT batch_id FROM tasks GROUP BY batch_id ORDER BY min(seq);
      DROP TRIGGER tasks_watermark_update;
      DROP INDEX tasks_by_batch;
      ALTER TABLE tasks ADD COLUMN batch_key INTEGER NOT NULL DEFAULT 0;
      UPDATE tasks SET batch_key = (SELECT k.seq FROM batch_keys k WHERE k.id = tasks.batch_id);
      ALTER TABLE tasks DROP COLUMN batch_id;
      CREATE INDEX tasks_by_batch ON tasks (batch_key);
      CREATE TRIGGER tasks_watermark_update AFTER UPDATE ON tasks BEGIN
        UPDATE task_watermark SET changes = changes + 1 WHERE id = 0;
      END;
    `,
  },
  {
    version: 8,
    description: "episodes indexed by task through a key of at most 4 bytes (the task id's first 8 hex digits as bytes), not the whole id",
    // Until now each episode's episodes_by_task entry held the 64-character task id (~75 bytes): with many tasks
    // those entries were the largest part of an episode row's write after its body (docs/storage.md, "Migrations").
    // The key is the first 8 characters of the id decoded from hex (4 bytes), or the whole id when they are not
    // hex; a query by task compares the key and then the id (TRANSITION_SQL.episodeTaskKey), so ids that share a
    // key only share index entries. Only the index changes: no row is rewritten.
    sql: `
      DROP INDEX episodes_by_task;
      CREATE INDEX episodes_by_task ON episodes (coalesce(unhex(substr(task_id, 1, 8)), task_id));
    `,
  },
];

/** The schema version this code writes: the last migration's. */
export const SCHEMA_VERSION: number = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/**
 * Brings a database up to the last migration: each pending step runs in its own `BEGIN IMMEDIATE`
 * transaction together with its `user_version` bump, so a crash leaves the schema at a whole version.
 * Returns the versions applied (empty when the schema was already current).
 */
export function migrate(db: Database, migrations: readonly Migration[] = MIGRATIONS): number[] {
  const latest = migrations.length === 0 ? 0 : migrations[migrations.length - 1]!.version;
  checkOwnership(db);
  const found = userVersion(db);
  if (found > latest) {
    throw new EnvHarnessError(
      'STORE_FAILED',
      `sqlite store ${db.name}: the database has schema version ${found}, newer than this EnvHarness supports ` +
        `(${latest}); upgrade envharness, or open a copy made by this version`,
      { details: { operation: 'open', schemaVersion: found, supported: latest } },
    );
  }
  const applied: number[] = [];
  for (const migration of migrations) {
    if (migration.version <= found) continue;
    const apply = db.transaction(() => {
      // Another process may have migrated between our read and our write lock.
      if (userVersion(db) >= migration.version) return;
      db.exec(migration.sql);
      db.pragma(`user_version = ${migration.version}`);
      applied.push(migration.version);
    });
    try {
      apply.immediate();
    } catch (error) {
      throw new EnvHarnessError(
        'STORE_FAILED',
        `sqlite store ${db.name}: migration ${migration.version} (${migration.description}) failed and was rolled back: ${messageOf(error)}`,
        { cause: error, details: { operation: 'migrate', version: migration.version } },
      );
    }
  }
  return applied;
}

export function userVersion(db: Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}

/** Refuses SQLite files that belong to something else, before we add tables to them. */
function checkOwnership(db: Database): void {
  const appId = db.pragma('application_id', { simple: true }) as number;
  if (appId === APPLICATION_ID) return;
  const tables = db.prepare(`SELECT count(*) FROM sqlite_schema WHERE type = 'table'`).pluck().get() as number;
  if (appId !== 0 || tables > 0) {
    throw new EnvHarnessError(
      'STORE_FAILED',
      `sqlite store ${db.name}: not an EnvHarness database (application_id ${appId}, ${tables} tables); ` +
        'choose another file, e.g. .envharness/envharness.db',
      { details: { operation: 'open', applicationId: appId } },
    );
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
