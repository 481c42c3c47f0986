/** One OpenEnv environment session: a sequence of server episodes (one per reset) behind OpenEnv's reset/step/state. */
import { randomInt } from 'node:crypto';
import { EnvHarnessError, type Observation, type StepResult, type ToolSpec } from '../../index.js';
import { parseWith } from '../body.js';
import { HttpProblem, type Problem } from '../errors.js';
import type { EpisodeRegistry, ServerEpisode } from '../episodes.js';
import { JoinGroupBodySchema, type GroupRegistry } from '../groups.js';
import { CreateEpisodeBodySchema } from '../schemas.js';
import { resetResult, stepMessage, stepResult, stepResultText, toAction, toolsResult, type OpenEnvResult, type ResetRequest, type SessionContext } from './messages.js';

/** The registries a session works on. */
export interface SessionDeps {
  episodes: EpisodeRegistry;
  groups: GroupRegistry;
}

/** An OpenEnv session. Not re-entrant: callers serialise its calls (the WebSocket handler queues messages). */
export class OpenEnvSession {
  ep: ServerEpisode | undefined;
  private token = '';
  private ctx: SessionContext | undefined;
  private tools: ToolSpec[] = [];
  private steps = 0;
  lastUsed: number;

  constructor(
    private readonly deps: SessionDeps,
    now: number,
    /** The id clients send back as `episode_id` (HTTP); undefined: the server episode's id. */
    readonly key?: string,
  ) {
    this.lastUsed = now;
  }

  /** Ends the current episode (recorded as closed if running) and starts a new one on the requested task. */
  async reset(request: ResetRequest): Promise<OpenEnvResult> {
    await this.release();
    const seed = request.seed ?? randomInt(0, 2 ** 31 - 1);
    const create = { ...request.create, seed };
    let created: { ep: ServerEpisode; token: string; reset?: { observation: Observation; info: import('../episodes.js').ResetInfo } };
    let group: SessionContext['group'];
    if (request.group !== undefined) {
      const body = parseWith(JoinGroupBodySchema, { ...create, size: request.group.size, ...(request.group.skipZeroVariance !== undefined ? { skipZeroVariance: request.group.skipZeroVariance } : {}) });
      // A member's seed is the group's: the first member's seed (given or drawn) is used by all.
      if (request.seed === undefined) delete (body as { seed?: number }).seed;
      const member = await this.deps.groups.join(request.group.id, body);
      created = member;
      group = member.group;
    } else {
      created = await this.deps.episodes.create(parseWith(CreateEpisodeBodySchema, create));
    }
    const { observation, info } = created.reset!;
    this.ep = created.ep;
    this.token = created.token;
    this.steps = 0;
    this.tools = observation.tools ?? [];
    this.ctx = { episodeId: this.key ?? created.ep.id, info, template: info.template, budget: (observation.budget ?? {}) as Record<string, unknown>, ...(group !== undefined ? { group } : {}) };
    return resetResult(observation, this.ctx);
  }

  /** Applies one action (committed before it answers); `key` is an idempotency key (OpenEnv's `request_id`). */
  async step(data: unknown, key?: string): Promise<OpenEnvResult> {
    const applied = await this.apply(data, key);
    return 'listed' in applied ? applied.listed : this.stepped(applied.result, applied.callTool);
  }

  /** `step` answered as JSON text (the HTTP `/step` body; built without the intermediate objects). */
  async stepText(data: unknown, key?: string): Promise<string> {
    const applied = await this.apply(data, key);
    if ('listed' in applied) return JSON.stringify(applied.listed);
    this.advance(applied.result);
    return stepResultText(applied.result, this.ctx!, applied.callTool);
  }

  /** `step` answered as the WebSocket's `observation` message text (built without the intermediate objects). */
  async stepMessage(data: unknown): Promise<string> {
    const applied = await this.apply(data, undefined);
    if ('listed' in applied) return JSON.stringify({ type: 'observation', data: applied.listed });
    this.advance(applied.result);
    return stepMessage(applied.result, this.ctx!, applied.callTool);
  }

  private async apply(data: unknown, key: string | undefined): Promise<{ listed: OpenEnvResult } | { result: StepResult; callTool: string | undefined }> {
    const ep = this.current();
    const action = toAction(data);
    if (action.kind === 'list_tools') return { listed: toolsResult(this.tools, this.ctx, this.steps) };
    const { reply, result } = await this.deps.episodes.stepAction(ep, action.action, key);
    if (result === undefined) {
      // A replayed request_id answers with the first reply's bytes.
      if (reply.status !== 200) throw new HttpProblem(JSON.parse(reply.body) as Problem);
      return { result: JSON.parse(reply.body) as StepResult, callTool: action.callTool };
    }
    return { result, callTool: action.callTool };
  }

  /** The current task's tools (empty before the first reset). */
  toolSpecs(): readonly ToolSpec[] {
    return this.tools;
  }

  private stepped(result: StepResult, callTool: string | undefined): OpenEnvResult {
    this.advance(result);
    return stepResult(result, this.ctx!, callTool);
  }

  private advance(result: StepResult): void {
    this.steps = result.info.step;
    const group = this.ctx!.group;
    // The last member's end completes the group: its statistics are in the answer's metadata.
    if (group !== undefined && (result.terminated || result.truncated)) this.ctx!.group = this.deps.groups.view(group.id) ?? group;
  }

  /** OpenEnv's `State`: `episode_id` and `step_count`, plus the EnvHarness episode's status and task. */
  state(): Record<string, unknown> {
    const ep = this.ep === undefined ? undefined : this.deps.episodes.authorize(this.ep.id, this.token);
    if (ep === undefined) return { episode_id: null, step_count: 0 };
    const view = this.deps.episodes.view(ep);
    return { episode_id: this.ctx?.episodeId ?? ep.id, step_count: view.steps, status: view.status, attempt_id: view.attemptId ?? null, task: view.task, slice: view.slice, seed: view.seed ?? null };
  }

  /** Closes the current episode, if any. */
  async release(): Promise<void> {
    const ep = this.ep;
    this.ep = undefined;
    this.ctx = undefined;
    if (ep === undefined) return;
    const live = this.deps.episodes.authorize(ep.id, this.token);
    if (live !== undefined) await this.deps.episodes.close(live).catch(() => undefined);
  }

  private current(): ServerEpisode {
    if (this.ep === undefined) throw new EnvHarnessError('EPISODE_NOT_FOUND', 'no episode in this session: send reset first');
    // The session holds the episode object its token opened: that it is still open is the whole check.
    const ep = this.ep;
    if (!this.deps.episodes.holds(ep)) throw new EnvHarnessError('EPISODE_NOT_FOUND', `episode ${ep.id} was closed (idle for too long, or the server is stopping): send reset`);
    return ep;
  }
}
