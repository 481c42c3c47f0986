/** The MCP server: one episode's domain tools as MCP tools, plus reset, status, message and finish. */
import { McpServer, type RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z, type ZodType } from 'zod';
import { EnvHarnessError, SPLITS, type Domain, type Feedback, type JsonObject, type Tool } from '../core/index.js';
import type { Harness } from '../harness/harness.js';
import {
  createEpisodeSession,
  errorPayload,
  renderObservation,
  toJsonObject,
  type EpisodeSession,
  type EpisodeSessionOptions,
  type ResetSummary,
  type StatusSummary,
  type StepRefusal,
  type StepSummary,
} from './session.js';

/** Names of the tools the server adds to the domain's; a domain tool may not use them. */
export const CONTROL_TOOLS = ['reset', 'status', 'message', 'finish'] as const;

/** Version reported to MCP clients in `serverInfo`. */
export const MCP_SERVER_VERSION = '0.1.0';

const INSTRUCTIONS = `This server runs one EnvHarness episode: a simulated world with tools, a policy and often a simulated user.
- The episode has already started; call \`status\` to see the task's opening message, the policy and the budget.
- Call the world's tools to act. Every call is one step of the episode: mistakes come back as errors with feedback, and budgets (steps, tokens, tool calls) apply.
- Call \`message\` to say something to the user; the result is the user's reply.
- Call \`finish\` (with \`answer\` for question/answer tasks) when you are done; the result carries the reward.
- Call \`reset\` to start another episode (optionally of a given task id, task type, level or seed).`;

/** Schemas of the agent-facing control tools; validated by the runtime (as actions), not by the SDK. */
const MESSAGE_ARGS = z.object({ text: z.string().describe('what to say to the user') }).strict();
const FINISH_ARGS = z.object({ answer: z.string().optional().describe('the final answer, for question/answer tasks') }).strict();

/** Arguments of `reset`: caller input, validated by the SDK before the handler runs. */
const RESET_SHAPE = {
  taskId: z.string().min(1).optional().describe('a stored task id (sha256 hex); see `envharness pool stats`'),
  taskType: z.string().min(1).optional().describe('sample a task of this type'),
  level: z.number().int().min(1).optional().describe('sample at this level (1-based)'),
  split: z.enum(SPLITS as [string, ...string[]]).optional().describe('pool split to sample from (default dynamic)'),
  seed: z.number().int().optional().describe('episode seed (default: the server default, 0)'),
};

export interface McpServerOptions extends Partial<Omit<EpisodeSessionOptions, 'harness'>> {
  /** The harness to open episodes on (a session is created over it and closed with the server). */
  harness?: Harness;
  /** An existing session to serve instead (shared, e.g. by the per-request servers of the HTTP handler). */
  session?: EpisodeSession;
  /** Start an episode with the defaults when the session has none, so that tools can be listed (default true). */
  start?: boolean;
  /** `serverInfo.name` (default `envharness`). */
  name?: string;
  /** Reuse the MCP input schemas of tools across servers (the HTTP handler builds one server per request). */
  schemaCache?: WeakMap<Tool<any, any>, LooseObject>;
}

const looseObject = () => z.looseObject({});
/** A zod object that accepts any keys: what the runtime-validated tools hand the SDK. */
export type LooseObject = ReturnType<typeof looseObject>;

/** An MCP server bound to an episode session. */
export interface EpisodeMcpServer {
  readonly server: McpServer;
  readonly session: EpisodeSession;
  connect(transport: Transport): Promise<void>;
  /** Closes the MCP side; also closes the session when the server created it. */
  close(): Promise<void>;
}

/**
 * Creates an MCP server exposing one episode at a time. Domain tools are listed with the JSON Schema of
 * their zod arguments (root `type: "object"`), but their arguments are validated by the runtime, so a bad
 * call is an episode step with an `INVALID_ACTION` observation (JSON pointer, feedback, budgets, recording).
 * @example
 * const mcp = await createMcpServer({ harness, defaults: { taskType: 'arithmetic', level: 1 } });
 * await mcp.connect(new StdioServerTransport());
 */
export async function createMcpServer(options: McpServerOptions): Promise<EpisodeMcpServer> {
  const owned = options.session === undefined;
  let session: EpisodeSession;
  if (options.session !== undefined) session = options.session;
  else if (options.harness !== undefined) {
    const { harness, session: _s, start: _start, name: _name, schemaCache: _cache, ...rest } = options;
    session = createEpisodeSession({ ...rest, harness });
  } else {
    throw new EnvHarnessError('CONFIG_INVALID', 'createMcpServer needs a harness or a session');
  }
  checkToolNames(session.harness.domains.values());
  if (options.start !== false) await session.ensureStarted();

  const server = new McpServer({ name: options.name ?? 'envharness', version: MCP_SERVER_VERSION }, { instructions: INSTRUCTIONS });
  const schemas = options.schemaCache ?? new WeakMap<Tool<any, any>, LooseObject>();
  const registered = new Map<string, { tool: Tool<any, any>; handle: RegisteredTool }>();

  const syncTools = (): void => {
    const { tools } = session.tools();
    const wanted = new Map(tools.map((t) => [t.name, t]));
    for (const [name, entry] of registered) {
      if (wanted.get(name) !== entry.tool) {
        entry.handle.remove();
        registered.delete(name);
      }
    }
    for (const tool of tools) {
      if (registered.has(tool.name)) continue;
      const handle = server.registerTool(
        tool.name,
        {
          description: tool.description,
          inputSchema: runtimeValidated(tool.args, schemas, tool),
          annotations: { readOnlyHint: tool.effect === 'read', destructiveHint: tool.effect === 'write', openWorldHint: false },
        },
        (args: Record<string, unknown>) => answerStep(() => session.step({ type: 'tool', tool: tool.name, args }), '/args'),
      );
      registered.set(tool.name, { tool, handle });
    }
  };

  server.registerTool(
    'reset',
    {
      description: 'Start a new episode (ending the current one): of a task id, or drawn by task type and level; with a seed.',
      inputSchema: RESET_SHAPE,
      annotations: { destructiveHint: false, openWorldHint: false },
    },
    async (args) => {
      try {
        const summary = await session.reset(args as Parameters<EpisodeSession['reset']>[0]);
        return resetResult(summary);
      } catch (error) {
        return errorResult(error);
      }
    },
  );
  server.registerTool(
    'status',
    {
      description: 'Where the episode stands: latest observation, steps, reward, terminated/truncated, feedback, budget.',
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async () => {
      try {
        return statusResult(await session.status());
      } catch (error) {
        return errorResult(error);
      }
    },
  );
  server.registerTool(
    'message',
    {
      description: 'Say something to the user (one episode step); the result is the user\'s reply.',
      inputSchema: runtimeValidated(MESSAGE_ARGS, schemas),
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    },
    (args: Record<string, unknown>) => answerStep(() => session.step({ ...args, type: 'message' }), ''),
  );
  server.registerTool(
    'finish',
    {
      description: 'End the episode (one step), with the final answer for question/answer tasks; the result carries the reward.',
      inputSchema: runtimeValidated(FINISH_ARGS, schemas),
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    },
    (args: Record<string, unknown>) => answerStep(() => session.step({ ...args, type: 'finish' }), ''),
  );
  syncTools();
  const unsubscribe = session.onReset(() => syncTools());

  return {
    server,
    session,
    connect: (transport) => server.connect(transport),
    async close() {
      unsubscribe();
      await server.close();
      if (owned) await session.close();
    },
  };
}

/** Refuses domains whose tools shadow a control tool (the MCP tool names would collide). */
function checkToolNames(domains: Iterable<Domain<any>>): void {
  const reserved = new Set<string>(CONTROL_TOOLS);
  for (const domain of domains) {
    const clash = domain.tools.find((t) => reserved.has(t.name));
    if (clash !== undefined) {
      throw new EnvHarnessError(
        'REGISTRATION_CONFLICT',
        `domain ${domain.name} has a tool named "${clash.name}", which the MCP server uses itself (${CONTROL_TOOLS.join(', ')}); rename the tool`,
        { details: { domain: domain.name, tool: clash.name } },
      );
    }
  }
}

/**
 * An input schema that lists like `args` but accepts any object: the SDK would otherwise reject bad
 * arguments itself, and the runtime (which names the JSON pointer and records the step) never see them.
 */
function runtimeValidated(args: ZodType, cache: WeakMap<Tool<any, any>, LooseObject>, key?: Tool<any, any>): LooseObject {
  const cached = key === undefined ? undefined : cache.get(key);
  if (cached !== undefined) return cached;
  // zod merges metadata into the JSON Schema it emits, so the listing shows `args` exactly.
  const schema = looseObject().meta(objectRoot(args));
  if (key !== undefined) cache.set(key, schema);
  return schema;
}

/** The draft-7 JSON Schema of a zod schema with `type: "object"` at the root (MCP requires it). */
export function objectRoot(args: ZodType): JsonObject {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(args, { target: 'draft-7', io: 'input', unrepresentable: 'any' }) as JsonObject;
  if (schema.type === 'object') return schema;
  const { definitions, ...rest } = schema;
  return { type: 'object', ...(definitions !== undefined ? { definitions } : {}), allOf: [rest] };
}

async function answerStep(run: () => Promise<StepSummary | StepRefusal>, argsPrefix: string): Promise<CallToolResult> {
  let outcome: StepSummary | StepRefusal;
  try {
    outcome = await run();
  } catch (error) {
    return errorResult(error);
  }
  if ('refused' in outcome) {
    return {
      content: [{ type: 'text', text: outcome.message }],
      structuredContent: toJsonObject({ error: { code: outcome.code, message: outcome.message }, status: outcome.status }),
      isError: true,
    };
  }
  const lines = [renderObservation(relativePointer(outcome.observation, argsPrefix))];
  lines.push(...feedbackLines(outcome.feedback));
  if (outcome.terminated || outcome.truncated) lines.push(endLine(outcome));
  return {
    content: [{ type: 'text', text: lines.join('\n') }],
    structuredContent: toJsonObject(outcome),
    isError: outcome.observation.error !== undefined,
  };
}

/** For readers of the text: pointers relative to the tool's arguments (structuredContent keeps the action's). */
function relativePointer<O extends { error?: { pointer?: string } }>(observation: O, prefix: string): O {
  const pointer = observation.error?.pointer;
  if (prefix === '' || pointer === undefined || !(pointer === prefix || pointer.startsWith(`${prefix}/`))) return observation;
  return { ...observation, error: { ...observation.error, pointer: pointer.slice(prefix.length) } };
}

function feedbackLines(feedback: readonly Feedback[]): string[] {
  return feedback.map((f) => `feedback ${f.code}${f.severity ? ` (${f.severity})` : ''}: ${f.message}`);
}

function endLine(s: { terminated: boolean; truncation?: string; totalReward: number; info: StepSummary['info'] }): string {
  const how = s.terminated ? 'terminated' : `truncated (${s.truncation ?? 'budget'})`;
  return `episode ${how}: outcome ${s.info.outcome}, reward ${s.totalReward}${s.info.endReason ? `, end reason ${s.info.endReason}` : ''}. Call reset to start another episode.`;
}

function resetResult(summary: ResetSummary): CallToolResult {
  const { task, observation } = summary;
  const lines = [
    `episode ${summary.episodeId}: task ${task.id.slice(0, 12)} (${task.template}, type ${task.taskType}, level ${task.level}), seed ${summary.seed}`,
    '',
    observation.text ?? '',
  ];
  if (observation.policy !== undefined) lines.push('', 'Policy:', observation.policy);
  const tools = (observation.tools ?? []).map((t) => t.name);
  lines.push('', `Tools: ${tools.length > 0 ? tools.join(', ') : '(none)'}; plus message, finish, status, reset.`);
  if (observation.budget !== undefined) lines.push(`Budget: ${JSON.stringify(observation.budget)}`);
  return { content: [{ type: 'text', text: lines.join('\n') }], structuredContent: toJsonObject(summary) };
}

function statusResult(status: StatusSummary): CallToolResult {
  const lines = [
    `episode ${status.episodeId} (${status.status}): task ${status.task.id.slice(0, 12)} (${status.task.template}, level ${status.task.level}), seed ${status.seed}`,
    `steps ${status.steps}, reward ${status.reward}${status.outcome !== undefined ? `, outcome ${status.outcome}` : ''}, terminated ${status.terminated}, truncated ${status.truncated}${status.truncation ? ` (${status.truncation})` : ''}`,
    '',
    `latest observation (${status.observation.kind}):`,
    renderObservation(status.observation),
  ];
  if (status.observation.kind === 'reset' && status.observation.policy !== undefined) lines.push('', 'Policy:', status.observation.policy);
  lines.push(...feedbackLines(status.feedback));
  return { content: [{ type: 'text', text: lines.join('\n') }], structuredContent: toJsonObject(status) };
}

function errorResult(error: unknown): CallToolResult {
  const payload = errorPayload(error);
  return { content: [{ type: 'text', text: `${payload.code}: ${payload.message}` }], structuredContent: { error: payload }, isError: true };
}
