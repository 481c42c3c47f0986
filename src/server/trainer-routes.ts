/** Routes for trainers on API v1: GRPO groups (`/v1/groups`) and an episode's rollout as chat messages (`/v1/episodes/{id}/chat`). */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { DynamicsOptions, Observation } from '../index.js';
import { toChatTrajectory } from '../report/index.js';
import type { ServerContext, ServerEnv } from './app.js';
import { isJsonContentType } from './auth.js';
import { parseJsonBody, parseWith } from './body.js';
import { fail, HttpProblem, unsupportedMediaType } from './errors.js';
import type { ServerEpisode } from './episodes.js';
import { GroupIdSchema, JoinGroupBodySchema, type GroupRegistry } from './groups.js';
import * as S from './schemas.js';

const json = (value: unknown, status = 200) => new Response(JSON.stringify(value), { status, headers: { 'content-type': 'application/json' } });
const problems = { description: 'a problem (application/problem+json)', content: { 'application/problem+json': { schema: S.ProblemSchema } } };
const groupParams = z.object({ id: GroupIdSchema.openapi({ param: { name: 'id', in: 'path' } }) });
const idParams = z.object({ id: z.string().openapi({ param: { name: 'id', in: 'path' } }) });

/** Registers the trainer routes on the app (behind the app's guards). */
export function mountTrainerRoutes(app: OpenAPIHono<ServerEnv>, ctx: ServerContext, groups: GroupRegistry): void {
  const route = (config: Parameters<typeof createRoute>[0], handler: (c: Context<ServerEnv>) => Response | Promise<Response>) => {
    app.openAPIRegistry.registerPath(createRoute(config));
    app.on(config.method.toUpperCase(), config.path.replace(/\{(\w+)\}/g, ':$1'), handler);
  };
  const groupId = (c: Context<ServerEnv>): string => {
    const id = c.req.param('id')!;
    if (!GroupIdSchema.safeParse(id).success) throw fail('PARAMS_INVALID', 'a group id is 1..128 visible ASCII characters', undefined, { parameter: 'id' });
    return id;
  };

  route(
    {
      method: 'post',
      path: '/v1/groups/{id}/episodes',
      summary: 'Join GRPO group {id}: a new episode on the group\'s task and seed (the first member draws them)',
      description:
        'Every member sends the same `size`. When all `size` members have ended (or were closed), the group\'s results go to the ' +
        'active curriculum once, together; with `skipZeroVariance` a group whose members all scored the same is reported but not fed.',
      request: { params: groupParams, body: { content: { 'application/json': { schema: JoinGroupBodySchema } } } },
      responses: { 201: { description: 'the member: episode, token, first observation, and the group so far', content: { 'application/json': { schema: z.unknown() } } }, 409: problems, 422: problems },
    },
    async (c) => {
      ctx.requireAdmin(c);
      const id = groupId(c);
      const type = c.req.header('content-type');
      if (!isJsonContentType(type)) throw new HttpProblem(unsupportedMediaType(type!));
      const body = parseWith(JoinGroupBodySchema, parseJsonBody(await c.req.text()));
      const member = await groups.join(id, body);
      return json({ episode: ctx.episodes.view(member.ep), token: member.token, ...member.reset, group: member.group }, 201);
    },
  );

  route(
    {
      method: 'get',
      path: '/v1/groups/{id}',
      summary: 'A group: its task and seed, its members\' results, and once done its statistics and the curriculum update',
      request: { params: groupParams },
      responses: { 200: { description: 'the group', content: { 'application/json': { schema: z.unknown() } } }, 404: problems },
    },
    (c) => {
      ctx.requireAdmin(c);
      const id = groupId(c);
      const group = groups.view(id);
      if (group === undefined) throw fail('EPISODE_NOT_FOUND', `no group ${id.slice(0, 128)} (groups are created by their first POST /v1/groups/{id}/episodes)`);
      return json({ group });
    },
  );

  route(
    {
      method: 'get',
      path: '/v1/groups',
      summary: 'Zero-variance report: per slice, finished groups, zero-variance groups (all pass / all fail) and skipped groups',
      responses: { 200: { description: 'the report', content: { 'application/json': { schema: z.unknown() } } } },
    },
    (c) => {
      ctx.requireAdmin(c);
      return json(groups.shares());
    },
  );

  route(
    {
      method: 'get',
      path: '/v1/episodes/{id}/chat',
      summary: 'The current attempt as OpenAI chat messages with tool calls (for SFT/RL data), with its reward',
      request: { params: idParams },
      responses: { 200: { description: '{ messages, tools, reward, outcome, shaping, steps, terminated, truncated }', content: { 'application/json': { schema: z.unknown() } } }, 404: problems },
    },
    async (c) => {
      const id = c.req.param('id')!;
      const ep = ctx.episodeOf(c, id);
      if (ep === undefined) return ctx.episodeNotFound(c, id);
      return json(await chatOf(ctx, ep));
    },
  );
}

/** The attempt's chat rollout: the reset observation is rebuilt from the task and seed (reset depends on nothing else). */
export async function chatOf(ctx: Pick<ServerContext, 'harness' | 'episodes'>, ep: ServerEpisode): Promise<Record<string, unknown>> {
  const attemptId = ep.episode?.id;
  if (attemptId === undefined || ep.seed === undefined) throw fail('EPISODE_NOT_FOUND', `episode ${ep.id} has not started: reset it first`);
  const dynamics = ep.options.dynamics as DynamicsOptions | undefined;
  const { episode } = await ctx.harness.openEpisode({ taskId: ep.task.id, record: false, ...(dynamics !== undefined ? { dynamics } : {}) });
  const reset: Observation = episode.reset({ seed: ep.seed });
  // Steps acknowledged from the step journal reach SQLite within about 20 ms (FEED_MS): read after they have.
  await ctx.episodes.settled();
  const transitions = await ctx.harness.store.listTransitions(attemptId);
  const { messages, tools } = toChatTrajectory(ep.task, reset, transitions);
  let reward = 0;
  let shaping = 0;
  let outcome = 0;
  for (const t of transitions) {
    reward += t.reward;
    shaping += t.info.shaping;
    outcome = t.info.outcome;
  }
  const last = transitions[transitions.length - 1];
  return {
    episodeId: ep.id,
    attemptId,
    taskId: ep.task.id,
    seed: ep.seed,
    messages,
    tools,
    reward,
    outcome,
    shaping,
    steps: transitions.length,
    /** Per-step rewards (outcome + shaping), in step order. */
    rewards: transitions.map((t) => t.reward),
    terminated: last?.terminated ?? false,
    truncated: last?.truncated ?? false,
  };
}
