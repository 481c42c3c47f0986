/**
 * GRPO groups over HTTP: G episodes that share one drawn task and one seed, whose results reach the
 * curriculum once, as a group, when the last member ends (zero-variance groups reported, and skipped on request).
 */
import { randomInt } from 'node:crypto';
import { z } from '@hono/zod-openapi';
import { createGroupTracker, groupStats, type CurriculumUpdate, type EpisodeResult, type GroupShare, type GroupStats, type Harness, type Observation, type StepResult } from '../index.js';
import { fail } from './errors.js';
import type { EpisodeRegistry, ResetInfo, ServerEpisode } from './episodes.js';
import { CreateEpisodeBodySchema } from './schemas.js';

/** Largest group. */
export const MAX_GROUP_SIZE = 1024;
/** Finished groups remembered for `GET /v1/groups/{id}` (oldest forgotten first). */
export const MAX_FINISHED_GROUPS = 4096;

/** Group ids are chosen by the trainer: 1..128 visible ASCII characters. */
export const GroupIdSchema = z.string().regex(/^[\x21-\x7e]{1,128}$/, 'a group id is 1..128 visible ASCII characters');

/** Body of `POST /v1/groups/{id}/episodes`: how to create one member (the first member's draw fixes the task and seed). */
export const JoinGroupBodySchema = CreateEpisodeBodySchema.omit({ resample: true })
  .extend({
    size: z.number().int().min(1).max(MAX_GROUP_SIZE).describe('G: episodes in the group (every member must send the same size)'),
    skipZeroVariance: z.boolean().optional().describe('do not feed the curriculum when every member scored the same (DAPO dynamic sampling); the group is still reported'),
    report: z.boolean().optional().describe('feed the group result to the active curriculum (default true)'),
  })
  .strict()
  .openapi('JoinGroupBody');
export type JoinGroupBody = z.infer<typeof JoinGroupBodySchema>;

/** What clients see of a group. */
export interface GroupView {
  id: string;
  size: number;
  members: number;
  taskId: string;
  seed: number;
  slice: string;
  level: number;
  /** Ended members' results, in join order (undefined while running). */
  results: Array<EpisodeResult | null>;
  done: boolean;
  stats?: GroupStats;
  /** The group was not fed to the curriculum because it had zero variance and skipping was asked for. */
  skipped?: boolean;
  /** What the curriculum did with the group's results (absent when skipped, not reported, or no curriculum is active). */
  update?: CurriculumUpdate;
}

interface Drawn {
  taskId: string;
  seed: number;
  slice: string;
  level: number;
}

interface Group {
  id: string;
  size: number;
  skipZeroVariance: boolean;
  report: boolean;
  /** Settles once the first member has drawn the task (later members wait on it, so concurrent joins agree). */
  draw?: Promise<Drawn>;
  drawn?: Drawn;
  /** Joins in progress (a slot each, so concurrent joins cannot overfill the group). */
  joining: number;
  members: ServerEpisode[];
  /** Result of each member's first ended attempt, by server episode id (null: closed before it ended). */
  results: Map<string, EpisodeResult | null>;
  done: boolean;
  stats?: GroupStats;
  skipped?: boolean;
  update?: CurriculumUpdate;
}

/** A created member: the episode, its token and its first observation. */
export interface GroupMember {
  ep: ServerEpisode;
  token: string;
  reset: { observation: Observation; info: ResetInfo };
  group: GroupView;
}

/**
 * The server's groups. A group is open until `size` members joined and each ended (or was closed); then its
 * results go to the curriculum in one `adjustDifficulty` call and the zero-variance tracker counts it once.
 */
export class GroupRegistry {
  private readonly open = new Map<string, Group>();
  private readonly finished = new Map<string, Group>();
  private readonly byEpisode = new Map<string, Group>();
  private readonly tracker = createGroupTracker();
  private skippedGroups = 0;

  constructor(
    private readonly harness: Harness,
    private readonly episodes: EpisodeRegistry,
  ) {
    episodes.listen((ep, event) => this.observe(ep, event));
  }

  /** Adds one member to group `id` (creating the group on the first join) and resets it on the group's task and seed. */
  async join(id: string, body: JoinGroupBody): Promise<GroupMember> {
    if (this.finished.has(id)) throw fail('STORE_CONFLICT', `group ${id} is finished; use a new group id for a new group`, '');
    const { size, skipZeroVariance, report, ...create } = body;
    let g = this.open.get(id);
    const first = g === undefined;
    if (g !== undefined) {
      if (g.size !== size) throw fail('PARAMS_INVALID', `group ${id} has size ${g.size}, not ${size}; every member sends the same size`, '/size');
      if (g.members.length + g.joining >= g.size) throw fail('STORE_CONFLICT', `group ${id} already has its ${g.size} members; use a new group id`, '');
    } else {
      g = { id, size, skipZeroVariance: skipZeroVariance ?? false, report: report ?? true, joining: 0, members: [], results: new Map(), done: false };
      this.open.set(id, g);
    }
    const group = g;
    group.joining++;
    try {
      let created: Awaited<ReturnType<EpisodeRegistry['create']>>;
      if (first) {
        // The first member draws (a task id, sampling, or the curriculum) and fixes the seed for all.
        const seed = create.seed ?? randomInt(0, 2 ** 31 - 1);
        const pending = this.episodes.create({ ...create, seed, resample: false });
        group.draw = pending.then((c) => {
          const task = c.ep.task;
          return (group.drawn = { taskId: task.id, seed, slice: `${task.domain}/${task.taskType}`, level: task.level });
        });
        group.draw.catch(() => undefined);
        created = await pending;
      } else {
        const drawn = await group.draw!;
        if (create.taskId !== undefined && create.taskId !== drawn.taskId) throw fail('PARAMS_INVALID', `group ${id} runs task ${drawn.taskId.slice(0, 12)}; leave taskId out or send the same`, '/taskId');
        if (create.seed !== undefined && create.seed !== drawn.seed) throw fail('PARAMS_INVALID', `group ${id} runs seed ${drawn.seed}; leave seed out or send the same`, '/seed');
        const { domain: _d, taskType: _t, level: _l, split: _s, ...rest } = create;
        created = await this.episodes.create({ ...rest, taskId: drawn.taskId, seed: drawn.seed, resample: false });
      }
      group.members.push(created.ep);
      this.byEpisode.set(created.ep.id, group);
      return { ep: created.ep, token: created.token, reset: created.reset!, group: this.viewOf(group) };
    } catch (error) {
      if (first) this.open.delete(id);
      throw error;
    } finally {
      group.joining--;
    }
  }

  /** The group as clients see it, open or finished; undefined when unknown. */
  view(id: string): GroupView | undefined {
    const g = this.open.get(id) ?? this.finished.get(id);
    return g === undefined || g.drawn === undefined ? undefined : this.viewOf(g);
  }

  /** Per slice: groups finished, zero-variance groups (all pass / all fail) and skipped groups. */
  shares(): { slices: Record<string, GroupShare>; skipped: number; open: number } {
    return { slices: this.tracker.shares(), skipped: this.skippedGroups, open: this.open.size };
  }

  private observe(ep: ServerEpisode, event: { kind: 'end'; result: StepResult } | { kind: 'close' }): void {
    const g = this.byEpisode.get(ep.id);
    if (g === undefined || g.done || g.results.has(ep.id)) return;
    if (event.kind === 'close') {
      g.results.set(ep.id, null);
    } else {
      const task = ep.task;
      const info = event.result.info;
      g.results.set(ep.id, {
        slice: `${task.domain}/${task.taskType}`,
        level: task.level,
        success: info.outcome,
        taskId: task.id,
        excluded: info.excludeFromStats === true,
      });
    }
    if (g.members.length === g.size && g.members.every((m) => g.results.has(m.id))) void this.finish(g);
  }

  /** The group's one curriculum update: all ended members' results together, unless skipped for zero variance. */
  private async finish(g: Group): Promise<void> {
    g.done = true;
    this.open.delete(g.id);
    for (const m of g.members) this.byEpisode.delete(m.id);
    this.finished.set(g.id, g);
    while (this.finished.size > MAX_FINISHED_GROUPS) this.finished.delete(this.finished.keys().next().value!);
    // A member closed before it ended counts as excluded: it says nothing about the task's difficulty.
    const results = g.members.map((m) => g.results.get(m.id) ?? { slice: g.drawn!.slice, level: g.drawn!.level, success: 0, taskId: g.drawn!.taskId, excluded: true });
    const stats = groupStats(results);
    g.stats = stats;
    const skip = g.skipZeroVariance && stats.zeroVariance;
    g.skipped = skip;
    this.tracker.record(g.drawn!.slice, stats, skip);
    if (skip) this.skippedGroups++;
    if (skip || !g.report || this.harness.activeCurriculum === undefined) return;
    try {
      g.update = await this.harness.adjustDifficulty(results);
    } catch {
      // The curriculum may have been replaced by one without this slice; the group stays reported, not applied.
    }
  }

  private viewOf(g: Group): GroupView {
    const d = g.drawn!;
    const members = g.members;
    const view: GroupView = {
      id: g.id,
      size: g.size,
      members: members.length,
      taskId: d.taskId,
      seed: d.seed,
      slice: d.slice,
      level: d.level,
      results: members.map((m) => g.results.get(m.id) ?? null),
      done: g.done,
    };
    if (g.stats !== undefined) view.stats = g.stats;
    if (g.skipped !== undefined) view.skipped = g.skipped;
    if (g.update !== undefined) view.update = g.update;
    return view;
  }
}
