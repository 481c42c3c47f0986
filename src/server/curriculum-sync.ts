/**
 * One curriculum across replicas: curriculum changes go into the store's append-only log and every replica
 * applies the log in seq order, exactly once each, so every replica (and a replay of the log) reaches the
 * same state. Sampling never waits: a poller applies new entries every `intervalMs`.
 */
import type { EpisodeResult, Harness, JsonValue } from '../index.js';
import type { CurriculumLog, CurriculumLogEntry } from './replicas.js';

/** How often a replica applies entries appended by the others (the bound on its sampling state's age). */
export const CURRICULUM_SYNC_INTERVAL_MS = 100;

/** Outcomes of applied entries kept for `submit` to read (far more than submits in flight). */
const MAX_OUTCOMES = 1024;

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export class CurriculumSync {
  /** The seq of the last entry applied here. */
  applied = 0;
  private chain: Promise<void> = Promise.resolve();
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly outcomes = new Map<number, Outcome>();

  constructor(
    private readonly harness: Harness,
    private readonly log: CurriculumLog,
  ) {}

  /** Appends a change, applies the log up to it, and returns the change's own result (or throws its error). */
  async submit(kind: CurriculumLogEntry['kind'], body: JsonValue): Promise<unknown> {
    const seq = await this.log.append(kind, body);
    // The poller may have applied it already; either way its outcome is kept until read here.
    await this.catchUp();
    const outcome = this.outcomes.get(seq);
    this.outcomes.delete(seq);
    if (outcome === undefined) throw new Error(`curriculum log entry ${seq} was not applied`);
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  }

  /** Applies every entry after `applied`, in order; one catch-up at a time. */
  catchUp(): Promise<void> {
    const run = this.chain.then(async () => {
      for (const entry of await this.log.after(this.applied)) {
        this.outcomes.set(entry.seq, await this.apply(entry));
        this.applied = entry.seq;
        // Outcomes of other replicas' entries are never read: keep only the recent ones.
        if (this.outcomes.size > MAX_OUTCOMES) this.outcomes.delete(this.outcomes.keys().next().value!);
      }
    });
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** Polls the log every `intervalMs` (does not keep the process alive). */
  start(intervalMs = CURRICULUM_SYNC_INTERVAL_MS): void {
    this.timer ??= setInterval(() => void this.catchUp().catch(() => undefined), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * Applies one entry. An entry that fails fails the same way on every replica (the curriculum is
   * deterministic), so it changes nothing anywhere; only the replica that appended it reports the error.
   */
  private async apply(entry: CurriculumLogEntry): Promise<Outcome> {
    const body = entry.body as { strategy?: string; config?: JsonValue; results?: EpisodeResult[] };
    try {
      let value: unknown;
      if (entry.kind === 'use') value = this.harness.useCurriculum(body.strategy as Parameters<Harness['useCurriculum']>[0], body.config as Parameters<Harness['useCurriculum']>[1]);
      else if (entry.kind === 'adjust') value = await this.harness.adjustDifficulty(body.results ?? []);
      else value = await this.harness.updateDistribution(body.results ?? []);
      return { ok: true, value };
    } catch (error) {
      return { ok: false, error };
    }
  }
}

