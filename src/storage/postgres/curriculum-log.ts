/** The append-only curriculum log shared by `serve` replicas (docs/design/021-replicas.md, "One curriculum"). */
import type pg from 'pg';
import { canonicalize, type CurriculumLog, type CurriculumLogEntry, type JsonValue } from '../../core/index.js';

/** Second key of the advisory lock that serialises appends (the first is the schema's hash). */
const APPEND_LOCK = 0x43757272; // 'Curr'

export type CurriculumLogKind = CurriculumLogEntry['kind'];

export class PostgresCurriculumLog implements CurriculumLog {
  constructor(
    private readonly pool: pg.Pool,
    private readonly schema: string,
    readonly replica: string,
  ) {}

  /** Appends an entry and returns its seq; seq order is commit order (appends are serialised). */
  async append(kind: CurriculumLogKind, body: JsonValue): Promise<number> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1), $2)', [this.schema, APPEND_LOCK]);
      const { rows } = await client.query<{ seq: number }>(
        'INSERT INTO curriculum_log (seq, kind, body, replica) SELECT coalesce(max(seq), 0) + 1, $1, $2, $3 FROM curriculum_log RETURNING seq',
        [kind, canonicalize(body), this.replica],
      );
      await client.query('COMMIT');
      return rows[0]!.seq;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /** Entries after `seq`, in order. */
  async after(seq: number): Promise<CurriculumLogEntry[]> {
    const { rows } = await this.pool.query<{ seq: number; kind: CurriculumLogKind; body: string }>('SELECT seq, kind, body FROM curriculum_log WHERE seq > $1 ORDER BY seq', [seq]);
    return rows.map((r) => ({ seq: r.seq, kind: r.kind, body: JSON.parse(r.body) as JsonValue }));
  }
}
