/**
 * Server episodes shared by `serve` replicas on one PostgreSQL database: ownership with a fencing epoch and
 * the Idempotency-Keys of applied steps (docs/design/021-replicas.md). Implements core's `SharedEpisodes`.
 */
import type pg from 'pg';
import { canonicalize, EnvHarnessError, type JsonObject, type SharedEpisodeRow, type SharedEpisodes, type SharedStepKey } from '../../core/index.js';
import { stepKeyOf, type StepKeyRow } from './transition-writer.js';

interface Row {
  id: string;
  token_hash: Buffer;
  body: string;
  task_id: string;
  attempt: number;
  seed: number | null;
  closed: boolean;
  epoch: number;
}

const COLUMNS = 'id, token_hash, body, task_id, attempt, seed, closed, epoch';

/** The shared-episode operations of one replica over the store's pool. */
export class PostgresSharedEpisodes implements SharedEpisodes {
  constructor(
    private readonly pool: pg.Pool,
    readonly replica: string,
    private readonly sidecar: Map<string, StepKeyRow>,
  ) {}

  async create(row: Omit<SharedEpisodeRow, 'epoch' | 'closed'>): Promise<void> {
    await this.pool.query(
      'INSERT INTO server_episodes (id, token_hash, body, task_id, attempt, seed, owner, epoch) VALUES ($1, $2, $3, $4, $5, $6, $7, 1)',
      [row.id, row.tokenHash, canonicalize(row.body), row.taskId, row.attempt, row.seed ?? null, this.replica],
    );
  }

  async load(id: string): Promise<SharedEpisodeRow | undefined> {
    const [row] = (await this.pool.query<Row>(`SELECT ${COLUMNS} FROM server_episodes WHERE id = $1`, [id])).rows;
    return row === undefined ? undefined : fromRow(row);
  }

  async claim(id: string): Promise<SharedEpisodeRow | undefined> {
    const [row] = (
      await this.pool.query<Row>(`UPDATE server_episodes SET owner = $2, epoch = epoch + 1 WHERE id = $1 AND NOT closed RETURNING ${COLUMNS}`, [id, this.replica])
    ).rows;
    return row === undefined ? undefined : fromRow(row);
  }

  async epochOf(id: string): Promise<number | undefined> {
    const [row] = (await this.pool.query<{ epoch: number }>('SELECT epoch FROM server_episodes WHERE id = $1 AND NOT closed', [id])).rows;
    return row?.epoch;
  }

  async saveAttempt(id: string, epoch: number, attempt: { taskId: string; attempt: number; seed: number }): Promise<void> {
    const result = await this.pool.query('UPDATE server_episodes SET task_id = $3, attempt = $4, seed = $5 WHERE id = $1 AND epoch = $2', [
      id,
      epoch,
      attempt.taskId,
      attempt.attempt,
      attempt.seed,
    ]);
    if (result.rowCount === 0) throw lost(id, 'reset');
  }

  async close(id: string, epoch: number): Promise<void> {
    const result = await this.pool.query('UPDATE server_episodes SET closed = true WHERE id = $1 AND epoch = $2', [id, epoch]);
    if (result.rowCount === 0) throw lost(id, 'close');
  }

  async findKey(episodeId: string, key: string): Promise<{ fingerprint: string; reply: string } | undefined> {
    const [row] = (
      await this.pool.query<{ fingerprint: string; reply: string }>(
        'SELECT k.fingerprint, k.reply FROM step_keys k WHERE k.episode_id = $1 AND k.key = $2 ' +
          'AND EXISTS (SELECT 1 FROM transitions t WHERE t.episode_id = k.attempt_id AND t.step = k.step)',
        [episodeId, key],
      )
    ).rows;
    return row;
  }

  /**
   * Attaches a key row to the transition (attemptId, step), which is buffered but not yet flushed: the row
   * commits in the same transaction as the transition, so a key is stored exactly when its step is.
   */
  attachKey(episodeId: string, key: string, value: { fingerprint: string; reply: string; attemptId: string; step: number }): void {
    this.sidecar.set(stepKeyOf(value.attemptId, value.step), { episodeId, key, fingerprint: value.fingerprint, reply: value.reply });
  }
}

function fromRow(row: Row): SharedEpisodeRow {
  return {
    id: row.id,
    tokenHash: row.token_hash,
    body: JSON.parse(row.body) as JsonObject,
    taskId: row.task_id,
    attempt: row.attempt,
    seed: row.seed ?? undefined,
    closed: row.closed,
    epoch: row.epoch,
  };
}

function lost(id: string, operation: string): EnvHarnessError {
  return new EnvHarnessError('STORE_CONFLICT', `episode ${id}: another replica took this episode over; retry the request (it goes to the new owner)`, {
    details: { operation, conflict: 'episode_moved', episodeId: id },
  });
}
