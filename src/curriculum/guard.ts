/** The regression guard: watches the frozen regression set's score and holds (or rolls back) levels when it drops. */
import { EnvHarnessError, type JsonValue } from '../core/index.js';
import { asArray, asBoolean, asNumber, asObject, asString } from './state-io.js';

export interface RegressionGuardOptions {
  /** Evaluate the regression set every this many episodes (see `isDue`). */
  every: number;
  /** A score more than this below the best so far is a regression (about 2 standard errors of the set's score). */
  delta: number;
  /** Return the last good curriculum state on a trigger, to roll back to. */
  rollback?: boolean;
  /** A state from `getState()`. */
  state?: JsonValue;
}

export type GuardAction = 'hold' | 'rollback' | 'release';

/** A trigger (`hold`, `rollback`) or the recovery after one (`release`). */
export interface GuardEvent {
  /** Episode count of the evaluation. */
  at: number;
  score: number;
  best: number;
  action: GuardAction;
}

/** What the caller should do after an evaluation. */
export interface GuardVerdict {
  /** Pass to `curriculum.holdLevels(...)`: true from a trigger until the score recovers. */
  holdLevels: boolean;
  /** Set when this evaluation triggered or released the guard. */
  event?: GuardEvent;
  /** On a `rollback` trigger: the curriculum state of the last good evaluation. */
  rollbackTo?: JsonValue;
}

export interface RegressionGuard {
  readonly every: number;
  readonly delta: number;
  readonly rollback: boolean;
  /** True when `every` episodes have passed since the last evaluation. */
  isDue(episodeCount: number): boolean;
  /** Reports an evaluation of the frozen regression set (score in [0, 1]) and the curriculum state at that point. */
  observe(episodeCount: number, score: number, curriculumState: JsonValue): GuardVerdict;
  readonly isHolding: boolean;
  /** Best score so far, null before the first evaluation. */
  readonly best: number | null;
  events(): GuardEvent[];
  getState(): JsonValue;
}

/**
 * Creates a regression guard. Evaluations within `delta` of the best score are good and remembered; one
 * more than `delta` below triggers a hold (levels stop rising) and, with `rollback`, returns the last good
 * curriculum state; the hold ends when a score is back within `delta` of the best.
 * @example
 * const guard = createRegressionGuard({ every: 200, delta: 0.05, rollback: true });
 * if (guard.isDue(episodes)) {
 *   const verdict = guard.observe(episodes, regressionScore, curriculum.getState());
 *   if (verdict.rollbackTo) curriculum = createCurriculum({ strategy, slices, state: verdict.rollbackTo });
 *   curriculum.holdLevels(verdict.holdLevels);
 * }
 */
export function createRegressionGuard(options: RegressionGuardOptions): RegressionGuard {
  const { every, delta } = options;
  const rollback = options.rollback ?? false;
  if (!Number.isInteger(every) || every < 1) invalid('/every', `must be a positive integer, got ${every}`);
  if (!(delta >= 0 && Number.isFinite(delta))) invalid('/delta', `must be a finite number >= 0, got ${delta}`);

  let best: number | null = null;
  let lastAt: number | null = null;
  let holding = false;
  let lastGood: JsonValue = null;
  let log: GuardEvent[] = [];
  if (options.state !== undefined) {
    const o = asObject(options.state, '');
    best = o.best === null ? null : asNumber(o.best, '/best');
    lastAt = o.lastAt === null ? null : asNumber(o.lastAt, '/lastAt');
    holding = asBoolean(o.holding, '/holding');
    lastGood = o.lastGood ?? null;
    log = asArray(o.events, '/events').map((e, k) => {
      const x = asObject(e, `/events/${k}`);
      const action = asString(x.action, `/events/${k}/action`) as GuardAction;
      return { at: asNumber(x.at, `/events/${k}/at`), score: asNumber(x.score, `/events/${k}/score`), best: asNumber(x.best, `/events/${k}/best`), action };
    });
  }

  return {
    every,
    delta,
    rollback,
    get isHolding() {
      return holding;
    },
    get best() {
      return best;
    },
    isDue: (episodeCount) => episodeCount - (lastAt ?? 0) >= every,
    observe(episodeCount, score, curriculumState) {
      if (typeof score !== 'number' || !Number.isFinite(score)) {
        throw new EnvHarnessError('PARAMS_INVALID', `regression score must be a finite number, got ${score}`, {
          details: { pointer: '/score' },
        });
      }
      lastAt = episodeCount;
      if (best === null || score > best) best = score;
      if (score < best - delta) {
        if (holding) return { holdLevels: true };
        holding = true;
        const action: GuardAction = rollback && lastGood !== null ? 'rollback' : 'hold';
        const event: GuardEvent = { at: episodeCount, score, best, action };
        log.push(event);
        return action === 'rollback' ? { holdLevels: true, event, rollbackTo: lastGood } : { holdLevels: true, event };
      }
      lastGood = curriculumState;
      if (!holding) return { holdLevels: false };
      holding = false;
      const event: GuardEvent = { at: episodeCount, score, best, action: 'release' };
      log.push(event);
      return { holdLevels: false, event };
    },
    events: () => log.map((e) => ({ ...e })),
    getState: () => ({ best, lastAt, holding, lastGood, events: log.map((e) => ({ ...e })) }),
  };
}

function invalid(pointer: string, message: string): never {
  throw new EnvHarnessError('CONFIG_INVALID', `regression guard ${pointer}: ${message}`, { details: { pointer } });
}
