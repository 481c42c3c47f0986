/** The hono app of API v1: guards (Host/Origin, bearer, body size), routes -> harness, problem+json errors. */
import { randomBytes } from 'node:crypto';
import { OpenAPIHono, createRoute, z, type RouteConfig } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import {
  EnvHarnessError,
  digest,
  isEnvHarnessError,
  type Agent,
  type Harness,
  type JsonValue,
  type RunRecord,
  type Split,
  type StoredTask,
} from '../index.js';
import { admit, isJsonContentType, tokenMatches, type HostPolicy } from './auth.js';
import { closestPointer, parseJsonBody, parseWith } from './body.js';
import { fail, HttpProblem, problem, problemOf, problemReply, payloadTooLarge, unsupportedMediaType, type Reply } from './errors.js';
import type { CurriculumSync } from './curriculum-sync.js';
import type { EpisodeRegistry, ServerEpisode } from './episodes.js';
import * as S from './schemas.js';

/** Hono environment of the app: the bearer token of the request, once the guard has read it. */
export interface ServerEnv {
  Variables: { token: string };
}

/** What routes (ours and `extraRoutes`) can use. */
export interface ServerContext {
  harness: Harness;
  episodes: EpisodeRegistry;
  /** Whether the request's bearer token is the server (admin) token. */
  isAdmin(c: Context<ServerEnv>): boolean;
  /** Throws UNAUTHORIZED unless the request carries the server token. */
  requireAdmin(c: Context<ServerEnv>): void;
  /** The episode whose capability the request carries, or undefined (answer `episodeNotFound`). */
  episodeOf(c: Context<ServerEnv>, id: string): ServerEpisode | undefined;
  /** The one 404 of episode routes (identical for unknown ids and foreign tokens). */
  episodeNotFound(c: Context<ServerEnv>, id: string): Response;
  /** A finished reply as a Response. */
  send(reply: Reply): Response;
}

/** Adds routes to the app after ours; they sit behind the same Host/Origin, bearer and body-size guards. */
export type ExtraRoutes = (app: OpenAPIHono<ServerEnv>, ctx: ServerContext) => void;

export interface AppOptions {
  harness: Harness;
  episodes: EpisodeRegistry;
  adminTokenHash: Buffer;
  hosts: HostPolicy;
  bodyLimit: number;
  agents: Readonly<Record<string, () => Agent>>;
  now: () => number;
  version: string;
  extraRoutes?: ExtraRoutes;
  /** Replicas: curriculum changes go through the shared log (src/server/curriculum-sync.ts). */
  curriculum?: CurriculumSync;
}

const PROBLEM_RESPONSES = {
  401: { description: 'missing or malformed bearer token, or not the server token', content: { 'application/problem+json': { schema: S.ProblemSchema } } },
  403: { description: 'Host or Origin not allowed', content: { 'application/problem+json': { schema: S.ProblemSchema } } },
  413: { description: 'body larger than the limit', content: { 'application/problem+json': { schema: S.ProblemSchema } } },
  422: { description: 'invalid request; `pointer` names the field', content: { 'application/problem+json': { schema: S.ProblemSchema } } },
} as const;

const EPISODE_RESPONSES = {
  ...PROBLEM_RESPONSES,
  404: { description: 'no such episode for this token (the same answer for unknown ids and foreign tokens)', content: { 'application/problem+json': { schema: S.ProblemSchema } } },
  409: { description: 'EPISODE_BUSY, EPISODE_FINISHED or STORE_CONFLICT (expectedStep)', content: { 'application/problem+json': { schema: S.ProblemSchema } } },
} as const;

const idParams = z.object({ id: z.string().openapi({ param: { name: 'id', in: 'path' } }) });
const jsonContent = <T extends z.ZodType>(schema: T) => ({ 'application/json': { schema } });

/** Builds the app. Routes answer with the harness's errors mapped through the one status table. */
export function buildApp(options: AppOptions): OpenAPIHono<ServerEnv> {
  const { harness, episodes } = options;
  const app = new OpenAPIHono<ServerEnv>();
  const startedAt = options.now();

  const isAdmin = (c: Context<ServerEnv>) => tokenMatches(c.get('token'), options.adminTokenHash);
  const requireAdmin = (c: Context<ServerEnv>) => {
    if (!isAdmin(c)) throw new EnvHarnessError('UNAUTHORIZED', 'this route needs the server token (printed by `envharness serve`), not an episode token');
  };
  const send = (reply: Reply) => new Response(reply.body, { status: reply.status, headers: reply.headers ?? {} });
  const episodeNotFound = (c: Context<ServerEnv>, id: string) => send(problemReply(episodes.notFound(id, c.req.path)));
  const ctx: ServerContext = {
    harness,
    episodes,
    isAdmin,
    requireAdmin,
    episodeOf: (c, id) => episodes.authorize(id, c.get('token')),
    episodeNotFound,
    send,
  };

  app.onError((error, c) => {
    if (error instanceof HttpProblem) return send(problemReply({ ...error.problem, instance: c.req.path }, error.headers));
    return send(problemReply(problemOf(error, c.req.path)));
  });
  app.notFound((c) => send(problemReply(problem('ROUTE_NOT_FOUND', `no route ${c.req.method} ${c.req.path}; see /v1/openapi.json`, { instance: c.req.path }))));

  // Guards, in order: Host/Origin (DNS rebinding), bearer token, body size (the fast path runs the same `admit`).
  app.use('*', async (c, next) => {
    const admission = admit(options.hosts, c.req.header('host') ?? new URL(c.req.url).host, c.req.header('origin'), c.req.header('authorization'));
    if (admission.problem !== undefined) return send(problemReply(problem(admission.problem.code, admission.problem.detail, { instance: c.req.path })));
    c.set('token', admission.token);
    await next();
  });
  app.use(
    '*',
    bodyLimit({
      maxSize: options.bodyLimit,
      // The rest of the body is never read: close the connection rather than leave it half-consumed.
      onError: (c) => send(problemReply(payloadTooLarge(options.bodyLimit, c.req.path), { connection: 'close' })),
    }),
  );

  /** Registers a route: its OpenAPI entry from the zod schemas, and a plain hono handler (bodies are parsed by `body`). */
  const route = <R extends RouteConfig>(config: R, handler: (c: Context<ServerEnv>) => Response | Promise<Response>) => {
    app.openAPIRegistry.registerPath(config);
    app.on(config.method.toUpperCase(), config.path.replace(/\{(\w+)\}/g, ':$1'), handler);
  };
  const json = (value: unknown, status = 200) => send({ status, body: JSON.stringify(value), headers: { 'content-type': 'application/json' } });
  const text = async (c: Context<ServerEnv>): Promise<string> => {
    const type = c.req.header('content-type');
    if (!isJsonContentType(type)) throw new HttpProblem(unsupportedMediaType(type!));
    return c.req.text();
  };
  const body = async <T>(c: Context<ServerEnv>, schema: z.ZodType<T>, emptyAs?: unknown): Promise<T> => parseWith(schema, parseJsonBody(await text(c), emptyAs));
  const query = <T>(c: Context<ServerEnv>, schema: z.ZodType<T>): T => {
    const parsed = schema.safeParse(c.req.query());
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0]!;
    const name = issue.code === 'unrecognized_keys' ? issue.keys[0] : issue.path[0];
    throw fail('PARAMS_INVALID', `query parameter ${String(name ?? '')}: ${issue.message}`, undefined, { parameter: String(name ?? '') });
  };

  // ---- health and the document ----------------------------------------------------------------

  route(
    createRoute({ method: 'get', path: '/v1/health', summary: 'Server health', responses: { 200: { description: 'ok', content: jsonContent(S.HealthSchema) }, 503: { description: 'degraded: a storage fault refuses writes until it clears (`fault` says which)', content: jsonContent(S.HealthSchema) }, ...PROBLEM_RESPONSES } }),
    (c) => {
      requireAdmin(c);
      // A storage fault (failed checkpoint/sync, full disk) refuses writes: health says so, with 503.
      const fault = harness.store.fault?.();
      const base = { version: options.version, episodes: episodes.size, store: harness.store.kind, uptimeMs: options.now() - startedAt };
      return fault === undefined ? json({ status: 'ok', ...base }) : json({ status: 'degraded', ...base, fault }, 503);
    },
  );
  let document: string | undefined;
  app.get('/v1/openapi.json', (c) => {
    requireAdmin(c);
    document ??= JSON.stringify(
      app.getOpenAPI31Document({
        openapi: '3.1.0',
        info: { title: 'EnvHarness HTTP API', version: options.version, description: 'Adaptive, versioned training environments for AI agents. See docs/http.md.' },
        security: [{ bearer: [] }],
      }),
    );
    return send({ status: 200, body: document, headers: { 'content-type': 'application/json' } });
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer', description: 'the server token, or on /v1/episodes/{id} routes that episode\'s token' });

  // ---- episodes -------------------------------------------------------------------------------

  route(
    createRoute({
      method: 'post',
      path: '/v1/episodes',
      summary: 'Create an episode from a task id, or by sampling (type/level/domain), or from the curriculum when nothing is pinned',
      request: { body: { content: jsonContent(S.CreateEpisodeBodySchema) } },
      responses: { 201: { description: 'created; keep `token`: it is the only key to this episode', content: jsonContent(S.EpisodeCreatedSchema) }, ...PROBLEM_RESPONSES },
    }),
    async (c) => {
      requireAdmin(c);
      const input = await body(c, S.CreateEpisodeBodySchema, {});
      const { ep, token, reset } = await episodes.create(input);
      return json({ episode: episodes.view(ep), token, ...(reset ?? {}) }, 201);
    },
  );

  route(
    createRoute({
      method: 'post',
      path: '/v1/episodes/{id}/reset',
      summary: 'Start a new attempt (Gymnasium reset): a new task when resampling, the same one otherwise',
      request: { params: idParams, body: { content: jsonContent(S.ResetBodySchema) } },
      responses: { 200: { description: 'the first observation', content: jsonContent(S.ResetResultSchema) }, ...EPISODE_RESPONSES },
    }),
    async (c) => {
      const id = c.req.param('id')!;
      const ep = await episodes.resolve(id, c.get('token'));
      if (ep === undefined) return episodeNotFound(c, id);
      const input = await body(c, S.ResetBodySchema, {});
      return json(await episodes.reset(ep, input));
    },
  );

  route(
    createRoute({
      method: 'post',
      path: '/v1/episodes/{id}/step',
      summary: 'Apply one action; answered once its transition is durable (docs/http.md, "Durability")',
      description:
        'Idempotency-Key: the same key and body replay the first response byte for byte; the same key with another body is 422; ' +
        'while the first is in flight, 409. Two concurrent steps of one episode: one applies, the other gets 409 EPISODE_BUSY.',
      request: {
        params: idParams,
        headers: z.object({ 'idempotency-key': z.string().optional() }),
        body: { content: jsonContent(S.StepBodySchema) },
      },
      responses: { 200: { description: 'the step result (agent mistakes are observations with `error`, not 4xx)', content: jsonContent(S.StepResultSchema) }, ...EPISODE_RESPONSES },
    }),
    async (c) => {
      const id = c.req.param('id')!;
      const ep = await episodes.resolve(id, c.get('token'));
      if (ep === undefined) return episodeNotFound(c, id);
      const raw = await text(c);
      return send(await episodes.step(ep, raw, c.req.header('idempotency-key'), c.req.path));
    },
  );

  route(
    createRoute({
      method: 'get',
      path: '/v1/episodes/{id}',
      summary: 'The episode and (by default) the stored transitions of its current attempt',
      request: { params: idParams, query: S.EpisodeQuerySchema },
      responses: { 200: { description: 'the episode', content: jsonContent(S.EpisodeDetailSchema) }, ...EPISODE_RESPONSES },
    }),
    async (c) => {
      const id = c.req.param('id')!;
      const ep = await episodes.resolve(id, c.get('token'));
      if (ep === undefined) return episodeNotFound(c, id);
      const q = query(c, S.EpisodeQuerySchema);
      return json(await episodes.detail(ep, q.transitions !== 'false'));
    },
  );

  route(
    createRoute({
      method: 'delete',
      path: '/v1/episodes/{id}',
      summary: 'Close the episode (a running attempt is recorded as closed) and forget it',
      request: { params: idParams },
      responses: { 200: { description: 'closed', content: jsonContent(z.object({ episode: S.EpisodeViewSchema })) }, ...EPISODE_RESPONSES },
    }),
    async (c) => {
      const id = c.req.param('id')!;
      const ep = await episodes.resolve(id, c.get('token'));
      if (ep === undefined) return episodeNotFound(c, id);
      return json({ episode: await episodes.close(ep) });
    },
  );

  route(
    createRoute({
      method: 'post',
      path: '/v1/steps',
      summary: 'Batched step: many episodes\' actions in one request, committed together',
      description: 'Each item carries its episode id and token; each item succeeds or fails on its own (`problem.pointer` points into this request body).',
      request: { body: { content: jsonContent(S.BatchStepBodySchema) } },
      responses: { 200: { description: 'one result per item, in order', content: jsonContent(S.BatchStepResultSchema) }, ...PROBLEM_RESPONSES },
    }),
    async (c) => {
      requireAdmin(c);
      const raw = await text(c);
      return send(await episodes.stepMany(parseJsonBody(raw), raw));
    },
  );

  // ---- tasks, templates, generation ------------------------------------------------------------

  route(
    createRoute({
      method: 'get',
      path: '/v1/tasks/sample',
      summary: 'Draw a task from the pool (the curriculum decides when nothing is pinned)',
      request: { query: S.SampleQuerySchema },
      responses: { 200: { description: 'a task', content: jsonContent(z.object({ task: S.TaskViewSchema })) }, ...PROBLEM_RESPONSES },
    }),
    async (c) => {
      requireAdmin(c);
      const q = query(c, S.SampleQuerySchema);
      const task = await harness.generateTask({
        ...(q.domain !== undefined ? { domain: q.domain } : {}),
        ...(q.taskType !== undefined ? { taskType: q.taskType } : {}),
        ...(q.level !== undefined ? { level: Number(q.level) } : {}),
        ...(q.split !== undefined ? { split: q.split as Split } : {}),
      });
      return json({ task: taskView(task, q.full === 'true') });
    },
  );

  route(
    createRoute({
      method: 'get',
      path: '/v1/tasks/{id}',
      summary: 'A stored task; the reference solution and hidden user facts only with full=true',
      request: { params: idParams, query: S.TaskQuerySchema },
      responses: { 200: { description: 'the task', content: jsonContent(z.object({ task: S.TaskViewSchema })) }, ...PROBLEM_RESPONSES },
    }),
    async (c) => {
      requireAdmin(c);
      const q = query(c, S.TaskQuerySchema);
      return json({ task: taskView(await harness.getTask(c.req.param('id')!), q.full === 'true') });
    },
  );

  route(
    createRoute({
      method: 'get',
      path: '/v1/templates',
      summary: 'Registered templates',
      responses: { 200: { description: 'templates', content: jsonContent(z.object({ templates: z.array(z.unknown()) })) }, ...PROBLEM_RESPONSES },
    }),
    (c) => {
      requireAdmin(c);
      const templates = harness.registry.list().map((t) => ({
        id: t.id,
        domain: t.domain,
        taskType: t.taskType,
        levels: t.levels.length,
        description: t.description ?? '',
        heldout: Boolean(t.heldout),
        sourceDigest: t.sourceDigest,
      }));
      return json({ templates });
    },
  );

  route(
    createRoute({
      method: 'get',
      path: '/v1/pool',
      summary: 'Pool counts by split, slice and level',
      responses: { 200: { description: 'pool statistics', content: jsonContent(z.unknown()) }, ...PROBLEM_RESPONSES },
    }),
    async (c) => {
      requireAdmin(c);
      return json(await harness.poolStats());
    },
  );

  route(
    createRoute({
      method: 'post',
      path: '/v1/batches',
      summary: 'Generate a batch of tasks through the quality gates into the pool',
      request: { body: { content: jsonContent(S.GenerateBodySchema) } },
      responses: { 201: { description: 'the batch manifest', content: jsonContent(z.object({ manifest: z.unknown(), review: z.array(z.string()) })) }, ...PROBLEM_RESPONSES },
    }),
    async (c) => {
      requireAdmin(c);
      const input = await body(c, S.GenerateBodySchema);
      const batch = await rebase(
        () =>
          harness.generate(
            {
              templates: input.templates.map((t) => ({ id: t.id, ...(t.weight !== undefined ? { weight: t.weight } : {}) })),
              levels: input.levels,
              count: input.count,
              seed: input.seed,
              split: input.split as Split,
              ...(input.reviewShare !== undefined ? { reviewShare: input.reviewShare } : {}),
              ...(input.gates !== undefined ? { gates: input.gates } : {}),
              ...(input.nearDuplicateThreshold !== undefined ? { nearDuplicateThreshold: input.nearDuplicateThreshold } : {}),
            },
            { workers: 1 },
          ),
        '',
        input,
      );
      return json({ manifest: batch.manifest, review: batch.review }, 201);
    },
  );

  // ---- curriculum -----------------------------------------------------------------------------

  const curriculumState = () => {
    const c = harness.activeCurriculum;
    const slices = harness.dynamicSlices();
    if (c === undefined) return { active: false, slices };
    return { active: true, strategy: c.strategy, frozen: c.isFrozen, holdingLevels: c.isHoldingLevels, levels: c.levels(), weights: c.weights(), stats: c.stats(), slices };
  };

  route(
    createRoute({ method: 'get', path: '/v1/curriculum', summary: 'Curriculum state: strategy, levels, weights, statistics', responses: { 200: { description: 'state', content: jsonContent(S.CurriculumStateSchema) }, ...PROBLEM_RESPONSES } }),
    async (c) => {
      requireAdmin(c);
      // Replicas: what every replica has logged so far, applied here first (read-your-writes across replicas).
      await options.curriculum?.catchUp();
      return json(curriculumState());
    },
  );

  route(
    createRoute({
      method: 'put',
      path: '/v1/curriculum',
      summary: 'Use a curriculum strategy over the dynamic pool (replaces the current one)',
      request: { body: { content: jsonContent(S.UseCurriculumBodySchema) } },
      responses: { 200: { description: 'state', content: jsonContent(S.CurriculumStateSchema) }, ...PROBLEM_RESPONSES },
    }),
    async (c) => {
      requireAdmin(c);
      const input = await body(c, S.UseCurriculumBodySchema);
      const sync = options.curriculum;
      await rebase(
        async () => (sync !== undefined ? sync.submit('use', { strategy: input.strategy, ...(input.config !== undefined ? { config: input.config as JsonValue } : {}) }) : harness.useCurriculum(input.strategy, input.config as Parameters<Harness['useCurriculum']>[1])),
        '/config',
        input,
      );
      return json(curriculumState());
    },
  );

  for (const [path, verb, summary] of [
    ['/v1/curriculum/adjust', 'adjustDifficulty', 'Adjust difficulty: per-slice results move levels (and weights)'],
    ['/v1/curriculum/distribution', 'updateDistribution', 'Update the distribution: slice weights move toward weak spots; levels stay'],
  ] as const) {
    route(
      createRoute({
        method: 'post',
        path,
        summary,
        request: { body: { content: jsonContent(S.ResultsBodySchema) } },
        responses: { 200: { description: 'what moved, and the new state', content: jsonContent(S.CurriculumUpdateSchema) }, ...PROBLEM_RESPONSES },
      }),
      async (c) => {
        requireAdmin(c);
        const input = await body(c, S.ResultsBodySchema);
        const results = input.results.map((r) => ({ ...r }));
        const sync = options.curriculum;
        const kind = verb === 'adjustDifficulty' ? 'adjust' : 'distribution';
        const update = await rebase(() => (sync !== undefined ? sync.submit(kind, { results: results as unknown as JsonValue }) : harness[verb](results)), '/results', input);
        return json({ update, curriculum: curriculumState() });
      },
    );
  }

  // ---- snapshots ------------------------------------------------------------------------------

  route(
    createRoute({ method: 'get', path: '/v1/snapshots', summary: 'Snapshots, oldest first', responses: { 200: { description: 'snapshots', content: jsonContent(z.object({ snapshots: z.array(S.SnapshotSchema) })) }, ...PROBLEM_RESPONSES } }),
    async (c) => {
      requireAdmin(c);
      return json({ snapshots: await harness.listSnapshots() });
    },
  );
  route(
    createRoute({
      method: 'post',
      path: '/v1/snapshots',
      summary: 'Snapshot the complete environment version (id = digest of its content)',
      request: { body: { content: jsonContent(S.SnapshotBodySchema) } },
      responses: { 201: { description: 'the snapshot', content: jsonContent(S.SnapshotSchema) }, ...PROBLEM_RESPONSES },
    }),
    async (c) => {
      requireAdmin(c);
      const input = await body(c, S.SnapshotBodySchema, {});
      return json(await harness.snapshot(input.label !== undefined ? { label: input.label } : {}), 201);
    },
  );
  route(
    createRoute({ method: 'get', path: '/v1/snapshots/{id}', summary: 'A snapshot by id or unique prefix', request: { params: idParams }, responses: { 200: { description: 'the snapshot', content: jsonContent(S.SnapshotSchema) }, ...PROBLEM_RESPONSES } }),
    async (c) => {
      requireAdmin(c);
      return json(await harness.getSnapshot(c.req.param('id')!));
    },
  );
  route(
    createRoute({
      method: 'post',
      path: '/v1/snapshots/{id}/restore',
      summary: 'Restore sampler, curriculum and config from a snapshot of this store',
      request: { params: idParams },
      responses: { 200: { description: 'the restored snapshot', content: jsonContent(S.SnapshotSchema) }, ...PROBLEM_RESPONSES },
    }),
    async (c) => {
      requireAdmin(c);
      return json(await harness.restore(c.req.param('id')!));
    },
  );

  // ---- runs -----------------------------------------------------------------------------------

  route(
    createRoute({ method: 'get', path: '/v1/runs', summary: 'Runs, oldest first', responses: { 200: { description: 'runs', content: jsonContent(z.object({ runs: z.array(S.RunSchema) })) }, ...PROBLEM_RESPONSES } }),
    async (c) => {
      requireAdmin(c);
      return json({ runs: await harness.store.listRuns() });
    },
  );
  route(
    createRoute({
      method: 'post',
      path: '/v1/runs',
      summary: 'Start an experiment run (episodes join it with runId), or evaluate a server-side agent (answers when done)',
      request: { body: { content: jsonContent(S.CreateRunBodySchema) } },
      responses: { 201: { description: 'the run (and pass^k rows for an evaluation)', content: jsonContent(z.object({ run: S.RunSchema, rows: z.array(z.unknown()).optional() })) }, ...PROBLEM_RESPONSES },
    }),
    async (c) => {
      requireAdmin(c);
      const input = await body(c, S.CreateRunBodySchema);
      if ('evaluate' in input) {
        const e = input.evaluate;
        const factory = Object.prototype.hasOwnProperty.call(options.agents, e.agent) ? options.agents[e.agent] : undefined;
        if (factory === undefined) {
          throw fail('PARAMS_INVALID', `no agent "${e.agent}" on this server; known: ${Object.keys(options.agents).join(', ') || '(none)'}`, '/evaluate/agent');
        }
        const { runId, rows } = await harness.evaluate({
          agent: factory(),
          ...(e.split !== undefined ? { split: e.split as Split } : {}),
          ...(e.k !== undefined ? { k: e.k } : {}),
          ...(e.limit !== undefined ? { limit: e.limit } : {}),
          ...(e.domains !== undefined ? { domains: e.domains } : {}),
        });
        return json({ run: await harness.store.getRun(runId), rows }, 201);
      }
      const now = new Date(options.now()).toISOString();
      const start = await harness.snapshot({ label: `experiment ${input.agent.name}` });
      const run: RunRecord = {
        id: `exp-${randomBytes(6).toString('hex')}`,
        kind: 'experiment',
        agent: { name: input.agent.name, version: input.agent.version ?? '0', configDigest: digest((input.agent.config ?? null) as JsonValue) },
        strategy: input.strategy ?? harness.activeCurriculum?.strategy ?? 'none',
        seed: input.seed ?? 0,
        config: { agentConfig: (input.agent.config ?? null) as JsonValue, config: (input.config ?? null) as JsonValue },
        snapshotStart: start.id,
        status: 'running',
        createdAt: now,
        updatedAt: now,
      };
      await harness.store.saveRun(run);
      return json({ run }, 201);
    },
  );
  route(
    createRoute({
      method: 'get',
      path: '/v1/runs/{id}',
      summary: 'A run, with its events when events=true',
      request: { params: idParams, query: z.object({ events: z.enum(['true', 'false']).optional() }) },
      responses: { 200: { description: 'the run', content: jsonContent(z.object({ run: S.RunSchema, events: z.array(z.unknown()).optional() })) }, ...PROBLEM_RESPONSES },
    }),
    async (c) => {
      requireAdmin(c);
      const q = query(c, z.object({ events: z.enum(['true', 'false']).optional() }).strict());
      const run = await getRun(harness, c.req.param('id')!);
      return json(q.events === 'true' ? { run, events: await harness.store.listRunEvents(run.id) } : { run });
    },
  );
  route(
    createRoute({
      method: 'post',
      path: '/v1/runs/{id}/finish',
      summary: 'Finish an experiment run: status, summary, and the end snapshot',
      request: { params: idParams, body: { content: jsonContent(S.FinishRunBodySchema) } },
      responses: { 200: { description: 'the run', content: jsonContent(z.object({ run: S.RunSchema })) }, ...PROBLEM_RESPONSES },
    }),
    async (c) => {
      requireAdmin(c);
      const input = await body(c, S.FinishRunBodySchema, {});
      const run = await getRun(harness, c.req.param('id')!);
      if (run.status !== 'running') throw fail('STORE_CONFLICT', `run ${run.id} is already ${run.status}`);
      const end = await harness.snapshot({ label: `end ${run.id}` });
      const finished: RunRecord = {
        ...run,
        status: input.status,
        snapshotEnd: end.id,
        ...(input.summary !== undefined ? { summary: input.summary as JsonValue } : {}),
        updatedAt: new Date(options.now()).toISOString(),
      };
      await harness.store.saveRun(finished);
      return json({ run: finished });
    },
  );

  options.extraRoutes?.(app, ctx);
  return app;
}

async function getRun(harness: Harness, id: string): Promise<RunRecord> {
  const run = await harness.store.getRun(id);
  if (run === undefined) throw new EnvHarnessError('RUN_NOT_FOUND', `no run ${id.slice(0, 80)}; see GET /v1/runs`);
  return run;
}

/** What a client sees of a task: without the reference solution and the simulated user's hidden facts unless `full`. */
function taskView(task: StoredTask, full: boolean): Record<string, unknown> {
  const { solution: _solution, user: _user, ...spec } = task.spec;
  return {
    id: task.id,
    template: task.template,
    domain: task.domain,
    taskType: task.taskType,
    level: task.level,
    split: task.split,
    status: task.status,
    ...(full ? { params: task.params, spec: task.spec, origin: task.origin } : { spec }),
  };
}

/** Runs `fn`; an error whose pointer is relative to a part of the body is re-pointed into the body (and kept resolvable). */
async function rebase<T>(fn: () => Promise<T> | T, prefix: string, input: unknown): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (isEnvHarnessError(error) && typeof error.details?.pointer === 'string') {
      const full = prefix + error.details.pointer;
      const tokens = full === '' ? [] : full.slice(1).split('/').map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
      throw new EnvHarnessError(error.code, error.message, { details: { ...error.details, pointer: closestPointer(input, tokens) }, cause: error });
    }
    throw error;
  }
}
