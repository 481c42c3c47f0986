/**
 * Server-side episodes: capability tokens, one step at a time per episode, Idempotency-Key replay,
 * group-committed transitions (a step is answered only once its transition is durable), and the idle reaper.
 */
import { hash, randomInt } from 'node:crypto';
import { canonicalize, createStoreRecorder, depthExceeds, EnvHarnessError, isEnvHarnessError, type JsonValue, type DynamicsOptions, type Episode, type Harness, type JsonObject, type Observation, type Split, type StepResult, type StoredTask } from '../index.js';
import { generateOrderedId, generateToken, hashToken, tokenMatches } from './auth.js';
import { formatPointer, has, isObject, loneSurrogateKey, maySurrogate, parseJsonBody } from './body.js';
import { fail, HttpProblem, problem, problemOf, problemReply, type Problem, type Reply } from './errors.js';
import { createEpisodeRecorder, replayInto, type SharedEpisodes } from './replicas.js';
import type { CreateEpisodeBody, Dynamics, ResetBody } from './schemas.js';
import { stepResultText } from './step-text.js';
import { KeyFingerprints } from './key-fingerprints.js';
import type { Recorder, StoreRecorder } from '../runtime/recorder.js';
import type { StepJournal } from '../storage/sqlite/step-journal.js';

/**
 * Idempotency keys whose replies are remembered per episode (the window; oldest forgotten first). A key
 * older than the window is still known as used, for the episode's life: reusing it is 409
 * IDEMPOTENCY_FORGOTTEN, never a second application.
 */
export const MAX_IDEMPOTENCY_KEYS = 256;
const MAX_KEY_LENGTH = 256;
const JSON_HEADERS = Object.freeze({ 'content-type': 'application/json' });
const REPLAY_HEADERS = Object.freeze({ 'content-type': 'application/json', 'idempotent-replayed': 'true' });

/** Where an episode's tasks come from: one task, or sampling (the curriculum when nothing is pinned). */
export interface EpisodeSource {
  taskId?: string;
  domain?: string;
  taskType?: string;
  level?: number;
  split?: Split;
}

export type ServerEpisodeStatus = 'ready' | 'running' | 'terminated' | 'truncated' | 'closed';

/** What clients see of a server episode. */
export interface EpisodeView {
  id: string;
  status: ServerEpisodeStatus;
  task: { id: string; template: string; domain: string; taskType: string; level: number; split: string };
  slice: string;
  attempt: number;
  attemptId?: string;
  seed?: number;
  steps: number;
  resample: boolean;
  runId?: string;
  createdAt: string;
  lastUsedAt: string;
}

export interface ResetInfo {
  episodeId: string;
  taskId: string;
  template: string;
  domain: string;
  taskType: string;
  level: number;
  slice: string;
  seed: number;
  attempt: number;
}

interface IdempotencyEntry {
  print: RequestPrint;
  /** Undefined while the first request with this key is in flight. */
  reply?: Reply;
}

/**
 * What tells keyed requests apart: the body's fingerprint (`valueFingerprint`), computed only when needed. A small
 * body's text is kept instead: a retry sends the same text (the same request, no hash), and only a key reused
 * with another text compares fingerprints (the same canonical JSON is still the same request).
 */
interface RequestPrint {
  text?: string;
  fingerprint?: string;
}

/** Bodies up to this many characters are remembered by their text (256 keys of an episode keep at most 256 of them). */
const MAX_PRINT_TEXT = 1024;

/** One server episode: a capability over a sequence of attempts (one runtime episode per reset). */
export class ServerEpisode {
  task: StoredTask;
  episode: Episode | undefined;
  attempt = 0;
  seed: number | undefined;
  /** A step, reset or close is in progress (from before the runtime step until its commit). */
  busy = false;
  /** A commit failed after a step was applied: the in-memory state is ahead of the store. */
  broken: EnvHarnessError | undefined;
  closed = false;
  lastUsed: number;
  readonly keys = new Map<string, IdempotencyEntry>();
  /** Keys that fell out of the window: known as used, their replies forgotten (as fingerprints: the set only grows). */
  readonly forgottenKeys = new KeyFingerprints();
  /** Replicas: the fencing epoch this replica holds the episode at (0 without replicas). */
  epoch = 0;

  constructor(
    readonly id: string,
    readonly tokenHash: Buffer,
    readonly source: EpisodeSource,
    readonly resample: boolean,
    readonly options: { runId?: string; agent?: string; dynamics?: Dynamics },
    readonly createdAt: number,
    task: StoredTask,
  ) {
    this.task = task;
    this.lastUsed = createdAt;
  }
}

export interface EpisodeRegistryOptions {
  harness: Harness;
  /** Milliseconds without a request after which an episode is closed and forgotten. */
  idleMs: number;
  /** Milliseconds since the epoch (injected for tests). */
  now: () => number;
  /** Largest number of items in one batched step. */
  maxBatch: number;
  /** Open episodes at most; a create beyond is 429 TOO_MANY_REQUESTS with Retry-After (default: unlimited). */
  maxOpenEpisodes?: number;
  /** Set when replicas share the store: episodes live there, and a replica takes over what it is asked for. */
  shared?: SharedEpisodes;
  /** When a step is answered (docs/http.md, "Durability"); default `committed`. */
  durability?: Durability;
  /**
   * `committed` on a SQLite file store: answer a step once its commit group is written to the store's step
   * journal, and commit to SQLite behind it (default true; docs/http.md, "Durability"). False: commit to
   * SQLite before every answer.
   */
  journal?: boolean;
}

/**
 * `committed` (the default): a step is answered once its transition is durable: written to the SQLite
 * store's step journal (one `write()`, as durable as a commit with `synchronous=NORMAL`), or committed to
 * the store where there is no journal (PostgreSQL, replicas, `synchronous=FULL`, `:memory:`).
 * `relaxed`: a step that does not end its attempt is answered once applied, and its transition is committed
 * at most `RELAXED_COMMIT_MS` later (resets, ends and closes are still committed before their answer).
 * A process crash may lose the last acknowledged steps of that window; a clean shutdown loses nothing.
 */
export type Durability = 'committed' | 'relaxed';

/** Relaxed durability: how long an acknowledged step may wait for its commit. */
export const RELAXED_COMMIT_MS = 10;

/** The parsed envelope of a step: `{ action, expectedStep? }`. */
interface StepEnvelope {
  action: unknown;
  expectedStep?: number;
}

/** What a listener hears: an attempt ended by a committed step, or the episode was closed. */
export type EpisodeEvent = { kind: 'end'; result: StepResult } | { kind: 'close' };

/** What a batched item turned into before the commit. */
interface PendingItem {
  index: number;
  text?: string;
  result?: StepResult;
  ep?: ServerEpisode;
  key?: string;
  print?: RequestPrint;
  /** True when this item holds its episode's busy flag. */
  holds: boolean;
}

const DUMMY_HASH = hashToken('envharness: no such episode');

/**
 * The server's open episodes. Lookups are keyed by (id, token): an unknown id and a wrong token give the
 * same answer, so the API never reveals which episodes exist.
 */
export class EpisodeRegistry {
  private readonly episodes = new Map<string, ServerEpisode>();
  private readonly harness: Harness;
  private readonly now: () => number;
  readonly idleMs: number;
  readonly maxBatch: number;
  readonly maxOpenEpisodes: number;
  /** The commit group being gathered: steps applied in this event-loop turn, committed together in its check phase. */
  private gathering: { waiters: CommitWaiter[]; episodes: number } | undefined;
  /** Episodes in the last commit group (its size decides whether the next step may commit at once, see `commit`). */
  private lastGroup = 0;
  /** A step committed at once in this event-loop turn: later ones of the same turn gather again. */
  private loneThisTurn = false;
  /** Commits under way (flushes not settled). */
  private committing = 0;
  /** Commit groups so far and the episodes they held (`lone`: groups committed without waiting), for tests and benches. */
  readonly commitStats = { groups: 0, episodes: 0, lone: 0 };
  private readonly listeners: Array<(ep: ServerEpisode, event: EpisodeEvent) => void> = [];
  private readonly shared: SharedEpisodes | undefined;
  readonly durability: Durability;
  /** Relaxed durability: episodes with acknowledged steps not yet committed, and the timer that commits them. */
  private later = new Map<Episode, ServerEpisode>();
  private laterTimer: ReturnType<typeof setTimeout> | undefined;
  /** Takeovers in progress on this replica, by id and token. */
  private readonly loading = new Map<string, Promise<void>>();
  /** `committed` on a SQLite file: the store's step journal, and the recorder of every attempt over it. */
  readonly journal: StepJournal | undefined;
  private journalRecorder: StoreRecorder | undefined;

  constructor(options: EpisodeRegistryOptions) {
    this.shared = options.shared;
    this.harness = options.harness;
    this.now = options.now;
    this.idleMs = options.idleMs;
    this.maxBatch = options.maxBatch;
    this.maxOpenEpisodes = options.maxOpenEpisodes ?? Infinity;
    this.durability = options.durability ?? 'committed';
    if (this.durability !== 'committed' && this.durability !== 'relaxed') {
      throw new EnvHarnessError('CONFIG_INVALID', `durability must be "committed" or "relaxed", got ${JSON.stringify(this.durability)}`, { details: { pointer: '/durability' } });
    }
    if (this.durability === 'relaxed' && this.shared !== undefined) {
      // Another replica rebuilds an episode from the store: an acknowledged step not yet there would be lost.
      throw new EnvHarnessError('CONFIG_INVALID', 'durability "relaxed" is not available with replicas sharing a store (a takeover rebuilds episodes from what is committed); use the default', { details: { pointer: '/durability' } });
    }
    // Replicas keep commit-before-answer: another replica rebuilds an episode from what the store holds.
    if (this.durability === 'committed' && this.shared === undefined && options.journal !== false) {
      const store = this.harness.store as { openStepJournal?: () => StepJournal | undefined };
      this.journal = typeof store.openStepJournal === 'function' ? store.openStepJournal() : undefined;
    }
  }

  /** The recorder of new attempts when there is a journal (a fresh one after a failed journal write), else undefined (the harness's). */
  private attemptRecorder(): StoreRecorder | undefined {
    if (this.journal === undefined) return undefined;
    if (this.journalRecorder?.failure !== undefined) this.journalRecorder = undefined;
    this.journalRecorder ??= createStoreRecorder(this.journal, { maxBatch: 1024, maxDelayMs: 20 });
    return this.journalRecorder;
  }

  /** Resolves once the store holds every step acknowledged so far (a read of stored transitions waits for it). */
  settled(): Promise<void> {
    return this.journal?.drain() ?? Promise.resolve();
  }

  /** Calls `listener` after a committed step that ends an attempt, and when an episode is closed (GRPO groups). */
  listen(listener: (ep: ServerEpisode, event: EpisodeEvent) => void): void {
    this.listeners.push(listener);
  }

  private emit(ep: ServerEpisode, event: EpisodeEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(ep, event);
      } catch {
        // A listener's bug must not turn a committed step (or a close) into a failure.
      }
    }
  }

  /** Whether replicas share the store (`resolve` may take an episode over; `authorize` alone is not enough). */
  get replicated(): boolean {
    return this.shared !== undefined;
  }

  /** Open episodes. */
  get size(): number {
    return this.episodes.size;
  }

  /** The episode with this id if `token` is its capability; otherwise undefined (same cost either way). */
  authorize(id: string, token: string | undefined): ServerEpisode | undefined {
    const ep = this.episodes.get(id);
    const ok = tokenMatches(token ?? '', ep?.tokenHash ?? DUMMY_HASH);
    return ep !== undefined && ok && !ep.closed ? ep : undefined;
  }

  /** Whether `ep` (an object this registry handed out with its token) is still open here: `authorize` without hashing the token again. */
  holds(ep: ServerEpisode): boolean {
    return !ep.closed && this.episodes.get(ep.id) === ep;
  }

  /**
   * `authorize` for routes, across replicas: an episode another replica holds (or held when it died) is
   * taken over and rebuilt from its transitions first; a local copy another replica has taken over since is
   * dropped and rebuilt. Without replicas, this is `authorize`.
   */
  async resolve(id: string, token: string | undefined): Promise<ServerEpisode | undefined> {
    const shared = this.shared;
    if (shared === undefined) return this.authorize(id, token);
    const local = this.episodes.get(id);
    if (local !== undefined) {
      // In use here right now: the step in flight decides; the guard answers EPISODE_BUSY meanwhile.
      if (local.busy) return this.authorize(id, token);
      const epoch = await shared.epochOf(id);
      if (epoch === local.epoch && local.broken === undefined) return this.authorize(id, token);
      // Taken over elsewhere, closed elsewhere, or its last commit failed: what the store holds is the truth.
      if (this.episodes.get(id) === local) this.episodes.delete(id);
      if (epoch === undefined) return undefined;
    }
    const slot = `${id}\n${token ?? ''}`;
    let pending = this.loading.get(slot);
    if (pending === undefined) {
      pending = this.takeOver(shared, id, token ?? '').finally(() => this.loading.delete(slot));
      this.loading.set(slot, pending);
    }
    await pending;
    return this.authorize(id, token);
  }

  /** Claims the episode (a new epoch) and rebuilds its current attempt by replaying the stored transitions. */
  private async takeOver(shared: SharedEpisodes, id: string, token: string): Promise<void> {
    const row = await shared.load(id);
    if (!tokenMatches(token, row?.tokenHash ?? DUMMY_HASH) || row === undefined || row.closed) return;
    const claimed = await shared.claim(id);
    if (claimed === undefined) return;
    const body = claimed.body as unknown as { source: EpisodeSource; resample: boolean; options: ServerEpisode['options']; createdAt: number };
    const task = await this.harness.getTask(claimed.taskId);
    const ep = new ServerEpisode(id, claimed.tokenHash, body.source, body.resample, body.options, body.createdAt, task);
    ep.epoch = claimed.epoch;
    if (claimed.attempt > 0 && claimed.seed !== undefined) {
      const attemptId = `${id}:${claimed.attempt}`;
      const recorder = createEpisodeRecorder(this.harness.store);
      const { episode } = await this.harness.openEpisode(this.attemptOptions(ep, task.id, attemptId, recorder));
      replayInto(episode, recorder, claimed.seed, await this.harness.store.listTransitions(attemptId));
      ep.episode = episode;
      ep.attempt = claimed.attempt;
      ep.seed = claimed.seed;
    }
    ep.lastUsed = this.now();
    this.episodes.set(id, ep);
  }

  private attemptOptions(ep: ServerEpisode, taskId: string, episodeId: string, recorder?: Recorder) {
    return {
      taskId,
      episodeId,
      ...(ep.options.runId !== undefined ? { runId: ep.options.runId } : {}),
      ...(ep.options.agent !== undefined ? { agent: ep.options.agent } : {}),
      ...(ep.options.dynamics !== undefined ? { dynamics: ep.options.dynamics as DynamicsOptions } : {}),
      ...(recorder !== undefined ? { recorder } : {}),
    };
  }

  /** The one "not found" problem for an episode route: identical for unknown ids and foreign tokens. */
  notFound(id: string, instance?: string): Problem {
    return problem('EPISODE_NOT_FOUND', `no episode ${truncate(id)} for this token; use the id and token returned when the episode was created`, instance === undefined ? {} : { instance });
  }

  /** Creates an episode (drawing its first task); resets it at once when `seed` is given. */
  async create(body: CreateEpisodeBody): Promise<{ ep: ServerEpisode; token: string; reset?: { observation: Observation; info: ResetInfo } }> {
    refuseWhileStoreFaulted(this.harness);
    if (this.episodes.size >= this.maxOpenEpisodes) {
      throw new HttpProblem(
        problem('TOO_MANY_REQUESTS', `${this.episodes.size} episodes are open, the limit (limits.maxOpenEpisodes) is ${this.maxOpenEpisodes}; close some (DELETE /v1/episodes/{id}) or retry after idle ones are reaped`),
        { 'retry-after': '1' },
      );
    }
    if (body.taskId !== undefined) {
      for (const key of ['domain', 'taskType', 'level', 'split'] as const) {
        if (body[key] !== undefined) throw fail('PARAMS_INVALID', `give either taskId or ${key} (sampling), not both`, `/${key}`);
      }
    }
    if (body.runId !== undefined && (await this.harness.store.getRun(body.runId)) === undefined) {
      throw fail('RUN_NOT_FOUND', `no run ${truncate(body.runId)}; create it with POST /v1/runs`, '/runId');
    }
    const source: EpisodeSource = {};
    if (body.taskId !== undefined) source.taskId = body.taskId;
    if (body.domain !== undefined) source.domain = body.domain;
    if (body.taskType !== undefined) source.taskType = body.taskType;
    if (body.level !== undefined) source.level = body.level;
    if (body.split !== undefined) source.split = body.split as Split;
    if (body.domain !== undefined && !this.harness.domains.has(body.domain)) {
      throw fail('DOMAIN_NOT_FOUND', `no domain ${truncate(body.domain)}; registered: ${[...this.harness.domains.keys()].join(', ') || '(none)'}`, '/domain');
    }
    const task = await this.draw(source, body.taskId !== undefined ? '/taskId' : undefined);
    const token = generateToken('ehe');
    const options: ServerEpisode['options'] = {};
    if (body.runId !== undefined) options.runId = body.runId;
    if (body.agent !== undefined) options.agent = body.agent;
    if (body.dynamics !== undefined) options.dynamics = body.dynamics;
    const now = this.now();
    const ep = new ServerEpisode(generateOrderedId('ep', now), hashToken(token), source, body.resample ?? body.taskId === undefined, options, now, task);
    this.episodes.set(ep.id, ep);
    if (this.shared !== undefined) {
      try {
        const shared = { source, resample: ep.resample, options, createdAt: ep.createdAt } as unknown as JsonObject;
        await this.shared.create({ id: ep.id, tokenHash: ep.tokenHash, body: shared, taskId: task.id, attempt: 0, seed: undefined });
        ep.epoch = 1;
      } catch (error) {
        this.episodes.delete(ep.id);
        throw error;
      }
    }
    if (body.seed === undefined) return { ep, token };
    try {
      return { ep, token, reset: await this.reset(ep, { seed: body.seed }, '/seed') };
    } catch (error) {
      this.episodes.delete(ep.id);
      throw error;
    }
  }

  /** Starts a new attempt: the first reset runs the task drawn at creation; later ones draw again when resampling. */
  async reset(ep: ServerEpisode, body: ResetBody, seedPointer = '/seed'): Promise<{ observation: Observation; info: ResetInfo }> {
    this.guard(ep);
    ep.busy = true;
    try {
      const options = body.options ?? {};
      let task = ep.task;
      const resample = options.resample ?? ep.resample;
      if (options.taskId !== undefined) task = await this.draw({ taskId: options.taskId }, '/options/taskId');
      // Gymnasium's reset(seed=s): the same seed gives the same episode, so a resampling env draws its
      // task from the seed (the first reset too); without a seed, later resets draw anew.
      else if (resample && body.seed !== undefined) task = await this.draw(ep.source, undefined, body.seed);
      else if (ep.attempt > 0 && resample) task = await this.draw(ep.source);
      const previous = ep.episode;
      if (previous !== undefined && previous.status === 'running') await previous.close();
      const attempt = ep.attempt + 1;
      const recorder = this.shared === undefined ? this.attemptRecorder() : createEpisodeRecorder(this.harness.store);
      const { episode } = await this.harness.openEpisode(this.attemptOptions(ep, task.id, `${ep.id}:${attempt}`, recorder));
      // Gymnasium's seed=None: a fresh seed, reported so the attempt can be replayed.
      const seed = body.seed ?? randomInt(0, 2 ** 31 - 1);
      let observation: Observation;
      try {
        observation = episode.reset({ seed });
      } catch (error) {
        if (isEnvHarnessError(error, 'PARAMS_INVALID')) throw fail('PARAMS_INVALID', error.message, seedPointer);
        throw error;
      }
      ep.episode = episode;
      ep.task = task;
      ep.attempt = attempt;
      ep.seed = seed;
      await this.commit([episode], [ep], true);
      // After the attempt's record is stored, so that a replica rebuilding this attempt finds it.
      await this.shared?.saveAttempt(ep.id, ep.epoch, { taskId: task.id, attempt, seed });
      return { observation, info: resetInfo(ep, episode, task, seed, attempt) };
    } finally {
      ep.busy = false;
      ep.lastUsed = this.now();
    }
  }

  /**
   * One step from a raw request body, with Idempotency-Key semantics: the same key and body replay the
   * first reply byte for byte; the same key with another body is 422; a key still in flight is 409.
   */
  async step(ep: ServerEpisode, raw: string, key: string | undefined, instance?: string): Promise<Reply> {
    if (this.shared === undefined) return new Promise<Reply>((resolve) => this.stepNow(ep, raw, key, instance, resolve));
    // The body is parsed once: for the envelope and, with a key, for its fingerprint.
    let body: { value: unknown } | { error: unknown };
    try {
      body = { value: parseJsonBody(raw) };
    } catch (error) {
      body = { error };
    }
    const print = key === undefined ? NO_PRINT : { fingerprint: 'value' in body ? valueFingerprint(body.value, raw) : rawFingerprint(raw) };
    return (await this.applyBody(ep, body, maySurrogate(raw), key, print, instance)).reply;
  }

  /**
   * `step` answering through `answer` (the front's hot path): on a server without replicas it allocates no
   * promise, keyed or not. `answer` may be called before this returns (a refused, replayed or relaxed step).
   */
  stepThen(ep: ServerEpisode, raw: string, key: string | undefined, instance: string, answer: (reply: Reply) => void): void {
    if (this.shared === undefined) return this.stepNow(ep, raw, key, instance, answer);
    this.step(ep, raw, key, instance).then(answer, (error: unknown) => answer(problemReply(problemOf(error, instance))));
  }

  /**
   * `applyBody` for a step on a server without replicas (the hot case): the same checks, Idempotency-Key
   * semantics, application, commit and replies, without its async frames: one waiter in the commit group.
   */
  private stepNow(ep: ServerEpisode, raw: string, key: string | undefined, instance: string | undefined, answer: (reply: Reply) => void): void {
    ep.lastUsed = this.now();
    let print = NO_PRINT;
    if (key !== undefined) {
      const keyProblem = checkKey(key);
      if (keyProblem !== undefined) return answer(problemReply({ ...keyProblem, ...(instance ? { instance } : {}) }));
      print = raw.length <= MAX_PRINT_TEXT ? { text: raw } : { fingerprint: textFingerprint(raw) };
      const prior = replayOf(ep, key, print, instance);
      if (prior !== undefined) return answer(prior);
    }
    let envelope: StepEnvelope;
    try {
      envelope = parseStepEnvelope(parseJsonBody(raw), '', maySurrogate(raw));
      this.guard(ep);
    } catch (error) {
      return answer(remember(ep, key, print, problemReply(problemOf(error, instance))));
    }
    ep.busy = true;
    if (key !== undefined) rememberPending(ep, key, print);
    let applied: StepResult;
    let reply: Reply;
    try {
      applied = applyStep(ep, envelope, '');
      reply = { status: 200, body: stepResultText(applied), headers: JSON_HEADERS as Record<string, string> };
    } catch (error) {
      this.release(ep);
      return answer(remember(ep, key, print, problemReply(problemOf(error, instance))));
    }
    const ended = applied.terminated || applied.truncated;
    if (this.durability === 'relaxed' && !ended) {
      this.commitLater(ep);
      this.release(ep);
      return answer(remember(ep, key, print, reply));
    }
    this.enlist(new StepWaiter(ep, ended, applied, reply, key, print, instance, answer, this.stepCommitted));
  }

  /** A step of `stepNow` is durable (or broke its episode): it ends, its key remembers its reply, and it is answered. */
  private readonly stepCommitted = (waiter: StepWaiter, error: EnvHarnessError | undefined): void => {
    const ep = waiter.ep;
    if (error === undefined && waiter.strict) this.emit(ep, { kind: 'end', result: waiter.applied });
    this.release(ep);
    const reply = error === undefined ? waiter.reply : problemReply(problemOf(error, waiter.instance));
    waiter.answer(remember(ep, waiter.key, waiter.print, reply));
  };

  /** The end of a request on an episode: it takes new work again. */
  private release(ep: ServerEpisode): void {
    ep.busy = false;
    ep.lastUsed = this.now();
  }

  /**
   * `step` for an action already parsed from JSON (the OpenEnv WebSocket): no body text to build and parse
   * again, and the applied result alongside the reply. The key fingerprint is the one `step` gives the
   * body `{"action": ...}`. Without a key, a successful step's reply has an empty body: the caller answers
   * from the result, and the JSON text nobody reads is not built.
   */
  async stepAction(ep: ServerEpisode, action: unknown, key?: string): Promise<{ reply: Reply; result?: StepResult }> {
    const value = { action };
    const print = key === undefined ? NO_PRINT : { fingerprint: valueFingerprint(value, undefined) };
    return this.applyBody(ep, { value }, true, key, print, undefined, key !== undefined);
  }

  private async applyBody(ep: ServerEpisode, body: { value: unknown } | { error: unknown }, scan: boolean, key: string | undefined, print: RequestPrint, instance: string | undefined, withText = true): Promise<{ reply: Reply; result?: StepResult }> {
    ep.lastUsed = this.now();
    if (key !== undefined) {
      const keyProblem = checkKey(key);
      if (keyProblem !== undefined) return { reply: problemReply({ ...keyProblem, ...(instance ? { instance } : {}) }) };
      const prior = replayOf(ep, key, print, instance) ?? (await this.sharedReplay(ep, key, print, instance));
      if (prior !== undefined) return { reply: prior };
    }
    let envelope: StepEnvelope;
    try {
      if ('error' in body) throw body.error;
      envelope = parseStepEnvelope(body.value, '', scan);
      this.guard(ep);
      ep.busy = true;
    } catch (error) {
      const reply = problemReply(problemOf(error, instance));
      remember(ep, key, print, reply);
      return { reply };
    }
    if (key !== undefined) rememberPending(ep, key, print);
    let reply: Reply;
    let result: StepResult | undefined;
    try {
      const applied = applyStep(ep, envelope, '');
      const text = withText ? stepResultText(applied) : '';
      if (key !== undefined) this.attachKey(ep, key, print, applied, text);
      if (this.durability === 'relaxed' && !applied.terminated && !applied.truncated) this.commitLater(ep);
      else await this.commit([ep.episode!], [ep], applied.terminated || applied.truncated);
      reply = { status: 200, body: text, headers: JSON_HEADERS as Record<string, string> };
      result = applied;
      if (applied.terminated || applied.truncated) this.emit(ep, { kind: 'end', result: applied });
    } catch (error) {
      reply = problemReply(problemOf(error, instance));
    } finally {
      ep.busy = false;
      ep.lastUsed = this.now();
    }
    remember(ep, key, print, reply);
    return result === undefined ? { reply } : { reply, result };
  }

  /**
   * Many episodes' steps in one request: each item is authorised, validated and applied on its own (its
   * failure is its own problem); all transitions are committed together before the reply.
   */
  async stepMany(body: unknown, raw?: string): Promise<Reply> {
    if (!isObject(body)) throw fail('PARAMS_INVALID', 'the body must be an object { steps: [...] }', '');
    for (const key of Object.keys(body)) if (key !== 'steps') throw fail('PARAMS_INVALID', `unknown field "${key}"; the body is { steps: [...] }`, formatPointer([key]));
    const steps = body['steps'];
    if (!Array.isArray(steps)) throw fail('PARAMS_INVALID', '"steps" must be an array of { episodeId, token, action, expectedStep?, idempotencyKey? }', has(body, 'steps') ? '/steps' : '');
    if (steps.length === 0 || steps.length > this.maxBatch) throw fail('PARAMS_INVALID', `"steps" must hold 1..${this.maxBatch} items, got ${steps.length}`, '/steps');

    const scan = raw === undefined || maySurrogate(raw);
    const texts: string[] = new Array(steps.length);
    const pending: PendingItem[] = [];
    const touched = new Set<ServerEpisode>();
    for (let i = 0; i < steps.length; i++) {
      const item: unknown = steps[i];
      const base = `/steps/${i}`;
      const out: PendingItem = { index: i, holds: false };
      try {
        if (!isObject(item)) throw fail('PARAMS_INVALID', 'each item must be an object { episodeId, token, action, expectedStep?, idempotencyKey? }', base);
        for (const key of Object.keys(item)) {
          if (!BATCH_ITEM_KEYS.has(key)) throw fail('PARAMS_INVALID', `unknown field "${key}" in a batched step`, `${base}${formatPointer([key])}`);
        }
        const episodeId = item['episodeId'];
        const token = item['token'];
        if (typeof episodeId !== 'string') throw fail('PARAMS_INVALID', '"episodeId" must be a string', has(item, 'episodeId') ? `${base}/episodeId` : base);
        if (typeof token !== 'string') throw fail('PARAMS_INVALID', '"token" must be a string', has(item, 'token') ? `${base}/token` : base);
        const envelope = parseStepEnvelope(item, base, scan);
        const rawKey = item['idempotencyKey'];
        if (rawKey !== undefined && (typeof rawKey !== 'string' || checkKey(rawKey) !== undefined)) {
          throw fail('PARAMS_INVALID', `"idempotencyKey" must be 1..${MAX_KEY_LENGTH} visible ASCII characters`, `${base}/idempotencyKey`);
        }
        const ep = await this.resolve(episodeId, token);
        if (ep === undefined) {
          texts[i] = itemProblem(this.notFound(episodeId));
          continue;
        }
        ep.lastUsed = this.now();
        out.ep = ep;
        if (rawKey !== undefined) {
          out.key = rawKey;
          out.print = { fingerprint: `b:${sha256(canonicalize([envelope.action as unknown as JsonValue, envelope.expectedStep ?? null]))}` };
          const prior = replayOf(ep, rawKey, out.print) ?? (await this.sharedReplay(ep, rawKey, out.print));
          if (prior !== undefined) {
            texts[i] = prior.status === 200 ? prior.body : itemProblem(JSON.parse(prior.body) as Problem);
            continue;
          }
        }
        this.guard(ep);
        ep.busy = true;
        out.holds = true;
        if (out.key !== undefined) rememberPending(ep, out.key, out.print!);
        const result = applyStep(ep, envelope, base);
        out.text = `{"ok":true,"result":${stepResultText(result)}}`;
        out.result = result;
        if (out.key !== undefined) this.attachKey(ep, out.key, out.print!, result, out.text);
        touched.add(ep);
      } catch (error) {
        texts[i] = itemProblem(problemOf(error));
      }
      pending.push(out);
    }

    const failed = new Map<ServerEpisode, Problem>();
    if (touched.size > 0 && this.durability === 'relaxed' && pending.every((item) => item.result === undefined || (!item.result.terminated && !item.result.truncated))) {
      for (const ep of touched) this.commitLater(ep);
    } else if (touched.size > 0) {
      const eps = [...touched];
      try {
        await this.commit(eps.map((ep) => ep.episode!), eps, pending.some((item) => item.result !== undefined && (item.result.terminated || item.result.truncated)));
      } catch (error) {
        const p = problemOf(error);
        for (const ep of eps) failed.set(ep, p);
      }
    }
    for (const item of pending) {
      const ep = item.ep;
      if (item.text !== undefined) texts[item.index] = ep !== undefined && failed.has(ep) ? itemProblem(failed.get(ep)!) : item.text;
      if (ep === undefined) continue;
      if (item.result !== undefined && !failed.has(ep) && (item.result.terminated || item.result.truncated)) this.emit(ep, { kind: 'end', result: item.result });
      if (item.holds) {
        ep.busy = false;
        ep.lastUsed = this.now();
      }
      if (item.key !== undefined && item.holds) {
        const text = texts[item.index]!;
        const transient = item.text === undefined || failed.has(ep) ? isTransientItem(text) : false;
        if (transient) ep.keys.delete(item.key);
        else remember(ep, item.key, item.print!, { status: 200, body: text, headers: REPLAY_HEADERS as Record<string, string> });
      }
    }
    return { status: 200, body: `{"results":[${texts.join(',')}]}`, headers: JSON_HEADERS as Record<string, string> };
  }

  /** The episode as clients see it, with the current attempt's stored transitions when asked. */
  async detail(ep: ServerEpisode, withTransitions: boolean): Promise<{ episode: EpisodeView; transitions?: unknown[] }> {
    ep.lastUsed = this.now();
    const episode = this.view(ep);
    if (!withTransitions) return { episode };
    await this.settled();
    const transitions = ep.episode?.id === undefined ? [] : await this.harness.store.listTransitions(ep.episode.id);
    return { episode, transitions };
  }

  /** Ends the current attempt (recorded as `closed` if it was running) and forgets the episode. */
  async close(ep: ServerEpisode): Promise<EpisodeView> {
    if (ep.busy) throw new EnvHarnessError('EPISODE_BUSY', `episode ${ep.id} is applying another request; close it after that response`);
    return this.forceClose(ep);
  }

  private async forceClose(ep: ServerEpisode): Promise<EpisodeView> {
    ep.busy = true;
    try {
      // Replicas: closed for every replica, unless another one has taken it over (then only forgotten here).
      if (this.shared !== undefined && !(await this.ownsStill(ep))) return { ...this.view(ep), status: 'closed' };
      await this.shared?.close(ep.id, ep.epoch);
      // A broken episode's state is ahead of the store: record nothing more for it.
      if (ep.broken === undefined) {
        await ep.episode?.close();
        await this.journal?.drain();
      }
    } finally {
      ep.busy = false;
      ep.closed = true;
      this.episodes.delete(ep.id);
      this.emit(ep, { kind: 'close' });
    }
    return { ...this.view(ep), status: 'closed' };
  }

  /** Closes every episode idle for `idleMs` or longer; returns how many. */
  async reap(): Promise<number> {
    const now = this.now();
    const idle = [...this.episodes.values()].filter((ep) => !ep.busy && now - ep.lastUsed >= this.idleMs);
    let reaped = 0;
    for (const ep of idle) {
      try {
        await this.close(ep);
      } catch {
        // A store failure while recording `closed`: forget the episode anyway, the reaper must not wedge.
        this.episodes.delete(ep.id);
      }
      reaped++;
    }
    return reaped;
  }

  /** Closes everything (server shutdown); with replicas, only flushes and forgets: the others carry on. */
  async closeAll(): Promise<void> {
    try {
      await this.closeEpisodes();
    } finally {
      // Fed to SQLite and removed; if that fails the file stays, and the next open of the store applies it:
      // said on stderr (the operator's log), not thrown, so that the rest of the shutdown goes on.
      const journal = this.journal;
      await journal?.close().catch((error: unknown) => {
        process.stderr.write(`envharness: step journal ${journal.path}: SQLite did not take ${journal.unfed} entries on shutdown (${error instanceof Error ? error.message : String(error)}); they stay in the journal and the next open of the store applies them\n`);
      });
    }
  }

  private async closeEpisodes(): Promise<void> {
    await this.commitNow();
    if (this.shared !== undefined) {
      for (const ep of [...this.episodes.values()]) {
        await ep.episode?.flush().catch(() => undefined);
        this.episodes.delete(ep.id);
      }
      return;
    }
    for (const ep of [...this.episodes.values()]) {
      try {
        await this.forceClose(ep);
      } catch {
        this.episodes.delete(ep.id);
      }
    }
  }

  view(ep: ServerEpisode): EpisodeView {
    const task = ep.task;
    const episode = ep.episode;
    const status: ServerEpisodeStatus = ep.closed ? 'closed' : episode === undefined ? 'ready' : (episode.status as ServerEpisodeStatus);
    const view: EpisodeView = {
      id: ep.id,
      status,
      task: { id: task.id, template: task.template, domain: task.domain, taskType: task.taskType, level: task.level, split: task.split },
      slice: `${task.domain}/${task.taskType}`,
      attempt: ep.attempt,
      steps: episode?.steps ?? 0,
      resample: ep.resample,
      createdAt: new Date(ep.createdAt).toISOString(),
      lastUsedAt: new Date(ep.lastUsed).toISOString(),
    };
    if (episode?.id !== undefined) view.attemptId = episode.id;
    if (ep.seed !== undefined) view.seed = ep.seed;
    if (ep.options.runId !== undefined) view.runId = ep.options.runId;
    return view;
  }

  /** Whether this replica still holds the episode at its epoch. */
  private async ownsStill(ep: ServerEpisode): Promise<boolean> {
    return this.shared === undefined || (await this.shared.epochOf(ep.id)) === ep.epoch;
  }

  /** Replicas: the reply of a step applied with this key on any replica (its transition is stored). */
  private async sharedReplay(ep: ServerEpisode, key: string, print: RequestPrint, instance?: string): Promise<Reply | undefined> {
    if (this.shared === undefined) return undefined;
    const stored = await this.shared.findKey(ep.id, key);
    if (stored === undefined) return undefined;
    if (stored.fingerprint !== fingerprintOf(print)) {
      return problemReply(problem('IDEMPOTENCY_CONFLICT', `Idempotency-Key ${truncate(key)} was already used with a different request body; use a new key for a new request`, instance === undefined ? {} : { instance }));
    }
    return { status: 200, body: stored.reply, headers: REPLAY_HEADERS as Record<string, string> };
  }

  /** Replicas: the key is stored in the same transaction as the step's transition. */
  private attachKey(ep: ServerEpisode, key: string, print: RequestPrint, result: StepResult, reply: string): void {
    if (this.shared === undefined || ep.episode?.id === undefined) return;
    this.shared.attachKey(ep.id, key, { fingerprint: fingerprintOf(print), reply, attemptId: ep.episode.id, step: result.info.step });
  }

  /** Busy, broken and closed episodes refuse new work. */
  private guard(ep: ServerEpisode): void {
    if (ep.broken !== undefined) throw ep.broken;
    refuseWhileStoreFaulted(this.harness);
    if (ep.busy) throw new EnvHarnessError('EPISODE_BUSY', `episode ${ep.id} is applying another request; retry after its response (with the same Idempotency-Key, retries are safe)`);
  }

  private async draw(source: EpisodeSource, pointer?: string, seed?: number): Promise<StoredTask> {
    let task: StoredTask;
    try {
      task = source.taskId !== undefined
        ? await this.harness.getTask(source.taskId)
        : await this.harness.generateTask({
            ...(source.domain !== undefined ? { domain: source.domain } : {}),
            ...(source.taskType !== undefined ? { taskType: source.taskType } : {}),
            ...(source.level !== undefined ? { level: source.level } : {}),
            ...(source.split !== undefined ? { split: source.split } : {}),
            ...(seed !== undefined ? { seed } : {}),
          });
    } catch (error) {
      if (pointer !== undefined && isEnvHarnessError(error, 'TASK_NOT_FOUND')) throw fail('TASK_NOT_FOUND', error.message, pointer);
      throw error;
    }
    if (!this.harness.domains.has(task.domain)) {
      throw fail('DOMAIN_NOT_FOUND', `task ${task.id.slice(0, 12)} needs domain ${task.domain}, which this server does not have`, pointer);
    }
    return task;
  }

  /** Relaxed durability: the episode's steps so far are committed within RELAXED_COMMIT_MS; a failure breaks it. */
  private commitLater(ep: ServerEpisode): void {
    this.later.set(ep.episode!, ep);
    this.laterTimer ??= setTimeout(() => void this.commitNow(), RELAXED_COMMIT_MS);
  }

  /** Relaxed durability: commits every acknowledged step now (a failure is kept on the episodes it broke). */
  private async commitNow(): Promise<void> {
    if (this.laterTimer !== undefined) clearTimeout(this.laterTimer);
    this.laterTimer = undefined;
    if (this.later.size === 0) return;
    const later = this.later;
    this.later = new Map();
    await this.commit([...later.keys()], [...later.values()]).catch(() => undefined);
  }

  /** `enlist` for a caller that awaits: resolves once durable, rejects with the error that broke the episodes. */
  private commit(episodes: readonly Episode[], owners: readonly ServerEpisode[], strict = false): Promise<void> {
    return new Promise<void>((resolve, reject) => this.enlist({ episodes, owners, strict, done: (error) => (error === undefined ? resolve() : reject(error)) }));
  }

  /**
   * Makes the given episodes' recorded transitions durable, in groups: a step waits for the check phase of
   * the event-loop turn it was read in (one `setImmediate`), so that every step read in the same I/O phase
   * (other connections, pipelined requests) joins one transaction. A step may commit at once instead, when the
   * group it would join is certain to hold only itself: no group is gathering, no commit is under way, no step
   * committed at once earlier in this turn, and the last group held one episode (a lone client; under
   * concurrent load groups are larger, and steps keep waiting). Either way the caller answers only after the
   * commit: acknowledged means durable. With a journal, the flush is the journal's write; `strict` (resets,
   * steps that end an attempt) also waits until SQLite holds it, as without one. The waiter hears the outcome
   * through `done`, not a promise of its own: this runs once per step.
   */
  private enlist(waiter: CommitWaiter): void {
    const stats = this.commitStats;
    if (this.gathering === undefined && this.committing === 0 && !this.loneThisTurn && this.lastGroup === 1) {
      this.loneThisTurn = true;
      setImmediate(this.endTurn);
      this.lastGroup = waiter.episodes.length;
      stats.groups++;
      stats.lone++;
      stats.episodes += waiter.episodes.length;
      this.flushWaiters([waiter]);
      return;
    }
    let group = this.gathering;
    if (group === undefined) {
      this.gathering = group = { waiters: [], episodes: 0 };
      setImmediate(this.gathered);
    }
    group.episodes += waiter.episodes.length;
    group.waiters.push(waiter);
  }

  private readonly endTurn = (): void => {
    this.loneThisTurn = false;
  };

  /** The check phase of the turn a group gathered in: the group is due. */
  private readonly gathered = (): void => {
    const group = this.gathering!;
    this.gathering = undefined;
    this.lastGroup = group.episodes;
    this.commitStats.groups++;
    this.commitStats.episodes += group.episodes;
    this.flushWaiters(group.waiters);
  };

  /**
   * Flushes the waiters' episodes. Waiters whose flush is one promise (every attempt records through the
   * journal's one recorder, whose flushes asked for together share a commit) share one reaction to it.
   */
  private flushWaiters(waiters: readonly CommitWaiter[]): void {
    let first: Promise<unknown> | undefined;
    const firsts: CommitWaiter[] = [];
    let others: Map<Promise<unknown>, CommitWaiter[]> | undefined;
    for (const waiter of waiters) {
      let flushed: Promise<unknown>;
      try {
        // One episode (a step, a reset): its flush alone, without Promise.all's extra turns.
        flushed = waiter.episodes.length === 1 ? waiter.episodes[0]!.flush() : Promise.all(waiter.episodes.map((e) => e.flush()));
      } catch (error) {
        flushed = Promise.reject(error);
      }
      if (first === undefined || flushed === first) {
        first = flushed;
        firsts.push(waiter);
        continue;
      }
      others ??= new Map();
      const same = others.get(flushed);
      if (same === undefined) others.set(flushed, [waiter]);
      else same.push(waiter);
    }
    if (first !== undefined) this.settleOn(first, firsts);
    if (others !== undefined) for (const [flushed, same] of others) this.settleOn(flushed, same);
  }

  /** Tells `waiters` once `flushed` settles (the strict ones once SQLite holds it too); a failure breaks their episodes. */
  private settleOn(flushed: Promise<unknown>, waiters: readonly CommitWaiter[]): void {
    this.committing++;
    const journal = this.journal;
    flushed.then(
      () => {
        let strict: CommitWaiter[] | undefined;
        if (journal !== undefined) for (const waiter of waiters) if (waiter.strict) (strict ??= []).push(waiter);
        if (strict === undefined) {
          this.committing--;
          for (const waiter of waiters) waiter.done(undefined);
          return;
        }
        for (const waiter of waiters) if (!waiter.strict) waiter.done(undefined);
        const held = strict;
        journal!.drain().then(
          () => {
            this.committing--;
            for (const waiter of held) waiter.done(undefined);
          },
          (error: unknown) => this.failed(held, error),
        );
      },
      (error: unknown) => this.failed(waiters, error),
    );
  }

  private failed(waiters: readonly CommitWaiter[], error: unknown): void {
    this.committing--;
    const e = isEnvHarnessError(error) ? error : new EnvHarnessError('STORE_FAILED', `recording failed: ${String(error)}`, { cause: error });
    const broken = new EnvHarnessError(e.code === 'STORE_CONFLICT' ? 'STORE_CONFLICT' : 'STORE_FAILED', `the step was applied but could not be recorded (${e.message}); this episode refuses further requests, create a new one`, { cause: error });
    // Every episode of the failed commit refuses work before any waiter answers (an answer may read the next request).
    for (const waiter of waiters) for (const ep of waiter.owners) ep.broken = broken;
    for (const waiter of waiters) waiter.done(broken);
  }
}

/** What waits for a commit group: its episodes (and their server episodes, broken if the commit fails), and how it hears the outcome. */
interface CommitWaiter {
  episodes: readonly Episode[];
  owners: readonly ServerEpisode[];
  /** Also wait until SQLite holds it (a reset, a step that ends an attempt). */
  strict: boolean;
  /** Called once: undefined when durable, else the error that broke the owners. */
  done: (error: EnvHarnessError | undefined) => void;
}

/**
 * A step of `stepNow` waiting for its commit group: an object of a class rather than a closure per step (run
 * through tsx, as `serve --domain-module x.ts` is, each closure was also named at run time, `Object.defineProperty`
 * on every step's function).
 */
class StepWaiter implements CommitWaiter {
  readonly episodes: readonly Episode[];
  readonly owners: readonly ServerEpisode[];

  constructor(
    readonly ep: ServerEpisode,
    /** The step ended the attempt: also wait until SQLite holds it. */
    readonly strict: boolean,
    readonly applied: StepResult,
    readonly reply: Reply,
    /** The step's Idempotency-Key (and what its body is told apart by), whose reply is remembered once committed. */
    readonly key: string | undefined,
    readonly print: RequestPrint,
    readonly instance: string | undefined,
    readonly answer: (reply: Reply) => void,
    private readonly committed: (waiter: StepWaiter, error: EnvHarnessError | undefined) => void,
  ) {
    this.episodes = [ep.episode!];
    this.owners = [ep];
  }

  done(error: EnvHarnessError | undefined): void {
    this.committed(this, error);
  }
}

const BATCH_ITEM_KEYS = new Set(['episodeId', 'token', 'action', 'expectedStep', 'idempotencyKey']);
const STEP_KEYS = new Set(['action', 'expectedStep']);

/** `{ action, expectedStep? }` from a parsed body (or a batched item, which has more keys). */
function parseStepEnvelope(value: unknown, base: string, scan: boolean): StepEnvelope {
  if (!isObject(value)) throw fail('PARAMS_INVALID', 'the body must be an object { action, expectedStep? }', base);
  if (base === '') {
    for (const key of Object.keys(value)) {
      if (!STEP_KEYS.has(key)) throw fail('PARAMS_INVALID', `unknown field "${key}"; the body is { action, expectedStep? }`, formatPointer([key]));
    }
  }
  if (!has(value, 'action')) throw fail('PARAMS_INVALID', 'missing "action": send { "action": { "type": "tool", "tool": ..., "args": {...} } }', base);
  const bad = scan ? loneSurrogateKey(value['action']) : undefined;
  if (bad !== undefined) throw fail('PARAMS_INVALID', 'a key in the action contains a lone UTF-16 surrogate (it has no canonical JSON form)', `${base}/action${bad}`);
  const expected = value['expectedStep'];
  if (expected !== undefined && !(typeof expected === 'number' && Number.isSafeInteger(expected) && expected >= 1)) {
    throw fail('PARAMS_INVALID', '"expectedStep" must be an integer >= 1 (the step number this action becomes)', `${base}/expectedStep`);
  }
  return expected === undefined ? { action: value['action'] } : { action: value['action'], expectedStep: expected };
}

/** Applies a step synchronously. The caller holds the episode's busy flag. */
function applyStep(ep: ServerEpisode, envelope: StepEnvelope, base: string): StepResult {
  const episode = ep.episode;
  if (episode === undefined) {
    throw new EnvHarnessError('EPISODE_NOT_FOUND', `episode ${ep.id} has not started: POST /v1/episodes/${ep.id}/reset first`);
  }
  if (envelope.expectedStep !== undefined && episode.status === 'running' && envelope.expectedStep !== episode.steps + 1) {
    throw fail('STORE_CONFLICT', `expectedStep ${envelope.expectedStep} but the next step of episode ${ep.id} is ${episode.steps + 1}; this step was already applied or one is missing`, `${base}/expectedStep`, { next: episode.steps + 1 });
  }
  return episode.step(envelope.action);
}

function resetInfo(ep: ServerEpisode, episode: Episode, task: StoredTask, seed: number, attempt: number): ResetInfo {
  return {
    episodeId: episode.id!,
    taskId: task.id,
    template: task.template,
    domain: task.domain,
    taskType: task.taskType,
    level: task.level,
    slice: `${task.domain}/${task.taskType}`,
    seed,
    attempt,
  };
}

/** The stored reply for a key, a 422 for a reused key, a 409 while the first is in flight; undefined for a new key. */
function replayOf(ep: ServerEpisode, key: string, print: RequestPrint, instance?: string): Reply | undefined {
  const prior = ep.keys.get(key);
  if (prior === undefined && !ep.forgottenKeys.has(key)) return undefined;
  const extra = instance === undefined ? {} : { instance };
  if (prior === undefined) {
    return problemReply(
      problem(
        'IDEMPOTENCY_FORGOTTEN',
        `Idempotency-Key ${truncate(key)} was used on this episode more than ${MAX_IDEMPOTENCY_KEYS} keyed requests ago: its reply is no longer remembered, and the request is not applied again; read the episode (GET /v1/episodes/{id}?transitions=true) to see what happened`,
        extra,
      ),
    );
  }
  if (!samePrint(prior.print, print)) {
    return problemReply(problem('IDEMPOTENCY_CONFLICT', `Idempotency-Key ${truncate(key)} was already used with a different request body; use a new key for a new request`, extra));
  }
  if (prior.reply === undefined) {
    return problemReply(problem('EPISODE_BUSY', `the first request with Idempotency-Key ${truncate(key)} is still being applied; retry after it`, extra));
  }
  const headers = { ...prior.reply.headers, 'idempotent-replayed': 'true' };
  return { status: prior.reply.status, body: prior.reply.body, headers };
}

function rememberPending(ep: ServerEpisode, key: string, print: RequestPrint): void {
  ep.keys.set(key, { print });
}

/** Stores a final reply for replay (and returns it); transient failures (busy, 5xx) are forgotten so that a retry runs again. */
function remember(ep: ServerEpisode, key: string | undefined, print: RequestPrint, reply: Reply): Reply {
  if (key === undefined) return reply;
  if (reply.status >= 500 || isBusy(reply)) {
    const entry = ep.keys.get(key);
    if (entry !== undefined && entry.reply === undefined) ep.keys.delete(key);
    return reply;
  }
  ep.keys.delete(key);
  ep.keys.set(key, { print, reply });
  while (ep.keys.size > MAX_IDEMPOTENCY_KEYS) {
    const oldest = ep.keys.keys().next().value!;
    ep.keys.delete(oldest);
    ep.forgottenKeys.add(oldest);
  }
  return reply;
}

function isBusy(reply: Reply): boolean {
  return reply.status === 409 && reply.body.includes('"code":"EPISODE_BUSY"');
}

function isTransientItem(text: string): boolean {
  return text.includes('"code":"EPISODE_BUSY"') || /"status":5\d\d/.test(text);
}

function itemProblem(p: Problem): string {
  return `{"ok":false,"problem":${JSON.stringify(p)}}`;
}

/** Idempotency keys: 1..256 visible ASCII characters (the draft's sf-string). */
function checkKey(key: string): Problem | undefined {
  if (key.length === 0 || key.length > MAX_KEY_LENGTH || !/^[\x21-\x7e]+$/.test(key)) {
    return problem('PARAMS_INVALID', `Idempotency-Key must be 1..${MAX_KEY_LENGTH} visible ASCII characters`);
  }
  return undefined;
}

/**
 * What makes two bodies "the same request" for an Idempotency-Key: their canonical JSON (so whitespace
 * and key order do not matter); a body that is not JSON (or too deep to canonicalize) by its bytes.
 */
/** A parsed body's fingerprint (`raw` is its text, or undefined when it came parsed): its canonical JSON, else its bytes. */
function valueFingerprint(value: unknown, raw: string | undefined): string {
  if (!depthExceeds(value as JsonValue, 64)) {
    try {
      return sha256(canonicalize(value as JsonValue));
    } catch {
      // No canonical form (a lone surrogate in a key): refused anyway, so its bytes identify it.
    }
  }
  return rawFingerprint(raw ?? JSON.stringify(value));
}

/** A body text's fingerprint: `valueFingerprint` of what it parses to, else of its bytes. */
function textFingerprint(raw: string): string {
  let value: unknown;
  try {
    value = parseJsonBody(raw);
  } catch {
    return rawFingerprint(raw);
  }
  return valueFingerprint(value, raw);
}

const NO_PRINT: RequestPrint = Object.freeze({});

function fingerprintOf(print: RequestPrint): string {
  return (print.fingerprint ??= textFingerprint(print.text!));
}

/** The same request: the same body text, else the same fingerprint. */
function samePrint(a: RequestPrint, b: RequestPrint): boolean {
  return (a.text !== undefined && a.text === b.text) || fingerprintOf(a) === fingerprintOf(b);
}

function rawFingerprint(raw: string): string {
  return sha256(`raw:${raw}`);
}

function sha256(text: string): string {
  return hash('sha256', text, 'base64url');
}

function truncate(text: string): string {
  return text.length <= 80 ? text : `${text.slice(0, 77)}...`;
}

/**
 * While the store reports a storage fault (a failed checkpoint or sync, a full disk), no step, reset or
 * new episode is applied: 503 STORE_FAILED saying why, before anything changes (docs/http.md).
 */
export function refuseWhileStoreFaulted(harness: Harness): void {
  const fault = harness.store.fault?.();
  if (fault === undefined) return;
  throw new EnvHarnessError('STORE_FAILED', `storage is failing since ${fault.since} (${fault.operation}: ${fault.code}); writes are refused until it clears, see /v1/health`, {
    details: { operation: fault.operation, sqliteCode: fault.code, fault: true },
  });
}
