/**
 * The zod schemas of the HTTP API v1: they validate request bodies and queries and generate
 * `/v1/openapi.json`. Free-form JSON is `z.unknown()` (zod-to-openapi cannot render the recursive `z.json()`).
 */
import { z } from '@hono/zod-openapi';
import { FEEDBACK_CODES, GATE_NAMES, SPLITS } from '../index.js';
import { STRATEGY_NAMES } from '../curriculum/index.js';

const json = () => z.unknown();
const id = (description: string) => z.string().min(1).max(256).describe(description);
const split = z.enum(SPLITS as unknown as [string, ...string[]]);

// ---- problems ----------------------------------------------------------------------------------

export const ProblemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    code: z.string().describe('EnvHarness error code (docs/errors.md)'),
    detail: z.string(),
    pointer: z.string().optional().describe('JSON pointer (RFC 6901) of the offending field in the request body'),
    instance: z.string().optional(),
    details: z.record(z.string(), json()).optional(),
  })
  .openapi('Problem');

// ---- actions, observations, steps ---------------------------------------------------------------

const usage = z.object({ inputTokens: z.number().int().nonnegative().optional(), outputTokens: z.number().int().nonnegative().optional() }).strict();

/** Documentation of an action; the runtime validates actions itself (a bad one is an observation, not a 4xx). */
export const ActionSchema = z
  .union([
    z.object({ type: z.literal('tool'), tool: z.string().min(1), args: z.record(z.string(), json()), usage: usage.optional() }).strict(),
    z.object({ type: z.literal('message'), text: z.string(), usage: usage.optional() }).strict(),
    z.object({ type: z.literal('finish'), answer: z.string().optional(), usage: usage.optional() }).strict(),
  ])
  .openapi('Action', {
    description:
      'A tool call, a message to the simulated user, or finish. An action that does not fit is answered with ' +
      '200 and `observation.error` (INVALID_ACTION, with a pointer into the action) and is recorded.',
  });

export const ObservationSchema = z
  .object({
    kind: z.enum(['reset', 'tool', 'message', 'finish']),
    text: z.string().optional(),
    output: json().optional(),
    error: z.object({ code: z.string(), message: z.string(), pointer: z.string().optional(), retryAfterMs: z.number().optional() }).optional(),
    tools: z.array(json()).optional(),
    policy: z.string().optional(),
    budget: json().optional(),
  })
  .openapi('Observation');

export const FeedbackSchema = z
  .object({
    code: z.enum(FEEDBACK_CODES),
    message: z.string(),
    severity: z.enum(['low', 'medium', 'high']).optional(),
    pointer: z.string().optional(),
    ref: z.string().optional(),
    details: json().optional(),
  })
  .openapi('Feedback');

export const StepResultSchema = z
  .object({
    observation: ObservationSchema,
    reward: z.number(),
    terminated: z.boolean(),
    truncated: z.boolean(),
    truncation: z.enum(['steps', 'tokens', 'time', 'tool_calls', 'errors']).optional(),
    feedback: z.array(FeedbackSchema),
    info: z.object({ step: z.number().int(), outcome: z.number(), shaping: z.number(), stateHash: z.string() }).catchall(json()),
  })
  .openapi('StepResult');

export const StepBodySchema = z
  .object({
    action: ActionSchema,
    expectedStep: z.number().int().min(1).optional().describe('The step number this action becomes (info.step); a mismatch is 409 STORE_CONFLICT'),
  })
  .strict()
  .openapi('StepBody');

export const BatchStepBodySchema = z
  .object({
    steps: z
      .array(
        z
          .object({
            episodeId: id('server episode id'),
            token: z.string().describe("the episode's capability token"),
            action: ActionSchema,
            expectedStep: z.number().int().min(1).optional(),
            idempotencyKey: z.string().min(1).max(256).optional(),
          })
          .strict(),
      )
      .min(1),
  })
  .strict()
  .openapi('BatchStepBody');

export const BatchStepResultSchema = z
  .object({
    results: z.array(
      z.union([
        z.object({ ok: z.literal(true), result: StepResultSchema }),
        z.object({ ok: z.literal(false), problem: ProblemSchema }),
      ]),
    ),
  })
  .openapi('BatchStepResult');

// ---- episodes -----------------------------------------------------------------------------------

const budget = z
  .object({
    steps: z.number().int().min(1).optional(),
    tokens: z.number().int().min(1).optional(),
    timeMs: z.number().int().min(1).optional(),
    toolCalls: z.number().int().min(1).optional(),
    perTool: z.record(z.string(), z.number().int().min(0)).optional(),
    consecutiveErrors: z.number().int().min(1).optional(),
  })
  .strict();

export const DynamicsSchema = z
  .object({
    shaping: z.partialRecord(z.enum(FEEDBACK_CODES), z.number().finite()).optional().describe('reward shaping weight per feedback code'),
    noProgressSteps: z.number().int().min(1).optional(),
    budgetWarningRatio: z.number().gt(0).max(1).optional(),
    faults: z.boolean().optional().describe('inject the task\'s fault profile (default true)'),
    faultRetries: z.number().int().min(0).optional(),
    budget: budget.optional().describe("overrides of the task's budget"),
  })
  .strict()
  .openapi('Dynamics');

export const CreateEpisodeBodySchema = z
  .object({
    taskId: id('a stored task id (sha256 hex); excludes domain/taskType/level/split').optional(),
    domain: z.string().min(1).optional(),
    taskType: z.string().min(1).optional(),
    level: z.number().int().min(1).optional(),
    split: split.optional().describe('pool to sample from (default dynamic)'),
    seed: z.number().int().optional().describe('reset at once with this seed and return the first observation'),
    resample: z.boolean().optional().describe('draw a new task at every reset after the first (default: true when sampling)'),
    runId: id('a run this episode belongs to').optional(),
    agent: z.string().min(1).max(256).optional(),
    dynamics: DynamicsSchema.optional(),
  })
  .strict()
  .openapi('CreateEpisodeBody');

export const EpisodeViewSchema = z
  .object({
    id: z.string(),
    status: z.enum(['ready', 'running', 'terminated', 'truncated', 'closed']),
    task: z.object({ id: z.string(), template: z.string(), domain: z.string(), taskType: z.string(), level: z.number().int(), split: z.string() }),
    slice: z.string(),
    attempt: z.number().int().describe('resets so far'),
    attemptId: z.string().optional().describe('recorded episode id of the current attempt (store key of its transitions)'),
    seed: z.number().int().optional(),
    steps: z.number().int(),
    resample: z.boolean(),
    runId: z.string().optional(),
    createdAt: z.string(),
    lastUsedAt: z.string(),
  })
  .openapi('Episode');

export const ResetInfoSchema = z
  .object({
    episodeId: z.string(),
    taskId: z.string(),
    template: z.string(),
    domain: z.string(),
    taskType: z.string(),
    level: z.number().int(),
    slice: z.string(),
    seed: z.number().int(),
    attempt: z.number().int(),
  })
  .openapi('ResetInfo');

export const ResetResultSchema = z.object({ observation: ObservationSchema, info: ResetInfoSchema }).openapi('ResetResult');

export const EpisodeCreatedSchema = z
  .object({
    episode: EpisodeViewSchema,
    token: z.string().describe('capability token of this episode: the bearer token of every /v1/episodes/{id} route'),
    observation: ObservationSchema.optional(),
    info: ResetInfoSchema.optional(),
  })
  .openapi('EpisodeCreated');

export const ResetBodySchema = z
  .object({
    seed: z.number().int().optional().describe('default: a random seed, reported in info.seed'),
    options: z
      .object({
        taskId: id('switch to this task').optional(),
        resample: z.boolean().optional().describe('draw a new task for this reset (default: the episode\'s resample setting)'),
      })
      .strict()
      .optional(),
  })
  .strict()
  .openapi('ResetBody');

export const EpisodeDetailSchema = z
  .object({ episode: EpisodeViewSchema, transitions: z.array(json()).optional().describe('the current attempt\'s transitions, in step order') })
  .openapi('EpisodeDetail');

export const EpisodeQuerySchema = z.object({ transitions: z.enum(['true', 'false']).optional() });

// ---- tasks and generation -----------------------------------------------------------------------

export const TaskViewSchema = z
  .object({
    id: z.string(),
    template: z.string(),
    domain: z.string(),
    taskType: z.string(),
    level: z.number().int(),
    split: z.string(),
    status: z.string(),
    params: json().optional(),
    spec: json().describe('without solution and hidden user facts unless full=true'),
  })
  .openapi('Task');

export const SampleQuerySchema = z
  .object({
    domain: z.string().min(1).optional(),
    taskType: z.string().min(1).optional(),
    level: z.string().regex(/^[1-9][0-9]{0,5}$/, 'level must be a positive integer').optional(),
    split: split.optional(),
    full: z.enum(['true', 'false']).optional(),
  })
  .strict();

export const TaskQuerySchema = z.object({ full: z.enum(['true', 'false']).optional() }).strict();

export const GenerateBodySchema = z
  .object({
    templates: z.array(z.object({ id: z.string().min(1), weight: z.number().positive().optional() }).strict()).min(1),
    levels: z.array(z.number().int().min(1)).min(1),
    count: z.number().int().min(1).max(100_000),
    seed: z.number().int(),
    split: split.default('dynamic'),
    reviewShare: z.number().min(0).max(1).optional(),
    gates: z.partialRecord(z.enum(GATE_NAMES), z.boolean()).optional().describe('turn gates off by name (default: all on)'),
    nearDuplicateThreshold: z.number().min(0).max(1).optional(),
  })
  .strict()
  .openapi('GenerateBody');

// ---- curriculum ---------------------------------------------------------------------------------

export const UseCurriculumBodySchema = z
  .object({ strategy: z.enum(STRATEGY_NAMES), config: z.record(z.string(), json()).optional().describe('CurriculumConfigInput (docs/curriculum.md)') })
  .strict()
  .openapi('UseCurriculumBody');

export const ResultsBodySchema = z
  .object({
    results: z
      .array(
        z
          .object({
            slice: z.string().min(1).describe('domain/taskType'),
            level: z.number().int().min(1),
            success: z.number().min(0).max(1),
            taskId: z.string().optional(),
            excluded: z.boolean().optional(),
            score: z.number().finite().optional(),
          })
          .strict(),
      )
      .max(100_000),
  })
  .strict()
  .openapi('ResultsBody');

export const CurriculumStateSchema = z
  .object({
    active: z.boolean(),
    strategy: z.string().optional(),
    frozen: z.boolean().optional(),
    holdingLevels: z.boolean().optional(),
    levels: z.record(z.string(), z.number()).optional(),
    weights: z.record(z.string(), z.number()).optional(),
    stats: z.record(z.string(), json()).optional(),
    slices: z.array(json()).describe('slices of the dynamic pool with their level bounds'),
  })
  .openapi('Curriculum');

export const CurriculumUpdateSchema = z
  .object({ update: json().describe('CurriculumUpdate: moves, weights, counts'), curriculum: CurriculumStateSchema })
  .openapi('CurriculumUpdateResult');

// ---- snapshots and runs -------------------------------------------------------------------------

export const SnapshotBodySchema = z.object({ label: z.string().max(256).optional() }).strict().openapi('SnapshotBody');

export const SnapshotSchema = z
  .object({
    id: z.string(),
    label: z.string().optional(),
    createdAt: z.string(),
    format: z.string(),
    templates: z.array(json()),
    pool: json(),
    curriculum: json(),
    rng: json(),
    config: json(),
  })
  .openapi('Snapshot');

export const CreateRunBodySchema = z
  .union([
    z
      .object({
        agent: z.object({ name: z.string().min(1).max(256), version: z.string().max(64).optional(), config: json().optional() }).strict(),
        strategy: z.string().max(64).optional(),
        seed: z.number().int().optional(),
        config: json().optional(),
      })
      .strict(),
    z
      .object({
        evaluate: z
          .object({
            agent: z.string().min(1).describe('name of an agent registered with the server'),
            split: split.optional(),
            k: z.number().int().min(1).max(100).optional(),
            limit: z.number().int().min(1).optional(),
            domains: z.array(z.string().min(1)).optional(),
          })
          .strict(),
      })
      .strict(),
  ])
  .openapi('CreateRunBody', {
    description: 'Either an experiment run that remote agents record episodes into ({ agent }), or an evaluation with a server-side agent ({ evaluate }).',
  });

export const FinishRunBodySchema = z
  .object({ status: z.enum(['finished', 'failed']).default('finished'), summary: json().optional() })
  .strict()
  .openapi('FinishRunBody');

export const RunSchema = z
  .object({
    id: z.string(),
    kind: z.string(),
    agent: json(),
    strategy: z.string(),
    seed: z.number(),
    config: json(),
    snapshotStart: z.string(),
    snapshotEnd: z.string().optional(),
    status: z.string(),
    summary: json().optional(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('Run');

export const HealthSchema = z
  .object({
    status: z.enum(['ok', 'degraded']),
    version: z.string(),
    episodes: z.number().int(),
    store: z.string(),
    uptimeMs: z.number(),
    fault: z.object({ operation: z.string(), code: z.string(), message: z.string(), since: z.string() }).optional(),
  })
  .openapi('Health');

export type CreateEpisodeBody = z.infer<typeof CreateEpisodeBodySchema>;
export type ResetBody = z.infer<typeof ResetBodySchema>;
export type Dynamics = z.infer<typeof DynamicsSchema>;
