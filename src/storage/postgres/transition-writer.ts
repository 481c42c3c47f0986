/**
 * Group commit of `appendTransitions` calls: calls that arrive while a commit runs are written together in
 * the next transaction (one COPY, one WAL flush), and each call still succeeds or fails alone.
 */
import { pipeline } from 'node:stream/promises';
import type { PoolClient } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { canonicalize, type EpisodeRecord, type Transition } from '../../core/index.js';
import { conflict } from './rows.js';

/** Transitions per group commit: beyond this, later calls wait for the next commit. */
export const MAX_GROUP_TRANSITIONS = 8_192;

/** Runs `fn` in one transaction on one connection: commits when it returns, rolls back when it throws. */
export type RunInTransaction = <T>(fn: (client: PoolClient) => Promise<T>) => Promise<T>;

interface Call {
  transitions: readonly Transition[];
  episodes: readonly EpisodeRecord[];
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** Raised inside a group's transaction when some of its calls hit steps already stored; rolls the group back. */
class GroupConflict extends Error {
  constructor(readonly guilty: Map<Call, Transition>) {
    super('group conflict');
  }
}

/**
 * An Idempotency-Key row that must commit with one transition (replicas: docs/design/021-replicas.md),
 * attached under `stepKeyOf(attemptId, step)` before that transition's flush.
 */
export interface StepKeyRow {
  episodeId: string;
  key: string;
  fingerprint: string;
  reply: string;
}

/** The sidecar key of a transition. */
export function stepKeyOf(episodeId: string, step: number): string {
  return keyOf(episodeId, step);
}

/** One writer per store: commits run one after another, so the calls queued behind a commit share the next. */
export class TransitionWriter {
  private pending: Call[] = [];
  private draining = false;
  /** Group commits so far (for tests and benchmarks). */
  commits = 0;

  constructor(
    private readonly transaction: RunInTransaction,
    /** Key rows to commit with their transition (entries are removed once that transition's call settles). */
    private readonly sidecar: Map<string, StepKeyRow> = new Map(),
    private readonly maxGroup = MAX_GROUP_TRANSITIONS,
  ) {}

  /** Resolves once the call's transitions and episode records are committed; rejects with nothing of it written. */
  append(transitions: readonly Transition[], episodes: readonly EpisodeRecord[]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ transitions, episodes, resolve, reject });
      if (!this.draining) void this.drain();
    });
  }

  /** Resolves when every call queued so far has been committed or refused. */
  async idle(): Promise<void> {
    while (this.draining) await new Promise((r) => setImmediate(r));
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.pending.length > 0) {
        let rows = 0;
        let n = 0;
        while (n < this.pending.length && (n === 0 || rows + this.pending[n]!.transitions.length <= this.maxGroup)) {
          rows += this.pending[n]!.transitions.length;
          n += 1;
        }
        const group = this.pending.splice(0, n);
        await this.commitGroup(group);
      }
    } finally {
      this.draining = false;
    }
  }

  /** Commits the group's valid calls in one transaction; settles every call of it. Never throws. */
  private async commitGroup(group: Call[]): Promise<void> {
    try {
      await this.commitCalls(group);
    } finally {
      if (this.sidecar.size > 0) for (const call of group) for (const t of call.transitions) this.sidecar.delete(keyOf(t.episodeId, t.step));
    }
  }

  private async commitCalls(group: Call[]): Promise<void> {
    let live = this.refuseRepeats(group);
    // COPY is the fast path (no per-row conflict handling); a step already stored makes it fail with a
    // unique violation, and the group is then written again with INSERT ... ON CONFLICT to find the guilty calls.
    let copy = true;
    while (live.length > 0) {
      try {
        const calls = live;
        const viaCopy = copy;
        await this.transaction((client) => this.write(client, calls, viaCopy));
        this.commits += 1;
        for (const call of live) call.resolve();
        return;
      } catch (error) {
        if (copy && isDuplicateStep(error)) {
          copy = false;
          continue;
        }
        if (error instanceof GroupConflict) {
          for (const [call, t] of error.guilty) call.reject(duplicateStep(call, t));
          live = live.filter((call) => !error.guilty.has(call));
          continue;
        }
        if (live.length === 1) {
          live[0]!.reject(error);
          return;
        }
        // Some other failure: each call gets its own transaction, so one bad call cannot fail the others.
        for (const call of live) await this.commitCalls([call]);
        return;
      }
    }
  }

  /**
   * Refuses, before touching the database, calls that repeat a step within themselves or of an earlier
   * call of the group (as if the calls had run one after another). Returns the calls left.
   */
  private refuseRepeats(group: Call[]): Call[] {
    const taken = new Set<string>();
    const live: Call[] = [];
    for (const call of group) {
      const own = new Set<string>();
      const repeat = call.transitions.find((t) => {
        const key = keyOf(t.episodeId, t.step);
        if (taken.has(key) || own.has(key)) return true;
        own.add(key);
        return false;
      });
      if (repeat !== undefined) {
        call.reject(duplicateStep(call, repeat));
        continue;
      }
      for (const key of own) taken.add(key);
      live.push(call);
    }
    return live;
  }

  private async write(client: PoolClient, calls: Call[], viaCopy: boolean): Promise<void> {
    const ids: string[] = [];
    const steps: number[] = [];
    for (const call of calls) {
      for (const t of call.transitions) {
        ids.push(t.episodeId);
        steps.push(t.step);
      }
    }
    if (ids.length > 0 && viaCopy) {
      await copyTransitions(client, calls, ids.length);
    } else if (ids.length > 0) {
      const bodies: string[] = [];
      for (const call of calls) for (const t of call.transitions) bodies.push(canonicalize(t));
      // The columns go in as JSON arrays, not as text[] parameters: pg escapes array literals in JavaScript
      // (~70 µs per 400-byte body), JSON.stringify is native (measured in bench/postgres.bench.ts).
      const inserted = await client.query<{ episode_id: string; step: number }>(
        'INSERT INTO transitions (episode_id, step, body) SELECT u.episode_id, u.step::int, u.body FROM ROWS FROM ' +
          '(json_array_elements_text($1::json), json_array_elements_text($2::json), json_array_elements_text($3::json)) AS u (episode_id, step, body) ' +
          'ON CONFLICT DO NOTHING RETURNING episode_id, step',
        [JSON.stringify(ids), JSON.stringify(steps), JSON.stringify(bodies)],
      );
      if (inserted.rowCount !== ids.length) {
        const written = new Set(inserted.rows.map((r) => keyOf(r.episode_id, r.step)));
        const guilty = new Map<Call, Transition>();
        for (const call of calls) {
          const stored = call.transitions.find((t) => !written.has(keyOf(t.episodeId, t.step)));
          if (stored !== undefined) guilty.set(call, stored);
        }
        throw new GroupConflict(guilty);
      }
    }
    if (this.sidecar.size > 0) {
      const keys: StepKeyRow[] = [];
      const at: Array<[string, number]> = [];
      for (let i = 0; i < ids.length; i++) {
        const row = this.sidecar.get(keyOf(ids[i]!, steps[i]!));
        if (row !== undefined) {
          keys.push(row);
          at.push([ids[i]!, steps[i]!]);
        }
      }
      if (keys.length > 0) {
        await client.query(
          'INSERT INTO step_keys (episode_id, key, fingerprint, attempt_id, step, reply) ' +
            'SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::text[]) ' +
            'ON CONFLICT (episode_id, key) DO UPDATE SET fingerprint = excluded.fingerprint, attempt_id = excluded.attempt_id, ' +
            'step = excluded.step, reply = excluded.reply',
          [keys.map((k) => k.episodeId), keys.map((k) => k.key), keys.map((k) => k.fingerprint), at.map((a) => a[0]), at.map((a) => a[1]), keys.map((k) => k.reply)],
        );
      }
    }
    // The latest record of each episode, in the order episodes first appear (their seq order when new).
    const latest = new Map<string, EpisodeRecord>();
    for (const call of calls) for (const e of call.episodes) latest.set(e.id, e);
    if (latest.size > 0) await upsertEpisodes(client, [...latest.values()]);
  }
}

/** Saves episode records in place (keeping seq), new ones in array order. No id may repeat. */
export async function upsertEpisodes(client: Pick<PoolClient, 'query'>, episodes: readonly EpisodeRecord[]): Promise<void> {
  const columns: [string[], string[], Array<string | null>, string[], number[], string[], string[], string[]] = [[], [], [], [], [], [], [], []];
  for (const e of episodes) {
    columns[0].push(e.id);
    columns[1].push(e.taskId);
    columns[2].push(e.runId ?? null);
    columns[3].push(e.status);
    columns[4].push(e.steps);
    columns[5].push(e.createdAt);
    columns[6].push(e.updatedAt);
    columns[7].push(canonicalize(e));
  }
  await client.query(
    'INSERT INTO episodes (id, task_id, run_id, status, steps, created_at, updated_at, body) ' +
      'SELECT id, task_id, run_id, status, steps, created_at, updated_at, body FROM ' +
      'unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::text[], $7::text[], $8::text[]) ' +
      'WITH ORDINALITY AS u (id, task_id, run_id, status, steps, created_at, updated_at, body, n) ORDER BY n ' +
      'ON CONFLICT (id) DO UPDATE SET task_id = excluded.task_id, run_id = excluded.run_id, status = excluded.status, ' +
      'steps = excluded.steps, created_at = excluded.created_at, updated_at = excluded.updated_at, body = excluded.body',
    columns,
  );
}

/**
 * COPY's text format: one line per row, tab-separated; backslash, tab, newline and carriage return escaped.
 * (Canonical JSON has no raw control characters, so for bodies this only doubles backslashes.)
 */
async function copyTransitions(client: PoolClient, calls: readonly Call[], rows: number): Promise<void> {
  const stream = client.query(copyFrom('COPY transitions (episode_id, step, body) FROM STDIN'));
  await pipeline(function* () {
    // Each row is serialised as it goes into a chunk of ~256 KiB: no array of every body survives to be
    // promoted by the garbage collector (a 4096-row call cost ~2x the CPU per row that way).
    let chunk = '';
    for (const call of calls) {
      for (const t of call.transitions) {
        chunk += `${copyText(t.episodeId)}\t${t.step}\t${copyText(canonicalize(t))}\n`;
        if (chunk.length >= 1 << 18) {
          yield chunk;
          chunk = '';
        }
      }
    }
    if (chunk.length > 0) yield chunk;
  }, stream);
  if (stream.rowCount !== rows) throw new Error(`COPY wrote ${stream.rowCount} of ${rows} transitions`);
}

const COPY_SPECIAL = /[\\\t\n\r]/g;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

function copyText(text: string): string {
  return text.replace(COPY_SPECIAL, (c) => COPY_ESCAPES[c]!);
}

/** A unique violation on the transitions' primary key: some step of the group is already stored. */
function isDuplicateStep(error: unknown): boolean {
  const e = error as { code?: unknown; constraint?: unknown };
  return e.code === '23505' && e.constraint === 'transitions_pkey';
}

function keyOf(episodeId: string, step: number): string {
  return JSON.stringify([episodeId, step]);
}

function duplicateStep(call: Call, t: Transition) {
  const message = `episode ${t.episodeId} already has step ${t.step}; none of the ${call.transitions.length} transitions of this call were written`;
  return conflict('appendTransitions', message, { conflict: 'duplicate_step', episodeId: t.episodeId, step: t.step });
}
